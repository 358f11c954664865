package worktree

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/failpass/failpass/internal/atomicfile"
	"github.com/failpass/failpass/internal/proc"
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
	// Tree is the worktree's folder (in the user's cache folder, or
	// worktrees/<id> in the repository), for gc to find it whoever runs.
	Tree string `json:"tree,omitempty"`
}

// maxOwnerSize bounds an owner file read; a real one is ~200 bytes.
const maxOwnerSize = 4096

// currentOwner describes this process. Without /proc the start time is 0
// and liveness falls back to whether the pid exists.
func currentOwner() owner {
	pid := os.Getpid()
	host, _ := os.Hostname()
	return owner{PID: pid, Start: proc.Start(pid), Boot: proc.BootID(), Host: host, Created: time.Now().UTC()}
}

// alive says whether o's process still runs. An owner on another host
// (a repository on a shared disk) cannot be checked and counts as alive.
func (o owner) alive() bool {
	if host, _ := os.Hostname(); o.Host != "" && host != "" && o.Host != host {
		return true
	}
	return proc.Alive(o.PID, o.Start, o.Boot)
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
