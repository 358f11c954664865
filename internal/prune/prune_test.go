package prune

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestSelect(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	u := func(name string, age time.Duration, size int64) Unit {
		return Unit{Path: name, Bytes: size, LastUsed: now.Add(-age)}
	}
	units := []Unit{u("old", 40*day, 10), u("mid", 10*day, 100), u("new", day, 100), u("busy", time.Minute, 1000)}
	for _, tc := range []struct {
		name    string
		maxAge  time.Duration
		maxSize int64
		want    []string
	}{
		{"nothing due", 60 * day, 1 << 40, nil},
		{"by age", 30 * day, 1 << 40, []string{"old"}},
		{"by size, oldest first", 60 * day, 1150, []string{"old", "mid"}},
		{"size never takes a busy unit", 60 * day, 0, []string{"old", "mid", "new"}},
		{"age zero", 0, 1 << 40, []string{"old", "mid", "new"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Select(units, now, tc.maxAge, tc.maxSize)
			var names []string
			for _, g := range got {
				names = append(names, g.Path)
			}
			if len(names) != len(tc.want) {
				t.Fatalf("Select() = %v, want %v", names, tc.want)
			}
			for i := range names {
				if names[i] != tc.want[i] {
					t.Fatalf("Select() = %v, want %v", names, tc.want)
				}
			}
		})
	}
}

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true}, {"1024", 1024, true}, {"2GiB", 2 << 30, true}, {"2G", 2 << 30, true},
		{"500MB", 500e6, true}, {"1.5KiB", 1536, true}, {"5 GiB", 5 << 30, true},
		{"", 0, false}, {"GiB", 0, false}, {"-1", 0, false}, {"2XB", 0, false}, {"+5", 0, false}, {"1e30", 0, false},
	} {
		got, err := ParseSize(tc.in)
		if (err == nil) != tc.ok || (tc.ok && got != tc.want) {
			t.Errorf("ParseSize(%q) = %d, %v, want %d (ok %v)", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestParseAge(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"30d", 30 * 24 * time.Hour, true}, {"12h", 12 * time.Hour, true}, {"0", 0, true}, {"0d", 0, true},
		{"", 0, false}, {"-1h", 0, false}, {"d", 0, false}, {"3w", 0, false}, {"-2d", 0, false},
	} {
		got, err := ParseAge(tc.in)
		if (err == nil) != tc.ok || (tc.ok && got != tc.want) {
			t.Errorf("ParseAge(%q) = %v, %v, want %v (ok %v)", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestScan(t *testing.T) {
	dir := t.TempDir()
	write := func(p string, n int, age time.Duration) {
		p = filepath.Join(dir, p)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, make([]byte, n), 0o644); err != nil {
			t.Fatal(err)
		}
		at := time.Now().Add(-age)
		os.Chtimes(p, at, at)
		os.Chtimes(filepath.Dir(p), at, at)
	}
	write("logs/run1/a.log", 10, 48*time.Hour)
	write("logs/run1/b.log", 5, 72*time.Hour)
	write("cache/sandbox/abc/go/x", 100, time.Hour)
	write("cache/gate/v1/ab/e.json", 7, 2*time.Hour)
	write("worktrees/x/file", 1, 0) // never a unit
	units, _, err := Scan(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, u := range units {
		rel, _ := filepath.Rel(dir, u.Path)
		got[rel] = u.Bytes
	}
	want := map[string]int64{"logs/run1": 15, "cache/sandbox/abc": 100, "cache/gate/v1": 7}
	if len(got) != len(want) {
		t.Fatalf("Scan() = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("Scan() = %v, want %v", got, want)
		}
	}
}

// TestRemove removes real folders: a unit Held claims is left to it (and
// stays when a run holds it), the rest are removed here; the claimed ones
// come first in what is returned.
func TestRemove(t *testing.T) {
	dir := t.TempDir()
	var units []Unit
	for _, name := range []string{"logs-a", "held-free", "cache-b", "held-busy", "held-bad"} {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Join(p, "x"), 0o755)
		units = append(units, Unit{Path: p})
	}
	held := Held{
		Claims: func(p string) bool { return strings.HasPrefix(filepath.Base(p), "held-") },
		Remove: func(p string) (bool, error) {
			switch filepath.Base(p) {
			case "held-busy":
				return false, nil
			case "held-bad":
				return false, errors.New("bad")
			}
			return true, os.RemoveAll(p)
		},
	}
	done, err := Remove(units, held)
	var names []string
	for _, u := range done {
		names = append(names, filepath.Base(u.Path))
	}
	if want := []string{"held-free", "logs-a", "cache-b"}; err == nil || !slices.Equal(names, want) {
		t.Errorf("Remove() = %q, %v; want %q and the held-bad error", names, err, want)
	}
	for name, gone := range map[string]bool{"logs-a": true, "held-free": true, "cache-b": true, "held-busy": false, "held-bad": false} {
		if _, err := os.Stat(filepath.Join(dir, name)); os.IsNotExist(err) != gone {
			t.Errorf("after Remove, %s exists = %v, want %v", name, !gone, !gone)
		}
	}
	if done, err := Remove(units[:1], Held{}); err != nil || len(done) != 1 {
		t.Errorf("Remove(zero Held) = %v, %v; want the unit removed", done, err)
	}
}
