package gate

import (
	"context"
	"errors"

	"github.com/failpass/failpass/internal/heldout"
)

// What a gate did with a card's held-out tests: the verdict's held_out
// field (omitted when the card has none, or the gate stopped before
// patch.held_out).
const (
	HeldOutRan      = "ran"       // copied in from --held-out DIR and run
	HeldOutSkipped  = "skipped"   // --skip-held-out: not run, the rule passed loudly
	HeldOutNotGiven = "not_given" // neither flag: the rule failed
)

// heldOutRule is patch.held_out: on a fresh copy of the patched tree, the
// card's held-out tests, copied flat into held_out.dest, must make
// held_out.cmd exit held_out.expect_exit. It runs after patch.invariant
// in the same worktree, started afresh (see afresh), for a single gate and
// for every candidate of a batch alike (patchedRules).
func (g *gateRun) heldOutRule(ctx context.Context) error {
	h := g.o.Card.HeldOut
	switch {
	case h == nil:
		g.add(Step{Rule: RulePatchHeldOut, Status: StatusOK, Reason: "the card has no held-out tests"})
		return nil
	case g.o.HeldOut == nil && g.o.SkipHeldOut:
		g.v.HeldOut = HeldOutSkipped
		g.add(Step{Rule: RulePatchHeldOut, Status: StatusOK, Reason: "SKIPPED by --skip-held-out: the card's held-out tests did not run"})
		return nil
	case g.o.HeldOut == nil:
		g.v.HeldOut = HeldOutNotGiven
		return g.fail(RulePatchHeldOut, "the card has held-out tests and they were not given: pass --held-out DIR (or --skip-held-out to pass without them, loudly)")
	}
	// The caller checked the folder (trouble, not a verdict); this is the
	// gate's own guard that no other tests are run under this card.
	if h.Digest == "" {
		return errors.New("held-out: the card's held_out block has no digest")
	}
	if err := g.o.HeldOut.Check(h.Digest); err != nil {
		return err
	}
	// The patched runs so far could write the worktree (a conftest.py in
	// dest, a file under a held-out name, dest made a symlink) and their
	// cache layer (a marker that neuters the runner from then on): the
	// held-out tests meet the patched tree as the diff makes it, nothing
	// more, on a side and in a session of their own.
	if err := g.afresh(ctx, "held-out"); err != nil {
		return err
	}
	copied, err := g.o.HeldOut.CopyInto(g.wt.Dir, h.Dest)
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
	return g.runRule(ctx, RulePatchHeldOut, "patch-held-out", h.Command(paths), RulePatchFlaky)
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
