package loop

import "testing"

func TestBaseDriftRebuildsEvidenceWithoutSpendingACycle(t *testing.T) {
	s := newScen(t, "hello BUG1\n")
	s.script("reviewer", bugReviewer)
	s.script("fixer", fixFirstBug)
	cfg := s.config("reviewer", "fixer")
	moved := ""
	cfg.hook = func(p string) error {
		if p == "before-publish" && moved == "" {
			// main advances by one commit just before publication.
			tree := git(t, s.dir, "rev-parse", s.base+"^{tree}")
			moved = git(t, s.dir, "commit-tree", tree, "-p", s.base, "-m", "main moves")
			git(t, s.dir, "update-ref", "refs/heads/main", moved)
		}
		return nil
	}
	out := s.start(s.invocation("drift", 3), cfg)
	want(t, out, "converged", "")
	r := out.Result
	if len(r.BaseRevisionHistory) != 2 || r.ComparisonBase.Final.SHA != moved || r.Budget.ConsumedCycles != 1 {
		t.Fatalf("bases %v, consumed %d", r.BaseRevisionHistory, r.Budget.ConsumedCycles)
	}
	last := r.ReviewRecords[len(r.ReviewRecords)-1]
	if last.ComparisonBaseSHA != moved || last.AggregateVerdict != "clean" {
		t.Fatalf("the final review is not bound to the new base: %+v", last)
	}
	if !r.AcceptanceReconciliationRequired {
		t.Fatal("a moved base requires acceptance reconciliation")
	}
}
