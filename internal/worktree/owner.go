package worktree

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/failpass/failpass/internal/atomicfile"
)

// owner is the content of <id>.owner: enough to tell, after a kill -9,
// whether the process that made the worktree still runs. A pid alone is
// not: pids are reused, so the process's start time (clock ticks since
// boot) and the boot id must match too.
type owner struct {
	PID     int       `json:"pid"`
	Start   uint64    `json:"start"`
	Boot    string    `json:"boot_id"`
	Host    string    `json:"host"`
	Commit  string    `json:"commit,omitempty"`
	Created time.Time `json:"created"`
	Kept    bool      `json:"kept,omitempty"`
}

// maxOwnerSize bounds an owner file read; a real one is ~200 bytes.
const maxOwnerSize = 4096

// currentOwner describes this process. Without /proc the start time is 0
// and liveness falls back to whether the pid exists.
func currentOwner() owner {
	pid := os.Getpid()
	start, _ := startTime(pid)
	host, _ := os.Hostname()
	return owner{PID: pid, Start: start, Boot: bootID(), Host: host, Created: time.Now().UTC()}
}

// alive says whether o's process still runs. An owner on another host
// (a repository on a shared disk) cannot be checked and counts as alive.
func (o owner) alive() bool {
	if host, _ := os.Hostname(); o.Host != "" && host != "" && o.Host != host {
		return true
	}
	if b := bootID(); b != "" && o.Boot != "" && b != o.Boot {
		return false
	}
	if o.PID <= 0 {
		return false
	}
	if _, err := os.Stat("/proc/self/stat"); err != nil || o.Start == 0 {
		// No /proc to read: fall back to whether the pid exists at all.
		return syscall.Kill(o.PID, 0) != syscall.ESRCH
	}
	start, err := startTime(o.PID)
	if err != nil {
		// Gone, or unreadable for a reason we cannot judge (then: alive).
		return !errors.Is(err, os.ErrNotExist)
	}
	return start == o.Start
}

// startTime is field 22 of /proc/<pid>/stat, counted after the command
// name's closing parenthesis (the name may hold spaces and parentheses).
func startTime(pid int) (uint64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	return parseStartTime(string(b))
}

func parseStartTime(s string) (uint64, error) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("malformed stat line")
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return 0, fmt.Errorf("malformed stat line")
	}
	return strconv.ParseUint(f[19], 10, 64)
}

func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

func readOwner(path string) (owner, error) {
	f, err := os.Open(path)
	if err != nil {
		return owner{}, err
	}
	defer f.Close()
	b := make([]byte, maxOwnerSize+1)
	n, _ := f.Read(b)
	if n > maxOwnerSize {
		return owner{}, fmt.Errorf("worktree: owner file %s is larger than %d bytes", path, maxOwnerSize)
	}
	var o owner
	if err := json.Unmarshal(b[:n], &o); err != nil {
		return owner{}, fmt.Errorf("worktree: owner file %s: %w", path, err)
	}
	return o, nil
}

// writeOwner replaces path atomically: a reader (a gc sweep) sees the old
// file or the new one, never half of one. It is not fsynced: an owner
// names its boot, so after a machine crash it is dead whatever it says.
func writeOwner(path string, o owner) error {
	b, err := json.Marshal(o)
	if err != nil {
		return err
	}
	if err := atomicfile.WriteUnsynced(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("worktree: %w", err)
	}
	return nil
}
