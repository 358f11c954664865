package gate

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/failpass/failpass/internal/heldout"
	"github.com/failpass/failpass/internal/sandbox"
)

// patch.held_out: on a fresh copy of the patched tree, the card's
// held-out tests, copied flat into held_out.dest, must make held_out.cmd
// exit held_out.expect_exit (and, with held_out.expect_stdout, print the
// expected bytes). heldOutDecide decides the rule where no command runs;
// heldOutRun runs it, in its place among the patched runs (patchedRules,
// which starts it afresh), for a single gate and for every candidate of
// a batch alike.

// heldOutDecide says whether patch.held_out runs the held-out command
// (with the tests to copy in and the expected output, for heldOutRun);
// when it does not, it has decided the rule: a step added, or the rule
// broken (errStop).
func (g *gateRun) heldOutDecide() (bool, error) {
	h := g.o.Card.HeldOut
	switch {
	case h == nil:
		g.add(Step{Rule: RulePatchHeldOut, Status: StatusOK, Reason: "the card has no held-out tests"})
		return false, nil
	case g.o.HeldOut == nil && g.o.SkipHeldOut:
		g.v.HeldOut = HeldOutSkipped
		g.add(Step{Rule: RulePatchHeldOut, Status: StatusOK, Reason: "SKIPPED by --skip-held-out: the card's held-out tests did not run"})
		return false, nil
	case g.o.HeldOut == nil:
		g.v.HeldOut = HeldOutNotGiven
		return false, g.fail(RulePatchHeldOut, "the card has held-out tests and they were not given: pass --held-out DIR (or --skip-held-out to pass without them, loudly)")
	}
	// The caller checked the folder (trouble, not a verdict); this is the
	// gate's own guard that no other tests are run under this card.
	if h.Digest == "" {
		return false, errors.New("held-out: the card's held_out block has no digest")
	}
	if err := g.o.HeldOut.Check(h.Digest); err != nil {
		return false, err
	}
	if h.ExpectStdout != "" {
		// The expected output judges the run only if the candidate
		// cannot read it: where the sandbox cannot keep the folder from
		// every card command, the rule fails before anything runs.
		if why := g.heldOutExposed(); why != "" {
			return false, g.fail(RulePatchHeldOut, "the expected output (held_out.expect_stdout) could not be kept from the candidate: "+why)
		}
		if _, _, err := g.o.HeldOut.Split(h.ExpectStdout); err != nil {
			return false, err
		}
	}
	return true, nil
}

// heldOutRun copies the held-out tests into the tree patchedRules
// readied (the patched tree exactly as the diff makes it, on a side and
// in a session of its own: the earlier runs could write the worktree, a
// conftest.py in dest, a file under a held-out name, dest made a
// symlink, and their cache layer, a marker that neuters the runner from
// then on) and runs the held-out command.
func (g *gateRun) heldOutRun(ctx context.Context) error {
	h := g.o.Card.HeldOut
	tests := g.o.HeldOut
	var expected []byte
	if h.ExpectStdout != "" {
		var err error
		if tests, expected, err = g.o.HeldOut.Split(h.ExpectStdout); err != nil {
			return err
		}
		// A probe runs alone in a folder the base lacks (a diff that adds
		// anything there broke budget.harness already).
		if _, err := os.Lstat(filepath.Join(g.wt.Dir, filepath.FromSlash(h.Dest))); !errors.Is(err, fs.ErrNotExist) {
			return g.fail(RulePatchHeldOut, "held_out.dest \""+h.Dest+"\" exists in the tree: with held_out.expect_stdout it must name a folder the base does not have")
		}
	}
	copied, err := tests.CopyInto(g.wt.Dir, h.Dest)
	if err != nil {
		var de *heldout.DestError
		if errors.As(err, &de) {
			return g.fail(RulePatchHeldOut, "cannot copy the held-out tests in: "+de.Error())
		}
		return err
	}
	paths, err := heldout.RelPaths(h.Workdir, copied)
	if err != nil {
		return err
	}
	// The held-out run must leave the held-out tests as it found them
	// too.
	if g.given, err = g.wt.Snapshot(); err != nil {
		return err
	}
	defer func() { g.given = nil }()
	g.v.HeldOut = HeldOutRan
	g.expect = expected
	defer func() { g.expect = nil }()
	return g.runRule(ctx, RulePatchHeldOut, "patch-held-out", h.Command(paths), RulePatchFlaky)
}

// heldOutSecret is the held-out folder every card command of this gate
// must not read ("" when none must be kept: no held-out tests given, or
// a card without held_out.expect_stdout), and why the sandbox cannot keep
// it ("" when it can). Worked out once per gate, before the first run.
func (g *gateRun) heldOutSecret() (dir, why string) {
	h := g.o.Card.HeldOut
	if h == nil || h.ExpectStdout == "" || g.o.HeldOut == nil {
		return "", ""
	}
	if !g.secretChecked {
		g.secretChecked = true
		g.secretDir = g.o.HeldOut.Dir
		if abs, err := filepath.Abs(g.secretDir); err == nil {
			g.secretDir = abs
		}
		switch {
		case g.o.Sandbox == SandboxOff:
			g.secretWhy = "the sandbox is off (--sandbox=off)"
		default:
			p := sandbox.Policy{}
			if g.o.Policy != nil {
				p = *g.o.Policy
			}
			p.Secret = []string{g.secretDir}
			var env []string
			if g.o.Env != nil {
				env = g.o.Env(g.o.Card.Pass)
			}
			if err := p.CheckSecrets(g.o.Repo.Dir, env); err != nil {
				var se *sandbox.SecretError
				if !errors.As(err, &se) {
					g.secretWhy = err.Error()
				} else {
					g.secretWhy = se.Why
				}
			}
		}
	}
	return g.secretDir, g.secretWhy
}

// heldOutExposed is why the held-out folder could not be kept from the
// candidate, "" when it was.
func (g *gateRun) heldOutExposed() string {
	_, why := g.heldOutSecret()
	return why
}

// stdoutDiffers says whether a held-out run's standard output is not the
// expected output: a run that printed more than it could keep differs.
// Nothing about where or how they differ is kept, so no reason, log or
// record can carry the expected bytes.
func stdoutDiffers(got []byte, truncated bool, want []byte) bool {
	return truncated || !bytes.Equal(got, want)
}

// heldOutKey is the held-out part of a verdict's cache key: a verdict
// reached with the tests run, skipped or not given is never served to a
// gate in another mode, nor one run with other tests.
func heldOutKey(o Options) string {
	switch {
	case o.Card.HeldOut == nil:
		return ""
	case o.HeldOut != nil:
		return HeldOutRan + ":" + o.HeldOut.Digest
	case o.SkipHeldOut:
		return HeldOutSkipped
	}
	return HeldOutNotGiven
}
