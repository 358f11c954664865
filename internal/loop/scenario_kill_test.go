package loop

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/failpass/failpass/internal/sandbox/sandboxtest"
)

// A loop killed with -9 while its fixer's child runs leaves nothing
// running once the loop is resumed. With namespaces the fixer's PID
// namespace dies with the loop; without them (a Landlock view) the
// child outlives the loop, and resume kills the process group the loop
// recorded. Each case runs in a process of its own (killedLoopScenario),
// which must not be a child subreaper before the kill, so that what the
// killed loop leaves goes to init, as it would from a terminal.
func TestKilledLoopLeavesNoRoleProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("kills loops mid-run and waits for their roles: the full suite runs it")
	}
	if os.Getenv(killEnv) != "" || os.Getenv(sandboxtest.DenyEnv) == "1" {
		t.Skip("a child of this test")
	}
	t.Run("namespaces", func(t *testing.T) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestKilledLoopScenario$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), killEnv+"=scenario")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestKilledLoopScenario") {
			t.Fatalf("%v\n%s", err, out)
		}
	})
	t.Run("landlock", func(t *testing.T) { sandboxtest.RunDenied(t, "^TestKilledLoopScenario$") })
}

// killEnv says what a re-executed test binary is: "scenario", or
// "loop:DIR:BIN:MARK" for the loop the scenario kills.
const killEnv = "FAILPASS_TEST_KILLED_LOOP"

func TestKilledLoopScenario(t *testing.T) {
	if os.Getenv(killEnv) != "scenario" && os.Getenv(sandboxtest.DenyEnv) != "1" {
		t.Skip("run by TestKilledLoopLeavesNoRoleProcess")
	}
	// The loop's temporary folders land in a folder of this test's own
	// (the killed loop inherits TMPDIR), so what it leaves is countable.
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	s := newScen(t, "hello BUG1\n")
	s.script("reviewer", bugReviewer)
	marker := fmt.Sprintf("failpass-test-role-%d-%d", os.Getpid(), time.Now().UnixNano())
	// The fixer starts a child that would sleep for minutes outside its
	// worktree (out of reach of the worktree's gc, which kills what runs
	// in a dead run's worktree) and waits to be killed. (Its sandbox
	// lets it write nothing this test could see: the child's command
	// line says it runs.)
	s.script("fixer", `cat >/dev/null
(cd / && exec sh -c 'sleep 300; true' `+marker+`) &
sleep 300
`)
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledLoopChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), killEnv+"=loop:"+s.dir+":"+s.bin+":"+s.head)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if len(running(marker)) > 0 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatal("the fixer never started")
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Kill()
	cmd.Wait()
	t.Logf("after kill -9 of the loop, role processes running: %v", running(marker))
	if left, _ := filepath.Glob(filepath.Join(tmp, "failpass-*")); len(left) == 0 {
		t.Fatal("the killed loop left no temporary folder: this test shows nothing")
	}

	s.script("fixer", fixFirstBug)
	out, err := Resume(context.Background(), s.repo, "killed", s.config("reviewer", "fixer"))
	if err != nil {
		t.Fatal(err)
	}
	want(t, out, "converged", "")
	if left := running(marker); len(left) > 0 {
		t.Fatalf("after resume, role processes still run: %v", left)
	}
	if recs, _ := filepath.Glob(filepath.Join(s.repo.StateDir("loops"), "*", "roles", "*")); len(recs) > 0 {
		t.Fatalf("role records left: %v", recs)
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "failpass-*")); len(left) > 0 {
		t.Fatalf("after resume, the killed loop's temporary folders are left: %v", left)
	}
}

// TestKilledLoopChild is the loop TestKilledLoopScenario kills.
func TestKilledLoopChild(t *testing.T) {
	v, ok := strings.CutPrefix(os.Getenv(killEnv), "loop:")
	if !ok {
		t.Skip("run by TestKilledLoopScenario")
	}
	f := strings.Split(v, ":")
	repo, err := openRepo(f[0])
	if err != nil {
		t.Fatal(err)
	}
	s := &scen{t: t, dir: f[0], bin: f[1], repo: repo, head: f[2]}
	s.base = git(t, s.dir, "rev-parse", "main")
	Start(context.Background(), s.repo, s.invocation("killed", 3), nil, s.config("reviewer", "fixer"))
	t.Fatal("the loop returned; it should have been killed")
}

// running lists the processes whose command line holds marker.
func running(marker string) []string {
	var out []string
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), marker) {
			out = append(out, strings.ReplaceAll(strings.TrimRight(string(b), "\x00"), "\x00", " "))
		}
	}
	return out
}
