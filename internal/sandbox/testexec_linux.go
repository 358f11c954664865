package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
)

// testExecEnv adds the wrapper to a command's environment: exe is the
// failpass binary, root the worktree, goWork go's work folder
// (GOTMPDIR), which must lie outside every folder testExec lets a test
// binary write. GOFLAGS cannot quote a space, so an exe path with one
// gets no wrapper.
func testExecEnv(get func(string) string, set func(k, v string), exe, root, goWork string) {
	if exe == "" || goWork == "" || strings.ContainsAny(exe, " \t\n\r") {
		return
	}
	flags := strings.TrimSpace(get("GOFLAGS") + " -exec=" + exe) // the last -exec wins
	set("GOFLAGS", flags)
	set("GOTMPDIR", goWork)
	set(testExecVar, root)
}

// testExec runs one test binary, argv[0] with its arguments, for go:
// in a Landlock domain of its own beneath the command's, which may
// write the worktree, the command's temporary folders (its TMPDIR,
// /tmp, /dev/shm: private to the command where a mount namespace
// exists), the folder go linked the binary in (its test log and
// coverage land there) and nothing else: not go's work folder
// (GOTMPDIR, set apart for this), not the build cache. Go's work folder
// holds the other packages' test binaries, which go runs later, and the
// build cache holds what go links them from: a test binary that could
// write either could put its own code in place of another package's
// tests, and every process it starts (a watcher that outlives it) stays
// in its domain. The binary gets a TMPDIR and HOME of its own, which
// also hold GOCACHE and XDG_CACHE_HOME for a go command it starts, and
// no GOCACHEPROG: the command's caches are read-only to it. Where the domain cannot be made the
// binary does not run: go reports the package failed.
func testExec(root string, argv []string) int {
	fail := func(err error) int {
		fmt.Fprintf(os.Stderr, "failpass: test binary %s: %v\n", argv[0], err)
		return 125
	}
	runtime.LockOSThread() // the domain is the thread's, and execve keeps it
	cmdTmp := os.Getenv("TMPDIR")
	tmp, err := os.MkdirTemp(cmdTmp, "failpass-test-")
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
		if _, ok := own[k]; !ok && k != "GOTMPDIR" && k != "GOCACHEPROG" {
			env = append(env, kv)
		}
	}
	for k, v := range own {
		env = append(env, k+"="+v)
	}
	// What the command may write of /tmp and /dev/shm (private to it
	// inside a mount namespace) stays writable: tests that name a fixed
	// /tmp path are common. Not where it holds go's work folder or the
	// build cache, though (a repository under /tmp holds both). The
	// cache's parent is guarded whole: where no overlay serves the
	// command, the layer its go writes through failpass lies beside
	// GOCACHE (CandidateCache.GoEnv).
	guarded := []string{os.Getenv("GOTMPDIR"), os.Getenv("GOCACHE")}
	if c := os.Getenv("GOCACHE"); filepath.IsAbs(c) {
		guarded = append(guarded, filepath.Dir(c))
	}
	write := []string{filepath.Dir(argv[0])}
	for _, d := range []string{root, tmp, cmdTmp, "/tmp", "/dev/shm"} {
		if d == "" || !filepath.IsAbs(d) {
			continue
		}
		d = filepath.Clean(d)
		if !slices.ContainsFunc(guarded, func(g string) bool { return g != "" && within(d, filepath.Clean(g)) }) {
			write = append(write, d)
		}
	}
	rules := landlockRules{write: write, devices: landlockDevices, writesOnly: true}
	if err := restrictThread(rules); err != nil {
		return fail(err)
	}
	return fail(syscall.Exec(argv[0], argv, env))
}
