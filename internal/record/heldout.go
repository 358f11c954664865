package record

import (
	"fmt"
	"github.com/failpass/failpass/internal/verdict"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/failpass/failpass/internal/card"
)

// heldOutArgv reports whether argv is the card's held-out command with
// every {held_out} element expanded to the same one or more paths, as the
// gate runs it. The paths themselves are the gate's (copied names); the
// rest of the argv must be the card's byte for byte.
func heldOutArgv(argv []string, h *card.HeldOut) bool {
	k := 0
	for _, a := range h.Cmd {
		if a == card.HeldOutPlaceholder {
			k++
		}
	}
	if k == 0 {
		return slices.Equal(argv, h.Cmd)
	}
	extra := len(argv) - (len(h.Cmd) - k)
	if extra < k || extra%k != 0 {
		return false
	}
	at := slices.Index(h.Cmd, card.HeldOutPlaceholder)
	paths := argv[at : at+extra/k]
	for _, p := range paths {
		// Each is a copied file: directly in dest, under a name the gate
		// gives (heldout.Names), never an option.
		full := path.Join(h.Workdir, p)
		if strings.HasPrefix(p, "/") || path.Dir(full) != path.Clean(h.Dest) || !heldOutName().MatchString(path.Base(full)) {
			return false
		}
	}
	return slices.Equal(argv, h.Command(paths).Cmd)
}

var heldOutName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z0-9]+)?$`) })

// checkHeldOutStep checks the recorded patch.held_out step against the
// card's held_out block: no runs for a card without one, else the
// expected exit and every argv.
func checkHeldOutStep(field string, st Step, c *card.Card) error {
	h := c.HeldOut
	if h == nil {
		if len(st.Runs) > 0 || st.Expected != nil {
			return errorf(ProblemMalformed, field, "the card has no held-out tests, yet the record holds held-out runs")
		}
		return nil
	}
	if st.Expected != nil && *st.Expected != h.ExpectExit {
		return errorf(ProblemExpected, field+".expected", "%d, but the card's held_out.expect_exit is %d", *st.Expected, h.ExpectExit)
	}
	for j, r := range st.Runs {
		if !heldOutArgv(r.Argv, h) {
			return &Error{Problem: ProblemArgv, Field: fmt.Sprintf("%s.runs[%d].argv", field, j),
				Msg:  fmt.Sprintf("%s, but the card's held_out.cmd is %s", quoteArgv(r.Argv), quoteArgv(h.Cmd)),
				Hint: "the record was not made by running this card's held-out command"}
		}
	}
	return nil
}

// checkHeldOutVerdict refuses a record whose held_out mode and
// patch.held_out runs do not fit its verdict: a pass of a card with
// held-out tests ran them and they held, or says they were skipped; a
// failure at patch.held_out either was not given them or ran them and they
// did not hold (patch.flaky: they disagreed); a failure before it ran none.
// rank is the index in verdict.Rules of the rule that broke (-1 on pass).
func checkHeldOutVerdict(p *Predicate, c *card.Card, rank int) error {
	var runs []Run
	for _, st := range p.Steps {
		if st.Rule == verdict.RulePatchHeldOut {
			runs = st.Runs
		}
	}
	h := c.HeldOut
	mode := p.HeldOut
	switch {
	case h == nil && mode != "":
		return errorf(ProblemVerdict, "predicate.held_out", "%q, but the card has no held-out tests", mode)
	case mode != "" && mode != verdict.HeldOutRan && mode != verdict.HeldOutSkipped && mode != verdict.HeldOutNotGiven:
		return errorf(ProblemMalformed, "predicate.held_out", "%q, want %s, %s or %s", mode, verdict.HeldOutRan, verdict.HeldOutSkipped, verdict.HeldOutNotGiven)
	case (mode == verdict.HeldOutRan) != (len(runs) > 0):
		return errorf(ProblemVerdict, "predicate.held_out", "%q, but the record holds %d held-out runs", mode, len(runs))
	case h == nil:
		return nil
	}
	j := Judge(runs, h.ExpectExit)
	at := slices.Index(verdict.Rules, verdict.RulePatchHeldOut)
	switch {
	case rank < 0:
		if mode == verdict.HeldOutSkipped || (mode == verdict.HeldOutRan && j == Holds) {
			return nil
		}
		return errorf(ProblemVerdict, "predicate.verdict", "the record says pass, but the held-out tests %s", heldOutWhy(mode, j, runs, h.ExpectExit))
	case rank < at:
		if mode != "" {
			return errorf(ProblemVerdict, "predicate.held_out", "the record says %s broke, yet the held-out tests were %s after it", verdict.Rules[rank], mode)
		}
		return nil
	case rank > at:
		// A rule after this one (patch.canary) broke: this one held, or
		// its place came after the canary's (run_order).
		if mode == verdict.HeldOutSkipped || (mode == verdict.HeldOutRan && j == Holds) || (mode == "" && len(runs) == 0 && notReached(p, verdict.RulePatchHeldOut)) {
			return nil
		}
		return errorf(ProblemVerdict, "predicate.rule", "the record says %s broke, but the held-out tests before it %s", verdict.Rules[rank], heldOutWhy(mode, j, runs, h.ExpectExit))
	case *p.Rule == verdict.RulePatchFlaky:
		if mode == verdict.HeldOutRan && j != Disagree && j != Holds {
			return errorf(ProblemVerdict, "predicate.rule", "the record says %s, but the held-out runs say: %s", verdict.RulePatchFlaky, describe(j, runs, h.ExpectExit))
		}
		return nil
	}
	// Broken at patch.held_out itself: with held_out.expect_stdout, runs
	// that exit as expected break it when their output differs (the
	// record holds no output: the gate judged it, and signed).
	if mode == verdict.HeldOutSkipped || (mode == verdict.HeldOutRan && ((j == Holds && h.ExpectStdout == "") || j == Disagree)) {
		return errorf(ProblemVerdict, "predicate.rule", "the record says %s, but the held-out tests %s", verdict.RulePatchHeldOut, heldOutWhy(mode, j, runs, h.ExpectExit))
	}
	return nil
}

func heldOutWhy(mode string, j Judgement, runs []Run, expect int) string {
	switch mode {
	case verdict.HeldOutRan:
		return "ran: " + describe(j, runs, expect)
	case "":
		return "are not accounted for"
	}
	return "were " + mode
}

// heldOutDisagree says the recorded held-out runs disagree: a patch.flaky
// verdict may rest on them.
func heldOutDisagree(p *Predicate, c *card.Card) bool {
	if c.HeldOut == nil {
		return false
	}
	for _, st := range p.Steps {
		if st.Rule == verdict.RulePatchHeldOut {
			return Judge(st.Runs, c.HeldOut.ExpectExit) == Disagree
		}
	}
	return false
}
