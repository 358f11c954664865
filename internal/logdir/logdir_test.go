package logdir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestNewPrivateAndBounded: every kind's folder is private, and the
// least recently written beyond Keep go, whatever their kind.
func TestNewPrivateAndBounded(t *testing.T) {
	state := t.TempDir()
	old := time.Now().Add(-time.Hour)
	var first string
	for i := range Keep {
		kind := []string{"", "sign", "from-commit"}[i%3]
		d, err := New(state, kind)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = d
			os.Chtimes(d, old, old) // the least recently written
		}
		if fi, err := os.Stat(d); err != nil || fi.Mode().Perm() != Mode {
			t.Fatalf("%s: mode %v, %v; want %v", d, fi.Mode().Perm(), err, os.FileMode(Mode))
		}
		if kind != "" && !strings.HasPrefix(filepath.Base(d), kind+"-") {
			t.Errorf("%s: not named for %q", d, kind)
		}
	}
	if _, err := os.Stat(first); err != nil {
		t.Fatalf("the first folder went before the log folder held %d: %v", Keep, err)
	}
	last, err := New(state, "sign")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(first); !os.IsNotExist(err) {
		t.Errorf("the least recently written folder is still there: %v", err)
	}
	entries, _ := os.ReadDir(filepath.Dir(last))
	if len(entries) != Keep {
		t.Errorf("%d folders, want %d", len(entries), Keep)
	}
}
