package run

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/failpass/failpass/internal/sandbox"
)

// Commands that share a session helper share nothing else: the second
// sees none of the first's /tmp or HOME, nothing the first started is
// still running, and the read-only .git file and the masked config hold
// even after the tool replaced both files between the commands (as the
// gate's reset and git's own config writes do, which drops any mount on
// the old file).
func TestSessionIsolatesCommands(t *testing.T) {
	if r := sandbox.Probe(); !r.Has(sandbox.Processes) || !r.Has(sandbox.Filesystem) {
		t.Skipf("this machine cannot provide the processes and filesystem layers: %v", r.Why)
	}
	wt := sandboxWorktree(t, nil)
	common := filepath.Dir(filepath.Dir(filepath.Dir(wt)))
	sess := NewSession()
	defer sess.Close()
	policy := &sandbox.Policy{CacheDir: filepath.Join(t.TempDir(), "cache")}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	run := func(script string) (Result, string) {
		t.Helper()
		logPath := filepath.Join(t.TempDir(), "log")
		r, err := Run(context.Background(), Spec{Argv: []string{"sh", "-c", script}, Root: wt, Env: env, Log: logPath,
			Sandbox: policy, Session: sess})
		if err != nil {
			t.Fatalf("Run(%q) error = %v", script, err)
		}
		log, _ := os.ReadFile(logPath)
		return r, string(log)
	}

	r, log := run(`echo left > /tmp/left && echo left > "$HOME/left" && (setsid sh -c 'sleep 1; echo late > late.txt' &) && exit 0`)
	if r.Exit != 0 {
		t.Fatalf("first command = %v, want exit 0\nlog:\n%s", r, log)
	}

	dotGit := filepath.Join(wt, ".git")
	b, err := os.ReadFile(dotGit)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(dotGit); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dotGit, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("git", "-C", common, "config", "remote.origin.url", "https://me:tok3n@example.org/r.git").CombinedOutput(); err != nil {
		t.Fatalf("git config: %v\n%s", err, out)
	}

	r, log = run(`test -e /tmp/left && exit 10
test -e "$HOME/left" && exit 11
sleep 1.5
test -e late.txt && exit 12
echo planted >> .git && exit 13
grep tok3n ` + common + `/config && exit 14
exit 0`)
	if r.Exit != 0 {
		t.Fatalf("second command = %v, want exit 0 (10: /tmp shared, 11: HOME shared, 12: the first's process outlived it, 13: .git writable, 14: config unmasked)\nlog:\n%s", r, log)
	}
	if _, err := os.Stat(filepath.Join(wt, "late.txt")); err == nil {
		t.Fatal("a process the first command started wrote into the worktree after it ended")
	}
	if got, _ := os.ReadFile(dotGit); string(got) != string(b) {
		t.Fatalf(".git file = %q, want %q", got, b)
	}
}

// A cancel (SIGINT to the tool) ends the command through its session
// helper, and the session serves the next command with a new helper.
func TestSessionCancel(t *testing.T) {
	if r := sandbox.Probe(); !r.Has(sandbox.Processes) {
		t.Skipf("this machine cannot provide the processes layer: %v", r.Why)
	}
	wt := sandboxWorktree(t, nil)
	sess := NewSession()
	defer sess.Close()
	policy := &sandbox.Policy{}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	start := time.Now()
	r, err := Run(ctx, Spec{Argv: []string{"sleep", "30"}, Root: wt, Sandbox: policy, Session: sess})
	if err != nil || !r.Canceled || r.TimedOut || !r.Inconclusive() || time.Since(start) > 10*time.Second {
		t.Fatalf("canceled Run = %+v, %v after %v; want canceled, inconclusive, promptly", r, err, time.Since(start))
	}
	r, err = Run(context.Background(), Spec{Argv: []string{"sh", "-c", "exit 4"}, Root: wt, Sandbox: policy, Session: sess})
	if err != nil || r.Exit != 4 {
		t.Fatalf("the next command = %+v, %v; want exit 4", r, err)
	}
}
