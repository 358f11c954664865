package run

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDiskCap runs real writers past a small cap, uncontained (the
// sandbox's own runs are the end-to-end scripts' sandbox_disk_*): each
// is killed or judged over, with a reason naming the cap, and a run
// within the cap is untouched.
func TestDiskCap(t *testing.T) {
	tests := []struct {
		name   string
		script string
		cap    DiskCap
		over   string // "" for within the cap
		killed bool   // it would run on, so the watcher must kill it
	}{
		{name: "within", script: "head -c 1048576 /dev/zero > f; mkdir d; touch d/a d/b", cap: DiskCap{Bytes: 8 << 20, Files: 100}},
		{name: "bytes, killed while writing", script: "while :; do head -c 1048576 /dev/zero > f$((n=n+1)); done", cap: DiskCap{Bytes: 8 << 20}, over: "sandbox.max_disk 8.0 MiB", killed: true},
		{name: "bytes, ended before a check", script: "head -c 20971520 /dev/zero > f", cap: DiskCap{Bytes: 8 << 20}, over: "more than sandbox.max_disk"},
		{name: "files", script: "mkdir d; cd d; i=0; while [ $i -lt 400 ]; do : > f$i; i=$((i+1)); done", cap: DiskCap{Files: 200}, over: "more than sandbox.max_disk_files 200"},
		{name: "hidden in an unreadable folder", script: "mkdir h; head -c 20971520 /dev/zero > h/f; chmod 000 h", cap: DiskCap{Bytes: 8 << 20}, over: "more than sandbox.max_disk"},
		{name: "extra area", script: `head -c 20971520 /dev/zero > "$AREA/f"`, cap: DiskCap{Bytes: 8 << 20}, over: "more than sandbox.max_disk"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, area := t.TempDir(), t.TempDir()
			// What the tree held before the run is not the run's.
			os.WriteFile(filepath.Join(root, "before"), make([]byte, 10<<20), 0o644)
			tt.cap.Areas = []string{area}
			t.Cleanup(func() { os.Chmod(filepath.Join(root, "h"), 0o700) })
			start := time.Now()
			res, err := Run(context.Background(), Spec{Argv: []string{"sh", "-c", tt.script}, Root: root,
				Env: []string{"PATH=" + os.Getenv("PATH"), "AREA=" + area}, Timeout: time.Minute, Disk: tt.cap})
			if err != nil {
				t.Fatal(err)
			}
			if tt.over == "" {
				if res.Disk != nil || res.Exit != 0 || res.Inconclusive() {
					t.Fatalf("Run = %s, want exit 0 within the cap", res)
				}
				return
			}
			if res.Disk == nil || !res.Inconclusive() || !strings.Contains(res.String(), tt.over) {
				t.Fatalf("Run = %s (disk %+v), want inconclusive and ...%s...", res, res.Disk, tt.over)
			}
			if tt.killed && (res.Signal == "" || res.TimedOut || time.Since(start) > 30*time.Second) {
				t.Errorf("Run = %+v after %v, want killed by the watcher, not the timeout", res, time.Since(start))
			}
		})
	}
}

func TestNestedOut(t *testing.T) {
	got := nestedOut([]string{"/a/b/c", "", "/a/b", "/x", "/a/bc", "/a/b/"})
	if strings.Join(got, " ") != "/a/b /a/bc /x" {
		t.Errorf("nestedOut = %q", got)
	}
}

func TestMeasureCountsLinksOnce(t *testing.T) {
	d := t.TempDir()
	os.WriteFile(filepath.Join(d, "f"), make([]byte, 1<<20), 0o644)
	one, err := measure([]string{d})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(d, "f"), filepath.Join(d, "g")); err != nil {
		t.Fatal(err)
	}
	two, err := measure([]string{d})
	if err != nil {
		t.Fatal(err)
	}
	if one.bytes < 1<<20 || two != one {
		t.Errorf("measure = %+v, then %+v with a hard link, want the same and at least 1 MiB", one, two)
	}
}

// A folder removed between its opening and its listing (go's work
// folders, which go removes as it builds) is no error: it holds nothing.
// The redteam_neuter_gotest script failed its honest canary run on one.
func TestReadNamesOfRemovedFolder(t *testing.T) {
	d := filepath.Join(t.TempDir(), "gone")
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(d)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := os.Remove(d); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Readdirnames(-1); err == nil {
		t.Skip("this kernel lists a removed folder without an error")
	}
	if _, err := f.Seek(0, 0); err != nil {
		t.Fatal(err)
	}
	names, err := readNames(f)
	if err != nil || len(names) != 0 {
		t.Errorf("readNames of a removed folder = %q, %v; want nothing, no error", names, err)
	}
}
