package worktree

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// killIn kills every process whose working folder is dir or below it: what
// a failpass killed with -9 left running in its worktree (its commands'
// main processes die with it, their descendants do not). Processes that
// moved their working folder elsewhere are out of reach; the sandbox's
// PID namespace covers those.
func killIn(dir string) {
	self := os.Getpid()
	deadline := time.Now().Add(2 * time.Second)
	for {
		found := false
		cwds, _ := filepath.Glob("/proc/[0-9]*/cwd")
		for _, c := range cwds {
			pid, err := strconv.Atoi(strings.Split(c, "/")[2])
			if err != nil || pid == self {
				continue
			}
			cwd, err := os.Readlink(c)
			if err != nil {
				continue
			}
			cwd = strings.TrimSuffix(cwd, " (deleted)")
			if cwd == dir || strings.HasPrefix(cwd, dir+"/") {
				syscall.Kill(pid, syscall.SIGKILL)
				found = true
			}
		}
		if !found || time.Now().After(deadline) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}
