package record

import (
	"errors"
	"github.com/failpass/failpass/internal/verdict"
	"slices"
	"strings"
	"testing"

	"github.com/failpass/failpass/internal/card"
)

func stepOf(s *Statement, rule string) *Step {
	for i := range s.Predicate.Steps {
		if s.Predicate.Steps[i].Rule == rule {
			return &s.Predicate.Steps[i]
		}
	}
	panic("no step " + rule)
}

func strp(s string) *string { return &s }

func TestCheck(t *testing.T) {
	c := testCard(t)
	tests := []struct {
		name string
		fail bool // start from the failing record instead of the passing one
		edit func(s *Statement)
		want Problem // "" for valid
	}{
		{name: "pass as recorded", edit: func(*Statement) {}},
		{name: "fail as recorded", fail: true, edit: func(*Statement) {}},
		{name: "card digest", edit: func(s *Statement) { s.Predicate.Card.Digest = "sha256:" + testBase + testBase[:24] }, want: ProblemCardDigest},
		{name: "card id", edit: func(s *Statement) { s.Predicate.Card.ID = "OTHER" }, want: ProblemCardDigest},
		{name: "base", edit: func(s *Statement) { s.Predicate.Base = testTree }, want: ProblemBase},
		{name: "argv element", edit: func(s *Statement) { stepOf(s, verdict.RuleBaseFail).Runs[0].Argv[1] = "check2.sh" }, want: ProblemArgv},
		{name: "argv extra arg", edit: func(s *Statement) {
			r := &stepOf(s, verdict.RulePatchPass).Runs[0]
			r.Argv = append(r.Argv, "-x")
		}, want: ProblemArgv},
		{name: "argv trailing space", edit: func(s *Statement) { stepOf(s, verdict.RulePatchInvariant).Runs[0].Argv[2] = "./... " }, want: ProblemArgv},
		{name: "argv of another role", edit: func(s *Statement) { stepOf(s, verdict.RuleBaseInvariant).Runs[0].Argv = []string{"sh", "check.sh"} }, want: ProblemArgv},
		{name: "expected exit", edit: func(s *Statement) { stepOf(s, verdict.RuleBaseFail).Expected = intp(2) }, want: ProblemExpected},
		{name: "unknown rule", edit: func(s *Statement) { s.Predicate.Steps[0].Rule = "card.other" }, want: ProblemMalformed},
		{name: "rule twice", edit: func(s *Statement) { s.Predicate.Steps[1].Rule = s.Predicate.Steps[0].Rule }, want: ProblemMalformed},
		{name: "runs on a static rule", edit: func(s *Statement) {
			st := stepOf(s, verdict.RuleDiffApply)
			st.Expected, st.Runs = intp(0), []Run{{Argv: []string{"true"}}}
		}, want: ProblemMalformed},
		{name: "flipped fail to pass", fail: true, edit: func(s *Statement) { s.Predicate.Verdict, s.Predicate.Rule = "pass", nil }, want: ProblemVerdict},
		{name: "pass with an exit changed", edit: func(s *Statement) { stepOf(s, verdict.RuleBaseFail).Runs[0].Exit = 0 }, want: ProblemVerdict},
		{name: "pass with a timed-out run", edit: func(s *Statement) { stepOf(s, verdict.RulePatchPass).Runs[0].TimedOut = true }, want: ProblemVerdict},
		{name: "pass with a signal", edit: func(s *Statement) { stepOf(s, verdict.RulePatchPass).Runs[0].Signal = "killed" }, want: ProblemVerdict},
		{name: "pass with exit 127 expected 127", edit: func(s *Statement) {
			// Even were the card to expect it, 127 is inconclusive.
			stepOf(s, verdict.RulePatchPass).Runs[0].Exit = 127
		}, want: ProblemVerdict},
		{name: "pass with a static rule failed", edit: func(s *Statement) { stepOf(s, verdict.RuleBudgetDeny).Status = verdict.StatusFail }, want: ProblemVerdict},
		{name: "pass with a static rule not run", edit: func(s *Statement) { stepOf(s, verdict.RuleDiffActual).Status = verdict.StatusNotRun }, want: ProblemVerdict},
		{name: "pass with a rule left out", edit: func(s *Statement) { s.Predicate.Steps = s.Predicate.Steps[1:] }, want: ProblemVerdict},
		{name: "pass of a failpass before budget.harness", edit: func(s *Statement) {
			s.Predicate.Steps = slices.DeleteFunc(s.Predicate.Steps, func(st Step) bool { return st.Rule == verdict.RuleBudgetHarness })
		}, want: ProblemVerdict},
		{name: "pass with runs removed", edit: func(s *Statement) { stepOf(s, verdict.RulePatchInvariant).Runs = []Run{} }, want: ProblemVerdict},
		{name: "pass with flaky runs", edit: func(s *Statement) {
			st := stepOf(s, verdict.RulePatchPass)
			st.Runs = append(st.Runs, Run{Argv: []string{"sh", "check.sh"}, Exit: 1})
		}, want: ProblemVerdict},
		{name: "fail blamed on the wrong rule", fail: true, edit: func(s *Statement) { s.Predicate.Rule = strp(verdict.RuleBaseFail) }, want: ProblemVerdict},
		{name: "fail blamed on flakiness that is not there", fail: true, edit: func(s *Statement) { s.Predicate.Rule = strp(verdict.RulePatchFlaky) }, want: ProblemVerdict},
		{name: "fail with runs after the broken rule", fail: true, edit: func(s *Statement) {
			stepOf(s, verdict.RulePatchInvariant).Runs = []Run{{Argv: []string{"go", "test", "./..."}}}
			stepOf(s, verdict.RulePatchInvariant).Expected = intp(0)
		}, want: ProblemVerdict},
		{name: "fail whose runs hold", fail: true, edit: func(s *Statement) { stepOf(s, verdict.RulePatchPass).Runs[0].Exit = 0 }, want: ProblemVerdict},
		{name: "flaky patch runs are patch.flaky", fail: true, edit: func(s *Statement) {
			st := stepOf(s, verdict.RulePatchPass)
			st.Runs = append(st.Runs, Run{Argv: []string{"sh", "check.sh"}, Exit: 0})
			s.Predicate.Rule = strp(verdict.RulePatchFlaky)
		}},
		{name: "flaky patch runs blamed on patch.pass", fail: true, edit: func(s *Statement) {
			st := stepOf(s, verdict.RulePatchPass)
			st.Runs = append(st.Runs, Run{Argv: []string{"sh", "check.sh"}, Exit: 0})
		}, want: ProblemVerdict},
		{name: "fail at a static rule before any run", fail: true, edit: func(s *Statement) {
			s.Predicate.Rule = strp(verdict.RuleBudgetFiles)
			for i := range s.Predicate.Steps {
				s.Predicate.Steps[i].Runs = []Run{}
			}
		}},
		{name: "fail at a static rule with base runs before it", fail: true, edit: func(s *Statement) {
			s.Predicate.Rule = strp(verdict.RuleBudgetFiles)
		}, want: ProblemVerdict},
		{name: "fail at diff.apply after the base held", fail: true, edit: func(s *Statement) {
			s.Predicate.Rule = strp(verdict.RuleDiffApply)
			stepOf(s, verdict.RulePatchPass).Runs = []Run{}
		}},
		{name: "fail at the card signature with nothing run", edit: func(s *Statement) {
			s.Predicate.Verdict, s.Predicate.Rule = "fail", strp(verdict.RuleCardSignature)
			for i := range s.Predicate.Steps {
				s.Predicate.Steps[i].Runs = []Run{}
			}
		}},
		{name: "pass with the canary not run, saying why", edit: func(s *Statement) {
			st := stepOf(s, verdict.RulePatchCanary)
			st.Status, st.Runs, st.Reason = verdict.StatusNotRun, []Run{}, verdict.CanaryNotRecognized
		}},
		{name: "pass with the canary not run, saying nothing", edit: func(s *Statement) {
			st := stepOf(s, verdict.RulePatchCanary)
			st.Status, st.Runs = verdict.StatusNotRun, []Run{}
		}, want: ProblemVerdict},
		{name: "pass whose canary passed", edit: func(s *Statement) { stepOf(s, verdict.RulePatchCanary).Runs[0].Exit = 0 }, want: ProblemVerdict},
		{name: "pass whose canary did not build", edit: func(s *Statement) {
			stepOf(s, verdict.RulePatchCanary).Runs[0].Environment = "go test could not build package x"
		}, want: ProblemVerdict},
		{name: "pass whose canary step lost its runs", edit: func(s *Statement) { stepOf(s, verdict.RulePatchCanary).Runs = []Run{} }, want: ProblemVerdict},
		{name: "pass whose base run failed for its environment", edit: func(s *Statement) {
			stepOf(s, verdict.RuleBaseFail).Runs[0].Environment = "go test could not build package x"
		}, want: ProblemVerdict},
		{name: "canary with an expected exit", edit: func(s *Statement) { stepOf(s, verdict.RulePatchCanary).Expected = intp(1) }, want: ProblemMalformed},
		{name: "canary run of another program", edit: func(s *Statement) { stepOf(s, verdict.RulePatchCanary).Runs[0].Argv[0] = "true" }, want: ProblemArgv},
		{name: "fail at the canary that passed", edit: func(s *Statement) {
			s.Predicate.Verdict, s.Predicate.Rule = "fail", strp(verdict.RulePatchCanary)
			st := stepOf(s, verdict.RulePatchCanary)
			st.Status, st.Runs[0].Exit = verdict.StatusFail, 0
		}},
		{name: "fail at the canary that failed as it must", edit: func(s *Statement) {
			s.Predicate.Verdict, s.Predicate.Rule = "fail", strp(verdict.RulePatchCanary)
			stepOf(s, verdict.RulePatchCanary).Status = verdict.StatusFail
		}, want: ProblemVerdict},
		{name: "fail with the canary run after the broken rule", fail: true, edit: func(s *Statement) {
			st := stepOf(s, verdict.RulePatchCanary)
			st.Status, st.Runs = verdict.StatusOK, []Run{{Argv: []string{"sh", "x"}, Exit: 1}}
		}, want: ProblemVerdict},
		{name: "fail at an unknown rule", fail: true, edit: func(s *Statement) { s.Predicate.Rule = strp("gate.other") }, want: ProblemMalformed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := passVerdict(c)
			if tc.fail {
				v = failVerdict(c)
			}
			s := testStatement(t, v, c)
			tc.edit(s)
			err := Check(s, c)
			var got Problem
			if err != nil {
				var re *Error
				if !errors.As(err, &re) {
					t.Fatalf("Check(%s) = %v (%T), want a *record.Error", tc.name, err, err)
				}
				got = re.Problem
			}
			if got != tc.want {
				t.Errorf("Check(%s) = %v, want problem %q", tc.name, err, tc.want)
			}
		})
	}
}

func TestJudge(t *testing.T) {
	tests := []struct {
		runs   []Run
		expect int
		want   Judgement
	}{
		{nil, 0, NoRuns},
		{[]Run{{Exit: 0}}, 0, Holds},
		{[]Run{{Exit: 1}, {Exit: 1}, {Exit: 1}}, 1, Holds},
		{[]Run{{Exit: 1}}, 0, WrongExit},
		{[]Run{{Exit: 0}, {Exit: 1}}, 0, Disagree},
		{[]Run{{Exit: 0}, {Exit: 1, TimedOut: true}}, 0, Inconclusive},
		{[]Run{{Exit: -1, Signal: "killed"}}, 0, Inconclusive},
		{[]Run{{Exit: 125}}, 125, Inconclusive},
		{[]Run{{Exit: 126}}, 126, Inconclusive},
		{[]Run{{Exit: 127}}, 127, Inconclusive},
		{[]Run{{Exit: -1}}, -1, Inconclusive},
	}
	for _, tc := range tests {
		if got := Judge(tc.runs, tc.expect); got != tc.want {
			t.Errorf("Judge(%+v, %d) = %v, want %v", tc.runs, tc.expect, got, tc.want)
		}
	}
}

// TestCheckCanaryClaims: a record may say the canary did not run only for
// a reason the card allows: the card turned it off, or its pass command
// is one the canary cannot follow (from its argv, or, said in the
// step's detail, from the oracle's source).
func TestCheckCanaryClaims(t *testing.T) {
	followed, err := card.Parse("card.yml", []byte(strings.Replace(testCardYAML,
		`pass: {cmd: ["sh", "check.sh"], expect_exit: 0}`, `pass: {cmd: ["go", "test", "-run", "^TestA$", "./p"], expect_exit: 0}`, 1)))
	if err != nil || followed.Pass.Cmd[0] != "go" {
		t.Fatalf("card: %v, %v", followed, err)
	}
	for _, tc := range []struct {
		name           string
		c              *card.Card
		reason, detail string
		ok             bool
	}{
		{"argv not followed, no detail", testCard(t), verdict.CanaryNotRecognized, "", true},
		{"argv followed, no detail", followed, verdict.CanaryNotRecognized, "", false},
		{"argv followed, the source's detail", followed, verdict.CanaryNotRecognized, "TestA is a one-line def", true},
		{"off claimed for a card that leaves it on", testCard(t), verdict.CanaryOffReason, "", false},
	} {
		s := testStatement(t, passVerdict(tc.c), tc.c)
		st := stepOf(s, verdict.RulePatchCanary)
		st.Status, st.Runs, st.Reason, st.Detail = verdict.StatusNotRun, []Run{}, tc.reason, tc.detail
		err := Check(s, tc.c)
		var re *Error
		if tc.ok != (err == nil) || (err != nil && (!errors.As(err, &re) || re.Problem != ProblemVerdict)) {
			t.Errorf("%s: Check = %v, want ok %v", tc.name, err, tc.ok)
		}
	}
}

// TestCheckRunOrder: record verify accepts every order the gate can run
// the patched rules in (the canary anywhere, the others canonical), with
// a verdict that follows from it, and no other.
func TestCheckRunOrder(t *testing.T) {
	c := testCard(t)
	pass, inv, canary := verdict.RulePatchPass, verdict.RulePatchInvariant, verdict.RulePatchCanary
	canaryHeld := []Run{{Argv: []string{"sh", "canary_test.sh"}, Exit: 1}}
	failFirst := func(s *Statement) {
		// The canary drew the first place and passed: the gate stopped.
		s.Predicate.Verdict, s.Predicate.Rule = "fail", strp(canary)
		for _, r := range []string{pass, inv} {
			st := stepOf(s, r)
			st.Status, st.Runs, st.Expected = verdict.StatusNotRun, []Run{}, nil
		}
		st := stepOf(s, canary)
		st.Status, st.Runs = verdict.StatusFail, []Run{{Argv: []string{"sh", "canary_test.sh"}, Exit: 0}}
	}
	for _, tc := range []struct {
		name  string
		fail  bool
		order []string
		edit  func(s *Statement)
		ok    bool
	}{
		{"pass, canonical", false, []string{pass, inv, canary}, nil, true},
		{"pass, canary first", false, []string{canary, pass, inv}, nil, true},
		{"pass, canary second", false, []string{pass, canary, inv}, nil, true},
		{"pass, no order (older record)", false, nil, nil, true},
		{"pass, invariant before pass", false, []string{inv, pass, canary}, nil, false},
		{"pass, canary left out", false, []string{pass, inv}, nil, false},
		{"pass, a rule twice", false, []string{pass, pass, inv, canary}, nil, false},
		{"pass, a rule that did not run", false, []string{pass, inv, verdict.RulePatchHeldOut, canary}, nil, false},
		{"fail at pass after the canary held", true, []string{canary, pass}, func(s *Statement) {
			stepOf(s, canary).Status, stepOf(s, canary).Runs = verdict.StatusOK, canaryHeld
		}, true},
		{"fail at pass, canary runs but no order", true, nil, func(s *Statement) {
			stepOf(s, canary).Status, stepOf(s, canary).Runs = verdict.StatusOK, canaryHeld
		}, false},
		{"fail at the canary, run first", false, []string{canary}, failFirst, true},
		{"fail at the canary, run first, no order", false, nil, failFirst, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := passVerdict(c)
			if tc.fail {
				v = failVerdict(c)
			}
			s := testStatement(t, v, c)
			if tc.edit != nil {
				tc.edit(s)
			}
			s.Predicate.RunOrder = tc.order
			err := Check(s, c)
			if (err == nil) != tc.ok {
				t.Errorf("Check = %v, want ok %v", err, tc.ok)
			}
		})
	}
}
