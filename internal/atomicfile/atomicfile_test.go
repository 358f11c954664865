package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "doc.json")
	for _, data := range []string{"first\n", "second, longer than the first\n", ""} {
		if err := Write(p, []byte(data), 0o640); err != nil {
			t.Fatalf("Write(%q) = %v", data, err)
		}
		got, err := os.ReadFile(p)
		if err != nil || string(got) != data {
			t.Fatalf("after Write(%q): file holds %q, %v", data, got, err)
		}
		if st, _ := os.Stat(p); st.Mode().Perm() != 0o640 {
			t.Errorf("Write(%q): mode %v, want 0640", data, st.Mode().Perm())
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*tmp*")); len(left) > 0 {
		t.Errorf("temporary files left behind: %v", left)
	}
}

func TestCreate(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "card.yml")
	if err := Create(p, []byte("one\n"), 0o644); err != nil {
		t.Fatalf("Create(new) = %v", err)
	}
	if err := Create(p, []byte("two\n"), 0o644); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("Create(existing) = %v, want fs.ErrExist", err)
	}
	if got, _ := os.ReadFile(p); string(got) != "one\n" {
		t.Errorf("Create(existing) changed the file to %q", got)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*tmp*")); len(left) > 0 {
		t.Errorf("temporary files left behind: %v", left)
	}
}

func TestWriteMissingFolder(t *testing.T) {
	if err := Write(filepath.Join(t.TempDir(), "no", "such", "x"), []byte("x"), 0o644); err == nil {
		t.Fatal("Write into a missing folder: no error")
	}
}
