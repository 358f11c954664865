package run

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// marker returns an environment for a command with a variable no other
// process has, so the test can find every descendant afterwards through
// /proc/*/environ, whatever group or session it moved to.
func marker(t *testing.T) (string, []string) {
	b := make([]byte, 8)
	rand.Read(b)
	m := "FAILPASS_TEST_MARK=" + hex.EncodeToString(b)
	return m, []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), m}
}

// noneLeft fails the test if a process carrying m is still alive.
func noneLeft(t *testing.T, m string) {
	t.Helper()
	if pids := marked(m); len(pids) > 0 {
		t.Errorf("processes left behind: %v", pids)
	}
}

func TestRunEnds(t *testing.T) {
	longDrainGrace(t)
	tests := []struct {
		name         string
		argv         []string
		timeout      time.Duration
		exit         int
		signal       string
		timedOut     bool
		inconclusive bool
		str          string
		within       time.Duration
	}{
		{name: "exit 0", argv: []string{"true"}, exit: 0, str: "exit 0"},
		{name: "exit 1", argv: []string{"sh", "-c", "exit 1"}, exit: 1, str: "exit 1"},
		{name: "exit 3", argv: []string{"sh", "-c", "exit 3"}, exit: 3, str: "exit 3"},
		{name: "exit 125", argv: []string{"sh", "-c", "exit 125"}, exit: 125, inconclusive: true, str: "exit 125 (inconclusive)"},
		{name: "not found in shell", argv: []string{"sh", "-c", "no-such-command-xyz"}, exit: 127, inconclusive: true, str: "exit 127 (command not found: inconclusive)"},
		{name: "not executable in shell", argv: []string{"sh", "-c", "./plain"}, exit: 126, inconclusive: true},
		{name: "killed by a signal", argv: []string{"sh", "-c", "kill -TERM $$"}, exit: -1, signal: "terminated", inconclusive: true, str: "killed by signal: terminated"},
		{name: "timeout", argv: []string{"sleep", "30"}, timeout: 300 * time.Millisecond, exit: -1, signal: "killed", timedOut: true, inconclusive: true, str: "timed out after 300ms", within: 10 * time.Second},
		{name: "timeout kills the group", argv: []string{"sh", "-c", "sleep 30 & sleep 30; exit 0"}, timeout: 300 * time.Millisecond, exit: -1, signal: "killed", timedOut: true, inconclusive: true, within: 10 * time.Second},
		{name: "fail command with a background child", argv: []string{"sh", "-c", "sleep 300 & exit 1"}, exit: 1, str: "exit 1", within: 10 * time.Second},
		{name: "setsid escapee holding the pipe", argv: []string{"sh", "-c", "setsid sleep 300 & sleep 0.1; exit 1"}, exit: 1, within: 10 * time.Second},
		{name: "double-forked escapee", argv: []string{"sh", "-c", "setsid sh -c 'sleep 300 & sleep 300' & sleep 0.1; exit 0"}, exit: 0, within: 10 * time.Second},
		{name: "nohup escapee ignoring SIGHUP", argv: []string{"sh", "-c", "setsid nohup sleep 300 >/dev/null 2>&1 & sleep 0.1; exit 2"}, exit: 2, within: 10 * time.Second},
	}
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "plain"), []byte("echo hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, env := marker(t)
			start := time.Now()
			r, err := Run(context.Background(), Spec{Argv: tc.argv, Root: root, Env: env, Timeout: tc.timeout})
			took := time.Since(start)
			if err != nil {
				t.Fatalf("Run(%q) error %v", tc.argv, err)
			}
			if r.Exit != tc.exit || r.Signal != tc.signal || r.TimedOut != tc.timedOut || r.StartErr != nil {
				t.Errorf("Run(%q) = %+v, want exit %d signal %q timedOut %v", tc.argv, r, tc.exit, tc.signal, tc.timedOut)
			}
			if got := r.Inconclusive(); got != tc.inconclusive {
				t.Errorf("Run(%q).Inconclusive() = %v, want %v", tc.argv, got, tc.inconclusive)
			}
			if tc.str != "" && r.String() != tc.str {
				t.Errorf("Run(%q).String() = %q, want %q", tc.argv, r.String(), tc.str)
			}
			if tc.within != 0 && took > tc.within {
				t.Errorf("Run(%q) took %v, want under %v", tc.argv, took, tc.within)
			}
			noneLeft(t, m)
		})
	}
}

func TestRunCanceled(t *testing.T) {
	m, env := marker(t)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	r, err := Run(ctx, Spec{Argv: []string{"sh", "-c", "sleep 300 & setsid sleep 300 & sleep 300"}, Root: t.TempDir(), Env: env})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Canceled || r.TimedOut || !r.Inconclusive() || r.String() != "canceled" {
		t.Errorf("Run after cancel = %+v (%s), want canceled and inconclusive", r, r)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("Run after cancel took %v", took)
	}
	noneLeft(t, m)

	// Already canceled: nothing starts.
	r, err = Run(ctx, Spec{Argv: []string{"true"}, Root: t.TempDir()})
	if err != nil || r.StartErr == nil || !r.Inconclusive() {
		t.Errorf("Run(canceled ctx) = %+v, %v; want a start error", r, err)
	}
}

func TestRunStartErrors(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "plain"), []byte("#!/bin/sh\nexit 0\n"), 0o644)
	tests := []struct {
		name string
		argv []string
	}{
		{"bare name not on PATH", []string{"no-such-command-xyz"}},
		{"relative path missing", []string{"./missing"}},
		{"relative path not executable", []string{"./plain"}},
		{"absolute path missing", []string{"/no/such/program"}},
		{"NUL in argument", []string{"echo", "a\x00b"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			log := filepath.Join(t.TempDir(), "log")
			r, err := Run(context.Background(), Spec{Argv: tc.argv, Root: root, Log: log})
			if err != nil {
				t.Fatalf("Run(%q) error %v, want a result", tc.argv, err)
			}
			if r.StartErr == nil || !r.Inconclusive() || r.Exit != -1 || !strings.HasPrefix(r.String(), "not started: ") {
				t.Errorf("Run(%q) = %+v, want not started", tc.argv, r)
			}
			if b, _ := os.ReadFile(log); !bytes.Contains(b, []byte("not started")) {
				t.Errorf("log of Run(%q) = %q, want the start error", tc.argv, b)
			}
		})
	}
	if _, err := Run(context.Background(), Spec{Root: root}); err == nil {
		t.Errorf("Run(empty argv) error = nil, want an error")
	}
	if _, err := Run(context.Background(), Spec{Argv: []string{"true"}, Root: "relative"}); err == nil {
		t.Errorf("Run(relative root) error = nil, want an error")
	}
}

// A program planted in the workdir must never be found by a bare name,
// even when PATH has a relative entry; with a slash it is the one run.
func TestRunArgv0Lookup(t *testing.T) {
	root := t.TempDir()
	ran := filepath.Join(t.TempDir(), "ran")
	planted := fmt.Sprintf("#!/bin/sh\ntouch %s\n", ran)
	if err := os.WriteFile(filepath.Join(root, "fp-planted"), []byte(planted), 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=.:bin:" + os.Getenv("PATH")}
	r, err := Run(context.Background(), Spec{Argv: []string{"fp-planted"}, Root: root, Env: env})
	if err != nil || r.StartErr == nil {
		t.Errorf("Run(fp-planted) = %+v, %v; want not found", r, err)
	}
	if _, err := os.Stat(ran); err == nil {
		t.Fatalf("the planted program ran")
	}
	r, err = Run(context.Background(), Spec{Argv: []string{"./fp-planted"}, Root: root, Env: env})
	if err != nil || r.Exit != 0 {
		t.Errorf("Run(./fp-planted) = %+v, %v; want exit 0", r, err)
	}
	if _, err := os.Stat(ran); err != nil {
		t.Errorf("./fp-planted did not run: %v", err)
	}
}

func TestRunWorkdir(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	for _, d := range []string{"sub/deep", "other"} {
		os.MkdirAll(filepath.Join(root, d), 0o755)
	}
	os.WriteFile(filepath.Join(root, "file"), nil, 0o644)
	os.Symlink(outside, filepath.Join(root, "out"))
	os.Symlink("../..", filepath.Join(root, "sub", "up"))
	os.Symlink("deep", filepath.Join(root, "sub", "in"))
	realRoot, _ := filepath.EvalSymlinks(root)
	tests := []struct {
		workdir string
		want    string // real path, relative to root; "" when refused
		reason  string
	}{
		{"", ".", ""},
		{".", ".", ""},
		{"sub/deep", "sub/deep", ""},
		{"sub/../other", "other", ""},
		{"sub/in", "sub/deep", ""},
		{"..", "", "leads outside"},
		{"sub/../../x", "", "leads outside"},
		{outside, "", "is absolute"},
		{"out", "", "symlink"},
		{"out/.", "", "symlink"},
		{"sub/up", "", "symlink"},
		{"missing", "", "does not exist"},
		{"file", "", "not a folder"},
		{"a\x00b", "", "NUL"},
	}
	for _, tc := range tests {
		got, err := confine(root, tc.workdir)
		if tc.want == "" {
			var we *WorkdirError
			if !errors.As(err, &we) || !strings.Contains(we.Reason, tc.reason) || !we.UserFacing() {
				t.Errorf("confine(%q) = %q, %v; want a WorkdirError saying %q", tc.workdir, got, err, tc.reason)
			}
			continue
		}
		if want := filepath.Join(realRoot, tc.want); err != nil || got != want {
			t.Errorf("confine(%q) = %q, %v; want %q", tc.workdir, got, err, want)
		}
	}

	// Refused before anything starts: the command would create a file.
	r, err := Run(context.Background(), Spec{Argv: []string{"touch", "escaped"}, Root: root, Workdir: "out"})
	var we *WorkdirError
	if !errors.As(err, &we) || !reflect.DeepEqual(r, Result{}) {
		t.Errorf("Run(workdir out) = %+v, %v; want a WorkdirError", r, err)
	}
	if _, err := os.Stat(filepath.Join(outside, "escaped")); err == nil {
		t.Errorf("the command ran outside the root")
	}
	// Accepted: the command runs in the real folder.
	log := filepath.Join(t.TempDir(), "log")
	if r, err := Run(context.Background(), Spec{Argv: []string{"pwd", "-P"}, Root: root, Workdir: "sub/in", Log: log}); err != nil || r.Exit != 0 {
		t.Fatalf("Run(pwd) = %+v, %v", r, err)
	}
	if b, _ := os.ReadFile(log); string(b) != filepath.Join(realRoot, "sub/deep")+"\n" {
		t.Errorf("pwd in sub/in printed %q", b)
	}
}

func TestRunLog(t *testing.T) {
	root := t.TempDir()
	dir := t.TempDir()
	t.Run("interleaved", func(t *testing.T) {
		log := filepath.Join(dir, "new", "folder", "a.log")
		r, err := Run(context.Background(), Spec{Argv: []string{"sh", "-c", "echo out; echo err >&2; echo out2"}, Root: root, Log: log})
		if err != nil || r.Exit != 0 || r.LogTruncated {
			t.Fatalf("Run = %+v, %v", r, err)
		}
		if b, _ := os.ReadFile(log); string(b) != "out\nerr\nout2\n" {
			t.Errorf("log = %q, want out, err, out2 in order", b)
		}
	})
	t.Run("flood capped and drained", func(t *testing.T) {
		log := filepath.Join(dir, "flood.log")
		start := time.Now()
		r, err := Run(context.Background(), Spec{Argv: []string{"sh", "-c", "yes | head -c 20000000; echo done >&2; exit 4"}, Root: root, Log: log, MaxLog: 4096})
		if err != nil || r.Exit != 4 || !r.LogTruncated {
			t.Fatalf("Run(flood) = %+v, %v; want exit 4, truncated", r, err)
		}
		b, _ := os.ReadFile(log)
		if len(b) > 4096+200 || !bytes.HasPrefix(b, []byte("y\ny\n")) || !bytes.Contains(b, []byte("log truncated at 4096 bytes")) {
			t.Errorf("flood log is %d bytes ending %q", len(b), b[max(0, len(b)-120):])
		}
		if took := time.Since(start); took > 20*time.Second {
			t.Errorf("flood took %v", took)
		}
	})
	t.Run("discarded", func(t *testing.T) {
		r, err := Run(context.Background(), Spec{Argv: []string{"sh", "-c", "yes | head -c 3000000; exit 5"}, Root: root})
		if err != nil || r.Exit != 5 || r.LogTruncated {
			t.Errorf("Run(no log) = %+v, %v; want exit 5", r, err)
		}
	})
	t.Run("log write fails mid-run", func(t *testing.T) {
		if _, err := os.Stat("/dev/full"); err != nil {
			t.Skip("no /dev/full")
		}
		r, err := Run(context.Background(), Spec{Argv: []string{"sh", "-c", "echo hi; exit 6"}, Root: root, Log: "/dev/full"})
		if err != nil || r.Exit != 6 || r.LogErr == nil {
			t.Errorf("Run(log /dev/full) = %+v, %v; want exit 6 with a log error", r, err)
		}
	})
	t.Run("unwritable log folder", func(t *testing.T) {
		file := filepath.Join(dir, "afile")
		os.WriteFile(file, nil, 0o644)
		if _, err := Run(context.Background(), Spec{Argv: []string{"true"}, Root: root, Log: filepath.Join(file, "x.log")}); err == nil {
			t.Errorf("Run(log under a file) error = nil, want an error")
		}
	})
}

func TestRunDefaultEnv(t *testing.T) {
	t.Setenv("FAILPASS_TEST_SECRET", "s3cret")
	log := filepath.Join(t.TempDir(), "log")
	r, err := Run(context.Background(), Spec{Argv: []string{"env"}, Root: t.TempDir(), Log: log})
	if err != nil || r.Exit != 0 {
		t.Fatalf("Run(env) = %+v, %v", r, err)
	}
	b, _ := os.ReadFile(log)
	var keys []string
	for _, kv := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		k, _, _ := strings.Cut(kv, "=")
		keys = append(keys, k)
	}
	if got := strings.Join(keys, ","); got != "PATH,HOME,LANG,TMPDIR" {
		t.Errorf("default environment has %s, want PATH,HOME,LANG,TMPDIR", got)
	}
	if !bytes.Contains(b, []byte("LANG=C.UTF-8\n")) {
		t.Errorf("default environment %q lacks LANG=C.UTF-8", b)
	}
}

// A command ending early must not take down one still running beside it.
func TestRunParallel(t *testing.T) {
	root := t.TempDir()
	var wg sync.WaitGroup
	results := make([]Result, 4)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			argv := []string{"sh", "-c", "sleep 300 & setsid sleep 300 & exit 1"}
			if i%2 == 0 {
				argv = []string{"sh", "-c", "sleep 0.8; exit 7"}
			}
			results[i], _ = Run(context.Background(), Spec{Argv: argv, Root: root})
		}()
	}
	wg.Wait()
	for i, r := range results {
		want := 1
		if i%2 == 0 {
			want = 7
		}
		if r.Exit != want {
			t.Errorf("parallel run %d = %+v, want exit %d", i, r, want)
		}
	}
}

func TestResultString(t *testing.T) {
	tests := []struct {
		r            Result
		want         string
		inconclusive bool
	}{
		{Result{Exit: 0}, "exit 0", false},
		{Result{Exit: 1}, "exit 1", false},
		{Result{Exit: 124}, "exit 124", false},
		{Result{Exit: 125}, "exit 125 (inconclusive)", true},
		{Result{Exit: 126}, "exit 126 (not executable: inconclusive)", true},
		{Result{Exit: 127}, "exit 127 (command not found: inconclusive)", true},
		{Result{Exit: -1, Signal: "killed"}, "killed by signal: killed", true},
		{Result{Exit: -1, Signal: "killed", TimedOut: true, timeout: 10 * time.Second}, "timed out after 10s", true},
		{Result{Exit: -1, Signal: "killed", Canceled: true}, "canceled", true},
		{Result{Exit: -1, StartErr: errors.New("boom")}, "not started: boom", true},
	}
	for _, tc := range tests {
		if got := tc.r.String(); got != tc.want {
			t.Errorf("%+v.String() = %q, want %q", tc.r, got, tc.want)
		}
		if got := tc.r.Inconclusive(); got != tc.inconclusive {
			t.Errorf("%+v.Inconclusive() = %v, want %v", tc.r, got, tc.inconclusive)
		}
	}
}

// FuzzConfine checks the confinement property: whatever the workdir, an
// accepted one is the root or below it, and a refused one is a typed error.
func FuzzConfine(f *testing.F) {
	for _, s := range []string{".", "", "a", "a/b", "..", "a/../..", "/etc", "l", "l/x", "a/l2", "a\x00", "./a//b/"} {
		f.Add(s)
	}
	root := f.TempDir()
	os.MkdirAll(filepath.Join(root, "a", "b"), 0o755)
	os.Symlink("/etc", filepath.Join(root, "l"))
	os.Symlink("../..", filepath.Join(root, "a", "l2"))
	realRoot, _ := filepath.EvalSymlinks(root)
	f.Fuzz(func(t *testing.T, wd string) {
		got, err := confine(root, wd)
		if err != nil {
			var we *WorkdirError
			if !errors.As(err, &we) || got != "" {
				t.Fatalf("confine(%q) = %q, %v; want a WorkdirError and no path", wd, got, err)
			}
			return
		}
		if !within(realRoot, got) {
			t.Fatalf("confine(%q) = %q, outside %q", wd, got, realRoot)
		}
	})
}

// longDrainGrace makes drainGrace 30 s for the rest of the test: a run
// that returns only when the grace ends (an escapee Run did not reap) then
// takes 30 s, far past the 10 s the tests allow for a loaded machine,
// while a run that reaped its escapees returns at once.
func longDrainGrace(t *testing.T) {
	old := drainGrace
	drainGrace = 30 * time.Second
	t.Cleanup(func() { drainGrace = old })
}
