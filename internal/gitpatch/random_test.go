package gitpatch

import (
	"context"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/failpass/failpass/internal/patch"
)

// TestRandomEdits drives the whole pipeline on random edits git itself
// turns into diffs: Read, ResolveModes, git apply in a worktree, Actual,
// Equal, and the same file and line counts on both sides.
func TestRandomEdits(t *testing.T) {
	if testing.Short() {
		t.Skip("drives git a few hundred times")
	}
	ctx := context.Background()
	rng := rand.New(rand.NewSource(4419))
	names := []string{"a.txt", "src/b.py", "src/deep/c.go", "d e.txt", "docs/f.md", "caf\u00e9.txt", "bin/g.bin", "h.sh"}
	lines := func(n int) string {
		var b strings.Builder
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "line %d %d\n", i, rng.Intn(3))
		}
		return b.String()
	}
	for round := 0; round < 12; round++ {
		t.Run(fmt.Sprint(round), func(t *testing.T) {
			base := map[string]string{}
			for _, n := range names {
				if rng.Intn(4) > 0 {
					base[n] = lines(3 + rng.Intn(20))
				}
			}
			base["bin/g.bin"] = "\x00\x01" + lines(2)
			r := newRepo(t, base)
			edit := map[string]string{}
			for _, n := range names {
				_, exists := base[n]
				switch op := rng.Intn(7); {
				case op == 0 && exists:
					edit[n] = "" // delete
				case op == 1:
					edit[n] = lines(3 + rng.Intn(20)) // rewrite or create
				case op == 2 && exists:
					edit[n] = base[n] + lines(rng.Intn(3)+1) // append
				case op == 3 && exists:
					edit[n+"*"] = base[n] // chmod +x
				case op == 4 && exists:
					edit[n] = ""
					edit["moved/"+n] = base[n] + "tail\n" // rename with an edit
				case op == 5:
					edit["links/"+strings.ReplaceAll(n, "/", "_")] = "->../" + n
				}
			}
			diff := r.change(edit)
			if len(diff) == 0 {
				return
			}
			cs, err := Read(ctx, diff)
			if err != nil {
				t.Fatalf("Read(%q): %v", diff, err)
			}
			stated := cs.Stated()
			before := slices.Clone(cs.Files)
			if err := ResolveModes(ctx, r.repo, r.base, cs); err != nil {
				t.Fatalf("ResolveModes(%q): %v", diff, err)
			}
			// The gate judges a stated change set before the base is read:
			// reading the base must then change nothing in it.
			if stated && !slices.Equal(before, cs.Files) {
				t.Fatalf("Stated() but ResolveModes changed the files\ndiff %q\nbefore %+v\nafter  %+v", diff, before, cs.Files)
			}
			act, err := Actual(ctx, r.repo, r.applied(diff), r.base)
			if err != nil {
				t.Fatal(err)
			}
			if ok, why := cs.Equal(act); !ok {
				t.Fatalf("Equal = false (%s)\ndiff %q\nstatic %+v\nactual %+v", why, diff, cs.Files, act.Files)
			}
			if a, s := act.ChangedFiles(), cs.ChangedFiles(); a != s {
				t.Errorf("ChangedFiles: actual %d, static %d", a, s)
			}
			if a, s := act.ChangedLines(), cs.ChangedLines(); a != s {
				t.Errorf("ChangedLines: actual %d, static %d", a, s)
			}
			t.Logf("%d sections, %d files, %d lines, stated %v", len(cs.Files), cs.ChangedFiles(), cs.ChangedLines(), stated)
			for i, f := range cs.Files {
				if f.Symlink && f.Status != patch.Deleted && f.SymlinkTarget == "" {
					t.Errorf("file %d %+v: symlink without target", i, f)
				}
			}
		})
	}
}
