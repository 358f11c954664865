package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
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

// leftovers lists what is in dir besides the names given.
func leftovers(t *testing.T, dir string, want ...string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var extra []string
	for _, e := range ents {
		if !slices.Contains(want, e.Name()) {
			extra = append(extra, e.Name())
		}
	}
	return extra
}

// Writers sharing one path (gates sharing a --junit file) each use a
// temporary file of their own: every write succeeds, the file is one of
// theirs whole, and no temporary file is left.
func TestWriteConcurrent(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "report.xml")
	const n = 16
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				if err := Write(p, []byte(strings.Repeat(strconv.Itoa(i%10), 4096+i)), 0o644); err != nil {
					errs[i] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("writer %d: %v", i, err)
		}
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	i := len(b) - 4096
	if i < 0 || i >= n || string(b) != strings.Repeat(strconv.Itoa(i%10), 4096+i) {
		t.Errorf("the file is no writer's whole content (%d bytes)", len(b))
	}
	if extra := leftovers(t, dir, "report.xml"); len(extra) > 0 {
		t.Errorf("left behind: %q", extra)
	}
}

// A write that fails leaves the old file and no temporary file: here the
// rename fails (a folder is in the way), and on a full disk (a 16 KiB
// tmpfs, where the machine lets the test mount one) the write does.
func TestWriteFailureLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "in-the-way"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "in-the-way", "x"), nil, 0o644)
	if err := Write(filepath.Join(dir, "in-the-way"), []byte("data"), 0o644); err == nil {
		t.Error("Write over a non-empty folder: no error")
	}
	if extra := leftovers(t, dir, "in-the-way"); len(extra) > 0 {
		t.Errorf("a failed rename left %q", extra)
	}

	full := t.TempDir()
	if err := mountTiny(full); err != nil {
		t.Skipf("no small file system to fill: %v", err)
	}
	defer unmount(full)
	p := filepath.Join(full, "report.xml")
	if err := Write(p, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Write(p, make([]byte, 1<<20), 0o644); err == nil {
		t.Fatal("Write of 1 MiB into 16 KiB: no error")
	}
	if b, _ := os.ReadFile(p); string(b) != "old\n" {
		t.Errorf("after a failed write the file holds %d bytes, want the old content", len(b))
	}
	if extra := leftovers(t, full, "report.xml"); len(extra) > 0 {
		t.Errorf("a full disk left %q", extra)
	}
}

func TestWriteUnsynced(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x.owner")
	for _, data := range []string{"first\n", "second\n"} {
		if err := WriteUnsynced(p, []byte(data), 0o640); err != nil {
			t.Fatalf("WriteUnsynced = %v", err)
		}
		if b, _ := os.ReadFile(p); string(b) != data {
			t.Errorf("after WriteUnsynced(%q) the file holds %q", data, b)
		}
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0640", fi.Mode().Perm())
	}
	if extra := leftovers(t, dir, "x.owner"); len(extra) > 0 {
		t.Errorf("left behind: %q", extra)
	}
}

// Replace writes through a symlink to its target, keeps the target's
// mode, and refuses (writing nothing) when the file no longer holds what
// the caller read.
func TestReplace(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "card.yml")
	if err := os.WriteFile(target, []byte("old"), 0o640); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.yml")
	if err := os.Symlink("card.yml", link); err != nil {
		t.Fatal(err)
	}
	if err := Replace(link, []byte("new"), []byte("stale")); !errors.Is(err, ErrChanged) {
		t.Fatalf("Replace with a stale original = %v, want ErrChanged", err)
	}
	if b, _ := os.ReadFile(target); string(b) != "old" {
		t.Fatalf("a refused Replace wrote %q", b)
	}
	if err := Replace(link, []byte("new"), []byte("old")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(target); string(b) != "new" {
		t.Errorf("target holds %q, want new", b)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the symlink was replaced: %v, %v", fi, err)
	}
	if fi, _ := os.Stat(target); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0640 kept", fi.Mode().Perm())
	}
	if got := leftovers(t, dir, "card.yml", "link.yml"); len(got) != 0 {
		t.Errorf("left behind: %q", got)
	}
	if err := Replace(filepath.Join(dir, "missing"), []byte("x"), nil); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Replace of a missing file = %v, want ErrNotExist", err)
	}
}
