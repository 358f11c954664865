package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// statusFD is the helper's status pipe (the caller's ExtraFiles[0]).
const statusFD = 3

// maxConfig bounds the configuration the helper reads.
const maxConfig = 16 << 20

// Exit codes of the helper when it could not start the command. 125 is
// the "wrapper's own failure" code run treats as inconclusive.
const (
	exitSandboxFailed = 125
	exitNotExecutable = 126
	exitNotFound      = 127
)

// Main is the sandbox's inner half: a failpass re-exec started by Launch,
// running as PID 1 of fresh namespaces. args are the arguments after
// HelperArg. It applies every layer its configuration asks for (failing
// closed, with exit 125 and a report on the status pipe, if one cannot be
// applied), starts the command as its child, reaps every orphan, forwards
// termination signals, and exits when the command does, which makes the
// kernel kill whatever else is left in the namespace.
func Main(args []string) int {
	if len(args) == 1 && args[0] == sessionArg {
		return mainSession()
	}
	// Every step runs on this one OS thread, and the command is forked
	// from it: per-thread state (the capability bounding set) need only be
	// set here.
	runtime.LockOSThread()
	st := os.NewFile(statusFD, "status")
	syscall.CloseOnExec(statusFD)
	report := func(s status) {
		if st != nil {
			st.Write(s.marshal())
			st.Close()
		}
	}
	if len(args) != 1 {
		fmt.Fprintln(os.Stderr, "failpass: sandbox helper: want one configuration argument")
		report(status{Step: "config", Err: "want one configuration argument"})
		return exitSandboxFailed
	}
	raw := []byte(args[0])
	if args[0] == configFromFD {
		f := os.NewFile(configFD, "config")
		b, err := io.ReadAll(io.LimitReader(f, maxConfig))
		f.Close()
		if err != nil {
			report(status{Step: "config", Err: err.Error()})
			return exitSandboxFailed
		}
		raw = b
		if len(raw) == 0 {
			return 0 // started ahead of its command, and discarded unused (Helper.Discard)
		}
	}
	var cfg helperConfig
	if err := json.Unmarshal(raw, &cfg); err != nil {
		report(status{Step: "config", Err: err.Error()})
		return exitSandboxFailed
	}
	if cfg.View != nil {
		return mainView(cfg, report)
	}
	h := &helper{cfg: cfg, why: map[Feature]string{}}
	if !cfg.Probe {
		// os/signal waits for a thread of its own to come up (a
		// millisecond or so): let that happen while the layers are
		// applied. runCommand waits for it before the command starts.
		h.sigs, h.notified = make(chan os.Signal, 8), make(chan struct{})
		go func() {
			signal.Notify(h.sigs, forwarded...)
			close(h.notified)
		}()
	}
	if cfg.Probe {
		h.applyAll()
		report(status{Started: false, Features: h.have, Why: h.why})
		return 0
	}
	if err := h.applyAll(); err != nil {
		fmt.Fprintf(os.Stderr, "failpass: %v\n", err)
		report(status{Step: err.Step, Err: err.Err})
		return exitSandboxFailed
	}
	return h.runCommand(report)
}

type helper struct {
	cfg      helperConfig
	sigs     chan os.Signal // the signals to forward to the command
	notified chan struct{}  // closed once sigs receives them
	have     []Feature
	why      map[Feature]string
	cache    string // how the command sees the card's build cache (mountCache)
}

// step applies one layer. In probe mode a failure is recorded and the
// next step runs; otherwise the first failure ends the helper.
func (h *helper) step(f Feature, name string, fn func() error) *Error {
	if err := fn(); err != nil {
		if f != "" {
			h.why[f] = name + ": " + err.Error()
		}
		if h.cfg.Probe {
			return nil
		}
		return &Error{Step: name, Err: err.Error()}
	}
	if f != "" {
		h.have = append(h.have, f)
	}
	return nil
}

// applyAll applies every layer, in order, on the calling thread: the
// process's own (applyProcess), the command's files (applyFiles) and the
// thread's (applyThread). A one-command helper forks its command from
// that thread; a session helper (session_linux.go) applies the process's
// layers once and the other two afresh for each command.
func (h *helper) applyAll() *Error {
	if err := h.applyProcess(); err != nil {
		return err
	}
	if err := h.applyFiles(); err != nil {
		return err
	}
	return h.applyThread()
}

// layers applies each step in turn until one fails (see step).
type layers struct {
	h   *helper
	err *Error
}

func (l *layers) run(f Feature, name string, fn func() error) {
	if l.err == nil {
		l.err = l.h.step(f, name, fn)
	}
}

// applyProcess applies the layers that belong to the whole helper
// process: its cgroups, its namespaces as PID 1, /proc, the loopback, the
// hostname, and the rlimits its children inherit.
func (h *helper) applyProcess() *Error {
	c, l := h.cfg, &layers{h: h}
	for _, cg := range c.Cgroups {
		l.run("", "join cgroup "+cg, func() error { return joinCgroup(cg) })
	}
	if c.Namespaces {
		// Each namespace exists already (clone made them); the helper only
		// proves it is in a new one where that is observable.
		l.run(FeatPIDNS, "pid namespace", func() error {
			if os.Getpid() != 1 {
				return fmt.Errorf("helper is pid %d, not 1", os.Getpid())
			}
			return nil
		})
		l.run(FeatMountNS, "make mounts private", func() error {
			return unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, "")
		})
		l.run(FeatProc, "mount /proc", func() error {
			return unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "")
		})
		if !c.Network {
			l.run(FeatNetNS, "network namespace", onlyLoopback)
			l.run(FeatLoopback, "bring up lo", loopbackUp)
		}
		l.run(FeatIPCNS, "ipc namespace", func() error { return nil })
		l.run(FeatUTSNS, "set hostname", func() error { return unix.Sethostname([]byte("failpass-sandbox")) })
	}
	l.run(FeatRlimits, "rlimits", func() error { return setRlimits(c.Limits) })
	// Without cgroups: RLIMIT_DATA (not RLIMIT_AS, which Go's and V8's
	// address space reservations trip over) bounds what each process
	// allocates, and in the run's own user namespace RLIMIT_NPROC bounds
	// its tasks.
	if c.DataLimit {
		l.run(FeatRlimitData, "rlimit data", func() error { return lowerRlimit(unix.RLIMIT_DATA, uint64(c.Limits.Memory)) })
	}
	if c.NprocLimit {
		l.run(FeatRlimitNproc, "rlimit nproc", func() error { return lowerRlimit(unix.RLIMIT_NPROC, uint64(c.Limits.Pids)) })
	}
	return l.err
}

// lowerRlimit sets resource res to v, or leaves it lower.
func lowerRlimit(res int, v uint64) error {
	var old syscall.Rlimit
	if err := syscall.Getrlimit(res, &old); err == nil && old.Max < v {
		v = old.Max
	}
	return syscall.Setrlimit(res, &syscall.Rlimit{Cur: v, Max: v})
}

// applyFiles sets up what the command sees of the file system: a private
// /tmp and HOME, the git folders read-only, the repository's config
// masked. The mounts land in the calling thread's mount namespace (the
// process's, or one the thread made for itself with unshare).
func (h *helper) applyFiles() *Error {
	c, l := h.cfg, &layers{h: h}
	if c.Namespaces {
		if c.Cache != nil {
			// Before /tmp is covered: the card's cache and the candidate's
			// folder may lie below it, and privateTmp keeps the mount.
			l.run("", "candidate's build cache", func() (err error) { h.cache, err = mountCache(c.Cache); return err })
		}
		l.run(FeatPrivateTmp, "private /tmp", func() error { return privateTmp(c) })
		l.run(FeatGitRO, "git folders read-only", func() error { return applyBinds(c.Binds) })
		l.run(FeatGitConfigMasked, "mask the repository's config", func() error { return applyMasks(c.Masks) })
		l.run(FeatGitRO, "hide failpass's folder", func() error { return hide(c.Hidden, c.Shown) })
		if c.TreeAt != "" {
			l.run(FeatPrivateTmp, "the worktree at "+c.TreeAt, func() error { return bindTree(c.Tree, c.TreeAt) })
		}
	} else {
		l.run(FeatPrivateTmp, "private temp folder", func() error { return makeHome(c.Home) })
	}
	return l.err
}

// applyThread applies the layers that belong to the calling thread and
// pass to the children it forks: Landlock, no_new_privs and the
// capability bounding set.
func (h *helper) applyThread() *Error {
	c, l := h.cfg, &layers{h: h}
	if c.Namespaces {
		samePid()
	}
	if c.Landlock {
		l.run(FeatLandlock, "landlock", func() error { return h.landlock() })
		if h.denyTCP() && slices.Contains(h.have, FeatLandlock) {
			if abi, _ := landlockABI(); abi >= minNetABI {
				h.have = append(h.have, FeatLandlockTCP)
			} else {
				h.why[FeatLandlockTCP] = fmt.Sprintf("landlock ABI %d has no network rules (ABI %d has)", abi, minNetABI)
			}
		}
	}
	l.run(FeatNoNewPrivs, "no_new_privs", func() error {
		return unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
	})
	if l.err == nil {
		if err := dropCapabilities(); errors.Is(err, errHoldsNone) {
			// A process that holds no capability, under no_new_privs (set
			// above), gains none by execve: the bounding set that a user
			// without a user namespace may not empty bounds nothing here.
			// The layer is reported missing, and the command runs.
			h.why[FeatNoCaps] = "drop capabilities: " + err.Error()
		} else {
			l.run(FeatNoCaps, "drop capabilities", func() error { return err })
		}
	}
	// Last: the filter denies calls the steps above make. Where it has
	// no table for the architecture it is reported missing, and the
	// command runs.
	if _, err := seccompProgram(); errors.Is(err, errNoSeccomp) {
		h.why[FeatSeccomp] = err.Error()
	} else {
		l.run(FeatSeccomp, "seccomp", installSeccomp)
	}
	return l.err
}

// onlyLoopback checks that the network namespace has no interface but
// lo. /proc/net/dev lists the interfaces of the reader's namespace.
func onlyLoopback() error {
	b, err := os.ReadFile("/proc/net/dev")
	if err != nil {
		return err
	}
	lines := strings.Split(string(b), "\n")
	for _, l := range lines[min(2, len(lines)):] {
		name, _, ok := strings.Cut(l, ":")
		if ok && strings.TrimSpace(name) != "lo" {
			return fmt.Errorf("interface %q present", strings.TrimSpace(name))
		}
	}
	return nil
}

// loopbackUp sets IFF_UP on lo, so servers and clients inside the command
// can talk to each other on 127.0.0.1 and nothing else.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// privateTmp mounts fresh tmpfs folders on /tmp and /dev/shm, keeping
// visible the folders below /tmp the command needs (a worktree under
// /tmp).
func privateTmp(c helperConfig) error {
	keep, err := openKept(c.Keep)
	if err != nil {
		return err
	}
	defer keep.close()
	size := "size=" + strconv.FormatInt(c.Limits.TmpSize, 10)
	if c.Limits.TmpFiles > 0 {
		// The run's cap on files holds in its memory too: an empty
		// file costs a tmpfs no bytes, only an inode.
		size += ",nr_inodes=" + strconv.FormatInt(c.Limits.TmpFiles, 10)
	}
	if err := unix.Mount("tmpfs", "/tmp", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777,"+size); err != nil {
		return fmt.Errorf("tmpfs on /tmp: %w", err)
	}
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		if err := unix.Mount("tmpfs", "/dev/shm", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777,"+size); err != nil {
			return fmt.Errorf("tmpfs on /dev/shm: %w", err)
		}
	}
	if err := keep.restore(); err != nil {
		return err
	}
	if c.Home != "" {
		return makeHome(c.Home)
	}
	return nil
}

// kept is a folder or file that stays visible where a tmpfs covers what
// lies above it: it is opened before the tmpfs is mounted and bound back
// from its open descriptor afterwards, with the mounts below it.
type kept struct {
	path string
	fd   int
	dir  bool
}

type keptPaths []kept

// openKept opens paths; one that does not exist needs no keeping.
func openKept(paths []string) (keptPaths, error) {
	var ks keptPaths
	for _, p := range paths {
		fd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			continue
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			unix.Close(fd)
			ks.close()
			return nil, err
		}
		ks = append(ks, kept{p, fd, st.Mode&unix.S_IFMT == unix.S_IFDIR})
	}
	return ks, nil
}

func (ks keptPaths) close() {
	for _, k := range ks {
		unix.Close(k.fd)
	}
}

// restore binds each kept path back at its place, making the place first.
func (ks keptPaths) restore() error {
	for _, k := range ks {
		if k.dir {
			if err := os.MkdirAll(k.path, 0o755); err != nil {
				return err
			}
		} else {
			if err := os.MkdirAll(filepath.Dir(k.path), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(k.path, nil, 0o644); err != nil {
				return err
			}
		}
		src := "/proc/self/fd/" + strconv.Itoa(k.fd)
		if err := unix.Mount(src, k.path, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("keep %s: %w", k.path, err)
		}
	}
	return nil
}

// hide covers each existing folder of paths with an empty read-only
// tmpfs that shows only what of shown lies below it, as it was.
func hide(paths, shown []string) error {
	for _, p := range paths {
		if fi, err := os.Stat(p); err != nil || !fi.IsDir() {
			continue
		}
		if err := hideBut(p, keepUnder(p, shown)); err != nil {
			return fmt.Errorf("hide %s: %w", p, err)
		}
	}
	return nil
}

func hideBut(dir string, shown []string) error {
	keep, err := openKept(shown)
	if err != nil {
		return err
	}
	defer keep.close()
	if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=64k,mode=0755"); err != nil {
		return err
	}
	if err := keep.restore(); err != nil {
		return err
	}
	// Read-only for this mount only: the kept mounts below keep their own.
	return unix.Mount("", dir, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "")
}

// bindTree shows the worktree tree (with the mounts below it: its
// read-only .git file) at at, a folder of the private /tmp, after every
// other mount is in place.
func bindTree(tree, at string) error {
	if err := os.MkdirAll(at, 0o755); err != nil {
		return err
	}
	return unix.Mount(tree, at, "", unix.MS_BIND|unix.MS_REC, "")
}

// applyBinds bind-mounts each path onto itself, read-only or read-write,
// in order (parents first), so the git folders are read-only while the
// worktree and caches below them stay writable.
func applyBinds(bs []bind) error {
	for _, b := range bs {
		if err := unix.Mount(b.Path, b.Path, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("bind %s: %w", b.Path, err)
		}
		flags := uintptr(unix.MS_BIND | unix.MS_REMOUNT)
		var sf unix.Statfs_t
		if err := unix.Statfs(b.Path, &sf); err == nil {
			flags |= lockedFlags(sf.Flags)
		}
		if b.RO {
			flags |= unix.MS_RDONLY
		}
		if err := unix.Mount("", b.Path, "", flags, ""); err != nil {
			return fmt.Errorf("remount %s: %w", b.Path, err)
		}
	}
	return nil
}

// applyMasks shows each mask's content at its path, read-only: the file
// is written to the private /tmp, bind-mounted over the path and
// unlinked, so only the read-only mount refers to it.
func applyMasks(ms []mask) error {
	for i, m := range ms {
		tmp := fmt.Sprintf("/tmp/.failpass-mask-%d", i)
		if err := os.WriteFile(tmp, []byte(m.Content), 0o444); err != nil {
			return err
		}
		if err := unix.Mount(tmp, m.Path, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("bind over %s: %w", m.Path, err)
		}
		if err := unix.Mount("", m.Path, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV, ""); err != nil {
			return fmt.Errorf("remount %s: %w", m.Path, err)
		}
		os.Remove(tmp)
	}
	return nil
}

// lockedFlags carries a mount's nosuid, nodev, noexec and atime flags
// into a remount: inside a user namespace the kernel refuses a remount
// that would clear them.
func lockedFlags(f int64) uintptr {
	var out uintptr
	for _, m := range []struct {
		st int64
		ms uintptr
	}{{unix.ST_NOSUID, unix.MS_NOSUID}, {unix.ST_NODEV, unix.MS_NODEV}, {unix.ST_NOEXEC, unix.MS_NOEXEC},
		{unix.ST_NOATIME, unix.MS_NOATIME}, {unix.ST_NODIRATIME, unix.MS_NODIRATIME}, {unix.ST_RELATIME, unix.MS_RELATIME}} {
		if f&m.st != 0 {
			out |= m.ms
		}
	}
	return out
}

func setRlimits(l Limits) error {
	for _, r := range []struct {
		res int
		v   uint64
	}{
		{unix.RLIMIT_CORE, 0},
		{unix.RLIMIT_CPU, uint64(l.CPU.Seconds())},
		{unix.RLIMIT_FSIZE, uint64(l.FileSize)},
		{unix.RLIMIT_NOFILE, l.OpenFiles},
	} {
		lim := syscall.Rlimit{Cur: r.v, Max: r.v}
		var old syscall.Rlimit
		if err := syscall.Getrlimit(r.res, &old); err == nil && old.Max < r.v {
			lim = syscall.Rlimit{Cur: old.Max, Max: old.Max} // never raise: lowering is all we may do
		}
		if err := syscall.Setrlimit(r.res, &lim); err != nil {
			return fmt.Errorf("resource %d: %w", r.res, err)
		}
	}
	return nil
}

// landlockDevices are the device files a command may read and write.
var landlockDevices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx"}

// landlock restricts the helper's thread, and so the command it starts,
// to reading (and executing from) the system, toolchain and git folders
// and writing only the worktree, the caches and the private temp folders.
// Without a network namespace (and without the network granted), its
// network rules also deny TCP outside the ephemeral ports (denyTCP);
// with one, the namespace already isolates the command, loopback and all.
func (h *helper) landlock() error {
	c := h.cfg
	rw := append([]string{}, c.Writable...)
	if c.Namespaces {
		rw = append(rw, "/tmp", "/dev/shm")
	}
	return restrictThread(landlockRules{read: c.Readable, write: rw, devices: landlockDevices, denyTCP: h.denyTCP()})
}

// denyTCP says the command gets Landlock's TCP rules: no network
// namespace isolates it, and its policy grants no network.
func (h *helper) denyTCP() bool { return !h.cfg.Namespaces && !h.cfg.Network }

// dropCapabilities empties the capability bounding set and the ambient
// set of the helper's locked thread, the one the command is forked from, so the command, although it may run as uid 0, gets
// no capability when it is executed (no_new_privs keeps it from gaining
// any later). Without this a command started by root could load a kernel
// module it wrote into the worktree, or change the clock.
func dropCapabilities() error {
	last := 63
	if b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			last = n
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && err != unix.EINVAL {
		return fmt.Errorf("clear ambient capabilities: %w", err)
	}
	for c := 0; c <= last; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && err != unix.EINVAL {
			if err == unix.EPERM && holdsNoCapability() {
				return errHoldsNone
			}
			return fmt.Errorf("drop capability %d from the bounding set: %w", c, err)
		}
	}
	return nil
}

// errHoldsNone: the bounding set cannot be emptied (that takes
// CAP_SETPCAP), and the process holds no capability to lose.
var errHoldsNone = errors.New("the bounding set needs CAP_SETPCAP to change, and this process holds no capability")

// holdsNoCapability says whether the calling thread's permitted,
// effective and ambient sets are all empty (/proc/thread-self/status).
func holdsNoCapability() bool {
	b, err := os.ReadFile("/proc/thread-self/status")
	if err != nil {
		return false
	}
	seen := 0
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || (k != "CapPrm" && k != "CapEff" && k != "CapAmb") {
			continue
		}
		if n, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64); err != nil || n != 0 {
			return false
		}
		seen++
	}
	return seen == 3
}

// forwarded are the signals PID 1 passes on to the command: PID 1 of a
// namespace ignores signals it has no handler for, so without forwarding
// a polite SIGTERM to the helper would do nothing.
var forwarded = []os.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT}

func (h *helper) runCommand(report func(status)) int {
	c := h.cfg
	<-h.notified
	pid, err := syscall.ForkExec(c.Path, c.Argv, &syscall.ProcAttr{
		Dir:   c.Dir,
		Env:   c.Env,
		Files: []uintptr{0, 1, 2}, // the caller gives the helper /dev/null (Run) or its input (Capture)
		Sys:   &syscall.SysProcAttr{},
	})
	if err != nil {
		st := execFailed(c.Argv[0], err)
		fmt.Fprintf(os.Stderr, "failpass: not started: %s\n", st.Err)
		report(st)
		if err == syscall.ENOENT {
			return exitNotFound
		}
		return exitNotExecutable
	}
	go func() {
		for s := range h.sigs {
			syscall.Kill(pid, s.(syscall.Signal))
		}
	}()
	st, code := waitFor(pid)
	st.Cache = h.cache
	report(st)
	return code
}

// cacheMount is a candidate's view of the card's build cache: Target
// (the card's cache folder, read-only to the candidate) becomes an
// overlay with the candidate's private Upper and Work folders, so every
// write lands in the candidate's folder and the card's cache never
// changes; the candidate's runs share Upper. Middle, when set, is a
// layer between the two, read-only as Target is: the upper folder of
// the candidate's prebuild (CandidateCache.Over).
type cacheMount struct {
	Target string `json:"target"`
	Middle string `json:"middle,omitempty"`
	Upper  string `json:"upper"`
	Work   string `json:"work"`
	Cold   string `json:"cold"` // the candidate's private cold cache, bound at Target where overlayfs fails
}

// mountCache mounts m in the calling thread's mount namespace and says
// how: CacheOverlay, or CachePrivateCold when overlayfs cannot be
// mounted here (an upper folder on a file system overlayfs refuses, a
// kernel without it, or a user namespace it is not allowed in). It fails
// only when neither can be mounted: the command must not see the card's
// cache writable.
func mountCache(m *cacheMount) (string, error) {
	esc := func(p string) string { return strings.NewReplacer(`\`, `\\`, ",", `\,`, ":", `\:`).Replace(p) }
	lower := esc(m.Target)
	if m.Middle != "" {
		lower = esc(m.Middle) + ":" + lower // the first is the uppermost
	}
	opts := "lowerdir=" + lower + ",upperdir=" + esc(m.Upper) + ",workdir=" + esc(m.Work) + ",index=off"
	// The candidate's folder is reused by each of its runs in turn, and
	// a finished run's mount may linger a moment: index=off allows that.
	// Inside a user namespace overlayfs keeps its metadata in user.*
	// extended attributes (userxattr).
	for _, o := range []string{opts, opts + ",userxattr"} {
		if err := unix.Mount("overlay", m.Target, "overlay", unix.MS_NOSUID|unix.MS_NODEV, o); err == nil {
			return CacheOverlay, nil
		}
	}
	if err := unix.Mount(m.Cold, m.Target, "", unix.MS_BIND, ""); err != nil {
		return "", fmt.Errorf("neither an overlay nor the private cache at %s: %w", m.Target, err)
	}
	return CachePrivateCold, nil
}

// execFailed is the status of a command whose exec failed.
func execFailed(argv0 string, err error) status {
	return status{Step: "exec", Err: fmt.Sprintf("%s: %v", argv0, err)}
}

// waitFor reaps children until pid, the command, ends, and says how it
// did, with the exit code a one-command helper passes on (128+N for
// signal N, as a shell does). Orphans re-parented to the helper (PID 1)
// are reaped on the way.
func waitFor(pid int) (status, int) {
	for {
		var ws syscall.WaitStatus
		wpid, err := syscall.Wait4(-1, &ws, 0, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return status{Started: true, Step: "wait", Err: err.Error()}, exitSandboxFailed
		}
		if wpid != pid {
			continue // an orphan: reaped, nothing more
		}
		switch {
		case ws.Exited():
			return status{Started: true, Exit: ws.ExitStatus()}, ws.ExitStatus()
		case ws.Signaled():
			return status{Started: true, Exit: -1, Signal: ws.Signal().String()}, 128 + int(ws.Signal())
		}
	}
}

// commandPid is the process id every command gets in its PID namespace.
// The helper's own threads take the first ids, and how many it has
// started by the time it forks varies with timing: a command whose id
// were the next free one could tell a run whose helper had started
// early (the pass run's, which starts while the diff is applied) from
// the others. So the namespace's last id is set just before the fork,
// while the helper still holds CAP_SYS_ADMIN over it and Landlock does
// not yet restrict it; the kernel then hands out commandPid, unless a
// thread started in between took it (best effort: a failure leaves the
// next free id).
const commandPid = 100

func samePid() {
	os.WriteFile("/proc/sys/kernel/ns_last_pid", []byte(strconv.Itoa(commandPid-1)), 0)
}
