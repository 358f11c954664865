package gate

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPatchedTree: a verdict carries the tree a record names, and it is
// the tree `git apply --cached` makes of the base, the definition
// `record verify` recomputes, even where the worktree's own reading
// differs: under `* text=auto` a CRLF line the patch writes is
// normalized by `git add`, but not by `git apply --cached`.
func TestPatchedTree(t *testing.T) {
	ctx := context.Background()
	repo, _ := newRepo(t)
	dir := repo.Dir
	write(t, dir, ".gitattributes", "* text=auto\n")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "attributes")
	base := strings.TrimSpace(git(t, dir, "rev-parse", "HEAD"))
	diff := []byte("diff --git a/src/lib.sh b/src/lib.sh\n--- a/src/lib.sh\n+++ b/src/lib.sh\n@@ -1 +1 @@\n-answer=41\n+answer=42\n" +
		"diff --git a/notes.txt b/notes.txt\nnew file mode 100644\n--- /dev/null\n+++ b/notes.txt\n@@ -0,0 +1 @@\n+crlf\r\n")

	// The definition, by hand: base's tree, the diff applied to the
	// index. (The checkout's index serves: the test's git calls drop
	// GIT_INDEX_FILE, as failpass's do.)
	git(t, dir, "read-tree", base)
	git(t, dir, "apply", "--cached", "--whitespace=nowarn", writeTemp(t, diff))
	want := strings.TrimSpace(git(t, dir, "write-tree"))
	// What the worktree's reading stages: not the same tree here.
	git(t, dir, "read-tree", base)
	git(t, dir, "apply", "--whitespace=nowarn", writeTemp(t, diff))
	git(t, dir, "add", "--all")
	worktreeTree := strings.TrimSpace(git(t, dir, "write-tree"))
	git(t, dir, "reset", "-q", "--hard")
	if worktreeTree == want {
		t.Fatalf("the case does not tell the two readings apart: both make %s", want)
	}

	for _, tt := range []struct {
		name string
		ask  bool
		want string
	}{
		{"asked", true, want},
		{"not asked", false, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := testCard(t)
			v, err := Run(ctx, Options{Bound: testBound(t, repo, c, base), Diff: diff, DiffName: "crlf",
				AllowUnsigned: true, Sandbox: SandboxOff, PatchedTree: tt.ask})
			if err != nil {
				t.Fatal(err)
			}
			if v.Failed() != "" && v.Failed() != RulePatchPass {
				t.Fatalf("verdict %s at %s (%s), want one past diff.actual", v.Verdict, v.Failed(), v.Reason)
			}
			if v.Tree != tt.want {
				t.Errorf("Run(PatchedTree: %t).Tree = %q, want %q (the worktree's reading makes %s)", tt.ask, v.Tree, tt.want, worktreeTree)
			}
			if v.Changes == nil || len(v.Changes.Files) != 2 {
				t.Errorf("Run().Changes = %+v, want the diff's two files", v.Changes)
			}
		})
	}
}

func writeTemp(t *testing.T, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "x.diff")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
