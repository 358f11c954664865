package run

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestCapture(t *testing.T) {
	longDrainGrace(t)
	root := t.TempDir()
	tests := []struct {
		name    string
		argv    []string
		stdin   string
		max     int64
		out     string
		log     string
		exit    int
		limit   bool
		timeout time.Duration
		within  time.Duration
	}{
		{name: "stdin to stdout", argv: []string{"cat"}, stdin: "request\n", max: 100, out: "request\n", exit: 0},
		{name: "stderr goes to the log only", argv: []string{"sh", "-c", "echo reply; echo chatter >&2; exit 3"}, max: 100, out: "reply\n", log: "chatter\n", exit: 3},
		{name: "exactly the limit", argv: []string{"printf", "12345"}, max: 5, out: "12345", exit: 0},
		{name: "over the limit is killed at once", argv: []string{"yes"}, max: 1000, out: strings.Repeat("y\n", 500), exit: -1, limit: true, within: 10 * time.Second},
		{name: "stdin never read", argv: []string{"sh", "-c", "echo ok"}, stdin: strings.Repeat("x", 1<<20), max: 100, out: "ok\n", exit: 0, within: 7 * time.Second},
		{name: "escapee holding stdout", argv: []string{"sh", "-c", "setsid sleep 300 & echo done"}, max: 100, out: "done\n", exit: 0, within: 10 * time.Second},
		{name: "timeout", argv: []string{"sh", "-c", "echo partial; sleep 30"}, max: 100, out: "partial\n", exit: -1, timeout: 300 * time.Millisecond, within: 10 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, env := marker(t)
			log := filepath.Join(t.TempDir(), "log")
			start := time.Now()
			out, r, err := Capture(context.Background(), Spec{Argv: tc.argv, Root: root, Env: env, Log: log, Timeout: tc.timeout}, []byte(tc.stdin), tc.max)
			took := time.Since(start)
			var lim *OutputLimitError
			if tc.limit != errors.As(err, &lim) || (!tc.limit && err != nil) {
				t.Errorf("Capture(%q) error = %v, want output limit %v", tc.argv, err, tc.limit)
			}
			if string(out) != tc.out {
				t.Errorf("Capture(%q) stdout = %.80q, want %.80q", tc.argv, out, tc.out)
			}
			if r.Exit != tc.exit || r.TimedOut != (tc.timeout != 0) {
				t.Errorf("Capture(%q) = %+v, want exit %d", tc.argv, r, tc.exit)
			}
			if b, _ := os.ReadFile(log); string(b) != tc.log {
				t.Errorf("Capture(%q) log = %q, want %q", tc.argv, b, tc.log)
			}
			if tc.within != 0 && took > tc.within {
				t.Errorf("Capture(%q) took %v, want under %v", tc.argv, took, tc.within)
			}
			noneLeft(t, m)
		})
	}
}

func TestCaptureSetup(t *testing.T) {
	root := t.TempDir()
	if _, _, err := Capture(context.Background(), Spec{Argv: []string{"cat"}, Root: root}, nil, 0); err == nil {
		t.Errorf("Capture(max 0) error = nil, want an error")
	}
	var we *WorkdirError
	if _, _, err := Capture(context.Background(), Spec{Argv: []string{"cat"}, Root: root, Workdir: ".."}, nil, 10); !errors.As(err, &we) {
		t.Errorf("Capture(workdir ..) error = %v, want a WorkdirError", err)
	}
	out, r, err := Capture(context.Background(), Spec{Argv: []string{"no-such-command-xyz"}, Root: root}, nil, 10)
	if err != nil || r.StartErr == nil || out != nil || !bytes.Equal(out, nil) {
		t.Errorf("Capture(missing program) = %q, %+v, %v; want a start error", out, r, err)
	}
}

// Spec.Started hears the command's process group before Capture waits
// for it: the pid of the process it started, which leads its group.
func TestCaptureToldTheGroup(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc to read a process group from")
	}
	var told int
	out, res, err := Capture(context.Background(), Spec{Argv: []string{"sh", "-c", "cut -d' ' -f5 /proc/$$/stat"}, Root: t.TempDir(),
		Started: func(pgid int) { told = pgid }}, nil, 1<<10)
	if err != nil || res.Exit != 0 {
		t.Fatalf("Capture: %v, %v", err, res)
	}
	if got := strings.TrimSpace(string(out)); told == 0 || got != strconv.Itoa(told) {
		t.Fatalf("told %d, the command's group is %q", told, got)
	}
}
