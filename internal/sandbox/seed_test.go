package sandbox

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestSeedGoCache(t *testing.T) {
	common := t.TempDir()
	write := func(p, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	older := BuildCacheDir(common, "from-commit")
	write(filepath.Join(goCacheDir(older), "ab", "old-d"), "older output")
	newer := BuildCacheDir(common, "aaaa")
	write(filepath.Join(goCacheDir(newer), "ab", "out-d"), "output")
	write(filepath.Join(goCacheDir(newer), "ab", "act-a"), "v1 act out 6 0\n")
	write(filepath.Join(goCacheDir(newer), "trim.txt"), "1\n")
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(filepath.Join(goCacheDir(newer), "ab"), later, later); err != nil {
		t.Fatal(err)
	}

	fresh := BuildCacheDir(common, "bbbb")
	unlock, err := LockCache(fresh)
	if err != nil {
		t.Fatal(err)
	}
	unlock()
	// The newest cache seeds the new one: its outputs as links, its
	// action entries and bookkeeping as copies.
	same := func(name string) bool {
		a, err1 := os.Stat(filepath.Join(goCacheDir(newer), name))
		b, err2 := os.Stat(filepath.Join(goCacheDir(fresh), name))
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: %v, %v", name, err1, err2)
		}
		return os.SameFile(a, b)
	}
	if !same("ab/out-d") {
		t.Error("an output was copied, not linked")
	}
	if same("ab/act-a") || same("trim.txt") {
		t.Error("an action entry or the cache's bookkeeping is shared: a run of one cache would rewrite the other's")
	}
	if b, _ := os.ReadFile(filepath.Join(goCacheDir(fresh), "ab", "act-a")); string(b) != "v1 act out 6 0\n" {
		t.Errorf("action entry copied as %q", b)
	}
	if _, err := os.Stat(filepath.Join(goCacheDir(fresh), "ab", "old-d")); err == nil {
		t.Error("seeded from an older cache than the newest")
	}

	// An existing cache is never seeded again: what its runs removed stays
	// removed.
	os.Remove(filepath.Join(goCacheDir(fresh), "ab", "out-d"))
	unlock, err = LockCache(fresh)
	if err != nil {
		t.Fatal(err)
	}
	unlock()
	if _, err := os.Stat(filepath.Join(goCacheDir(fresh), "ab", "out-d")); err == nil {
		t.Error("an existing cache was seeded again")
	}

	// The first cache of a repository starts cold.
	lone := BuildCacheDir(t.TempDir(), "cccc")
	unlock, err = LockCache(lone)
	if err != nil {
		t.Fatal(err)
	}
	unlock()
	if _, err := os.Stat(goCacheDir(lone)); err == nil {
		t.Error("a cache with nothing beside it got a go cache")
	}
}
