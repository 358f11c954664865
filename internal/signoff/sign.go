package signoff

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/failpass/failpass/internal/atomicfile"
	"github.com/failpass/failpass/internal/card"
	"github.com/failpass/failpass/internal/sign"
)

// Signing is one `card sign`: the decision table's Options, and what
// signs the card file when the table says sign.
type Signing struct {
	Options
	// Orig is the card file's bytes as card.Read returned them: the file
	// is written over only while it still holds them.
	Orig []byte
	// Force re-runs the table and replaces every signature; without it a
	// signed card is co-signed, over the bytes its first signer signed.
	Force     bool
	Signer    sign.Signer
	Principal string // the signer's name in allowed_signers
	Now       func() time.Time
}

// Signed is what Sign did.
type Signed struct {
	*Result
	// Witness says the card was co-signed: its bytes are the first
	// signer's, and this signer's runs were printed, not stored.
	Witness bool
	// Card is the card as written, nil when the table did not say sign
	// (the file is then left as it was); Kept says its comments and key
	// order were kept.
	Card *card.Card
	Kept bool
	// ExpectStdout is the expected-output file written into the held-out
	// folder from the reference fix's run, "" when none was.
	ExpectStdout string
}

// Sign runs the decision table on the card's base and, when it says
// sign, signs the card file in place: the base, held-out digest and
// signoff block pinned by a first signer, a signature added by a
// witness. It prints the base on Out and what --force replaces on
// Notes; the runs print as Run's do.
func Sign(ctx context.Context, s Signing) (*Signed, error) {
	c := s.Card
	out := &Signed{Witness: len(c.Signatures) > 0 && !s.Force}
	if s.Force && len(c.Signatures) > 0 {
		fmt.Fprintf(s.Notes, "--force: if the table says sign, the card's %d signature(s) are replaced\n", len(c.Signatures))
	}
	if out.Witness {
		// Co-signing a card whose signed bytes changed since would add
		// a signature nobody else made.
		if err := CheckCosign(c, s.Path, ssh.FingerprintSHA256(s.Signer.PublicKey())); err != nil {
			return nil, err
		}
	}
	base, err := Base(s.Bound)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(s.Out, "base: %s", base)
	if c.BaseRef != "" && c.BaseSHA == "" {
		fmt.Fprintf(s.Out, " (%s)", c.BaseRef)
	}
	fmt.Fprintln(s.Out)
	if out.Result, err = Run(ctx, s.Options); err != nil {
		return nil, err
	}
	if out.Verdict.Decision != DecisionSign {
		return out, nil
	}
	if out.Wrote != nil {
		// The expected output the reference fix printed: written into
		// the held-out folder (never shown), and the digest covers it.
		path := filepath.Join(s.HeldOut.Dir, c.HeldOut.ExpectStdout)
		if err := atomicfile.Create(path, out.Wrote, 0o644); err != nil {
			return nil, errorf("cannot write the expected output %s: %v", path, err)
		}
		out.ExpectStdout = path
	}
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	sealed, err := Seal(s.Orig, c, out.Result, base, out.HeldOut, out.Witness, s.Signer, s.Principal, now())
	if err != nil {
		return nil, err
	}
	if err := card.Replace(s.Path, s.Orig, sealed.Data); err != nil {
		return nil, err
	}
	out.Card, out.Kept = sealed.Card, sealed.Kept
	return out, nil
}
