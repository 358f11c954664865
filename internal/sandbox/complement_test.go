package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestComplementIn checks the Landlock grants for a folder with a part
// hidden: every entry on the way to the hidden folder but the way itself,
// and the folder whole when nothing below it is hidden.
func TestComplementIn(t *testing.T) {
	top, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"objects", "failpass/logs/run1", "failpass/cache", "failpass/wt"} {
		if err := os.MkdirAll(filepath.Join(top, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(top, "HEAD"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := complementIn(top, []string{filepath.Join(top, "failpass/logs")})
	slices.Sort(got)
	want := []string{filepath.Join(top, "HEAD"), filepath.Join(top, "failpass/cache"), filepath.Join(top, "failpass/wt"), filepath.Join(top, "objects")}
	if !slices.Equal(got, want) {
		t.Errorf("complementIn(top, [failpass/logs]) = %q, want %q", got, want)
	}
	if got := complementIn(top, []string{"/elsewhere"}); !slices.Equal(got, []string{top}) {
		t.Errorf("complementIn(top, [/elsewhere]) = %q, want [top]", got)
	}
	if got := complementIn(top, []string{top}); got != nil {
		t.Errorf("complementIn(top, [top]) = %q, want nothing", got)
	}
}
