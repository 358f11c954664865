package record

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hiddeco/sshsig"
	"golang.org/x/crypto/ssh"

	"github.com/failpass/failpass/internal/card"
	"github.com/failpass/failpass/internal/gitx"
	"github.com/failpass/failpass/internal/sign"
)

// Sign signs a record's bytes in sign.NamespaceRecord and returns the
// armored signature, after checking the bytes are a record failpass would
// accept: a signer never vouches for bytes Verify would refuse.
func Sign(s sign.Signer, data []byte) ([]byte, error) {
	if _, err := Parse(data); err != nil {
		return nil, fmt.Errorf("record: refusing to sign: %w", err)
	}
	return s.Sign(sign.NamespaceRecord, data)
}

// VerifySignature checks that armored is a signature of data in
// sign.NamespaceRecord by a key the runners file lists. A detached record
// signature names no principal, so the principals are those runners lists
// for the signature's key (as `ssh-keygen -Y find-principals` finds them);
// the first that verifies is returned. A key runners does not list, a card
// signature (namespace failpass-card-v1) or any other namespace is
// refused with a *sign.VerifyError.
func VerifySignature(runners *sign.AllowedSigners, data, armored []byte, now time.Time) (*sign.Verified, error) {
	var principals []string
	if sig, err := sign.ParseArmor(armored); err == nil {
		principals = principalsFor(runners, sig)
	}
	if len(principals) == 0 {
		// Verify names the reason: malformed, namespace, unknown key.
		_, err := runners.Verify("", sign.NamespaceRecord, data, armored, now)
		if err == nil {
			err = &sign.VerifyError{Reason: sign.ReasonUnknownKey}
		}
		return nil, err
	}
	var first error
	for _, p := range principals {
		v, err := runners.Verify(p, sign.NamespaceRecord, data, armored, now)
		if err == nil {
			return v, nil
		}
		if first == nil {
			first = err
		}
	}
	return nil, first
}

func principalsFor(a *sign.AllowedSigners, sig *sshsig.Signature) []string {
	fp := ssh.FingerprintSHA256(sig.PublicKey)
	var out []string
	for _, e := range a.Entries {
		if e.Fingerprint != fp {
			continue
		}
		for _, p := range e.Principals {
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out
}

// Verification is everything `record verify` checks a record against.
type Verification struct {
	Record    []byte // the record file's bytes
	Signature []byte // FILE.sig, armored
	// Runners lists the keys trusted to sign records (the machines that
	// run gates); Maintainers the keys trusted to sign cards.
	Runners, Maintainers *sign.AllowedSigners
	Card                 *card.Card
	// Diff and Repo, when both are set, rebuild the patched tree from the
	// recorded base and compare it and the numstat with the record.
	Diff []byte
	Repo *gitx.Repo
	Now  time.Time
}

// Verified is a record that passed every check asked of it.
type Verified struct {
	Statement *Statement
	Runner    *sign.Verified // who signed the record
	// CardSigners are the principals whose card signatures verify now.
	CardSigners []string
	// Rebuilt is set when the tree was rebuilt from --diff and --repo.
	Rebuilt *Patched
}

// Verify checks a record without running any card command: the record
// signature (runners), its canonical form and shape, the card's digest,
// base, argv and expected exits, the verdict against the recorded exits,
// the card's own signatures (maintainers) and the recorded signers, and,
// with a diff and repository, the diff's digest, its numstat and the
// patched tree rebuilt in git's object store. The first problem is
// returned as an *Error; other errors are trouble (git missing, a
// *BaseError when the repository lacks the base commit).
func Verify(ctx context.Context, in Verification) (*Verified, error) {
	if in.Now.IsZero() {
		in.Now = time.Now()
	}
	runner, err := VerifySignature(in.Runners, in.Record, in.Signature, in.Now)
	if err != nil {
		return nil, &Error{Problem: ProblemSignature, Msg: signatureMsg(err), Err: err,
			Hint: "a record verifies only with its own FILE.sig, made in namespace " + sign.NamespaceRecord + " by a key the runners file lists"}
	}
	s, err := Parse(in.Record)
	if err != nil {
		return nil, err
	}
	if err := Check(s, in.Card); err != nil {
		return nil, err
	}
	out := &Verified{Statement: s, Runner: runner}
	if out.CardSigners, err = cardSigners(s, in.Card, in.Maintainers, in.Now); err != nil {
		return nil, err
	}
	if in.Diff != nil && in.Repo != nil {
		if out.Rebuilt, err = checkDiff(ctx, s, in.Diff, in.Repo); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// cardSigners checks that the card carries a signature by an allowed
// maintainer, that the gate checked it (not --allow-unsigned), and that
// every signer the record names verifies.
func cardSigners(s *Statement, c *card.Card, maintainers *sign.AllowedSigners, now time.Time) ([]string, error) {
	p := &s.Predicate
	if p.Card.Unsigned {
		return nil, &Error{Problem: ProblemCard, Field: "predicate.card.unsigned",
			Msg:  "the gate ran this card under --allow-unsigned: it never checked who signed the card",
			Hint: "gate a signed card with --allowed-signers to get a record worth verifying"}
	}
	t, err := sign.VerifyCard(c, maintainers, now)
	if err != nil {
		return nil, err
	}
	var ok []string
	for _, v := range t.Valid {
		if !slices.Contains(ok, v.Principal) {
			ok = append(ok, v.Principal)
		}
	}
	if t.Keys == 0 {
		var why []string
		for _, inv := range t.Invalid {
			why = append(why, inv.Err.Error())
		}
		msg := "the card carries no signature by an allowed signer"
		if len(why) > 0 {
			msg += " (" + strings.Join(why, "; ") + ")"
		}
		return nil, &Error{Problem: ProblemCard, Field: "signatures", Msg: msg,
			Hint: "pass the maintainers' allowed_signers file with --allowed-signers"}
	}
	for i, who := range p.Card.Signers {
		if !slices.Contains(ok, who) {
			return nil, errorf(ProblemSigners, fmt.Sprintf("predicate.card.signers[%d]", i),
				"%q, but no signature on the card by %q verifies", who, who)
		}
	}
	return ok, nil
}

// checkDiff rebuilds what the record claims from the diff and the base.
func checkDiff(ctx context.Context, s *Statement, diff []byte, repo *gitx.Repo) (*Patched, error) {
	p := &s.Predicate
	if got := Digest(diff); got != p.Diff.Digest {
		return nil, &Error{Problem: ProblemDiffDigest, Field: "predicate.diff.digest",
			Msg:  fmt.Sprintf("the record is of diff %s, not of this diff (%s)", p.Diff.Digest, got),
			Hint: "pass the exact diff bytes the gate read"}
	}
	files, err := ReadNumstat(ctx, diff)
	if err != nil {
		return nil, err
	}
	if err := sameNumstat(p.Diff.Files, files); err != nil {
		return nil, err
	}
	if p.Base == "" {
		return nil, nil // no base: the subject is the diff, already compared
	}
	rebuilt, err := PatchedTree(ctx, repo, p.Base, diff)
	if err != nil {
		return nil, err
	}
	if rebuilt.Applied != p.Diff.Applied {
		return nil, errorf(ProblemTree, "predicate.diff.applied", "%v, but git %s the diff to base %s",
			p.Diff.Applied, map[bool]string{true: "applies", false: "does not apply"}[rebuilt.Applied], p.Base)
	}
	if tree := s.Tree(); tree != rebuilt.Tree {
		return nil, &Error{Problem: ProblemTree, Field: "subject[0].digest.gitTree",
			Msg:  fmt.Sprintf("%s, but base %s plus the diff makes tree %s", tree, p.Base, rebuilt.Tree),
			Hint: "the record's subject is not what this diff makes of its base"}
	}
	return rebuilt, nil
}

// sameNumstat compares recorded and rebuilt numstats file by file.
func sameNumstat(rec, got []FileStat) error {
	for i := 0; i < len(rec) || i < len(got); i++ {
		field := fmt.Sprintf("predicate.diff.files[%d]", i)
		switch {
		case i >= len(got):
			return errorf(ProblemNumstat, field, "%s is recorded, but the diff changes %d file(s)", rec[i].Path, len(got))
		case i >= len(rec):
			return errorf(ProblemNumstat, field, "missing: the diff also changes %s", got[i].Path)
		case rec[i] != got[i]:
			return errorf(ProblemNumstat, field, "%s, but git reads the diff as %s", statString(rec[i]), statString(got[i]))
		}
	}
	return nil
}

func statString(f FileStat) string {
	s := fmt.Sprintf("%s +%d -%d", f.Path, f.Added, f.Deleted)
	if f.OldPath != "" {
		s = f.OldPath + " => " + s
	}
	if f.Binary {
		s += " (binary)"
	}
	return s
}

// signatureMsg words a signature refusal: the reason first, the runner
// when the runners file named one for the key.
func signatureMsg(err error) string {
	var ve *sign.VerifyError
	if !errors.As(err, &ve) {
		return err.Error()
	}
	msg := string(ve.Reason)
	if ve.Detail != "" {
		msg += ": " + ve.Detail
	}
	if ve.Principal != "" {
		msg += " (runner " + ve.Principal + ")"
	}
	return msg
}
