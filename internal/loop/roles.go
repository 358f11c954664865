package loop

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/failpass/failpass/internal/atomicfile"
	"github.com/failpass/failpass/internal/gitx"
	"github.com/failpass/failpass/internal/model"
	"github.com/failpass/failpass/internal/proc"
	"github.com/failpass/failpass/internal/sandbox"
)

// Role processes. A reviewer, fixer or decider program runs in a process
// group of its own (run's), inside a PID namespace where the machine
// allows one (a View), so that killing its group or its namespace's first
// process ends everything it started. While it runs, its group is
// recorded in the loop's folder (roles/<pgid>.json: the group's leader,
// its start time and the boot, and the loop process that owns it). A loop
// killed with -9 cannot kill its roles itself; the next `loop start` in
// the repository, and `loop resume`, kill the recorded groups of every
// loop whose owner is dead (reapRoles). A record is written as soon as
// the program runs, before failpass waits for it: a kill -9 in between
// leaves the program itself to Pdeathsig, which ends it with its parent.

// roleProc is the record of one running role process group.
type roleProc struct {
	Role       string `json:"role"`
	PGID       int    `json:"pgid"`
	Start      uint64 `json:"start"` // the leader's start time, clock ticks since boot
	Boot       string `json:"boot_id"`
	Owner      int    `json:"owner_pid"`
	OwnerStart uint64 `json:"owner_start"`
}

// maxRoleRecord bounds a role record read; a real one is ~150 bytes.
const maxRoleRecord = 4096

// roleRecords keeps the records of the calls in progress, so they go
// once the call returns.
type roleRecords struct {
	mu    sync.Mutex
	files []string
}

// errNoIsolation says a private view of the file system cannot be made
// here (sandbox.ViewSupport).
var errNoIsolation = errors.New("a private read-only view of the repository is not available")

// reapRoles kills what dead loops of the repository left running, and
// says so.
func (e *engine) reapRoles() {
	if n := reapRoles(e.repo); n > 0 {
		e.logf("killed %d role process group(s) a dead loop left running", n)
	}
	// A record whose write a kill -9 cut short is a temporary file
	// (atomicfile's) in this loop's own folder; the loop's lock, held
	// here, admits no other writer of it, so every one is a dead run's.
	// Cut after the write and before the rename, it holds the whole
	// record: its group is ended as a finished record's would be.
	tmps, _ := filepath.Glob(filepath.Join(e.store.Dir, "roles", ".*.json.tmp-*"))
	for _, t := range tmps {
		if p, err := readRoleProc(t); err == nil && !proc.Alive(p.Owner, p.OwnerStart, p.Boot) && killRoleGroup(p) {
			e.logf("killed a role process group (%d) a dead loop left running", p.PGID)
		}
		os.Remove(t)
	}
}

// Grants are what the loop's settings grant every role program beyond
// its sandbox: folders or files to read (a model tool's credentials),
// environment variables passed from failpass's own environment, and the
// network. Nothing is granted by default.
type Grants struct {
	Read    []string `json:"read,omitempty"`    // absolute paths
	Env     []string `json:"env,omitempty"`     // variable names
	Network bool     `json:"network,omitempty"` // the host's network
}

// rolePolicy is the sandbox a role's program runs in (sandbox.Policy
// with Role set): what a card command may read (system and toolchain
// folders), its working folder and its private git repository (written
// by a fixer alone), the grants, a private HOME and TMPDIR, no network
// unless granted.
func (e *engine) rolePolicy(gitWritable bool, extraRead ...string) *sandbox.Policy {
	read := append(append([]string(nil), e.cfg.Grants.Read...), extraRead...)
	return &sandbox.Policy{Readable: read, Role: &sandbox.Role{GitWritable: gitWritable, Network: e.cfg.Grants.Network}}
}

// confine returns a, to be called once for role: its program contained
// by p (nil: none) with its process group recorded while it runs, and
// done, which forgets the record once the call returned. The error
// (errNoIsolation) says no file system containment can be made here; a
// (with its group still recorded) may then run without it, if the
// caller so decides.
func (e *engine) confine(a model.Adapter, role string, p *sandbox.Policy) (model.Adapter, func(), error) {
	c := model.Confinement{Started: func(pgid int) { e.recordRole(role, pgid) }}
	var verr error
	if p != nil && model.Local(a) {
		rep := sandbox.Probe()
		switch {
		case e.cfg.noMounts:
			verr = fmt.Errorf("%w: (test) no private view", errNoIsolation)
		case !slices.Contains(rep.Features, string(sandbox.FeatLandlock)) && !slices.Contains(rep.Features, string(sandbox.FeatMountNS)):
			verr = fmt.Errorf("%w: neither Landlock nor a mount namespace: %v", errNoIsolation, rep.Why)
		default:
			if short := sandbox.RoleShortfall(rep, p.Role != nil && p.Role.Network); short != "" {
				line := role + ": " + short
				e.logf("%s", line)
				e.noteContainment(role, line)
			}
			c.Sandbox = p
		}
		if verr != nil {
			e.noteContainment(role, fmt.Sprintf("%s: no containment: %v", role, verr))
		}
	}
	return model.Confined(a, c), e.forgetRoles, verr
}

// noteContainment keeps line for the human summary, once per role.
func (e *engine) noteContainment(role, line string) {
	for _, l := range e.containment {
		if strings.HasPrefix(l, role+":") {
			return
		}
	}
	e.containment = append(e.containment, line)
}

// recordRole writes the record of a role process group that just started.
func (e *engine) recordRole(role string, pgid int) {
	self := os.Getpid()
	p := roleProc{Role: role, PGID: pgid, Start: proc.Start(pgid), Boot: proc.BootID(), Owner: self, OwnerStart: proc.Start(self)}
	b, err := json.Marshal(p)
	if err != nil {
		return
	}
	dir := filepath.Join(e.store.Dir, "roles")
	path := filepath.Join(dir, strconv.Itoa(pgid)+".json")
	// One err: a failed MkdirAll or write must keep the path off the list
	// (a record listed but never written is a role a resumed loop cannot
	// end).
	if err = os.MkdirAll(dir, 0o755); err == nil {
		err = atomicfile.Write(path, append(b, '\n'), 0o644)
	}
	if err != nil {
		e.logf("warning: %s (process group %d) is not recorded: %v", role, pgid, err)
		return
	}
	e.roles.mu.Lock()
	e.roles.files = append(e.roles.files, path)
	e.roles.mu.Unlock()
}

// forgetRoles removes the records of the calls that returned: run has
// killed their groups already.
func (e *engine) forgetRoles() {
	e.roles.mu.Lock()
	defer e.roles.mu.Unlock()
	for _, f := range e.roles.files {
		os.Remove(f)
	}
	e.roles.files = nil
}

// reapRoles kills the role process groups that loops of repo recorded and
// whose owner is dead, and removes their records. It reports how many
// groups it found still running.
func reapRoles(repo *gitx.Repo) int {
	recs, _ := filepath.Glob(filepath.Join(repo.StateDir("loops"), "*", "roles", "*.json"))
	killed := 0
	for _, path := range recs {
		p, err := readRoleProc(path)
		if err != nil {
			os.Remove(path) // unreadable: nothing to act on, and nothing to keep
			continue
		}
		if proc.Alive(p.Owner, p.OwnerStart, p.Boot) {
			continue
		}
		if killRoleGroup(p) {
			killed++
		}
		os.Remove(path)
	}
	return killed
}

func readRoleProc(path string) (roleProc, error) {
	f, err := os.Open(path)
	if err != nil {
		return roleProc{}, err
	}
	defer f.Close()
	b := make([]byte, maxRoleRecord+1)
	n, _ := f.Read(b)
	if n > maxRoleRecord {
		return roleProc{}, errors.New("role record too large")
	}
	var p roleProc
	if err := json.Unmarshal(b[:n], &p); err != nil {
		return roleProc{}, err
	}
	if p.PGID <= 1 {
		return roleProc{}, errors.New("role record without a process group")
	}
	return p, nil
}

// killRoleGroup kills every process of p's group that can be p's: the
// group's id is a pid that cannot be reused while any process of the
// group lives, so a process in it that started no earlier than the
// recorded leader is one of the role's. A live leader with another start
// time means the id was reused after the group ended: nothing is killed.
// It reports whether it found anything to kill.
func killRoleGroup(p roleProc) bool {
	if b := proc.BootID(); b == "" || b != p.Boot {
		return false // another boot: nothing of that run is left
	}
	if st, err := proc.Read(p.PGID); err == nil && st.Start != p.Start {
		return false
	}
	found := false
	deadline := time.Now().Add(2 * time.Second)
	for {
		again := false
		stats, _ := filepath.Glob("/proc/[0-9]*/stat")
		for _, st := range stats {
			b, err := os.ReadFile(st)
			if err != nil {
				continue
			}
			pid, err := strconv.Atoi(strings.Split(st, "/")[2])
			if err != nil || pid == os.Getpid() {
				continue
			}
			s, err := proc.Parse(pid, string(b))
			if err != nil || s.PGID != p.PGID || s.Start < p.Start {
				continue
			}
			syscall.Kill(pid, syscall.SIGKILL)
			found, again = true, true
		}
		if !again || time.Now().After(deadline) {
			return found
		}
		time.Sleep(10 * time.Millisecond)
	}
}
