package sandbox

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"syscall"
	"time"
)

// Cgroups: where this machine lets failpass create a child cgroup of its
// own (v1 memory and pids hierarchies, or a v2 cgroup whose
// subtree_control already delegates memory and pids), one per command.
// The helper moves itself in before it starts the command, so every
// process of the command is counted; at the end the tool kills whatever
// is left in it and removes it.

// cgroupParent is a folder in which failpass may create command cgroups.
type cgroupParent struct {
	dir string
	v2  bool
	ctl string // "memory" or "pids" (v1); "" for v2 (both)
}

// findCgroupParents reads /proc/self/cgroup and /proc/self/mountinfo to
// locate this process's own memory and pids cgroups.
func findCgroupParents() (mem, pids *cgroupParent, err error) {
	own, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, nil, err
	}
	mounts, err := cgroupMounts()
	if err != nil {
		return nil, nil, err
	}
	for _, line := range strings.Split(strings.TrimSpace(string(own)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		ctls, path := strings.Split(parts[1], ","), parts[2]
		for _, ctl := range ctls {
			m, ok := mounts[ctl]
			if !ok || (ctl != "memory" && ctl != "pids") {
				continue
			}
			rel, err := filepath.Rel(m.root, path)
			if err != nil || strings.HasPrefix(rel, "..") {
				continue
			}
			p := &cgroupParent{dir: filepath.Join(m.point, rel), ctl: ctl}
			if ctl == "memory" {
				mem = p
			} else {
				pids = p
			}
		}
		if parts[0] == "0" && parts[1] == "" {
			m, ok := mounts[""]
			if !ok {
				continue
			}
			rel, err := filepath.Rel(m.root, path)
			if err != nil || strings.HasPrefix(rel, "..") {
				continue
			}
			dir := filepath.Join(m.point, rel)
			sub, _ := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
			fields := strings.Fields(string(sub))
			has := func(s string) bool {
				for _, f := range fields {
					if f == s {
						return true
					}
				}
				return false
			}
			if mem == nil && has("memory") {
				mem = &cgroupParent{dir: dir, v2: true}
			}
			if pids == nil && has("pids") {
				pids = &cgroupParent{dir: dir, v2: true}
			}
		}
	}
	return mem, pids, nil
}

type cgMount struct{ root, point string }

// cgroupMounts maps each v1 controller (and "" for cgroup2) to its mount.
func cgroupMounts() (map[string]cgMount, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]cgMount{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		a, b := strings.Fields(pre), strings.Fields(post)
		if len(a) < 5 || len(b) < 3 {
			continue
		}
		m := cgMount{root: unescapeMount(a[3]), point: unescapeMount(a[4])}
		switch b[0] {
		case "cgroup2":
			if _, ok := out[""]; !ok {
				out[""] = m
			}
		case "cgroup":
			for _, opt := range strings.Split(b[2], ",") {
				if opt == "memory" || opt == "pids" {
					if _, ok := out[opt]; !ok {
						out[opt] = m
					}
				}
			}
		}
	}
	return out, sc.Err()
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// cgroup is one command's cgroup in one hierarchy.
type cgroup struct {
	dir string
	v2  bool
}

// cgroupName is a fresh name for a command's cgroup:
// failpass-<pid>-<16 random hex digits>. A command reads its own in
// /proc/self/cgroup; a sequence number there would count the commands
// before it, and tell a gate's canary run from the runs it guards. The
// pid stays, for gc to find the cgroups of a dead failpass.
func cgroupName() string {
	var b [8]byte
	rand.Read(b[:])
	return fmt.Sprintf("failpass-%d-%s", os.Getpid(), hex.EncodeToString(b[:]))
}

// newCgroup creates a child of p for one command and sets its limit.
func newCgroup(p *cgroupParent, lim Limits) (*cgroup, error) {
	name := cgroupName()
	cg := &cgroup{dir: filepath.Join(p.dir, name), v2: p.v2}
	if err := os.Mkdir(cg.dir, 0o755); err != nil {
		return nil, err
	}
	var writes [][2]string
	switch {
	case p.v2:
		writes = [][2]string{{"memory.max", itoa(lim.Memory)}, {"memory.swap.max", "0"}, {"pids.max", itoa(lim.Pids)}}
	case p.ctl == "memory":
		writes = [][2]string{{"memory.limit_in_bytes", itoa(lim.Memory)}, {"memory.memsw.limit_in_bytes", itoa(lim.Memory)}}
	case p.ctl == "pids":
		writes = [][2]string{{"pids.max", itoa(lim.Pids)}}
	}
	for _, w := range writes {
		err := os.WriteFile(filepath.Join(cg.dir, w[0]), []byte(w[1]), 0)
		if err != nil && !(errors.Is(err, os.ErrNotExist) && (w[0] == "memory.memsw.limit_in_bytes" || w[0] == "memory.swap.max")) {
			cg.remove()
			return nil, fmt.Errorf("%s: %w", w[0], err)
		}
	}
	return cg, nil
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// cgroupKillTimeout bounds the wait for a cgroup to empty after SIGKILL.
const cgroupKillTimeout = 2 * time.Second

// remove kills every process still in the cgroup and removes it. With a
// PID namespace there is normally nothing left to kill; without one this
// is what ends a setsid escapee.
func (cg *cgroup) remove() error {
	if cg.v2 {
		os.WriteFile(filepath.Join(cg.dir, "cgroup.kill"), []byte("1"), 0)
	}
	deadline := time.Now().Add(cgroupKillTimeout)
	for {
		b, err := os.ReadFile(filepath.Join(cg.dir, "cgroup.procs"))
		if err != nil {
			break
		}
		pids := strings.Fields(string(b))
		if len(pids) == 0 {
			break
		}
		for _, p := range pids {
			if n, err := strconv.Atoi(p); err == nil && n > 0 {
				syscall.Kill(n, syscall.SIGKILL)
			}
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	var err error
	for i := 0; i < 200; i++ {
		if err = os.Remove(cg.dir); err == nil || errors.Is(err, os.ErrNotExist) {
			return nil
		}
		time.Sleep(time.Millisecond) // EBUSY while the kernel finishes tearing tasks down
	}
	return err
}

// joinCgroup moves the calling process into dir ("0" means the writer),
// unless the tool already did (Prepared.Started). /proc/self/cgroup says
// where the process is (reading the cgroup's own list of members costs
// milliseconds on cgroup v1); the folder's name is unique to this
// command (newCgroup).
func joinCgroup(dir string) error {
	if b, err := os.ReadFile("/proc/self/cgroup"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasSuffix(l, "/"+filepath.Base(dir)) {
				return nil
			}
		}
	}
	return os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte("0"), 0)
}

// RemoveStaleCgroups removes the command cgroups that failpass processes
// which no longer run left behind (killed with SIGKILL before Finish):
// failpass-<pid>-<n> folders under this process's own memory and pids
// cgroups whose <pid> is dead. It kills anything still in them first.
// It returns how many it removed; `failpass gc` calls it.
//
// A stale cgroup another user made (root's gate, killed, on a machine
// where this user runs too: CI runs the suite as root, then as a user)
// is not this user's to remove, nor could it be: it is skipped, and
// listed in skipped, rather than an error. Root removes them all.
func RemoveStaleCgroups() (removed int, skipped []string, err error) {
	mem, pids, err := findCgroupParents()
	if err != nil {
		return 0, nil, err
	}
	euid := os.Geteuid()
	var first error
	for _, p := range []*cgroupParent{mem, pids} {
		if p == nil {
			continue
		}
		entries, _ := os.ReadDir(p.dir)
		for _, e := range entries {
			pid, ok := staleOwner(e.Name())
			if !ok || !e.IsDir() || processAlive(pid) {
				continue
			}
			dir := filepath.Join(p.dir, e.Name())
			if uid, ok := ownerOf(dir); ok && euid != 0 && uid != euid {
				skipped = append(skipped, dir)
				continue
			}
			if err := (&cgroup{dir: dir, v2: p.v2}).remove(); err != nil {
				if first == nil {
					first = err
				}
				continue
			}
			removed++
		}
	}
	return removed, skipped, first
}

// ownerOf is the user id owning path.
func ownerOf(path string) (int, bool) {
	fi, err := os.Lstat(path)
	if err != nil {
		return 0, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}

// staleOwner parses "failpass-<pid>-<suffix>" (random hex now, a
// sequence number before).
func staleOwner(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, "failpass-")
	if !ok {
		return 0, false
	}
	pidStr, seq, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, false
	}
	pid, err := strconv.Atoi(pidStr)
	if _, err2 := strconv.ParseUint(seq, 16, 64); err != nil || err2 != nil || pid <= 0 {
		return 0, false
	}
	return pid, true
}

func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}
