package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
)

// testExecVar marks a contained candidate command's environment for the
// test-binary wrapper: its value is the worktree. The command's go runs
// every test binary (and every `go run` program) through failpass, as
// `go test -exec` (GOFLAGS), and a failpass started with this variable
// set and an absolute path first is that wrapper (see dispatch.go).
const testExecVar = "FAILPASS_TEST_EXEC"

// testExecEnv adds the wrapper to a command's environment m: exe is the
// failpass binary, root the worktree. GOFLAGS cannot quote a space, so
// an exe path with one gets no wrapper (ok false).
func testExecEnv(get func(string) string, set func(k, v string), exe, root string) (ok bool) {
	if exe == "" || strings.ContainsAny(exe, " \t\n\r") {
		return false
	}
	flags := strings.TrimSpace(get("GOFLAGS") + " -exec=" + exe) // the last -exec wins
	set("GOFLAGS", flags)
	set(testExecVar, root)
	return true
}

// testExec runs one test binary, argv[0] with its arguments, for go:
// in a Landlock domain of its own beneath the command's, which may
// write the worktree, a temporary folder of its own (its TMPDIR and
// HOME, and the build cache of a go command it starts), the folder go
// linked it in (its test log and coverage land there) and /dev/shm,
// and nothing else. Go's work folder holds the other packages' test
// binaries, which go runs later, and the build cache holds what go
// links them from: a test binary that could write either could put its
// own code in place of another package's tests, and every process it
// starts (a watcher that outlives it) stays in its domain. Where the
// domain cannot be made the binary does not run: go reports the
// package failed.
func testExec(root string, argv []string) int {
	fail := func(err error) int {
		fmt.Fprintf(os.Stderr, "failpass: test binary %s: %v\n", argv[0], err)
		return 125
	}
	runtime.LockOSThread() // the domain is the thread's, and execve keeps it
	tmp, err := os.MkdirTemp(os.Getenv("TMPDIR"), "failpass-test-")
	if err != nil {
		return fail(err)
	}
	home := filepath.Join(tmp, "home")
	if err := os.Mkdir(home, 0o700); err != nil {
		return fail(err)
	}
	own := map[string]string{
		"TMPDIR": tmp, "HOME": home,
		"GOCACHE":        filepath.Join(tmp, "go-build"),
		"XDG_CACHE_HOME": filepath.Join(tmp, "cache"),
	}
	env := make([]string, 0, len(os.Environ())+len(own))
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := own[k]; !ok && k != "GOTMPDIR" {
			env = append(env, kv)
		}
	}
	for k, v := range own {
		env = append(env, k+"="+v)
	}
	// /dev/shm as the command may write it (its private one, inside a
	// mount namespace): POSIX shared memory and semaphores live there.
	rules := landlockRules{write: []string{root, tmp, filepath.Dir(argv[0]), "/dev/shm"}, devices: landlockDevices, writesOnly: true}
	if err := restrictThread(rules); err != nil {
		return fail(err)
	}
	return fail(syscall.Exec(argv[0], argv, env))
}
