package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// testRepo makes a real repository with one commit and a linked worktree
// under its common dir, laid out as failpass lays out its own worktrees.
// It returns the worktree's top folder.
func testRepo(t *testing.T, files map[string]string) (repo, wt string) {
	t.Helper()
	repo = t.TempDir()
	for name, body := range files {
		p := filepath.Join(repo, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		mode := os.FileMode(0o644)
		if strings.HasPrefix(body, "#!") {
			mode = 0o755
		}
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
	git(t, repo, "init", "-q", "-b", "main")
	git(t, repo, "add", "-A")
	git(t, repo, "commit", "-q", "--allow-empty", "-m", "base")
	wt = filepath.Join(repo, ".git", "failpass", "worktrees", "w1")
	git(t, repo, "worktree", "add", "-q", "--detach", wt, "HEAD")
	return repo, wt
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=T", "-c", "user.email=t@example.org"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// result is one contained command as the tests see it.
type result struct {
	Outcome
	Log      string
	Err      error // from Finish (integrity)
	TimedOut bool
	Report   Report
}

// contained runs argv in the worktree inside the sandbox the way run does:
// own process group, Pdeathsig, SIGKILL of the group on timeout, one pipe
// for both streams.
func contained(t *testing.T, wt string, p *Policy, env []string, timeout time.Duration, argv ...string) result {
	t.Helper()
	if env == nil {
		env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "LANG=C.UTF-8"}
	}
	if p == nil {
		p = &Policy{}
	}
	pr, err := p.Prepare(wt, env)
	if err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	path := argv[0]
	if !strings.Contains(path, "/") {
		path = lookPath(t, argv[0], pr.Env)
	} else if !filepath.IsAbs(path) {
		path = filepath.Join(wt, path)
	}
	l, err := pr.Launch(Command{Path: path, Argv: argv, Dir: wt})
	if err != nil {
		t.Fatalf("Launch: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, l.Path)
	cmd.Args, cmd.Env, cmd.ExtraFiles = l.Args, l.Env, l.ExtraFiles
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL,
		Cloneflags: l.Cloneflags, UidMappings: l.UidMappings, GidMappings: l.GidMappings}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		pr.Close()
		t.Fatalf("start helper: %v", err)
	}
	cmd.Wait()
	r := result{Report: pr.Report, TimedOut: ctx.Err() != nil}
	r.Outcome, r.Err = pr.Finish()
	if !r.Started {
		r.Exit = -1 // never 0: a command that did not start proves nothing
	}
	r.Log = out.String()
	return r
}

func lookPath(t *testing.T, name string, env []string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			for _, d := range filepath.SplitList(v) {
				p := filepath.Join(d, name)
				if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
					return p
				}
			}
		}
	}
	t.Fatalf("%s not on the sandbox PATH", name)
	return ""
}

// need skips the test, saying why, when this machine lacks a layer.
func need(t *testing.T, layers ...Layer) {
	t.Helper()
	r := Probe()
	for _, l := range layers {
		if !r.Has(l) {
			t.Skipf("this machine cannot provide the %s layer: %v", l, r.Why)
		}
	}
}

func sh(script string) []string { return []string{"sh", "-c", script} }

func TestProbeReportsEveryLayer(t *testing.T) {
	r := Probe()
	t.Logf("probe: applied %v, missing %v, features %v, why %v, landlock %d", r.Applied, r.Missing, r.Features, r.Why, r.Landlock)
	if len(r.Applied)+len(r.Missing) != len(Layers) {
		t.Fatalf("Probe() = %v applied + %v missing, want every layer once", r.Applied, r.Missing)
	}
}

func TestExitCodeAndOutput(t *testing.T) {
	need(t, Processes)
	_, wt := testRepo(t, nil)
	r := contained(t, wt, nil, nil, 20*time.Second, sh("echo hello; echo err >&2; exit 3")...)
	if !r.Known || r.Exit != 3 || r.Signal != "" {
		t.Fatalf("outcome = %+v, want exit 3\n%s", r.Outcome, r.Log)
	}
	if r.Log != "hello\nerr\n" {
		t.Fatalf("log = %q, want %q", r.Log, "hello\nerr\n")
	}
}

func TestSignalDeathIsReported(t *testing.T) {
	need(t, Processes)
	_, wt := testRepo(t, nil)
	r := contained(t, wt, nil, nil, 20*time.Second, sh("kill -9 $$")...)
	if !r.Known || r.Signal != "killed" {
		t.Fatalf("outcome = %+v, want killed by SIGKILL\n%s", r.Outcome, r.Log)
	}
}

func TestNotFoundAndNotExecutable(t *testing.T) {
	need(t, Processes)
	_, wt := testRepo(t, map[string]string{"data.txt": "x"})
	r := contained(t, wt, nil, nil, 20*time.Second, "./data.txt")
	if r.Started || r.StartErr == nil {
		t.Fatalf("outcome = %+v, want not started\n%s", r.Outcome, r.Log)
	}
}

// A setsid child sleeping past the command's end (and past a timeout)
// must not survive: the PID namespace ends with its init.
func TestSetsidChildDoesNotSurvive(t *testing.T) {
	need(t, Processes)
	_, wt := testRepo(t, nil)
	marker := fmt.Sprintf("failpass-sbx-sleeper-%d", time.Now().UnixNano())
	for _, tc := range []struct {
		name    string
		script  string
		timeout time.Duration
	}{
		{"exits", "setsid bash -c 'exec -a " + marker + " sleep 300' & sleep 0.2; exit 0", 20 * time.Second},
		{"timeout", "setsid bash -c 'exec -a " + marker + " sleep 300' & sleep 300", time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := contained(t, wt, nil, nil, tc.timeout, sh(tc.script)...)
			if tc.name == "timeout" && !r.TimedOut {
				t.Fatalf("outcome = %+v, want a timeout", r.Outcome)
			}
			deadline := time.Now().Add(2 * time.Second)
			for {
				left := processesNamed(marker)
				if len(left) == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("processes survived the command: %v", left)
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
}

func processesNamed(s string) []string {
	var out []string
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range cmdlines {
		b, _ := os.ReadFile(p)
		if bytes.HasPrefix(b, []byte(s)) {
			out = append(out, p)
		}
	}
	return out
}

// The tool's secret never reaches the command: not in its environment,
// not in /proc/*/environ, not in its parent's.
func TestToolEnvironmentInvisible(t *testing.T) {
	need(t, Processes)
	t.Setenv("FAILPASS_TEST_SECRET", "hunter2-sandbox")
	_, wt := testRepo(t, nil)
	r := contained(t, wt, nil, nil, 20*time.Second, sh(`
		env | grep -q hunter2 && { echo FOUND in env; exit 1; }
		for f in /proc/*/environ /proc/$PPID/environ; do
			grep -q hunter2 "$f" 2>/dev/null && { echo FOUND in $f; exit 1; }
		done
		ls /proc | grep -c '^[0-9]' ; exit 0`)...)
	if r.Exit != 0 {
		t.Fatalf("the command found the tool's secret: %+v\n%s", r.Outcome, r.Log)
	}
}

// A listener the test opened on the host's loopback is unreachable, while
// a server and client inside the command's own loopback work.
func TestNetworkIsolated(t *testing.T) {
	need(t, Network)
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			io.WriteString(c, "host-secret\n")
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	_, wt := testRepo(t, nil)
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed: it is the client and server of this test")
	}
	_ = py
	script := fmt.Sprintf(`
import socket, threading, sys
try:
    socket.create_connection(("127.0.0.1", %d), timeout=2).recv(100)
    print("reached the host listener"); sys.exit(1)
except OSError as e:
    print("host listener unreachable:", e)
srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(1)
def serve():
    c, _ = srv.accept(); c.sendall(b"inside"); c.close()
threading.Thread(target=serve).start()
got = socket.create_connection(srv.getsockname(), timeout=2).recv(100)
print("own loopback:", got)
sys.exit(0 if got == b"inside" else 2)
`, port)
	r := contained(t, wt, nil, nil, 30*time.Second, "python3", "-c", script)
	if r.Exit != 0 {
		t.Fatalf("outcome = %+v, want exit 0\n%s", r.Outcome, r.Log)
	}
}

// Writes outside the worktree have no effect outside the sandbox; writes
// inside the worktree and the private /tmp and HOME work.
func TestWritesConfined(t *testing.T) {
	need(t, Filesystem)
	repo, wt := testRepo(t, map[string]string{"card.yml": "id: x\n", "notes.txt": "user's own\n"})
	hostTmp := filepath.Join(os.TempDir(), fmt.Sprintf("failpass-sbx-escape-%d", time.Now().UnixNano()))
	defer os.Remove(hostTmp)
	home := t.TempDir()
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}
	r := contained(t, wt, nil, env, 20*time.Second, sh(fmt.Sprintf(`
		echo pwned > %[1]q 2>/dev/null
		echo pwned > %[2]q/.bashrc 2>/dev/null
		echo pwned > %[3]q/card.yml 2>/dev/null
		echo pwned >> %[3]q/card.yml 2>/dev/null
		echo ok > inside.txt || exit 11
		echo ok > /tmp/private.txt || exit 12
		echo ok > "$HOME/h.txt" || exit 13
		cat %[3]q/notes.txt 2>/dev/null && exit 14
		exit 0`, hostTmp, home, repo))...)
	if r.Exit != 0 {
		t.Fatalf("outcome = %+v, want exit 0\n%s", r.Outcome, r.Log)
	}
	for _, p := range []string{hostTmp, filepath.Join(home, ".bashrc")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s was written from inside the sandbox", p)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(repo, "card.yml")); string(b) != "id: x\n" {
		t.Errorf("card.yml = %q, want unchanged", b)
	}
	if b, _ := os.ReadFile(filepath.Join(wt, "inside.txt")); string(b) != "ok\n" {
		t.Errorf("worktree write lost: %q", b)
	}
}

// The command cannot plant core.fsmonitor, diff.external or a hook, nor
// redirect the worktree's .git file.
func TestGitReadOnly(t *testing.T) {
	need(t, Filesystem)
	repo, wt := testRepo(t, nil)
	r := contained(t, wt, nil, nil, 20*time.Second, sh(`
		fail=0
		git config core.fsmonitor 'touch /tmp/pwned' 2>/dev/null && { echo fsmonitor set; fail=1; }
		git config diff.external 'touch /tmp/pwned' 2>/dev/null && { echo diff.external set; fail=1; }
		common=$(git rev-parse --git-common-dir)
		printf '#!/bin/sh\ntouch /tmp/pwned\n' > "$common/hooks/post-checkout" 2>/dev/null && { echo hook planted; fail=1; }
		echo 'gitdir: /tmp/evil' > .git 2>/dev/null && { echo .git redirected; fail=1; }
		rm -f .git 2>/dev/null && [ ! -e .git ] && { echo .git removed; fail=1; }
		git status --porcelain >/dev/null || { echo git status broken; fail=1; }
		exit $fail`)...)
	if r.Exit != 0 || r.Err != nil {
		t.Fatalf("outcome = %+v, err %v, want exit 0\n%s", r.Outcome, r.Err, r.Log)
	}
	if b, _ := os.ReadFile(filepath.Join(repo, ".git", "config")); bytes.Contains(b, []byte("fsmonitor")) || bytes.Contains(b, []byte("external")) {
		t.Fatalf("config changed:\n%s", b)
	}
}

// A change to the git configuration (made here from outside, as a
// command would where the filesystem layer is missing) is an integrity
// failure.
func TestGitConfigChangeIsIntegrityFailure(t *testing.T) {
	repo, wt := testRepo(t, nil)
	gp, err := findGitPaths(wt)
	if err != nil {
		t.Fatal(err)
	}
	s, err := SnapshotGit(gp.gitDir, gp.commonDir)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Check(); err != nil {
		t.Fatalf("Check() on unchanged repo = %v, want nil", err)
	}
	git(t, repo, "config", "core.fsmonitor", "touch /tmp/x")
	os.WriteFile(filepath.Join(gp.commonDir, "hooks", "pre-commit"), []byte("#!/bin/sh\n"), 0o755)
	err = s.Check()
	ie, ok := err.(*IntegrityError)
	if !ok || len(ie.Changed) != 2 {
		t.Fatalf("Check() = %v, want an IntegrityError naming config and the hook", err)
	}
}

// Each way a command could make git run a program later is caught, and a
// change git never acts on (a sample hook's text) is not.
func TestGitSnapshotChanges(t *testing.T) {
	for _, tc := range []struct {
		name    string
		prepare func(hooks string) // before the snapshot
		change  func(hooks string) // what the "command" does
		want    []string           // changed paths, relative to hooks
	}{
		{"sample renamed into a hook", nil,
			func(h string) { os.Rename(filepath.Join(h, "pre-commit.sample"), filepath.Join(h, "pre-commit")) },
			[]string{"pre-commit", "pre-commit.sample"}},
		{"hook planted", nil,
			func(h string) { os.WriteFile(filepath.Join(h, "post-checkout"), []byte("#!/bin/sh\n"), 0o755) },
			[]string{"post-checkout"}},
		{"hook's link target rewritten",
			func(h string) { os.Symlink("pre-commit.sample", filepath.Join(h, "pre-commit")) },
			func(h string) {
				os.WriteFile(filepath.Join(h, "pre-commit.sample"), []byte("#!/bin/sh\ntouch /tmp/x\n"), 0o755)
			},
			[]string{"pre-commit"}},
		{"sample text edited", nil,
			func(h string) {
				os.WriteFile(filepath.Join(h, "pre-commit.sample"), []byte("#!/bin/sh\n# edited\n"), 0o755)
			},
			nil},
		{"sample's mode changed", nil,
			func(h string) { os.Chmod(filepath.Join(h, "pre-push.sample"), 0o700) },
			nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, wt := testRepo(t, nil)
			gp, err := findGitPaths(wt)
			if err != nil {
				t.Fatal(err)
			}
			hooks := filepath.Join(gp.commonDir, "hooks")
			if _, err := os.Stat(filepath.Join(hooks, "pre-commit.sample")); err != nil {
				t.Skipf("git init wrote no sample hooks here: %v", err)
			}
			if tc.prepare != nil {
				tc.prepare(hooks)
			}
			s, err := SnapshotGit(gp.gitDir, gp.commonDir)
			if err != nil {
				t.Fatal(err)
			}
			tc.change(hooks)
			err = s.Check()
			var got []string
			if ie, ok := err.(*IntegrityError); ok {
				for _, p := range ie.Changed {
					got = append(got, strings.TrimPrefix(p, hooks+string(filepath.Separator)))
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("Check() after %s: changed %q, want %q", tc.name, got, tc.want)
			}
		})
	}
}

// An executable `go` planted in the worktree is never run for argv
// ["go", ...], even when the card's PATH names the worktree.
func TestPlantedArgv0NotRun(t *testing.T) {
	_, wt := testRepo(t, map[string]string{"go": "#!/bin/sh\necho PLANTED; exit 42\n", "bin/go": "#!/bin/sh\necho PLANTED; exit 42\n"})
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go not on PATH")
	}
	env := []string{"PATH=.:bin:" + filepath.Join(wt, "bin") + ":" + filepath.Dir(goBin) + ":/usr/bin:/bin", "HOME=" + os.Getenv("HOME")}
	r := contained(t, wt, nil, env, 60*time.Second, "go", "version")
	if r.Exit != 0 || strings.Contains(r.Log, "PLANTED") {
		t.Fatalf("outcome = %+v, want the real go\n%s", r.Outcome, r.Log)
	}
}

func TestForkBombStopped(t *testing.T) {
	need(t, Resources, Processes)
	_, wt := testRepo(t, nil)
	start := time.Now()
	r := contained(t, wt, &Policy{Limits: Limits{Pids: 64}}, nil, 30*time.Second,
		sh(`bomb() { bomb | bomb & }; bomb; sleep 2; exit 0`)...)
	t.Logf("fork bomb: %+v after %v", r.Outcome, time.Since(start))
	if r.TimedOut {
		t.Fatalf("fork bomb ran to the timeout")
	}
}

func TestBigAllocationStopped(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the memory limit to stop a big allocation: the full suite runs it")
	}
	need(t, Resources)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	_, wt := testRepo(t, nil)
	r := contained(t, wt, nil, nil, 60*time.Second, "python3", "-c", "b = bytearray(1 << 30); b[::4096] = b'x' * len(b[::4096]); print('allocated')")
	if r.Exit == 0 || strings.Contains(r.Log, "allocated") {
		t.Fatalf("a 1 GiB allocation succeeded: %+v\n%s", r.Outcome, r.Log)
	}
	t.Logf("1 GiB allocation: %+v", r.Outcome)
}

// The private home has Go's telemetry off: a go command there starts
// no telemetry process to write counters thrown away with the home.
func TestGoTelemetryOff(t *testing.T) {
	need(t, Filesystem)
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go not installed")
	}
	_, wt := testRepo(t, nil)
	r := contained(t, wt, nil, nil, 20*time.Second, sh(`test "$(go env GOTELEMETRY)" = off || { go env GOTELEMETRY; exit 3; }`)...)
	if r.Exit != 0 {
		t.Fatalf("go env GOTELEMETRY in the sandbox: %+v\n%s", r.Outcome, r.Log)
	}
}

// A Go module's tests (an httptest server and client on the command's
// own loopback among them) pass inside the sandbox, and the second run
// of the same card reuses the card's build cache.
// runTimeout is how long one contained run of a test may take: at least
// min, and else what is left before go test's own -timeout (less a
// minute to report), so a loaded machine given a longer -timeout gets
// longer runs rather than a fixed limit that fails under load alone.
func runTimeout(t *testing.T, min time.Duration) time.Duration {
	if d, ok := t.Deadline(); ok {
		if left := time.Until(d) - time.Minute; left > min {
			return left
		}
	}
	return min
}

func TestGoModuleTestAndCacheReuse(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles the standard library's net in a cold cache: the full suite runs it")
	}
	need(t, Network, Filesystem, Processes)
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go not installed")
	}
	_, wt := testRepo(t, map[string]string{
		"go.mod": "module example.org/m\n\ngo 1.21\n",
		"m.go":   "package m\n\nfunc Add(a, b int) int { return a + b }\n",
		// Loopback through package net alone: net/http would put crypto/tls
		// and the rest of an HTTP stack in the first, cold build.
		"m_test.go": `package m

import (
	"io"
	"net"
	"testing"
)

func TestAdd(t *testing.T) {
	if Add(1, 2) != 3 {
		t.Fatal("Add")
	}
}

func TestLoopback(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		c, err := l.Accept()
		if err == nil {
			io.WriteString(c, "hi")
			c.Close()
		}
	}()
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(c)
	if string(b) != "hi" {
		t.Fatalf("got %q", b)
	}
}
`,
	})
	// The card's cache outlives the test (as it outlives a gate run), so
	// only the first run on a machine compiles net from scratch.
	cache := filepath.Join(os.TempDir(), "failpass-sandbox-test-card-cache-"+strconv.Itoa(os.Getuid())) // per user: another's is not writable
	env := []string{"PATH=" + filepath.Dir(goBin) + ":/usr/bin:/bin", "HOME=" + os.Getenv("HOME")}
	p := &Policy{CacheDir: cache}
	first := contained(t, wt, p, env, runTimeout(t, 5*time.Minute), "go", "test", "./...")
	if first.Exit != 0 {
		t.Fatalf("first go test: %+v\n%s", first.Outcome, first.Log)
	}
	if _, err := os.Stat(filepath.Join(cache, "go-build")); err != nil {
		t.Fatalf("GOCACHE not in the card's cache folder: %v", err)
	}
	second := contained(t, wt, p, env, runTimeout(t, 5*time.Minute), "go", "test", "./...")
	if second.Exit != 0 || !strings.Contains(second.Log, "(cached)") {
		t.Fatalf("second go test did not reuse the cache: %+v\n%s", second.Outcome, second.Log)
	}
}

// A Python project's unittest suite passes inside the sandbox.
func TestPythonUnittest(t *testing.T) {
	need(t, Filesystem, Processes)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	_, wt := testRepo(t, map[string]string{
		"calc.py":      "def add(a, b):\n    return a + b\n",
		"test_calc.py": "import unittest, tempfile, calc\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(calc.add(1, 2), 3)\n    def test_tmp(self):\n        with tempfile.NamedTemporaryFile() as f:\n            f.write(b'x')\n",
	})
	r := contained(t, wt, &Policy{CacheDir: filepath.Join(t.TempDir(), "c")}, nil, 2*time.Minute, "python3", "-m", "unittest", "-v")
	if r.Exit != 0 {
		t.Fatalf("unittest: %+v\n%s", r.Outcome, r.Log)
	}
}

// TestUnprivileged runs the core checks again as an ordinary user, where
// the sandbox adds a user namespace and cannot create cgroups (so the
// resources layer is reported missing, not pretended). As root it
// re-executes this test binary as nobody; otherwise the other tests
// already ran unprivileged.
func TestUnprivileged(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the sandbox tests again as nobody: the full suite runs it")
	}
	if os.Getenv("FAILPASS_SANDBOX_UNPRIVILEGED") != "" {
		r := Probe()
		if !slices.Contains(r.Features, string(FeatUserNS)) && len(r.Applied) > 0 {
			t.Fatalf("unprivileged probe = %+v: layers applied without a user namespace", r)
		}
		return
	}
	if os.Geteuid() != 0 {
		t.Skip("not root: the other tests already ran unprivileged")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for d := dir; d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
		os.Chmod(d, 0o755) // t.TempDir folders are private; nobody must reach the copy
	}
	bin := filepath.Join(dir, "sandbox.test")
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(dir, "home")
	os.Mkdir(home, 0o777)
	os.Chmod(home, 0o777) // past the umask: nobody makes its temp folders here
	cmd := exec.Command(bin, "-test.run", "^(TestUnprivileged|TestProbeReportsEveryLayer|TestExitCodeAndOutput|TestSetsidChildDoesNotSurvive|TestToolEnvironmentInvisible|TestWritesConfined|TestGitReadOnly|TestSeccompDeniesInsideTheSandbox|TestSeccompInView|TestRlimitsWithoutCgroups)$", "-test.v")
	cmd.Dir = home
	cmd.Env = []string{"FAILPASS_SANDBOX_UNPRIVILEGED=1", "HOME=" + home, "PATH=/usr/local/bin:/usr/bin:/bin", "TMPDIR=" + home}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("\nPASS\n")) {
		t.Fatalf("the sandbox tests as nobody: %v\n%s", err, out)
	}
	t.Logf("as nobody:\n%s", out)
}

// `npm test` with an in-tree node_modules and `cargo test` of a crate
// work inside the sandbox: the toolchains are readable, their caches and
// logs land in the card's cache folder and the private HOME.
func TestNpmAndCargo(t *testing.T) {
	if testing.Short() {
		t.Skip("runs npm and cargo projects contained: the full suite runs it")
	}
	need(t, Filesystem, Processes, Network)
	_, wt := testRepo(t, map[string]string{
		"package.json":                  `{"name":"x","version":"1.0.0","scripts":{"test":"node test.js"}}`,
		"node_modules/leftpad/index.js": "module.exports = (s, n) => s.padStart(n)\n",
		"test.js":                       "const lp = require('leftpad'); if (lp('a', 3) !== '  a') process.exit(1); console.log('node ok')\n",
		"Cargo.toml":                    "[package]\nname = \"c\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
		"src/lib.rs":                    "pub fn add(a: i32, b: i32) -> i32 { a + b }\n#[cfg(test)]\nmod t { #[test] fn a() { assert_eq!(super::add(1, 2), 3); } }\n",
	})
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	p := &Policy{CacheDir: filepath.Join(t.TempDir(), "cache")}
	for _, tc := range []struct {
		argv []string
		want string
	}{
		{[]string{"npm", "test"}, "node ok"},
		{[]string{"cargo", "test"}, "test result: ok. 1 passed"},
	} {
		t.Run(tc.argv[0], func(t *testing.T) {
			if _, err := exec.LookPath(tc.argv[0]); err != nil {
				t.Skipf("%s not installed", tc.argv[0])
			}
			r := contained(t, wt, p, env, 5*time.Minute, tc.argv...)
			if r.Exit != 0 || !strings.Contains(r.Log, tc.want) {
				t.Fatalf("%q inside the sandbox: %+v\n%s", tc.argv, r.Outcome, r.Log)
			}
		})
	}
}

// The seed's example runs its tests from a virtualenv: a bare `python`
// resolves to the venv's interpreter through PATH, and the venv's
// site-packages and the base interpreter it was made from are readable.
func TestVirtualenv(t *testing.T) {
	need(t, Filesystem, Processes)
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	venv := filepath.Join(t.TempDir(), "venv")
	if out, err := exec.Command(py, "-m", "venv", "--without-pip", venv).CombinedOutput(); err != nil {
		t.Skipf("cannot make a virtualenv: %v\n%s", err, out)
	}
	site, _ := filepath.Glob(filepath.Join(venv, "lib", "python3*", "site-packages"))
	if len(site) != 1 {
		t.Fatalf("no site-packages in %s", venv)
	}
	// A stand-in for pytest, installed in the venv only.
	os.WriteFile(filepath.Join(site[0], "venvonly.py"), []byte("import sys\nprint('from the venv:', sys.prefix)\n"), 0o644)
	_, wt := testRepo(t, map[string]string{"tests/test_x.py": "import unittest, venvonly\n\nclass T(unittest.TestCase):\n    def test_x(self):\n        pass\n"})
	env := []string{"PATH=" + filepath.Join(venv, "bin") + ":/usr/bin:/bin", "VIRTUAL_ENV=" + venv, "HOME=" + os.Getenv("HOME")}
	r := contained(t, wt, nil, env, 2*time.Minute, "python", "-m", "unittest", "discover", "-s", "tests", "-v")
	if r.Exit != 0 || !strings.Contains(r.Log, "from the venv: "+venv) {
		t.Fatalf("unittest from a virtualenv: %+v\n%s", r.Outcome, r.Log)
	}
}

// A card env larger than one argv string (128 KiB) still reaches the
// command: the helper's configuration travels in a memory file.
func TestLargeEnv(t *testing.T) {
	need(t, Processes)
	_, wt := testRepo(t, nil)
	// Three variables of 100 KiB: execve itself refuses one string over 128 KiB.
	big := strings.Repeat("x", 100<<10)
	env := []string{"PATH=/usr/bin:/bin", "A=" + big, "B=" + big, "C=" + big}
	r := contained(t, wt, nil, env, 20*time.Second, sh(`[ ${#A}${#B}${#C} = 102400102400102400 ] && ! grep -q xxxx /proc/1/cmdline`)...)
	if !r.Started || r.Exit != 0 {
		t.Fatalf("large env: %+v\n%s", r.Outcome, r.Log)
	}
}

func TestUnescapeMount(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"/sys/fs/cgroup/memory", "/sys/fs/cgroup/memory"},
		{`/mnt/with\040space`, "/mnt/with space"},
		{`/a\134b`, `/a\b`},
		{`/bad\09`, `/bad\09`},
		{`/end\`, `/end\`},
	} {
		if got := unescapeMount(tc.in); got != tc.want {
			t.Errorf("unescapeMount(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func FuzzUnescapeMount(f *testing.F) {
	for _, s := range []string{"/a", `/a\040b`, `\`, `\0`, `\777`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := unescapeMount(s)
		if len(got) > len(s) {
			t.Fatalf("unescapeMount(%q) = %q grew", s, got)
		}
		if !strings.Contains(s, `\`) && got != s {
			t.Fatalf("unescapeMount(%q) = %q, want it unchanged", s, got)
		}
	})
}

// Even when failpass runs as root the command holds no capability: it
// cannot load a kernel module, remount the read-only git folders or
// change the clock.
func TestNoCapabilities(t *testing.T) {
	need(t, Processes)
	_, wt := testRepo(t, nil)
	r := contained(t, wt, nil, nil, 20*time.Second, sh(`
		grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb):' /proc/self/status
		grep -E '^Cap(Prm|Eff|Bnd|Amb):' /proc/self/status | grep -qv '0000000000000000' && exit 1
		mount -o remount,rw "$(git rev-parse --git-common-dir)" 2>/dev/null && exit 2
		exit 0`)...)
	if r.Exit != 0 {
		t.Fatalf("the command holds capabilities: %+v\n%s", r.Outcome, r.Log)
	}
	t.Logf("inside:\n%s", r.Log)
}

// Host secrets that uid 0 could read by file permissions stay out of
// reach: password hashes, host keys, raw disks. What programs need from
// /etc and /dev still works.
func TestHostSecretsUnreadable(t *testing.T) {
	need(t, Filesystem)
	_, wt := testRepo(t, nil)
	r := contained(t, wt, nil, nil, 20*time.Second, sh(`
		fail=0
		for f in /etc/shadow /etc/gshadow /etc/ssh/ssh_host_ed25519_key /etc/ssh/ssh_host_rsa_key; do
			[ -e "$f" ] || continue
			head -c1 "$f" >/dev/null 2>&1 && { echo "read $f"; fail=1; }
		done
		for d in /dev/sda /dev/vda /dev/nvme0n1 /dev/mem /dev/kmsg; do
			[ -e "$d" ] || continue
			head -c1 "$d" >/dev/null 2>&1 && { echo "read $d"; fail=1; }
		done
		id -un >/dev/null || { echo "passwd lookup broken"; fail=1; }
		[ -s /etc/ld.so.cache ] && head -c1 /etc/ld.so.cache >/dev/null || { echo "ld.so.cache unreadable"; fail=1; }
		head -c1 /dev/urandom >/dev/null && echo x >/dev/null || { echo "devices broken"; fail=1; }
		exit $fail`)...)
	if r.Exit != 0 {
		t.Fatalf("host secrets: %+v\n%s", r.Outcome, r.Log)
	}
}

// Credentials a CI checkout leaves in .git/config (an extraheader, a
// token in a remote URL) are invisible to the command, and git still
// works inside.
func TestGitConfigMasked(t *testing.T) {
	need(t, Filesystem)
	repo, wt := testRepo(t, nil)
	git(t, repo, "config", "http.https://example.org/.extraheader", "AUTHORIZATION: basic c2VjcmV0LXRva2Vu")
	git(t, repo, "remote", "add", "origin", "https://user:ghp_SECRETTOKEN@example.org/r.git")
	r := contained(t, wt, nil, nil, 20*time.Second, sh(`
		c=$(git rev-parse --git-common-dir)
		grep -rq -e c2VjcmV0 -e SECRETTOKEN "$c/config" && { echo "token visible"; exit 1; }
		git config --list | grep -q -e c2VjcmV0 -e SECRETTOKEN && { echo "token in git config --list"; exit 1; }
		git log --oneline -1 >/dev/null || { echo "git log broken"; exit 2; }
		git status --porcelain >/dev/null || { echo "git status broken"; exit 2; }
		exit 0`)...)
	if r.Exit != 0 || r.Err != nil {
		t.Fatalf("masked config: %+v, %v\n%s", r.Outcome, r.Err, r.Log)
	}
	if b, _ := os.ReadFile(filepath.Join(repo, ".git", "config")); !bytes.Contains(b, []byte("SECRETTOKEN")) {
		t.Fatalf("the real config lost its remote:\n%s", b)
	}
}

// Without namespaces (an older kernel, a container that forbids them) the
// helper still applies what it can: Landlock keeps writes in the worktree
// and a private temp folder, capabilities are dropped, and the cgroup
// kill at the end ends a setsid escapee that no PID namespace would.
func TestDegradedWithoutNamespaces(t *testing.T) {
	full := probe()
	if !full.landlock || full.mem == nil {
		t.Skip("needs Landlock and a memory cgroup to check the degraded path")
	}
	degraded := *full
	degraded.namespaces, degraded.userns = false, false
	probed = &degraded
	defer func() { probed = full }()

	_, wt := testRepo(t, nil)
	hostFile := filepath.Join(os.TempDir(), fmt.Sprintf("failpass-sbx-degraded-%d", time.Now().UnixNano()))
	defer os.Remove(hostFile)
	marker := fmt.Sprintf("failpass-sbx-degraded-sleeper-%d", time.Now().UnixNano())
	r := contained(t, wt, nil, nil, 20*time.Second, sh(fmt.Sprintf(`
		echo x > %q 2>/dev/null && { echo "wrote the host's /tmp"; exit 1; }
		echo ok > "$TMPDIR/t" || { echo "private temp folder not writable"; exit 2; }
		echo ok > inside.txt || exit 3
		grep -q '^CapEff:.*0000000000000000' /proc/self/status || { echo "capabilities kept"; exit 4; }
		grep -qx off "$HOME/.config/go/telemetry/mode" || { echo "Go telemetry not off in the private home"; exit 5; }
		setsid bash -c 'exec -a %s sleep 300' &
		sleep 0.2
		exit 7`, hostFile, marker))...)
	if r.Exit != 7 {
		t.Fatalf("degraded run: %+v\n%s", r.Outcome, r.Log)
	}
	if _, err := os.Stat(hostFile); err == nil {
		t.Fatalf("the command wrote %s", hostFile)
	}
	deadline := time.Now().Add(2 * time.Second)
	for len(processesNamed(marker)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("a setsid escapee survived the degraded run: %v", processesNamed(marker))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// staleCgroupEnv names, to the test binary run as nobody, the stale
// cgroup root made that its gc must skip.
const staleCgroupEnv = "FAILPASS_TEST_STALE_CGROUP"

// A user's gc after root's gate was killed (CI runs the suite as root,
// then as a user, on one machine): root's stale cgroup is skipped and
// named, not an error, and stays for root to remove.
func TestRemoveStaleCgroupsOfAnotherUser(t *testing.T) {
	if dir := os.Getenv(staleCgroupEnv); dir != "" {
		// The run as nobody.
		n, skipped, err := RemoveStaleCgroups()
		if err != nil {
			t.Fatalf("RemoveStaleCgroups as uid %d: %v (removed %d, skipped %q)", os.Geteuid(), err, n, skipped)
		}
		if !slices.Contains(skipped, dir) {
			t.Fatalf("root's stale %s is not among the skipped: %q", dir, skipped)
		}
		return
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root to make a cgroup of another user")
	}
	c := probe()
	if c.mem == nil {
		t.Skip("no writable memory cgroup")
	}
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(c.mem.dir, fmt.Sprintf("failpass-%d-1", dead.Process.Pid))
	if err := os.Mkdir(stale, 0o755); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(stale)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// A copy nobody can run (the test binary's folder may be private).
	dir := t.TempDir()
	for d := dir; d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
		os.Chmod(d, 0o755) // t.TempDir folders are private; nobody must reach the copy
	}
	bin := filepath.Join(dir, "sandbox.test")
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run", "^TestRemoveStaleCgroupsOfAnotherUser$", "-test.v")
	cmd.Dir = dir
	cmd.Env = []string{staleCgroupEnv + "=" + stale, "HOME=" + dir, "PATH=/usr/local/bin:/usr/bin:/bin", "TMPDIR=" + dir}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("\nPASS\n")) {
		t.Fatalf("gc's cgroup sweep as nobody: %v\n%s", err, out)
	}
	if _, err := os.Stat(stale); err != nil {
		t.Errorf("root's stale cgroup went: %v", err)
	}
}

func TestRemoveStaleCgroups(t *testing.T) {
	c := probe()
	if c.mem == nil {
		t.Skip("no writable memory cgroup")
	}
	// A dead owner: a process that has exited and been reaped.
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(c.mem.dir, fmt.Sprintf("failpass-%d-1", dead.Process.Pid))
	live := filepath.Join(c.mem.dir, fmt.Sprintf("failpass-%d-999999", os.Getpid()))
	for _, d := range []string{stale, live} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	defer os.Remove(live)
	defer os.Remove(stale)
	if _, _, err := RemoveStaleCgroups(); err != nil {
		t.Fatalf("RemoveStaleCgroups: %v", err)
	}
	if _, err := os.Stat(stale); err == nil {
		t.Errorf("%s (dead owner) still exists", stale)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("%s (live owner) was removed", live)
	}
	for _, tc := range []struct {
		name string
		pid  int
		ok   bool
	}{{"failpass-12-3", 12, true}, {"failpass-x-3", 0, false}, {"other-12-3", 0, false}, {"failpass-12", 0, false}, {"failpass-0-1", 0, false}, {"failpass-12-9f3a0c1de2b47788", 12, true}, {"failpass-12-xyz", 0, false}} {
		if pid, ok := staleOwner(tc.name); pid != tc.pid || ok != tc.ok {
			t.Errorf("staleOwner(%q) = %d, %v; want %d, %v", tc.name, pid, ok, tc.pid, tc.ok)
		}
	}
}

// holdsNoCapability tells root (whose permitted set is full) from a user
// without capabilities, for whom the bounding set is left as it is.
func TestHoldsNoCapability(t *testing.T) {
	if got, want := holdsNoCapability(), os.Geteuid() != 0; got != want {
		t.Errorf("holdsNoCapability() = %v as uid %d", got, os.Geteuid())
	}
}

// TestCgroupNameCountsNothing: a command's cgroup name, which it reads in
// /proc/self/cgroup, holds no sequence number: two in a row share only
// the pid.
func TestCgroupNameCountsNothing(t *testing.T) {
	a, b := cgroupName(), cgroupName()
	prefix := fmt.Sprintf("failpass-%d-", os.Getpid())
	if a == b || !strings.HasPrefix(a, prefix) || !strings.HasPrefix(b, prefix) || len(a) != len(prefix)+16 {
		t.Errorf("cgroupName() = %q, %q; want %s and 16 random hex digits", a, b, prefix)
	}
	if pid, ok := staleOwner(a); !ok || pid != os.Getpid() {
		t.Errorf("staleOwner(%q) = %d, %v", a, pid, ok)
	}
}

// A command starts in its worktree's view (TreeView): a runner looking
// upward from it (pytest's ini files, go.work) finds nothing of the
// user's checkout, whose pyproject.toml lies right above the worktree's
// own folders here. A program named by a path in the worktree runs from
// the view, and what the command writes there lands in the worktree.
func TestWorktreeView(t *testing.T) {
	need(t, Filesystem)
	_, wt := testRepo(t, map[string]string{
		"pyproject.toml": "[project]\nname = \"x\"\n",
		"sub/x.txt":      "x\n",
		"check.sh": `#!/bin/sh
[ "$(pwd -P)" = /tmp/failpass/worktree ] || { echo "runs in $(pwd -P)"; exit 3; }
[ "$0" = /tmp/failpass/worktree/check.sh ] || [ "$0" = ./check.sh ] || { echo "started as $0"; exit 4; }
[ -f sub/x.txt ] && [ -f pyproject.toml ] || { echo "the tree is not here"; exit 5; }
[ "$(ls -A ..)" = worktree ] || { echo "beside the tree: $(ls -A ..)"; exit 6; }
for d in /tmp/failpass /tmp /; do
	[ -e "$d/pyproject.toml" ] && { echo "found $d/pyproject.toml"; exit 7; }
done
echo made > made.txt || exit 8
exit 0
`,
	})
	r := contained(t, wt, nil, nil, 20*time.Second, "./check.sh")
	if r.Exit != 0 {
		t.Fatalf("outcome = %+v, want exit 0\n%s", r.Outcome, r.Log)
	}
	if b, _ := os.ReadFile(filepath.Join(wt, "made.txt")); string(b) != "made\n" {
		t.Errorf("a write in the view did not land in the worktree: %q", b)
	}
}
