package record

import (
	"context"
	"strings"
	"testing"

	"github.com/failpass/failpass/internal/gitpatch"
	"github.com/failpass/failpass/internal/patch"
)

// TestOfTakesTheVerdict: Of builds the same record from a verdict that
// carries its tree and change set as from one that does not (then it
// computes them), and takes what the verdict carries as it is: a planted
// tree or change set shows up in the record, so nothing was recomputed.
func TestOfTakesTheVerdict(t *testing.T) {
	ctx := context.Background()
	repo, base := testRepo(t)
	c := testCard(t)
	cs, err := gitpatch.Read(ctx, testDiff)
	if err != nil {
		t.Fatal(err)
	}
	p, err := PatchedTree(ctx, repo, base, testDiff)
	if err != nil || !p.Applied {
		t.Fatalf("PatchedTree = %+v, %v", p, err)
	}
	of := func(tree string, changes *patch.ChangeSet) *Statement {
		t.Helper()
		v := passVerdict(c)
		v.Base, v.Tree, v.Changes = base, tree, changes
		s, err := Of(ctx, repo, c, testDiff, v, testTime)
		if err != nil {
			t.Fatalf("Of: %v", err)
		}
		s.Predicate.Tool = "failpass test"
		return s
	}
	bare := canonical(t, of("", nil))
	if carried := canonical(t, of(p.Tree, cs)); string(carried) != string(bare) {
		t.Errorf("Of(verdict with tree and changes) =\n%s\nwant what Of computes itself:\n%s", carried, bare)
	}
	if !strings.Contains(string(bare), p.Tree) {
		t.Errorf("Of(verdict) = %s, want subject tree %s", bare, p.Tree)
	}

	planted := strings.Repeat("7", 40)
	other := &patch.ChangeSet{Files: []patch.File{{OldPath: "other", NewPath: "other", Status: patch.Modified, Added: 3, Deleted: 2}}}
	s := of(planted, other)
	if s.Tree() != planted || len(s.Predicate.Diff.Files) != 1 || s.Predicate.Diff.Files[0].Path != "other" || !s.Predicate.Diff.Applied {
		t.Errorf("Of(verdict with tree %s and file other) = subject %s, files %+v: recomputed instead of taken", planted, s.Tree(), s.Predicate.Diff.Files)
	}
}
