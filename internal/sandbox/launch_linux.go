package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/failpass/failpass/internal/scratch"
	"golang.org/x/sys/unix"
)

// helperArgv0 is the program name the helper re-exec carries; the
// helper is recognized by HelperArg alone (see dispatch.go).
const helperArgv0 = "failpass"

// nsFlags are the namespaces every contained command gets.
const nsFlags = syscall.CLONE_NEWPID | syscall.CLONE_NEWNS | syscall.CLONE_NEWNET |
	syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS

// helperConfig is everything the helper needs, passed as JSON in its
// argv. It holds no secret: the command's environment is an allow-list.
type helperConfig struct {
	Probe bool `json:"probe,omitempty"`

	Path string   `json:"path"`
	Argv []string `json:"argv"`
	Dir  string   `json:"dir"`
	Env  []string `json:"env"`

	Namespaces bool        `json:"namespaces"`        // the helper is PID 1 of fresh namespaces
	Tree       string      `json:"tree,omitempty"`    // the worktree, as the host has it ...
	TreeAt     string      `json:"tree_at,omitempty"` // ... bound here, where the command runs (TreeView)
	Network    bool        `json:"network,omitempty"` // no network namespace: the card's prepare command (Policy.PrepareCmd)
	Tmp        string      `json:"tmp"`               // private temp folder (tmpfs at /tmp with namespaces)
	Home       string      `json:"home"`              // private HOME, inside Tmp
	Keep       []string    `json:"keep"`              // folders under /tmp that must stay visible
	Binds      []bind      `json:"binds"`             // git folders read-only, writable folders below them
	Masks      []mask      `json:"masks"`             // files shown with other content (the repository's config)
	Hidden     []string    `json:"hidden"`            // folders shown empty (failpass's own folder)
	Shown      []string    `json:"shown"`             // what stays as it is inside them (the run's worktree, git folder, caches)
	Writable   []string    `json:"writable"`          // Landlock read-write
	Readable   []string    `json:"readable"`          // Landlock read-only and execute
	Landlock   bool        `json:"landlock"`
	Cache      *cacheMount `json:"cache,omitempty"` // a candidate's view of the card's build cache
	Cgroups    []string    `json:"cgroups"`
	Limits     Limits      `json:"limits"`
	// DataLimit (no memory cgroup) bounds each process's data with
	// RLIMIT_DATA; NprocLimit (no pids cgroup, in a user namespace of the
	// run's own) bounds its tasks with RLIMIT_NPROC.
	DataLimit  bool `json:"data_limit,omitempty"`
	NprocLimit bool `json:"nproc_limit,omitempty"`

	// View, for a loop role, replaces a card command's layers (view_linux.go).
	View *viewConfig `json:"view,omitempty"`
}

// nprocHolds says RLIMIT_NPROC bounds a run's tasks here: no pids cgroup
// does, and the run has a user namespace of its own, in which the
// kernel counts its tasks apart (outside one it would count every
// process of the user, and root is exempt).
func (c *caps) nprocHolds() bool { return c.pids == nil && c.userns && c.namespaces }

// caps is what Probe found, kept for the life of the process.
type caps struct {
	report     Report
	namespaces bool
	userns     bool
	landlock   bool
	mem, pids  *cgroupParent
	// noHelper says the running binary did not answer as the helper
	// (/proc/self/exe could not be executed, or it gave no status).
	// Prepare then refuses rather than run the command uncontained.
	noHelper error
	// timedOut says a probe helper was killed at probeTimeout: the
	// machine was too loaded to answer, which says nothing of its layers.
	timedOut bool
}

// cacheable says whether later processes may reuse this probe: not when
// the helper failed, nor when it ran out of time (a loaded machine would
// otherwise leave every later gate on fewer layers than it has).
func (c *caps) cacheable() bool { return c.noHelper == nil && !c.timedOut }

var (
	probeOnce sync.Once
	probed    *caps
)

// Probe says which layers this machine provides, by trying them: it
// re-executes the running binary as the helper in fresh namespaces (which
// must dispatch HelperArg to Main), asks the kernel for Landlock's ABI,
// and creates and removes a cgroup. It runs once per process; later calls
// return the same answer, and later processes reuse it from the user's
// cache folder while nothing it depends on changes (probecache_linux.go).
func Probe() Report {
	return probe().report
}

func probe() *caps {
	probeOnce.Do(func() {
		path, key := probeCachePath(), probeKey()
		if f, ok := cachedProbe(path, key); ok {
			probed = capsFrom(f)
			return
		}
		probed = doProbe()
		if probed.cacheable() {
			keepProbe(path, factsOf(probed, key))
		}
	})
	return probed
}

// systemEtc is /etc's readable entries, listed once per process: a
// listing costs a third of a millisecond per command, and an entry that
// appears later is left unreadable, the safe side.
var systemEtc = sync.OnceValue(func() []string { return etcReadable("/etc") })

// namespaceFeatures are the features that exist only inside the helper's
// fresh namespaces.
var namespaceFeatures = []Feature{FeatUserNS, FeatPIDNS, FeatProc, FeatMountNS, FeatGitRO, FeatGitConfigMasked,
	FeatNetNS, FeatLoopback, FeatIPCNS, FeatUTSNS}

func doProbe() *caps {
	c := &caps{}
	have := map[Feature]bool{FeatEnv: true, FeatArgv0: true, FeatDiskCap: true}
	why := map[Feature]string{}

	switch abi, err := landlockABI(); {
	case err != nil:
		why[FeatLandlock] = "landlock unavailable: " + err.Error()
	case abi < minLandlockABI:
		why[FeatLandlock] = fmt.Sprintf("landlock ABI %d cannot allow a rename between folders (ABI %d can)", abi, minLandlockABI)
	default:
		c.landlock = true
		c.report.Landlock = abi
	}

	mem, pids, err := findCgroupParents()
	switch {
	case err != nil:
		why[FeatCgroupMem], why[FeatCgroupPids] = "cgroups: "+err.Error(), "cgroups: "+err.Error()
	default:
		for _, x := range []struct {
			p *cgroupParent
			f Feature
			n string
		}{{mem, FeatCgroupMem, "memory"}, {pids, FeatCgroupPids, "pids"}} {
			if x.p == nil {
				why[x.f] = "no " + x.n + " cgroup this process may create children in"
				continue
			}
			cg, err := newCgroup(x.p, Limits{}.withDefaults())
			if err != nil {
				why[x.f] = x.n + " cgroup not writable: " + err.Error()
				continue
			}
			cg.remove()
			have[x.f] = true
			if x.f == FeatCgroupMem {
				c.mem = x.p
			} else {
				c.pids = x.p
			}
		}
	}

	c.userns = os.Geteuid() != 0
	st, err := runProbeHelper(c.userns, c.mem, c.pids)
	c.timedOut = errors.Is(err, errHelperTimeout)
	if err != nil {
		for _, f := range append(namespaceFeatures[1:], FeatPrivateTmp) {
			why[f] = "namespaces unavailable: " + err.Error()
		}
		if c.userns {
			why[FeatUserNS] = err.Error()
		}
		// Without namespaces the helper still applies Landlock, rlimits
		// and no_new_privs; find out whether those work.
		st, err = runProbeHelperNoNS(c.landlock)
		c.timedOut = c.timedOut || errors.Is(err, errHelperTimeout)
		if err != nil {
			c.noHelper = err
			for _, f := range []Feature{FeatLandlock, FeatRlimits, FeatNoNewPrivs, FeatPrivateTmp} {
				why[f] = "no sandbox helper: " + err.Error()
			}
			have[FeatCgroupMem], have[FeatCgroupPids] = false, false
			c.mem, c.pids = nil, nil
		} else {
			for _, f := range st.Features {
				have[f] = true
			}
			for f, w := range st.Why {
				why[f] = w
			}
		}
	} else {
		c.namespaces = true
		for _, f := range st.Features {
			have[f] = true
		}
		for f, w := range st.Why {
			why[f] = w
		}
		if c.userns {
			have[FeatUserNS] = true
		}
	}
	if !have[FeatLandlock] && c.landlock {
		c.landlock = false
	}
	if c.pids == nil && !c.nprocHolds() && why[FeatRlimitNproc] == "" {
		why[FeatRlimitNproc] = "tasks are unbounded: no pids cgroup, and no user namespace of the run's own to count them in"
	}
	c.report = reportFor(have, why, c.report.Landlock)
	if !c.landlock {
		c.report.Landlock = 0
	}
	return c
}

// probeTimeout bounds the probe helper. It does a handful of syscalls,
// but starting it (failpass re-executed) on a loaded machine can take
// seconds: the bound is for a helper that hangs, not a slow one (at 10 s
// a slow start cost the run its namespaces, and the probe was kept).
var probeTimeout = time.Minute

// errHelperTimeout is a probe helper killed at probeTimeout.
var errHelperTimeout = errors.New("the probe helper did not answer in time")

func runProbeHelper(userns bool, mem, pids *cgroupParent) (status, error) {
	cfg := helperConfig{Probe: true, Namespaces: true, Tmp: "/tmp", Home: "/tmp/home", Landlock: true,
		Binds: []bind{{Path: "/etc", RO: true}}, Masks: []mask{{Path: "/etc/passwd", Content: "probe\n"}},
		Limits: Limits{}.withDefaults(), DataLimit: mem == nil, NprocLimit: pids == nil && userns}
	attr := &syscall.SysProcAttr{Cloneflags: nsFlags, Pdeathsig: syscall.SIGKILL}
	if userns {
		addUserNS(attr)
	}
	return startHelper(cfg, attr)
}

func runProbeHelperNoNS(landlock bool) (status, error) {
	sd, err := scratch.New("probe")
	if err != nil {
		return status{}, err
	}
	defer sd.Remove()
	tmp := sd.Path
	cfg := helperConfig{Probe: true, Tmp: tmp, Home: tmp, Landlock: landlock, Limits: Limits{}.withDefaults(), DataLimit: true}
	return startHelper(cfg, &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL})
}

// startHelper runs the helper to completion (probe mode) and returns its
// status report.
func startHelper(cfg helperConfig, attr *syscall.SysProcAttr) (status, error) {
	js, err := json.Marshal(cfg)
	if err != nil {
		return status{}, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return status{}, err
	}
	defer r.Close()
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		w.Close()
		return status{}, err
	}
	defer devnull.Close()
	var errBuf bytes.Buffer
	er, ew, err := os.Pipe()
	if err != nil {
		w.Close()
		return status{}, err
	}
	p, err := os.StartProcess("/proc/self/exe", []string{helperArgv0, HelperArg, string(js)},
		&os.ProcAttr{Env: []string{}, Files: []*os.File{devnull, ew, ew, w}, Sys: attr})
	w.Close()
	ew.Close()
	if err != nil {
		er.Close()
		return status{}, err
	}
	go func() { io.Copy(&errBuf, io.LimitReader(er, 64<<10)); er.Close() }()
	var killed atomic.Bool
	timer := time.AfterFunc(probeTimeout, func() { killed.Store(true); p.Kill() })
	defer timer.Stop()
	out, _ := io.ReadAll(io.LimitReader(r, 1<<20))
	ps, err := p.Wait()
	if err != nil {
		return status{}, err
	}
	if killed.Load() {
		return status{}, fmt.Errorf("%w (%s)", errHelperTimeout, probeTimeout)
	}
	var st status
	if err := json.Unmarshal(out, &st); err != nil {
		return status{}, fmt.Errorf("helper gave no status (%s): %s", ps, strings.TrimSpace(errBuf.String()))
	}
	if st.Err != "" {
		return st, &Error{Step: st.Step, Err: st.Err}
	}
	return st, nil
}

// addUserNS maps the caller's uid and gid to root in a new user
// namespace, so an unprivileged user may create the other namespaces.
func addUserNS(attr *syscall.SysProcAttr) {
	attr.Cloneflags |= syscall.CLONE_NEWUSER
	attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}}
	attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}}
	attr.GidMappingsEnableSetgroups = false
}

// Prepared is the sandbox set up for one command: its environment, its
// private folders and cgroups, and the snapshot of the repository's git
// configuration taken before the command runs.
type Prepared struct {
	// Env is the command's environment; resolve a bare argv[0] against
	// its PATH (never the worktree).
	Env []string
	// Report says what this command gets.
	Report Report

	caps     *caps
	policy   Policy
	cache    *cacheMount // a candidate's overlay, for the helper to mount
	root     string
	gitBinds []bind
	masks    []mask
	hidden   []string
	shown    []string
	readable []string
	writable []string
	tmp      string
	home     string
	roleGit  string       // a fixer's private repository, which it may write
	given    string       // root as the caller named it (realRoot is root)
	treeAt   string       // where the command sees the worktree (one of treeViews), "" for where it lies
	scratch  *scratch.Dir // a private folder on the host (no mount namespace, or a view), removed at the end
	cgroups  []*cgroup
	git      *GitSnapshot
	view     *View       // a View's command (view_linux.go)
	viewCfg  *viewConfig // its helper's part
	statusR  *os.File
	statusW  *os.File
	config   *os.File
	launched bool // a helper was launched for the command, or handed it
	finished bool // Finish ran: the helper was started and ended
	done     bool
}

// Prepare sets up the sandbox for one command in the worktree root.
// base is the environment the caller composed (an allow-list of the
// tool's environment plus the card's signed env).
func (p *Policy) Prepare(root string, base []string) (*Prepared, error) {
	return p.prepare(root, base, true)
}

// prepare is Prepare; withCgroups makes the command's own cgroups (a
// session's commands share the session's).
func (p *Policy) prepare(root string, base []string, withCgroups bool) (*Prepared, error) {
	c := probe()
	if c.noHelper != nil {
		return nil, &Error{Step: "helper", Err: "this program cannot run the sandbox helper: " + c.noHelper.Error()}
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, fmt.Errorf("sandbox: worktree: %w", err)
	}
	if p.PrepareCmd && p.Candidate != nil {
		return nil, errors.New("sandbox: candidate code never runs as the prepare command")
	}
	pr := &Prepared{caps: c, policy: *p, root: realRoot, given: filepath.Clean(root), Report: c.report}
	pr.policy.Limits = p.Limits.withDefaults()
	ok := false
	defer func() {
		if !ok {
			pr.Close()
		}
	}()

	gp, err := findGitPaths(realRoot)
	if err != nil {
		return nil, err
	}
	if p.Role == nil {
		if pr.git, err = SnapshotGit(gp.gitDir, gp.commonDir); err != nil {
			return nil, err
		}
	}

	if c.namespaces {
		pr.tmp, pr.home = "/tmp", "/tmp/home"
	} else {
		if pr.scratch, err = scratch.New("sandbox"); err != nil {
			return nil, fmt.Errorf("sandbox: private temp folder: %w", err)
		}
		pr.tmp, pr.home = pr.scratch.Path, filepath.Join(pr.scratch.Path, "home")
		if err := os.Mkdir(pr.home, 0o700); err != nil {
			return nil, fmt.Errorf("sandbox: private home: %w", err)
		}
	}
	switch cc := p.Candidate; {
	case cc != nil && cc.Lower != "" && c.namespaces:
		// Candidate code: the card's cache, at its own path, is an overlay
		// the helper mounts in the command's mount namespace (or, where it
		// cannot, the candidate's cold folder bound in its place).
		pr.policy.CacheDir = cc.Lower
		pr.cache = &cacheMount{Target: cc.Lower, Middle: cc.middle(), Upper: cc.upper(), Work: cc.work(), Cold: cc.cold()}
	case cc != nil:
		// No mount namespace (or no card cache): the candidate's private
		// folder is its cache, cold, but for the go command's, which reads
		// the card's beneath a layer in that folder (GoEnv, below).
		pr.policy.CacheDir = cc.cold()
		pr.Report.Cache = CachePrivateCold
	case p.CacheDir != "":
		if err := os.MkdirAll(p.CacheDir, 0o700); err != nil {
			return nil, fmt.Errorf("sandbox: cache folder: %w", err)
		}
		if pr.policy.CacheDir, err = filepath.EvalSymlinks(p.CacheDir); err != nil {
			return nil, fmt.Errorf("sandbox: cache folder: %w", err)
		}
	}

	if p.Deps != "" {
		if err := os.MkdirAll(p.Deps, 0o700); err != nil {
			return nil, fmt.Errorf("sandbox: dependency folder: %w", err)
		}
		if pr.policy.Deps, err = filepath.EvalSymlinks(p.Deps); err != nil {
			return nil, fmt.Errorf("sandbox: dependency folder: %w", err)
		}
	}

	hostHome := ""
	for _, kv := range base {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			hostHome = v
		}
	}
	if hostHome == "" {
		hostHome, _ = os.UserHomeDir()
	}
	var views []string
	if c.namespaces {
		views = treeViews
	}
	testExec, goWork := "", ""
	if p.Candidate != nil && c.landlock {
		// Candidate code: each of its test binaries in a domain of its
		// own, which cannot write go's work folder or the build cache
		// that the command's other test binaries come from.
		if testExec = selfExe(); testExec != "" {
			goWork = p.Candidate.goWork()
			pr.readable = append(pr.readable, testExec)
		}
	}
	pr.Env = buildEnv(base, envLayout{Root: realRoot, Views: views, Tmp: pr.tmp, Home: pr.home, CacheDir: pr.policy.CacheDir,
		Deps: pr.policy.Deps, Prepare: p.PrepareCmd, HostHome: hostHome, TestExec: testExec, GoWork: goWork},
		func(d string) bool { fi, err := os.Stat(d); return err == nil && fi.IsDir() })
	if cc := p.Candidate; cc != nil && pr.cache == nil {
		// No overlay to mount: the go command reads the card's cache
		// through failpass instead, which the command may read (Landlock
		// grants it; nothing grants a write) and run.
		if goEnv, lowers, layered := cc.cardGoEnv(); layered {
			pr.Env = withEnv(pr.Env, goEnv)
			pr.readable = append(append(pr.readable, lowers...), selfExe())
			pr.Report.Cache = CacheGoLayered
		}
	}

	pr.writable = []string{realRoot}
	if p.Role != nil && p.Role.GitWritable {
		pr.writable = append(pr.writable, gp.gitDir)
		pr.roleGit = gp.gitDir
	}
	if pr.policy.CacheDir != "" {
		pr.writable = append(pr.writable, pr.policy.CacheDir)
	}
	if goWork != "" {
		pr.writable = append(pr.writable, goWork)
	}
	switch {
	case pr.policy.Deps != "" && p.PrepareCmd:
		pr.writable = append(pr.writable, pr.policy.Deps)
		// A file:// mirror the prepare command names (GOPROXY, pip's
		// indexes) is read like the network it stands for.
		pr.readable = append(pr.readable, fileProxies(pr.Env)...)
	case pr.policy.Deps != "":
		// Read-only: outside the writable folders, Landlock lets no
		// command write it, and below the git folders' read-only
		// bind neither does the mount namespace.
		pr.readable = append(pr.readable, pr.policy.Deps)
	}
	if p.PrepareCmd || p.networked() {
		pr.Report = withoutNetwork(pr.Report)
	}
	pr.readable = append(pr.readable, systemReadable...)
	pr.readable = append(pr.readable, systemEtc()...)
	pr.readable = append(pr.readable, toolchainDirs(pr.Env, hostHome)...)
	for _, d := range p.Readable {
		if filepath.IsAbs(d) {
			pr.readable = append(pr.readable, filepath.Clean(d))
		}
	}
	// failpass's own folder lies in the common dir, and what other runs
	// left there (logs, other worktrees, other candidates' cache layers,
	// the verdict cache) would tell a candidate's later run (the canary)
	// from its first, once a concurrent gate has written it: a command
	// sees of it only its own worktree, that worktree's git folder and
	// the caches its policy names.
	pr.hidden = []string{filepath.Join(gp.commonDir, "failpass")}
	if parent := filepath.Dir(realRoot); within(pr.hidden[0], gp.gitDir) && !within(gp.commonDir, parent) && parent != filepath.Dir(parent) {
		// A failpass worktree whose tree lives in the user's cache
		// folder, beside the other trees of the repository (concurrent
		// gates', the base's): those are hidden as failpass's folder is.
		pr.hidden = append(pr.hidden, parent)
	}
	for _, d := range p.Hidden {
		if filepath.IsAbs(d) {
			pr.hidden = append(pr.hidden, filepath.Clean(d))
		}
	}
	pr.readable = append(pr.readable, gp.gitDir)
	pr.readable = append(pr.readable, complementIn(gp.commonDir, append(pr.hidden, pr.writable...))...)
	for _, s := range p.Secret {
		real, err := realSecret(s)
		if err != nil {
			return nil, err
		}
		reach := append(append([]string{realRoot, gp.commonDir}, pr.writable...), pr.readable...)
		hide, why := secretExposure(real, realPaths(reach), c.landlock, c.namespaces)
		if why != "" {
			return nil, &SecretError{Path: s, Why: why}
		}
		if hide {
			pr.hidden = append(pr.hidden, real)
		}
	}
	// A hidden folder never hides what the command is granted: of
	// failpass's folder that is the run's worktree, its git folder and
	// its caches; of a --log-dir that holds the repository, the whole
	// git folder and the worktree too.
	pr.shown = append(append([]string{gp.commonDir}, pr.writable...), pr.readable...)
	pr.gitBinds = gitBinds(gp, pr.writable)
	keep := append(append([]string{realRoot}, pr.writable...), append(bindPaths(pr.gitBinds), pr.hidden...)...)
	pr.gitBinds = append(sharedBinds(pr.readable, keep), pr.gitBinds...)
	if b, err := os.ReadFile(filepath.Join(gp.commonDir, "config")); err == nil {
		pr.masks = append(pr.masks, mask{Path: filepath.Join(gp.commonDir, "config"), Content: string(sanitizeGitConfig(b))})
	}

	if withCgroups {
		if pr.cgroups, err = newCgroups(c, pr.policy.Limits); err != nil {
			return nil, err
		}
	}
	ok = true
	return pr, nil
}

// CheckSecrets says, before any command runs, whether the sandbox can
// keep p's Secret folders from a command in the worktree root with the
// environment base: the *SecretError Prepare would fail with, or nil.
func (p *Policy) CheckSecrets(root string, base []string) error {
	if len(p.Secret) == 0 {
		return nil
	}
	pr, err := p.prepare(root, base, false)
	if err != nil {
		return err
	}
	return pr.Close()
}

// newCgroups makes the memory and pids cgroups this machine allows (one
// cgroup for both with cgroup v2).
func newCgroups(c *caps, lim Limits) ([]*cgroup, error) {
	var cgs []*cgroup
	if c.mem != nil {
		cg, err := newCgroup(c.mem, lim)
		if err != nil {
			return nil, fmt.Errorf("sandbox: memory cgroup: %w", err)
		}
		cgs = append(cgs, cg)
	}
	if c.pids != nil && (c.mem == nil || c.pids.dir != c.mem.dir) {
		cg, err := newCgroup(c.pids, lim)
		if err != nil {
			for _, cg := range cgs {
				cg.remove()
			}
			return nil, fmt.Errorf("sandbox: pids cgroup: %w", err)
		}
		cgs = append(cgs, cg)
	}
	return cgs, nil
}

// Launch is how to start the helper for one command: the caller starts
// Path with Args, Env, ExtraFiles (the status pipe, fd 3) and the clone
// flags and id maps of SysProcAttr, stdin from /dev/null, and stdout and
// stderr where the command's output goes. It keeps its own process group,
// timeout and Pdeathsig; killing the helper kills every process of the
// command (the kernel ends a PID namespace with its init).
type Launch struct {
	Path        string
	Args        []string
	Env         []string
	ExtraFiles  []*os.File
	Cloneflags  uintptr
	UidMappings []syscall.SysProcIDMap
	GidMappings []syscall.SysProcIDMap
}

// Command is the command to contain, as the caller checked it.
type Command struct {
	Path string   // absolute program, resolved against Prepared.Env's PATH or the workdir
	Argv []string // argv[0] as the card gave it
	Dir  string   // absolute workdir inside the worktree
}

// Launch returns how to start the helper for c. Call it once.
func (pr *Prepared) Launch(c Command) (*Launch, error) {
	if pr.launched {
		return nil, errors.New("sandbox: Launch called twice")
	}
	js, err := json.Marshal(pr.helperConfig(c))
	if err != nil {
		return nil, err
	}
	// The configuration travels in a sealed-off memory file rather than
	// argv: a card's env can outgrow one argument (128 KiB), and argv is
	// world-readable in /proc.
	if pr.config, err = configFile(js); err != nil {
		return nil, err
	}
	pr.statusR, pr.statusW, err = os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("sandbox: status pipe: %w", err)
	}
	pr.launched = true
	l := pr.caps.launch()
	if pr.view != nil {
		l = pr.caps.launchView()
	}
	if pr.policy.PrepareCmd || pr.policy.networked() {
		l.Cloneflags &^= syscall.CLONE_NEWNET // the network is what the prepare command (or a granted role) is for
	}
	l.ExtraFiles = []*os.File{pr.statusW, pr.config}
	return l, nil
}

// helperConfig is the helper's configuration for c.
func (pr *Prepared) helperConfig(c Command) helperConfig {
	if pr.view != nil {
		return pr.viewHelperConfig(c)
	}
	cfg := helperConfig{
		Path: c.Path, Argv: c.Argv, Dir: c.Dir, Env: pr.Env,
		Namespaces: pr.caps.namespaces, Network: pr.policy.PrepareCmd || pr.policy.networked(), Tmp: pr.tmp, Home: pr.home,
		Binds: pr.gitBinds, Masks: pr.masks, Hidden: pr.hidden, Shown: pr.shown, Writable: pr.writable, Readable: pr.readable,
		Landlock: pr.caps.landlock, Limits: pr.policy.Limits, Cache: pr.cache,
		DataLimit: pr.caps.mem == nil, NprocLimit: pr.caps.nprocHolds(),
	}
	for _, cg := range pr.cgroups {
		cfg.Cgroups = append(cfg.Cgroups, cg.dir)
	}
	if pr.caps.namespaces {
		seen := append(append([]string{c.Path, c.Dir}, pr.writable...), append(pr.readable, bindPaths(pr.gitBinds)...)...)
		cfg.Keep = keepUnder("/tmp", seen)
		if pr.treeAt = viewFor(seen); pr.treeAt != "" {
			// The command runs in the worktree's view at the fixed
			// folder: what lies above it is the private /tmp's, the same
			// wherever the user keeps the repository.
			cfg.Tree, cfg.TreeAt = pr.root, pr.treeAt
			cfg.Dir = pr.inView(c.Dir)
			cfg.Path = pr.inView(c.Path)
		}
	} else {
		cfg.Writable = append(cfg.Writable, pr.tmp)
	}
	return cfg
}

// inView is p as the command sees it: below TreeView where p lies in
// the worktree, else p.
func (pr *Prepared) inView(p string) string {
	for _, root := range []string{pr.root, pr.given} {
		if root != "" && p != "" && within(root, p) {
			rel, err := filepath.Rel(root, p)
			if err == nil {
				return filepath.Join(pr.treeAt, rel)
			}
		}
	}
	return p
}

// launch is how every helper on this machine starts: the program, its
// arguments and its namespaces. ExtraFiles are the caller's to fill.
func (c *caps) launch() *Launch { return c.launchIn(nsFlags) }

// launchIn is a helper's start in the namespaces flags asks for (and a
// user namespace when not root), where this machine has them.
func (c *caps) launchIn(flags uintptr) *Launch {
	l := &Launch{Path: "/proc/self/exe", Args: []string{helperArgv0, HelperArg, configFromFD}, Env: []string{}}
	if c.namespaces {
		l.Cloneflags = flags
		if c.userns {
			var a syscall.SysProcAttr
			addUserNS(&a)
			l.Cloneflags |= a.Cloneflags
			l.UidMappings, l.GidMappings = a.UidMappings, a.GidMappings
		}
	}
	return l
}

// UsesHelper says whether contained commands start through the helper:
// on Linux they always do.
func UsesHelper() bool { return true }

// Helper is a helper started before its command is set up. The helper's
// start (a Go program re-executed in fresh namespaces) is the largest
// part of what the sandbox costs a command, and Prepare's work (the git
// snapshot, cgroups, the environment) does not need it: the two run side
// by side. The helper waits on its configuration pipe until
// Prepared.Hand gives it the command, and exits when the pipe is closed
// unused (Discard).
type Helper struct {
	Launch  // how to start it; ExtraFiles are its status (fd 3) and configuration (fd 4) pipes
	caps    *caps
	statusR *os.File
	configW *os.File
}

// NewHelper makes the pipes of one helper and says how to start it.
func NewHelper() (*Helper, error) {
	c := probe()
	if c.noHelper != nil {
		return nil, &Error{Step: "helper", Err: "this program cannot run the sandbox helper: " + c.noHelper.Error()}
	}
	statusR, statusW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("sandbox: status pipe: %w", err)
	}
	configR, configW, err := os.Pipe()
	if err != nil {
		statusR.Close()
		statusW.Close()
		return nil, fmt.Errorf("sandbox: configuration pipe: %w", err)
	}
	h := &Helper{Launch: *c.launch(), caps: c, statusR: statusR, configW: configW}
	h.ExtraFiles = []*os.File{statusW, configR}
	return h, nil
}

// Started closes the helper's own ends of its pipes in the tool, once it
// runs, or once starting it failed (err): then the probe may be stale
// (namespaces switched off since), and the next process probes again.
func (h *Helper) Started(err error) {
	for _, f := range h.ExtraFiles {
		f.Close()
	}
	if err != nil {
		forgetProbe()
	}
}

// Discard closes the tool's ends of a helper that was never handed a
// command: it reads the end of its configuration and exits.
func (h *Helper) Discard() {
	h.statusR.Close()
	h.configW.Close()
}

// Hand gives c to h, started as pid: pid joins the command's cgroups, and
// the configuration goes down h's pipe. pr then owns h's status pipe,
// which Finish reads; on an error, Discard h.
func (pr *Prepared) Hand(h *Helper, pid int, c Command) error {
	if pr.launched {
		return errors.New("sandbox: command handed out twice")
	}
	if h.caps != pr.caps {
		return errors.New("sandbox: the helper was started for another probe of this machine")
	}
	if pr.policy.PrepareCmd {
		return errors.New("sandbox: the prepare command needs a helper of its own, outside a network namespace")
	}
	js, err := json.Marshal(pr.helperConfig(c))
	if err != nil {
		return err
	}
	pr.Started(pid)
	if _, err := h.configW.Write(js); err != nil {
		return fmt.Errorf("sandbox: configuration to the helper: %w", err)
	}
	if err := h.configW.Close(); err != nil {
		return fmt.Errorf("sandbox: configuration to the helper: %w", err)
	}
	pr.launched, pr.statusR = true, h.statusR
	return nil
}

// Started moves the helper, just started as pid, into the command's
// cgroups while it is still starting up: a move costs a few
// milliseconds of waiting in the kernel, which this way overlap the
// helper's own start. The helper joins by itself whatever it finds it is
// not in yet (joinCgroup), so a failure here costs only that time. pid
// cannot have been reused: the caller has not waited for it.
func (pr *Prepared) Started(pid int) {
	for _, cg := range pr.cgroups {
		os.WriteFile(filepath.Join(cg.dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0)
	}
}

// Outcome is how a contained command ended, as the helper saw it.
type Outcome struct {
	Known    bool   // the helper reported; false when it was killed (timeout) or crashed
	Started  bool   // the command started
	Exit     int    // its exit code, when it exited
	Signal   string // the signal that killed it, when one did
	StartErr error  // why it never started (a layer failed closed, or exec failed)
	Cache    string // a candidate's: how it saw the card's build cache (CacheOverlay, CachePrivateCold)
}

// Finish reads how the command ended, kills whatever is left in its
// cgroups, removes its private folders, and checks that the repository's
// git configuration is as it was before the command ran. Call it after
// the helper has exited. A changed git configuration is an
// *IntegrityError: nothing failpass does in that repository afterwards
// can be trusted.
func (pr *Prepared) Finish() (Outcome, error) {
	var st *status
	if pr.statusR != nil {
		if pr.statusW != nil {
			pr.statusW.Close()
		}
		b, _ := io.ReadAll(io.LimitReader(pr.statusR, maxStatus))
		var x status
		if json.Unmarshal(b, &x) == nil {
			st = &x
		}
	}
	return pr.finish(st)
}

// finish is Finish with the helper's status read (nil: it gave none).
func (pr *Prepared) finish(st *status) (Outcome, error) {
	var o Outcome
	o.Cache = pr.Report.Cache
	if st != nil {
		o.Known, o.Started, o.Exit, o.Signal = true, st.Started, st.Exit, st.Signal
		if st.Cache != "" {
			o.Cache = st.Cache
		}
		if st.Err != "" {
			o.StartErr = &Error{Step: st.Step, Err: st.Err}
			if !st.Started && st.Step != "exec" {
				forgetProbe() // a layer the probe promised failed: probe again next time
			}
		}
	}
	if pr.view != nil {
		pr.viewFinished(st)
	}
	pr.finished = true
	err := pr.Close()
	if gerr := pr.git.Check(); gerr != nil {
		return o, gerr
	}
	return o, err
}

// DiskAreas are the folders on disk the command may write beside its
// worktree, which count towards its disk cap (run.DiskCap): the private
// folder of a command without a mount namespace (its /tmp and HOME), a
// candidate's folder (cache layers, go's work folder), a fixer's private
// repository. The card's build cache a base run writes is not among
// them: the signed base fills it, and gc bounds it.
func (pr *Prepared) DiskAreas() []string {
	var out []string
	if pr.scratch != nil {
		out = append(out, pr.scratch.Path)
	}
	if pr.policy.Candidate != nil {
		out = append(out, pr.policy.Candidate.Dir)
	}
	if pr.roleGit != "" {
		out = append(out, pr.roleGit)
	}
	return out
}

// Close releases everything Prepare made. Finish calls it; call it
// directly only when the command never started.
func (pr *Prepared) Close() error {
	if pr.done {
		return nil
	}
	pr.done = true
	if pr.launched && !pr.finished {
		forgetProbe() // launched, but the helper never ran: perhaps the namespaces are gone
	}
	var first error
	for _, cg := range pr.cgroups {
		if err := cg.remove(); err != nil && first == nil {
			first = fmt.Errorf("sandbox: remove cgroup: %w", err)
		}
	}
	if pr.statusW != nil {
		pr.statusW.Close()
	}
	if pr.statusR != nil {
		pr.statusR.Close()
	}
	if pr.config != nil {
		pr.config.Close()
	}
	pr.scratch.Remove()
	return first
}

// configFromFD is the helper's argument saying "read the configuration
// from fd 4" (the caller's ExtraFiles[1]).
const configFromFD = "fd:4"

// configFD is where the helper finds its configuration.
const configFD = 4

// configFile puts js in an anonymous memory file, positioned at its start.
func configFile(js []byte) (*os.File, error) {
	fd, err := unix.MemfdCreate("failpass-sandbox-config", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("sandbox: config file: %w", err)
	}
	f := os.NewFile(uintptr(fd), "failpass-sandbox-config")
	if _, err := f.Write(js); err != nil {
		f.Close()
		return nil, fmt.Errorf("sandbox: config file: %w", err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		return nil, fmt.Errorf("sandbox: config file: %w", err)
	}
	return f, nil
}
