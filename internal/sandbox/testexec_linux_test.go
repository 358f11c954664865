package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestTestExecEnv(t *testing.T) {
	l := envLayout{Root: "/wt", Tmp: "/tmp", Home: "/tmp/home", CacheDir: "/c/card", TestExec: "/usr/bin/failpass", GoWork: "/c/cand/gowork"}
	m := envMap(buildEnv([]string{"GOFLAGS=-mod=mod -exec=/planted", "GOTMPDIR=/tmp/x"}, l, func(string) bool { return false }))
	// The card's own flags stay; the wrapper's -exec comes last, and wins.
	if got, want := m["GOFLAGS"], "-mod=mod -exec=/planted -exec=/usr/bin/failpass"; got != want {
		t.Errorf("GOFLAGS = %q, want %q", got, want)
	}
	// Go's work folder is set apart, where no test binary may write.
	if got := m["GOTMPDIR"]; got != "/c/cand/gowork" {
		t.Errorf("GOTMPDIR = %q, want /c/cand/gowork", got)
	}
	if got := m[testExecVar]; got != "/wt" {
		t.Errorf("%s = %q, want /wt", testExecVar, got)
	}
	// GOFLAGS cannot quote a space: no wrapper rather than a broken go.
	l.TestExec = "/opt/my tools/failpass"
	m = envMap(buildEnv(nil, l, func(string) bool { return false }))
	if _, ok := m[testExecVar]; ok || m["GOFLAGS"] != "" || m["GOTMPDIR"] != "" {
		t.Errorf("with a space in the path: GOFLAGS %q, GOTMPDIR %q, %s set %v; want none", m["GOFLAGS"], m["GOTMPDIR"], testExecVar, ok)
	}
	l.TestExec = ""
	if m := envMap(buildEnv(nil, l, func(string) bool { return false })); m["GOFLAGS"] != "" {
		t.Errorf("without the wrapper: GOFLAGS = %q", m["GOFLAGS"])
	}
}

func envMap(env []string) map[string]string {
	m := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

// TestTestExecDomain runs a program through the wrapper as go would (this
// test binary answers as failpass does, see dispatch.go): it may write
// the worktree, its own TMPDIR and HOME, the command's TMPDIR and the
// folder it lives in, and nothing else: not a sibling folder in go's
// work folder (GOTMPDIR), not the build cache. A temporary folder that
// holds either is not writable either.
func TestTestExecDomain(t *testing.T) {
	if abi, err := landlockABI(); err != nil || abi < minLandlockABI {
		t.Skip("needs Landlock")
	}
	script := `#!/bin/sh
try() { if (echo x > "$1") 2>/dev/null; then echo "wrote $2"; else echo "denied $2"; fi; }
try "$ROOTDIR/f" worktree
try "$TMPDIR/f" tmpdir
try "$HOME/f" home
try "$(dirname "$0")/testlog.txt" own
try "$WORKDIR/b002/b.test" sibling
try "$GOCACHE_WAS/x-d" cache
try "$TMPDIR_WAS/f" command-tmpdir
echo "tmp $TMPDIR"
`
	for _, tc := range []struct {
		name      string
		workInTmp bool // go's work folder inside the command's TMPDIR
		want      []string
	}{
		{"work folder apart", false, []string{"wrote worktree", "wrote tmpdir", "wrote home", "wrote own",
			"denied sibling", "denied cache", "wrote command-tmpdir"}},
		{"work folder inside TMPDIR", true, []string{"wrote worktree", "wrote tmpdir", "wrote own",
			"denied sibling", "denied cache", "denied command-tmpdir"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			root, cache, tmp := filepath.Join(dir, "wt"), filepath.Join(dir, "cache"), filepath.Join(dir, "tmp")
			work := filepath.Join(dir, "work")
			if tc.workInTmp {
				work = filepath.Join(tmp, "go-build1")
			}
			for _, d := range []string{root, filepath.Join(work, "b001"), filepath.Join(work, "b002"), cache, tmp} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			prog := filepath.Join(work, "b001", "a.test")
			if err := os.WriteFile(prog, []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(os.Args[0], prog, "-test.paniconexit0")
			cmd.Env = append(os.Environ(), testExecVar+"="+root, "TMPDIR="+tmp, "GOCACHE="+cache, "GOTMPDIR="+work,
				"ROOTDIR="+root, "WORKDIR="+work, "GOCACHE_WAS="+cache, "TMPDIR_WAS="+tmp)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("wrapper: %v\n%s", err, out)
			}
			for _, want := range tc.want {
				if !strings.Contains(string(out), want+"\n") {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
			if !strings.Contains(string(out), "tmp "+tmp+"/failpass-test-") {
				t.Errorf("TMPDIR is not a folder of its own under the one it was given:\n%s", out)
			}
		})
	}
}
