package cli

import (
	"fmt"

	"github.com/failpass/failpass/internal/card"
	"github.com/failpass/failpass/internal/heldout"
)

// heldOutCard is a card a gate runs, with its path for messages.
type heldOutCard struct {
	card *card.Card
	path string
}

// gateHeldOut loads --held-out DIR once and checks it against every card
// the gate runs (a batch's --held-out applies to each candidate), before
// anything runs: a card without held-out tests, one whose digest is not
// written yet, or a folder with another digest is trouble (exit 2). It
// says loudly that --skip-held-out skips them, and warns up front when a
// card's held-out tests were not given (the rule fails only after the
// rules before it ran). The folder is nil without --held-out.
func gateHeldOut(env *Env, f *gateFlags, cards []heldOutCard) (*heldout.Folder, error) {
	if f.skipHeldOut {
		for _, c := range cards {
			if c.card.HeldOut != nil {
				fmt.Fprintln(env.Stderr, "failpass: warning: --skip-held-out: the card's held-out tests do NOT run; a pass says \"held_out\": \"skipped\" and proves nothing about them")
				break
			}
		}
		return nil, nil
	}
	if f.heldOut == "" {
		for _, c := range cards {
			if c.card.HeldOut != nil {
				fmt.Fprintf(env.Stderr, "failpass: warning: card %s has held-out tests and --held-out was not given: patch.held_out will fail\n", c.path)
				break
			}
		}
		return nil, nil
	}
	folder, err := heldout.Load(f.heldOut)
	if err != nil {
		return nil, err
	}
	seen := map[*card.Card]bool{}
	for _, c := range cards {
		if seen[c.card] {
			continue
		}
		seen[c.card] = true
		if err := checkHeldOut(c.card, c.path, folder); err != nil {
			return nil, err
		}
	}
	return folder, nil
}

// checkHeldOut refuses a folder that is not the card's held-out tests.
func checkHeldOut(c *card.Card, path string, folder *heldout.Folder) error {
	switch {
	case c.HeldOut == nil:
		return Errorf("--held-out %s: card %s has no held_out block", folder.Dir, path).
			Hint("add a held_out block (dest, cmd, expect_exit) to the card and sign it with 'failpass card sign --held-out DIR', or gate without --held-out")
	case c.HeldOut.Digest == "":
		return Errorf("card %s: held_out has no digest, so no folder can be checked against it", path).
			Hint("sign the card with 'failpass card sign --card %s --held-out DIR', which writes the digest", path)
	}
	if err := folder.Check(c.HeldOut.Digest); err != nil {
		return err
	}
	if c.HeldOut.ExpectStdout != "" {
		if _, _, err := folder.Split(c.HeldOut.ExpectStdout); err != nil {
			return err
		}
	}
	return nil
}

// signHeldOutFolder loads card sign's --held-out DIR and checks it fits
// the card, before anything runs: a card with held-out tests is signed
// with them (every signer checks they fail on the base), a folder goes
// with a card that names held-out tests, and a co-signer's folder must be
// the one already signed.
func signHeldOutFolder(path string, c *card.Card, dir string, witness bool) (*heldout.Folder, error) {
	switch {
	case dir == "" && c.HeldOut != nil:
		return nil, &UsageError{Msg: fmt.Sprintf("card %s has held-out tests: --held-out DIR is required", path),
			Hint: "give the held-out folder: every signer checks the held-out command fails on the base"}
	case dir == "":
		return nil, nil
	case c.HeldOut == nil:
		return nil, &UsageError{Msg: fmt.Sprintf("--held-out: card %s has no held_out block", path),
			Hint: "add held_out: {dest: \"tests\", cmd: [\"python3\", \"-m\", \"pytest\", \"{held_out}\"], expect_exit: 0} to the card, then sign with --held-out"}
	}
	folder, err := heldout.Load(dir)
	if err != nil {
		return nil, err
	}
	if witness && folder.Digest != c.HeldOut.Digest {
		// A co-signature is over the bytes already signed, digest included.
		return nil, folder.Check(c.HeldOut.Digest)
	}
	return folder, nil
}
