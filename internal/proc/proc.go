// Package proc reads who a process is from /proc: its parent, group,
// state and start time, and the boot they belong to. A pid alone names
// no process for long (pids are reused), so failpass records a pid with
// its start time and boot id, and asks Alive whether that same process
// still runs.
package proc

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// Stat is what failpass reads of /proc/<pid>/stat.
type Stat struct {
	PID, PPID, PGID int
	State           byte   // R, S, D, Z, ...
	Start           uint64 // clock ticks since boot
}

// Read reads pid's stat. Without /proc (macOS) it fails with
// os.ErrNotExist, as for a pid that does not exist.
func Read(pid int) (Stat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Stat{}, err
	}
	return Parse(pid, string(b))
}

var errMalformed = errors.New("malformed /proc stat line")

// Parse reads a /proc/<pid>/stat line. The command name is in
// parentheses and may itself hold spaces and parentheses, so fields are
// counted from the last ')'. A malformed line gives an error and no
// value.
func Parse(pid int, s string) (Stat, error) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return Stat{}, errMalformed
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 of the line (state); the start time is field 22.
	if len(f) < 20 || len(f[0]) != 1 {
		return Stat{}, errMalformed
	}
	ppid, err1 := strconv.Atoi(f[1])
	pgid, err2 := strconv.Atoi(f[2])
	// ParseUint returns the maximum along with a range error.
	start, err3 := strconv.ParseUint(f[19], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return Stat{}, errMalformed
	}
	return Stat{PID: pid, PPID: ppid, PGID: pgid, State: f[0][0], Start: start}, nil
}

// Start is pid's start time, 0 when it cannot be read.
func Start(pid int) uint64 {
	st, err := Read(pid)
	if err != nil {
		return 0
	}
	return st.Start
}

// BootID names this boot of the machine; "" without /proc.
func BootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// Alive says whether the process recorded as pid, start and boot still
// runs. A record from another boot is dead. Without /proc, or without a
// recorded start time, it falls back to whether the pid exists at all.
// Unreadable for a reason other than absence counts as alive: a caller
// never takes a live process's things for leftovers.
func Alive(pid int, start uint64, boot string) bool {
	if b := BootID(); b != "" && boot != "" && b != boot {
		return false
	}
	if pid <= 0 {
		return false
	}
	if _, err := os.Stat("/proc/self/stat"); err != nil || start == 0 {
		return syscall.Kill(pid, 0) != syscall.ESRCH
	}
	st, err := Read(pid)
	if err != nil {
		return !errors.Is(err, os.ErrNotExist)
	}
	return st.Start == start
}
