package record

import (
	"errors"
	"github.com/failpass/failpass/internal/verdict"
	"slices"
	"testing"

	"github.com/failpass/failpass/internal/card"
)

const heldOutCardYAML = testCardYAML + `held_out:
  digest: "sha256:b883efbb8f7ec19f0bd5d4ca17e22befe9224b6f479854598ce3e2109efa8df6"
  dest: "tests"
  cmd: ["python3", "-m", "pytest", "-q", "{held_out}"]
  expect_exit: 0
`

var heldOutRun = []string{"python3", "-m", "pytest", "-q", "tests/test_a.py", "tests/test_b.py"}

// heldOutPass is a passing verdict of the held-out card with the held-out
// tests run.
func heldOutPass(c *card.Card) *verdict.Verdict {
	v := passVerdict(c)
	v.HeldOut = verdict.HeldOutRan
	for i := range v.Steps {
		if v.Steps[i].Rule == verdict.RulePatchHeldOut {
			v.Steps[i].Expected, v.Steps[i].Exit = intp(0), intp(0)
			v.Steps[i].Runs = []verdict.RunResult{run(heldOutRun, 0)}
		}
	}
	return v
}

func TestCheckHeldOut(t *testing.T) {
	c, err := card.Parse("card.yml", []byte(heldOutCardYAML))
	if err != nil {
		t.Fatal(err)
	}
	failAt := func(s *Statement, rule string) {
		s.Predicate.Verdict, s.Predicate.Rule = "fail", strp(rule)
		if rule == verdict.RulePatchHeldOut || rule == verdict.RulePatchFlaky {
			c := stepOf(s, verdict.RulePatchCanary) // it comes after: not run
			c.Status, c.Runs = verdict.StatusNotRun, []Run{}
		}
	}
	tests := []struct {
		name string
		edit func(s *Statement)
		want Problem
	}{
		{"ran and held", func(*Statement) {}, ""},
		{"one file", func(s *Statement) { stepOf(s, verdict.RulePatchHeldOut).Runs[0].Argv = heldOutRun[:5] }, ""},
		{"no file", func(s *Statement) { stepOf(s, verdict.RulePatchHeldOut).Runs[0].Argv = heldOutRun[:4] }, ProblemArgv},
		{"another program", func(s *Statement) { stepOf(s, verdict.RulePatchHeldOut).Runs[0].Argv[0] = "python" }, ProblemArgv},
		{"an option slipped in", func(s *Statement) {
			r := &stepOf(s, verdict.RulePatchHeldOut).Runs[0]
			r.Argv = append(r.Argv[:4:4], "-p", "no:cacheprovider")
		}, ProblemArgv}, // the expansion holds copied files only
		{"a path outside dest", func(s *Statement) { stepOf(s, verdict.RulePatchHeldOut).Runs[0].Argv[4] = "src/test_a.py" }, ProblemArgv},
		{"a path through ..", func(s *Statement) { stepOf(s, verdict.RulePatchHeldOut).Runs[0].Argv[4] = "tests/../test_a.py" }, ProblemArgv},
		{"another expected exit", func(s *Statement) { stepOf(s, verdict.RulePatchHeldOut).Expected = intp(1) }, ProblemExpected},
		{"pass that failed the held-out tests", func(s *Statement) { stepOf(s, verdict.RulePatchHeldOut).Runs[0].Exit = 1 }, ProblemVerdict},
		{"pass with the runs dropped", func(s *Statement) { stepOf(s, verdict.RulePatchHeldOut).Runs = []Run{} }, ProblemVerdict},
		{"pass with the mode dropped", func(s *Statement) { s.Predicate.HeldOut = "" }, ProblemVerdict},
		{"pass claiming a skip with runs", func(s *Statement) { s.Predicate.HeldOut = verdict.HeldOutSkipped }, ProblemVerdict},
		{"pass with the tests skipped", func(s *Statement) {
			s.Predicate.HeldOut = verdict.HeldOutSkipped
			st := stepOf(s, verdict.RulePatchHeldOut)
			st.Runs, st.Expected = []Run{}, nil
		}, ""},
		{"pass without the tests given", func(s *Statement) {
			s.Predicate.HeldOut = verdict.HeldOutNotGiven
			st := stepOf(s, verdict.RulePatchHeldOut)
			st.Runs, st.Expected = []Run{}, nil
		}, ProblemVerdict},
		{"an unknown mode", func(s *Statement) { s.Predicate.HeldOut = "maybe" }, ProblemMalformed},
		{"fail at patch.held_out, runs failed", func(s *Statement) {
			failAt(s, verdict.RulePatchHeldOut)
			stepOf(s, verdict.RulePatchHeldOut).Runs[0].Exit = 1
		}, ""},
		{"fail at patch.held_out, not given", func(s *Statement) {
			failAt(s, verdict.RulePatchHeldOut)
			s.Predicate.HeldOut = verdict.HeldOutNotGiven
			st := stepOf(s, verdict.RulePatchHeldOut)
			st.Runs, st.Expected = []Run{}, nil
		}, ""},
		{"fail at patch.held_out whose runs held", func(s *Statement) { failAt(s, verdict.RulePatchHeldOut) }, ProblemVerdict},
		{"fail at patch.held_out when skipped", func(s *Statement) {
			failAt(s, verdict.RulePatchHeldOut)
			s.Predicate.HeldOut = verdict.HeldOutSkipped
			st := stepOf(s, verdict.RulePatchHeldOut)
			st.Runs, st.Expected = []Run{}, nil
		}, ProblemVerdict},
		{"flaky held-out runs", func(s *Statement) {
			failAt(s, verdict.RulePatchFlaky)
			st := stepOf(s, verdict.RulePatchHeldOut)
			st.Runs = append(st.Runs, Run{Argv: heldOutRun, Exit: 1})
		}, ""},
		{"flaky held-out runs blamed on patch.held_out", func(s *Statement) {
			failAt(s, verdict.RulePatchHeldOut)
			st := stepOf(s, verdict.RulePatchHeldOut)
			st.Runs = append(st.Runs, Run{Argv: heldOutRun, Exit: 1})
		}, ProblemVerdict},
		{"held-out runs after patch.pass broke", func(s *Statement) {
			failAt(s, verdict.RulePatchPass)
			stepOf(s, verdict.RulePatchPass).Runs[0].Exit = 1
			st := stepOf(s, verdict.RulePatchInvariant)
			st.Runs, st.Expected = []Run{}, nil
		}, ProblemVerdict},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := testStatement(t, heldOutPass(c), c)
			tc.edit(s)
			err := Check(s, c)
			var got Problem
			if err != nil {
				var re *Error
				if !errors.As(err, &re) {
					t.Fatalf("Check = %v (%T), want a *record.Error", err, err)
				}
				got = re.Problem
			}
			if got != tc.want {
				t.Errorf("Check(%s) = %v, want problem %q", tc.name, err, tc.want)
			}
		})
	}

	// A card without held-out tests: the step holds no runs, no mode.
	plain := testCard(t)
	s := testStatement(t, passVerdict(plain), plain)
	if err := Check(s, plain); err != nil {
		t.Errorf("Check(plain pass) = %v", err)
	}
	s.Predicate.HeldOut = verdict.HeldOutRan
	if err := Check(s, plain); err == nil {
		t.Errorf("Check(plain card, held_out ran) = nil, want an error")
	}
	s = testStatement(t, passVerdict(plain), plain)
	st := stepOf(s, verdict.RulePatchHeldOut)
	st.Runs, st.Expected = []Run{{Argv: []string{"true"}}}, intp(0)
	if err := Check(s, plain); err == nil {
		t.Errorf("Check(plain card, held-out runs) = nil, want an error")
	}
	// A record made before patch.held_out existed still verifies for a
	// card without held-out tests, never for one with them.
	s = testStatement(t, passVerdict(plain), plain)
	s.Predicate.Steps = slices.DeleteFunc(s.Predicate.Steps, func(st Step) bool { return st.Rule == verdict.RulePatchHeldOut })
	if err := Check(s, plain); err != nil {
		t.Errorf("Check(plain pass recorded before patch.held_out) = %v", err)
	}
	s = testStatement(t, heldOutPass(c), c)
	s.Predicate.HeldOut = ""
	s.Predicate.Steps = slices.DeleteFunc(s.Predicate.Steps, func(st Step) bool { return st.Rule == verdict.RulePatchHeldOut })
	if err := Check(s, c); err == nil {
		t.Errorf("Check(held-out card, no patch.held_out step) = nil, want an error")
	}
	// The mode survives the canonical bytes and Parse.
	s = testStatement(t, heldOutPass(c), c)
	back, err := Parse(canonical(t, s))
	if err != nil || back.Predicate.HeldOut != verdict.HeldOutRan {
		t.Errorf("Parse(canonical) = %+v, %v; want held_out ran", back, err)
	}
}
