package signoff

import "testing"

func TestDecide(t *testing.T) {
	ok := func(code int) Outcome { return Outcome{Exit: code} }
	lost := Outcome{Inconclusive: true}
	env := func(code int) Outcome {
		return Outcome{Exit: code, Inconclusive: true, Environment: "go test could not build package x"}
	}
	for _, tc := range []struct {
		name      string
		fail      []Outcome
		expect    int
		invariant Outcome
		want      Decision
		expectInv int
	}{
		{"all agree, invariant passes", []Outcome{ok(1), ok(1), ok(1)}, 1, ok(0), DecisionSign, 0},
		{"single run", []Outcome{ok(3)}, 3, ok(0), DecisionSign, 0},
		{"one run in three fails", []Outcome{ok(1), ok(0), ok(1)}, 1, ok(0), DecisionNondeterministic, 0},
		{"one run timed out", []Outcome{ok(1), lost, ok(1)}, 1, ok(0), DecisionNondeterministic, 0},
		{"inconclusive beats stale", []Outcome{ok(0), lost}, 1, ok(0), DecisionNondeterministic, 0},
		{"disagreement beats stale", []Outcome{ok(0), ok(0), ok(2)}, 1, ok(0), DecisionNondeterministic, 0},
		{"no runs", nil, 1, ok(0), DecisionNondeterministic, 0},
		{"already passes", []Outcome{ok(0), ok(0), ok(0)}, 1, ok(0), DecisionStale, 0},
		{"stale beats dirty", []Outcome{ok(0), ok(0)}, 1, ok(1), DecisionStale, 0},
		{"wrong code", []Outcome{ok(2), ok(2), ok(2)}, 1, ok(0), DecisionMismatch, 0},
		{"mismatch beats dirty", []Outcome{ok(2), ok(2)}, 1, ok(1), DecisionMismatch, 0},
		{"invariant fails", []Outcome{ok(1), ok(1), ok(1)}, 1, ok(1), DecisionDirty, 0},
		{"invariant inconclusive", []Outcome{ok(1), ok(1), ok(1)}, 1, lost, DecisionDirty, 0},
		{"invariant exit 0 when card expects 3", []Outcome{ok(1)}, 1, ok(0), DecisionDirty, 3},
		{"fail run did not build", []Outcome{env(1)}, 1, ok(0), DecisionEnvironment, 0},
		{"environment beats nondeterministic", []Outcome{ok(1), lost, env(1)}, 1, ok(0), DecisionEnvironment, 0},
		{"environment beats stale and dirty", []Outcome{ok(0), env(1)}, 1, ok(1), DecisionEnvironment, 0},
		{"invariant did not build", []Outcome{ok(1), ok(1)}, 1, env(1), DecisionEnvironment, 0},
	} {
		got := Decide(tc.fail, tc.expect, tc.invariant, tc.expectInv)
		if got.Decision != tc.want || got.Reason == "" {
			t.Errorf("%s: Decide(%v, %d, %v, %d) = %+v, want %s", tc.name, tc.fail, tc.expect, tc.invariant, tc.expectInv, got, tc.want)
		}
	}
}

func TestDecideHeldOut(t *testing.T) {
	signed := Verdict{DecisionSign, "the fail command exits 1 in 3 of 3 runs and the invariant passes"}
	for _, tc := range []struct {
		name    string
		before  Verdict
		heldOut Outcome
		expect  int
		want    Decision
	}{
		{"held-out tests fail on the base", signed, Outcome{Exit: 1}, 0, DecisionSign},
		{"held-out tests pass on the base", signed, Outcome{Exit: 0}, 0, DecisionMismatch},
		{"held-out exit is what a fix must give", signed, Outcome{Exit: 3}, 3, DecisionMismatch},
		{"held-out tests cannot start on the base", signed, Outcome{Exit: 1, Inconclusive: true, Environment: "No module named pytest"}, 0, DecisionEnvironment},
		{"held-out run inconclusive", signed, Outcome{Exit: 127, Inconclusive: true}, 0, DecisionMismatch},
		{"an earlier row wins", Verdict{DecisionDirty, "invariant"}, Outcome{Exit: 0}, 0, DecisionDirty},
		{"an earlier row wins over a good held-out run", Verdict{DecisionStale, "stale"}, Outcome{Exit: 1}, 0, DecisionStale},
	} {
		got := DecideHeldOut(tc.before, tc.heldOut, tc.expect)
		if got.Decision != tc.want || got.Reason == "" {
			t.Errorf("%s: DecideHeldOut(%v, %v, %d) = %+v, want %s", tc.name, tc.before, tc.heldOut, tc.expect, got, tc.want)
		}
	}
}
