package signoff

import (
	"strings"
	"testing"
)

func TestReference(t *testing.T) {
	ok := func(code int) Outcome { return Outcome{Exit: code} }
	lost := Outcome{Inconclusive: true}
	env := Outcome{Exit: 1, Inconclusive: true, Environment: "no module named pytest"}
	sign := Verdict{DecisionSign, "fail exits 1"}
	dirty := Verdict{DecisionDirty, "invariant exits 1"}
	for _, tc := range []struct {
		name string
		v    Verdict
		ref  ReferenceCheck
		want Decision
	}{
		{"both pass", sign, ReferenceCheck{Pass: ok(0), Invariant: ok(0)}, DecisionSign},
		{"pass fails", sign, ReferenceCheck{Pass: ok(1), Invariant: ok(0)}, DecisionUnsatisfiable},
		{"invariant fails", sign, ReferenceCheck{Pass: ok(0), Invariant: ok(2)}, DecisionUnsatisfiable},
		{"pass inconclusive", sign, ReferenceCheck{Pass: lost, Invariant: ok(0)}, DecisionUnsatisfiable},
		{"invariant inconclusive", sign, ReferenceCheck{Pass: ok(0), Invariant: lost}, DecisionUnsatisfiable},
		{"pass failed for its environment", sign, ReferenceCheck{Pass: env, Invariant: ok(0)}, DecisionEnvironment},
		{"invariant failed for its environment", sign, ReferenceCheck{Pass: ok(0), Invariant: env}, DecisionEnvironment},
		{"refused by the budget", sign, ReferenceCheck{Refused: "breaks budget.files"}, DecisionUnsatisfiable},
		{"an earlier row wins", dirty, ReferenceCheck{Pass: ok(1), Invariant: ok(1)}, DecisionDirty},
	} {
		got := Reference(tc.v, tc.ref, 0, 0)
		if got.Decision != tc.want || got.Reason == "" {
			t.Errorf("%s: Reference(%+v, %+v, 0, 0) = %+v, want %s", tc.name, tc.v, tc.ref, got, tc.want)
		}
	}
	if got := Reference(sign, ReferenceCheck{Pass: ok(3), Invariant: ok(0)}, 3, 0); got.Decision != DecisionSign {
		t.Errorf("Reference with expect_exit 3 = %+v, want sign", got)
	}
}

func TestDecideMutation(t *testing.T) {
	for _, tc := range []struct {
		r     Outcome
		valid bool
		why   string
	}{
		{Outcome{Exit: 1}, true, ""},
		{Outcome{Exit: 0}, false, "does not hinge on its literal"},
		{Outcome{Exit: 1, Inconclusive: true}, false, "inconclusive"},
		{Outcome{Exit: 2, Environment: "no module named pytest"}, false, "for its environment"},
	} {
		valid, why := DecideMutation(tc.r)
		if valid != tc.valid || !strings.Contains(why, tc.why) || (tc.why == "") != (why == "") {
			t.Errorf("DecideMutation(%+v) = %v %q, want %v and %q", tc.r, valid, why, tc.valid, tc.why)
		}
	}
}
