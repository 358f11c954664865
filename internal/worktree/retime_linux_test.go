package worktree

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestRetime: after Retime, a file an earlier run read shows no access
// later than its modification, a folder an earlier run wrote in has its
// first times back, and Restore still finds the tree as recorded.
func TestRetime(t *testing.T) {
	repo, base := newRepo(t)
	w := checkout(t, repo, base)
	s, err := w.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	dirs := map[string]int64{}
	if err := w.Retime(s, dirs); err != nil {
		t.Fatal(err)
	}
	first, _ := os.Lstat(w.Dir)
	// A run: reads a.txt later, writes and removes a file at the top.
	time.Sleep(20 * time.Millisecond)
	os.ReadFile(filepath.Join(w.Dir, "a.txt"))
	fi, _ := os.Lstat(filepath.Join(w.Dir, "a.txt"))
	read := fi.Sys().(*syscall.Stat_t).Atim.Nano() > fi.Sys().(*syscall.Stat_t).Mtim.Nano()
	os.WriteFile(filepath.Join(w.Dir, "run.log"), []byte("x"), 0o644)
	if same, err := w.Restore(s); err != nil || !same {
		t.Fatalf("Restore = %v, %v", same, err)
	}
	if err := w.Retime(s, dirs); err != nil {
		t.Fatal(err)
	}
	if !read {
		t.Log("this file system records no access times (noatime): only the folder's times are checked")
	}
	fi, _ = os.Lstat(filepath.Join(w.Dir, "a.txt"))
	st := fi.Sys().(*syscall.Stat_t)
	if st.Atim.Nano() != st.Mtim.Nano() {
		t.Errorf("a.txt: access %d, modification %d: want them equal", st.Atim.Nano(), st.Mtim.Nano())
	}
	if now, _ := os.Lstat(w.Dir); !now.ModTime().Equal(first.ModTime()) {
		t.Errorf("top folder: modified %v, want %v as first seen", now.ModTime(), first.ModTime())
	}
	if same, err := w.Restore(s); err != nil || !same {
		t.Errorf("Restore after Retime = %v, %v; want the tree as recorded", same, err)
	}
	// A change after Retime is still seen.
	os.WriteFile(filepath.Join(w.Dir, "a.txt"), []byte("other\n"), 0o644)
	if same, _ := w.Restore(s); same {
		t.Errorf("Restore after a change = true")
	}
}
