package run

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/failpass/failpass/internal/proc"
	"golang.org/x/sys/unix"
)

// Finding what a command left behind, without a PID namespace.
//
// A process-group kill misses a descendant that called setsid or setpgid.
// failpass makes itself a child subreaper (PR_SET_CHILD_SUBREAPER), so
// when such an escapee's parent dies it is re-parented to failpass instead
// of init. After each command, reap walks /proc for children of failpass
// that are neither failpass's own ordinary children (same process group
// as failpass: git calls) nor the leader of a command still running, and
// kills and reaps them, until none is left.
//
// Limits, documented rather than hidden:
//   - an escapee whose parent is still alive when the command's group is
//     killed is found only once that parent has died (the group kill
//     usually sees to that); one whose parent escaped too is found in a
//     later round;
//   - with commands running in parallel, an escapee re-parented while
//     another command is still running is killed by whichever command
//     ends first;
//   - a process that moved into failpass's own process group looks like a
//     git call and is left alone;
//   - every process failpass starts in a group of its own must be started
//     by Run, which registers it; anything else in such a group would be
//     taken for an escapee.
//
// The sandbox's PID namespace closes all of these.

var (
	reaperOnce sync.Once
	liveMu     sync.Mutex
	live       = map[int]bool{} // leaders (= process groups) of commands Run has started and not yet cleaned up
)

func sysProcAttr() *syscall.SysProcAttr {
	// Pdeathsig: if failpass itself is killed (kill -9), the command's
	// main process dies with it rather than run on in a worktree that the
	// next run removes.
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

func enableReaper() {
	reaperOnce.Do(func() { unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) })
}

func killGroup(pgid int) error { return syscall.Kill(-pgid, syscall.SIGKILL) }

// startRegistered starts cmd and registers its pid under the same lock
// reap holds, so a concurrent reap never takes a command that has just
// started for an escapee.
func startRegistered(cmd *exec.Cmd) error {
	liveMu.Lock()
	defer liveMu.Unlock()
	err := cmd.Start()
	if err == nil {
		live[cmd.Process.Pid] = true
	}
	return err
}

// reapTimeout bounds the rounds of reap: SIGKILL takes effect within
// microseconds, so only an uninterruptible process (a hung mount) is still
// there after this long.
const reapTimeout = 2 * time.Second

// reap cleans up after the command whose leader was pgid: it kills and
// reaps every child failpass adopted that belongs to no running command,
// then unregisters pgid.
func reap(pgid int) {
	self, selfPgid := os.Getpid(), syscall.Getpgrp()
	deadline := time.Now().Add(reapTimeout)
	defer func() {
		liveMu.Lock()
		delete(live, pgid)
		liveMu.Unlock()
	}()
	for {
		pending := 0
		liveMu.Lock()
		for _, p := range children(self) {
			if p.PGID == selfPgid || (live[p.PID] && p.PID != pgid) {
				continue // a git call, or another command's leader: its owner waits for it
			}
			if p.State == 'Z' {
				var ws syscall.WaitStatus
				syscall.Wait4(p.PID, &ws, syscall.WNOHANG, nil)
				continue
			}
			if live[p.PGID] && p.PGID != pgid {
				continue // still part of a running command; its own end kills it
			}
			syscall.Kill(p.PID, syscall.SIGKILL)
			if p.PGID != pgid && p.PGID != selfPgid && p.PGID > 1 {
				syscall.Kill(-p.PGID, syscall.SIGKILL) // the escapee's own group
			}
			pending++
		}
		liveMu.Unlock()
		if pending == 0 || time.Now().After(deadline) {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// children lists the processes whose parent is ppid (this process).
// Each thread's /proc children file names them directly; a kernel
// without those files costs a scan of every process.
func children(ppid int) []proc.Stat {
	tasks, err := os.ReadDir("/proc/" + strconv.Itoa(ppid) + "/task")
	if err == nil {
		var out []proc.Stat
		found := true
		for _, t := range tasks {
			b, err := os.ReadFile("/proc/" + strconv.Itoa(ppid) + "/task/" + t.Name() + "/children")
			if errors.Is(err, fs.ErrNotExist) && t.Name() == strconv.Itoa(ppid) {
				found = false // no children files at all (CONFIG_PROC_CHILDREN off)
				break
			}
			for _, f := range strings.Fields(string(b)) {
				if pid, err := strconv.Atoi(f); err == nil {
					if p, err := proc.Read(pid); err == nil && p.PPID == ppid {
						out = append(out, p)
					}
				}
			}
		}
		if found {
			return out
		}
	}
	return scanChildren(ppid)
}

// scanChildren is children by reading every process's stat.
func scanChildren(ppid int) []proc.Stat {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	var out []proc.Stat
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		p, err := proc.Read(pid)
		if err == nil && p.PPID == ppid {
			out = append(out, p)
		}
	}
	return out
}
