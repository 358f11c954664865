package sandbox

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestKeep: a candidate's layer is moved, with its note, where OpenKept
// finds it; a second Keep at the same place leaves the first; closing
// the kept layer removes nothing, and gc's RemoveBuildCache skips it
// while it is open.
func TestKeep(t *testing.T) {
	common := t.TempDir()
	lower := BuildCacheDir(common, "sha256:0123456789abcdef")
	dir := KeptDir(common, "abc123")
	keep := func(content, note string) {
		t.Helper()
		cc, err := OpenCandidateCache(common, lower)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(cc.upper(), "entry"), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := cc.Keep(dir, []byte(note)); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Lstat(cc.Dir); err == nil {
			t.Fatalf("the candidate's folder %s is still there after Keep", cc.Dir)
		}
	}
	keep("first", "note 1")
	keep("second", "note 2")
	kc, note, ok := OpenKept(dir)
	if !ok {
		t.Fatal("OpenKept found no layer")
	}
	if string(note) != "note 1" {
		t.Errorf("note = %q, want the first Keep's", note)
	}
	if b, err := os.ReadFile(filepath.Join(kc.upper(), "entry")); err != nil || string(b) != "first" {
		t.Errorf("kept entry = %q, %v; want the first layer's", b, err)
	}
	if !IsBuildCache(dir) {
		t.Errorf("IsBuildCache(%s) = false: gc would remove it without its lock", dir)
	}
	if removed, err := RemoveBuildCache(dir); err != nil || removed {
		t.Errorf("RemoveBuildCache of a kept layer in use = %v, %v; want it skipped", removed, err)
	}
	kc.Close()
	if _, err := os.Lstat(filepath.Join(dir, "upper", "entry")); err != nil {
		t.Errorf("closing a kept layer removed it: %v", err)
	}
	if removed, err := RemoveBuildCache(dir); err != nil || !removed {
		t.Errorf("RemoveBuildCache of a kept layer no one holds = %v, %v; want it removed", removed, err)
	}
	if _, _, ok := OpenKept(dir); ok {
		t.Error("OpenKept found a removed layer")
	}
	if _, _, ok := OpenKept(KeptDir(common, "../x")); ok {
		t.Error("OpenKept found a layer at an id that is a path")
	}
}

// TestEvictKept: beyond the bound, the least recently used kept layers
// go, but never one a gate holds.
func TestEvictKept(t *testing.T) {
	common := t.TempDir()
	lower := BuildCacheDir(common, "sha256:0123456789abcdef")
	for i, id := range []string{"a", "b", "c", "d"} {
		cc, err := OpenCandidateCache(common, lower)
		if err != nil {
			t.Fatal(err)
		}
		if err := cc.Keep(KeptDir(common, id), []byte(id)); err != nil {
			t.Fatal(err)
		}
		used := time.Now().Add(time.Duration(i-10) * time.Hour) // a the oldest
		if err := os.Chtimes(filepath.Join(KeptDir(common, id), keptNote), used, used); err != nil {
			t.Fatal(err)
		}
	}
	held, _, ok := OpenKept(KeptDir(common, "a")) // renews a's time: set it back
	if !ok {
		t.Fatal("OpenKept found no layer a")
	}
	defer held.Close()
	old := time.Now().Add(-20 * time.Hour)
	os.Chtimes(filepath.Join(KeptDir(common, "a"), keptNote), old, old)
	evictKept(filepath.Dir(KeptDir(common, "a")), 2)
	for id, want := range map[string]bool{"a": true, "b": false, "c": true, "d": true} {
		if _, err := os.Lstat(KeptDir(common, id)); (err == nil) != want {
			t.Errorf("layer %s: there = %v, want %v", id, err == nil, want)
		}
	}
}
