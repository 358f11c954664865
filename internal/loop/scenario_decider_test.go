package loop

import (
	"strings"
	"testing"
)

func TestExternalDecider(t *testing.T) {
	if testing.Short() {
		t.Skip("runs whole loops with a decider program: the full suite runs it")
	}
	cases := []struct {
		name, disposition, state, reason string
		commits                          int
	}{
		{"accepts", "accepted", "converged", "", 1},
		{"rejects", "rejected", "blocked", "operator_input_required", 0},
		{"defers", "deferred", "blocked", "operator_input_required", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newScen(t, "hello BUG1\n")
			s.script("reviewer", bugReviewer)
			s.script("fixer", fixFirstBug)
			s.script("decider", `cat >/dev/null
printf '{"dispositions":[{"finding_id":"f-bug1","disposition":"`+c.disposition+`","rationale":"the decider says so"}]}'
`)
			cfg := s.config("reviewer", "fixer")
			cfg.Decider = s.adapter("cmd:decider")
			out := s.start(s.invocation("decider-"+c.name, 3), cfg)
			want(t, out, c.state, c.reason)
			if n := s.commitsSinceHead(); n != c.commits {
				t.Fatalf("%d commits, want %d", n, c.commits)
			}
			d := out.Result.ReviewRecords[0].FindingDispositions[0]
			if d.Disposition != c.disposition || !strings.Contains(d.Rationale, "decider") {
				t.Fatalf("disposition %+v", d)
			}
		})
	}
}

func TestDeciderCannotWidenTheBuiltInChecks(t *testing.T) {
	s := newScen(t, "hello world\n")
	// A finding whose evidence names a file that does not exist.
	s.script("reviewer", reviewerPrelude+`result changes_required "$(finding f1 ghost ghost.txt:1 blocking high)"
`)
	s.script("fixer", "echo x > ghost.txt\n")
	s.script("decider", `cat >/dev/null
printf '{"dispositions":[{"finding_id":"f1","disposition":"accepted","rationale":"yes"}]}'
`)
	cfg := s.config("reviewer", "fixer")
	cfg.Decider = s.adapter("cmd:decider")
	out := s.start(s.invocation("decider-narrow", 3), cfg)
	want(t, out, "blocked", "operator_input_required")
	if d := out.Result.ReviewRecords[0].FindingDispositions[0]; d.Disposition != Rejected || !strings.Contains(d.Rationale, "does not exist") {
		t.Fatalf("disposition %+v", d)
	}
}
