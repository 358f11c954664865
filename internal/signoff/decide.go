package signoff

import (
	"fmt"
	"strings"
)

// Decision is the row of the signing decision table that matched.
type Decision string

// The rows of the decision table, in the order they are tried. Only
// DecisionSign lets a card be signed.
const (
	DecisionEnvironment      Decision = "environment"
	DecisionNondeterministic Decision = "nondeterministic"
	DecisionStale            Decision = "stale"
	DecisionMismatch         Decision = "mismatch"
	DecisionDirty            Decision = "dirty"
	DecisionSign             Decision = "sign"
)

// Outcome is one command run as the decision table sees it: its exit code
// and whether it was inconclusive (timed out, killed by a signal, or exited
// 125, 126 or 127), in which case Exit means nothing.
type Outcome struct {
	Exit         int
	Inconclusive bool
	// Environment is the cause when the run failed for its environment
	// rather than at a test (runner.Classify): a package that did not
	// build, a module that is not installed. Such a run proves nothing.
	Environment string
}

// Verdict is the decision and a one-line reason a maintainer can act on.
type Verdict struct {
	Decision Decision
	Reason   string
}

// Decide applies the decision table of `card sign` to the fail runs on the
// base (expected to exit expectFail) and the invariant run (expected to
// exit expectInvariant). The first matching row wins:
//
//	a fail or invariant run failed for its environment → environment
//	any fail run inconclusive, or fail runs disagree → nondeterministic
//	every fail run exits 0                           → stale
//	fail runs agree on a code other than expectFail  → mismatch
//	the invariant fails (or is inconclusive)         → dirty
//	(DecideHeldOut) the held-out command does not fail on the base → mismatch
//	otherwise                                        → sign
//
// It is pure so every row can be table-tested without running anything.
func Decide(fail []Outcome, expectFail int, invariant Outcome, expectInvariant int) Verdict {
	for i, o := range fail {
		if o.Environment != "" {
			return Verdict{DecisionEnvironment, fmt.Sprintf("fail run %d of %d failed for its environment, not at a test: %s", i+1, len(fail), o.Environment)}
		}
	}
	if invariant.Environment != "" {
		return Verdict{DecisionEnvironment, "the invariant failed for its environment, not at a test: " + invariant.Environment}
	}
	if len(fail) == 0 {
		return Verdict{DecisionNondeterministic, "the fail command never ran"}
	}
	for i, o := range fail {
		if o.Inconclusive {
			return Verdict{DecisionNondeterministic, fmt.Sprintf("fail run %d of %d was inconclusive (timeout, signal, or exit 125/126/127)", i+1, len(fail))}
		}
	}
	for _, o := range fail[1:] {
		if o.Exit != fail[0].Exit {
			return Verdict{DecisionNondeterministic, fmt.Sprintf("fail runs disagree: exits %s", exits(fail))}
		}
	}
	got := fail[0].Exit
	if got == 0 {
		return Verdict{DecisionStale, fmt.Sprintf("the fail command already passes on the base (exit 0 in %d of %d runs)", len(fail), len(fail))}
	}
	if got != expectFail {
		return Verdict{DecisionMismatch, fmt.Sprintf("the fail command exits %d on the base, the card expects %d", got, expectFail)}
	}
	if invariant.Inconclusive {
		return Verdict{DecisionDirty, "the invariant command was inconclusive on the base (timeout, signal, or exit 125/126/127)"}
	}
	if invariant.Exit != expectInvariant {
		return Verdict{DecisionDirty, fmt.Sprintf("the invariant command exits %d on the base, the card expects %d", invariant.Exit, expectInvariant)}
	}
	return Verdict{DecisionSign, fmt.Sprintf("the fail command exits %d in %d of %d runs and the invariant passes", got, len(fail), len(fail))}
}

func exits(runs []Outcome) string {
	s := make([]string, len(runs))
	for i, o := range runs {
		if o.Inconclusive {
			s[i] = "inconclusive"
		} else {
			s[i] = fmt.Sprint(o.Exit)
		}
	}
	return strings.Join(s, ", ")
}

// DecideHeldOut applies the row `card sign --held-out DIR` adds just
// before sign (the held-out command must fail on the base, or the
// held-out tests do not test the bug; reported as a mismatch) to v, the verdict of the rows before it,
// given the held-out run on the base (expected to exit expectHeldOut on
// the patched tree): an earlier row that stopped the signing still wins;
// a held-out run that exits expectHeldOut on the base, or proves nothing
// (inconclusive), is a mismatch; otherwise v stands.
func DecideHeldOut(v Verdict, heldOut Outcome, expectHeldOut int) Verdict {
	switch {
	case v.Decision != DecisionSign:
		return v
	case heldOut.Environment != "":
		return Verdict{DecisionEnvironment, "the held-out command failed for its environment on the base, not at a test: " + heldOut.Environment + ": it must fail there at a test"}
	case heldOut.Inconclusive:
		return Verdict{DecisionMismatch, "the held-out command was inconclusive on the base (timeout, signal, or exit 125/126/127): it must fail there, it proves nothing"}
	case heldOut.Exit == expectHeldOut:
		return Verdict{DecisionMismatch, fmt.Sprintf("the held-out command exits %d on the base, what held_out.expect_exit wants of a fix: the held-out tests do not test the bug", heldOut.Exit)}
	}
	return Verdict{DecisionSign, fmt.Sprintf("%s; the held-out command fails on the base (exit %d)", v.Reason, heldOut.Exit)}
}
