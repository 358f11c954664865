package run

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/failpass/failpass/internal/sandbox"
)

// sandboxWorktree makes a real repository with a linked worktree inside
// its common dir, as the gate lays out its worktrees.
func sandboxWorktree(t testing.TB, files map[string]string) string {
	t.Helper()
	repo := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(repo, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	wt := filepath.Join(repo, ".git", "failpass", "worktrees", "w")
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-q", "--allow-empty", "-m", "base"},
		{"worktree", "add", "-q", "--detach", wt}} {
		cmd := exec.Command("git", append([]string{"-c", "user.name=T", "-c", "user.email=t@example.org"}, args...)...)
		cmd.Dir = repo
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return wt
}

func TestRunSandboxed(t *testing.T) {
	if r := sandbox.Probe(); !r.Has(sandbox.Processes) || !r.Has(sandbox.Filesystem) {
		t.Skipf("this machine cannot provide the processes and filesystem layers: %v", r.Why)
	}
	testSandboxed(t, nil)
}

// TestRunSandboxedSession runs TestRunSandboxed's cases through one
// session helper, in turn: each must end as it does with a helper of its
// own, a timeout included (the helper it kills is replaced).
func TestRunSandboxedSession(t *testing.T) {
	if r := sandbox.Probe(); !r.Has(sandbox.Processes) || !r.Has(sandbox.Filesystem) {
		t.Skipf("this machine cannot provide the processes and filesystem layers: %v", r.Why)
	}
	sess := NewSession()
	defer sess.Close()
	testSandboxed(t, sess)
}

func testSandboxed(t *testing.T, sess *Session) {
	wt := sandboxWorktree(t, map[string]string{"go": "#!/bin/sh\necho PLANTED\nexit 0\n"})
	t.Setenv("FAILPASS_TEST_TOKEN", "s3cret") // the tool's own secret
	env := []string{"PATH=.:" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	for _, tc := range []struct {
		name    string
		argv    []string
		timeout time.Duration
		check   func(r Result, log string) string
	}{
		{"exit code", []string{"sh", "-c", "exit 3"}, 0, func(r Result, _ string) string {
			if r.Exit != 3 || r.Inconclusive() {
				return "want exit 3"
			}
			return ""
		}},
		{"signal is inconclusive", []string{"sh", "-c", "kill -TERM $$"}, 0, func(r Result, _ string) string {
			if r.Signal != "terminated" || !r.Inconclusive() {
				return "want killed by SIGTERM, inconclusive"
			}
			return ""
		}},
		{"timeout", []string{"sh", "-c", "setsid sleep 300 & sleep 300"}, time.Second, func(r Result, _ string) string {
			if !r.TimedOut {
				return "want a timeout"
			}
			return ""
		}},
		{"planted argv0", []string{"go", "env", "GOTOOLCHAIN"}, 0, func(r Result, log string) string {
			if r.Exit != 0 || strings.Contains(log, "PLANTED") || !strings.Contains(log, "local") {
				return "want the real go, offline toolchain"
			}
			return ""
		}},
		{"no secret", []string{"sh", "-c", "env | grep -c s3cret; cat /proc/*/environ 2>/dev/null | grep -c s3cret"}, 0, func(r Result, log string) string {
			if strings.Contains(log, "s3cret") || !strings.HasPrefix(log, "0\n0\n") {
				return "the secret reached the command"
			}
			return ""
		}},
		{"not found", []string{"no-such-program-xyz"}, 0, func(r Result, _ string) string {
			if r.StartErr == nil {
				return "want a StartErr"
			}
			return ""
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logPath := filepath.Join(t.TempDir(), "log")
			start := time.Now()
			r, err := Run(context.Background(), Spec{Argv: tc.argv, Root: wt, Env: env, Timeout: tc.timeout, Log: logPath,
				Sandbox: &sandbox.Policy{CacheDir: filepath.Join(t.TempDir(), "cache")}, Session: sess})
			if err != nil {
				t.Fatalf("Run(%q) error = %v", tc.argv, err)
			}
			log, _ := os.ReadFile(logPath)
			if why := tc.check(r, string(log)); why != "" {
				t.Fatalf("Run(%q) = %v (%+v) after %v: %s\nlog:\n%s", tc.argv, r, r, time.Since(start), why, log)
			}
		})
	}
}

// The read-only mounts are the first line; the snapshot of the git
// configuration is the second. The test opens a hole in the first (the
// hooks folder given as a writable cache) to check the second.
func TestRunSandboxedIntegrity(t *testing.T) {
	if r := sandbox.Probe(); !r.Has(sandbox.Filesystem) {
		t.Skipf("this machine cannot provide the filesystem layer: %v", r.Why)
	}
	wt := sandboxWorktree(t, nil)
	common := filepath.Dir(filepath.Dir(filepath.Dir(wt)))
	r, err := Run(context.Background(), Spec{Argv: []string{"git", "config", "core.fsmonitor", "touch /tmp/pwned"}, Root: wt,
		Sandbox: &sandbox.Policy{}})
	if err != nil || r.Exit == 0 {
		t.Fatalf("git config inside the sandbox = %v, %v; want the write refused and no integrity error", r, err)
	}
	hooks := filepath.Join(common, "hooks")
	_, err = Run(context.Background(), Spec{Argv: []string{"sh", "-c", "printf '#!/bin/sh\\n' > " + hooks + "/post-checkout"}, Root: wt,
		Sandbox: &sandbox.Policy{CacheDir: hooks}})
	var ie *sandbox.IntegrityError
	if !errors.As(err, &ie) || len(ie.Changed) != 1 || filepath.Base(ie.Changed[0]) != "post-checkout" {
		t.Fatalf("planting a hook: Run error = %v, want an IntegrityError naming the hook", err)
	}
}

// An output flood inside the sandbox is capped in the log, and the tool's
// own memory stays bounded while it drains it.
func TestRunSandboxedFlood(t *testing.T) {
	if r := sandbox.Probe(); !r.Has(sandbox.Processes) {
		t.Skipf("this machine cannot provide the processes layer: %v", r.Why)
	}
	wt := sandboxWorktree(t, nil)
	logPath := filepath.Join(t.TempDir(), "log")
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	r, err := Run(context.Background(), Spec{Argv: []string{"yes", "flood"}, Root: wt, Timeout: 2 * time.Second,
		Log: logPath, MaxLog: 64 << 10, Sandbox: &sandbox.Policy{}})
	runtime.ReadMemStats(&after)
	if err != nil || !r.TimedOut || !r.LogTruncated {
		t.Fatalf("Run(yes) = %+v, %v; want a timeout and a truncated log", r, err)
	}
	fi, err := os.Stat(logPath)
	if err != nil || fi.Size() > 64<<10+200 {
		t.Fatalf("log size = %v (%v), want at most the cap plus the marker", fi.Size(), err)
	}
	if grown := int64(after.HeapAlloc) - int64(before.HeapAlloc); grown > 16<<20 {
		t.Fatalf("the tool's heap grew by %d bytes while draining the flood", grown)
	}
}

// The helper's configuration goes down a pipe while the helper starts
// (a session's, down its socket); an environment several times the
// buffer still arrives whole.
func TestRunSandboxedLargeEnv(t *testing.T) {
	if r := sandbox.Probe(); !r.Has(sandbox.Processes) {
		t.Skipf("this machine cannot provide the processes layer: %v", r.Why)
	}
	wt := sandboxWorktree(t, nil)
	// Three variables: one string over 128 KiB is refused by execve itself.
	big := strings.Repeat("x", 100<<10)
	env := []string{"PATH=" + os.Getenv("PATH"), "A=" + big, "B=" + big, "C=" + big}
	sess := NewSession() // a session's configuration goes down its socket instead
	defer sess.Close()
	for _, s := range []*Session{nil, sess} {
		r, err := Run(context.Background(), Spec{Argv: []string{"sh", "-c", `[ ${#A}${#B}${#C} = 102400102400102400 ]`}, Root: wt, Env: env,
			Sandbox: &sandbox.Policy{CacheDir: filepath.Join(t.TempDir(), "cache")}, Session: s})
		if err != nil || r.Exit != 0 {
			t.Fatalf("Run with a 300 KiB environment (session %v) = %v, %v; want exit 0", s != nil, r, err)
		}
	}
}

// TestRunStdoutApart: with Spec.Stdout, a command's standard output is
// kept apart from its log (which gets standard error alone) and bounded,
// uncontained, with a helper of its own and in a session alike.
func TestRunStdoutApart(t *testing.T) {
	wt := sandboxWorktree(t, nil)
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	contained := sandbox.Probe().Has(sandbox.Processes)
	sess := NewSession()
	defer sess.Close()
	for _, mode := range []string{"off", "helper", "session"} {
		t.Run(mode, func(t *testing.T) {
			if mode != "off" && !contained {
				t.Skip("no sandbox helper here")
			}
			spec := func(argv []string, max int64) Spec {
				s := Spec{Argv: argv, Root: wt, Env: env, Log: filepath.Join(t.TempDir(), "log"), Stdout: max}
				if mode != "off" {
					s.Sandbox = &sandbox.Policy{}
				}
				if mode == "session" {
					s.Session = sess
				}
				return s
			}
			s := spec([]string{"sh", "-c", "printf 'out\\n'; printf 'err\\n' >&2; printf 'more\\n'; exit 4"}, 1<<20)
			r, err := Run(context.Background(), s)
			if err != nil || r.Exit != 4 {
				t.Fatalf("Run = %+v, %v", r, err)
			}
			log, _ := os.ReadFile(s.Log)
			if string(r.Stdout) != "out\nmore\n" || r.StdoutTruncated || !strings.Contains(string(log), "err") || strings.Contains(string(log), "out") {
				t.Errorf("stdout %q (truncated %v), log %q; want stdout apart from the log", r.Stdout, r.StdoutTruncated, log)
			}
			s = spec([]string{"sh", "-c", "yes | head -c 100000"}, 4)
			if r, err = Run(context.Background(), s); err != nil || r.Exit != 0 || string(r.Stdout) != "y\ny\n" || !r.StdoutTruncated {
				t.Errorf("bounded: Run = %q, %v, %+v, %v", r.Stdout, r.StdoutTruncated, r.Exit, err)
			}
			s = spec([]string{"true"}, 16)
			if r, err = Run(context.Background(), s); err != nil || r.Stdout == nil || len(r.Stdout) != 0 {
				t.Errorf("no output: Run = %q, %v", r.Stdout, err)
			}
			// Without Stdout, nothing is kept and the log interleaves both.
			s = spec([]string{"sh", "-c", "echo out; echo err >&2"}, 0)
			s.Stdout = 0
			if r, err = Run(context.Background(), s); err != nil || r.Stdout != nil {
				t.Errorf("Run without Stdout kept %q, %v", r.Stdout, err)
			}
			if log, _ := os.ReadFile(s.Log); !strings.Contains(string(log), "out") {
				t.Errorf("log without Stdout = %q", log)
			}
		})
	}
}

// TestRunSecret: a Policy's Secret folder cannot be read by the command,
// even inside a folder the policy grants (it is hidden), where it can be
// read without it.
func TestRunSecret(t *testing.T) {
	r := sandbox.Probe()
	if !r.Has(sandbox.Filesystem) {
		t.Skipf("no filesystem layer here: %v", r.Why)
	}
	wt := sandboxWorktree(t, nil)
	granted := t.TempDir()
	secret := filepath.Join(granted, "heldout")
	os.Mkdir(secret, 0o755)
	os.WriteFile(filepath.Join(secret, "probe.out"), []byte("EXPECTED\n"), 0o644)
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	for _, withSecret := range []bool{false, true} {
		p := &sandbox.Policy{Readable: []string{granted}}
		if withSecret {
			p.Secret = []string{secret}
			if err := p.CheckSecrets(wt, env); err != nil {
				t.Fatalf("CheckSecrets = %v", err)
			}
		}
		res, err := Run(context.Background(), Spec{Argv: []string{"cat", filepath.Join(secret, "probe.out")}, Root: wt, Env: env, Sandbox: p, Stdout: 1 << 10})
		if err != nil {
			t.Fatal(err)
		}
		if read := res.Exit == 0 && string(res.Stdout) == "EXPECTED\n"; read == withSecret {
			t.Errorf("secret %v: cat = %v %q; want it read only without the secret", withSecret, res, res.Stdout)
		}
	}
	// A secret the sandbox cannot keep: one that holds a granted folder.
	p := &sandbox.Policy{Readable: []string{secret}, Secret: []string{granted}}
	var se *sandbox.SecretError
	if err := p.CheckSecrets(wt, env); !errors.As(err, &se) {
		t.Errorf("CheckSecrets(a secret holding a granted folder) = %v, want a *SecretError", err)
	}
}
