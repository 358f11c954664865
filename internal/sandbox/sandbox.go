// Package sandbox owns the containment of card commands: the layers this
// machine can apply, the helper that applies them, and what a run reports.
package sandbox

import (
	"encoding/json"
	"github.com/failpass/failpass/internal/verdict"
	"path/filepath"
	"strings"
	"time"
)

// HelperArg is the reserved first argument of a failpass re-exec that runs
// the sandbox's inner half (Main). No command of the tool may take it.
const HelperArg = "__sandbox-exec"

// TreeView is where a contained command sees its worktree where a
// mount namespace exists: the worktree is bound at this folder of the
// run's private /tmp, and the command starts there. Runners look for
// their configuration and workspaces upward from the tree (pytest's
// rootdir and ini files, go.work, a cargo workspace, package.json and
// node_modules); from the worktree's own path (in the user's cache
// folder, or in the repository where trees lived before) that walk
// reaches the user's folders, which the sandbox rightly refuses to let a
// command read, so the answer would depend on where the user keeps
// things. Above TreeView lie
// only the private /tmp and the root folder. The folder is the same for
// every run of every worktree, so a build cache keyed by folder (Go's)
// stays warm from run to run, and from the base's runs to a candidate's.
const TreeView = "/tmp/failpass/worktree"

// treeViews are the view's folders in order of preference: the next one
// serves where a folder the command must see where it lies is under the
// first's parent (a failpass binary built to /tmp/failpass). Each choice
// depends on the machine's folders alone, so it is the same from run to
// run.
var treeViews = []string{TreeView, "/tmp/.failpass/worktree"}

// viewFor is the first of treeViews that no folder of seen clashes with,
// or "" when all do: the command then runs where the worktree lies.
func viewFor(seen []string) string {
	for _, v := range treeViews {
		if !clashes(v, seen) {
			return v
		}
	}
	return ""
}

// clashes says whether a folder the command must see where it lies is
// in the view's parent: the view cannot be there.
func clashes(view string, seen []string) bool {
	top := filepath.Dir(view)
	for _, p := range seen {
		if p != "" && within(top, filepath.Clean(p)) {
			return true
		}
	}
	return false
}

// ViewRel says whether p, a path a contained command printed, lies in
// the worktree's view, and where in the worktree ("." for its top).
func ViewRel(p string) (string, bool) {
	p = filepath.ToSlash(p)
	for _, v := range treeViews {
		rest, ok := strings.CutPrefix(p, v)
		if ok && (rest == "" || rest[0] == '/') {
			if rest = strings.Trim(rest, "/"); rest == "" {
				rest = "."
			}
			return rest, true
		}
	}
	return "", false
}

// FromView is p, a path a contained command printed, in the worktree
// root as the host has it: a path in the view is root's, any other is
// returned as it is.
func FromView(p, root string) string {
	rel, ok := ViewRel(p)
	if !ok {
		return p
	}
	return filepath.Join(root, filepath.FromSlash(rel))
}

// Layer is one promise the sandbox makes, by the name cards use in
// `sandbox: {require: [...]}`.
type Layer = verdict.Layer

// The four layers of docs/sandbox.md, in the order reports list them.
const (
	// Network: no interface but a private loopback (a network namespace).
	Network Layer = "network"
	// Filesystem: writes only to the worktree, a private /tmp and HOME and
	// the card's caches; reads only of system and toolchain folders; the
	// git directories read-only (a mount namespace plus Landlock).
	Filesystem Layer = "filesystem"
	// Processes: a PID namespace with a fresh /proc, so nothing the
	// command starts outlives it and the tool's environment is invisible.
	Processes Layer = "processes"
	// Resources: rlimits plus memory and pids cgroups.
	Resources Layer = "resources"
)

// Report is the sandbox report a run carries into its verdict
// (verdict.Sandbox): this package makes it.
type Report = verdict.Sandbox

// Layers lists every layer in report order.
var Layers = []Layer{Network, Filesystem, Processes, Resources}

// Feature is one mechanism behind a layer. Reports list features too, so a
// reader sees exactly what ran (landlock's ABI, which cgroups).
type Feature string

// Features, each needed by the layer named in its comment.
const (
	FeatUserNS          Feature = "userns"            // only needed when not root
	FeatPIDNS           Feature = "pidns"             // processes
	FeatProc            Feature = "proc"              // processes: a fresh /proc
	FeatMountNS         Feature = "mountns"           // filesystem
	FeatGitRO           Feature = "git-readonly"      // filesystem
	FeatGitConfigMasked Feature = "git-config-masked" // filesystem: remote tokens and credentials in .git/config unseen
	FeatPrivateTmp      Feature = "private-tmp"       // filesystem
	FeatLandlock        Feature = "landlock"          // filesystem
	FeatLandlockTCP     Feature = "landlock-tcp"      // without a network namespace: TCP bind and connect denied but for the ephemeral ports (part of no layer: UDP and the rest stay open)
	FeatNetNS           Feature = "netns"             // network
	FeatLoopback        Feature = "loopback"          // network
	FeatIPCNS           Feature = "ipcns"             // processes (SysV IPC, abstract sockets)
	FeatUTSNS           Feature = "utsns"             // cosmetic: a hostname of its own
	FeatNoNewPrivs      Feature = "no_new_privs"      // processes (no setuid gain)
	FeatNoCaps          Feature = "no-capabilities"   // processes: an empty bounding set, even for uid 0
	FeatSeccomp         Feature = "seccomp"           // processes: Docker's default denials and more, every syscall table
	FeatRlimits         Feature = "rlimits"           // resources
	FeatRlimitData      Feature = "rlimit-data"       // without a memory cgroup: RLIMIT_DATA bounds each process's memory
	FeatRlimitNproc     Feature = "rlimit-nproc"      // without a pids cgroup, in the run's own user namespace: RLIMIT_NPROC bounds its tasks
	FeatCgroupMem       Feature = "cgroup-memory"     // resources
	FeatCgroupPids      Feature = "cgroup-pids"       // resources
	FeatEnv             Feature = "env-allow-list"    // always: the tool's environment never reaches the command
	FeatArgv0           Feature = "argv0-from-path"   // always: a bare argv[0] never resolves in the worktree
	// FeatDiskCap: what a run writes to disk (worktree, private folders
	// on disk, cache layers) is watched and capped (run.DiskCap); where
	// a mount namespace exists, the private /tmp and HOME are a tmpfs of
	// Limits.TmpSize and Limits.TmpFiles, in memory.
	FeatDiskCap Feature = "disk-cap"
)

// layerNeeds maps each layer to the features that make it true. A layer is
// applied only when every feature it needs is.
var layerNeeds = map[Layer][]Feature{
	Network:    {FeatNetNS, FeatLoopback},
	Filesystem: {FeatMountNS, FeatGitRO, FeatGitConfigMasked, FeatPrivateTmp, FeatLandlock},
	Processes:  {FeatPIDNS, FeatProc, FeatNoNewPrivs, FeatNoCaps, FeatSeccomp},
	Resources:  {FeatRlimits, FeatCgroupMem, FeatCgroupPids},
}

// What a run can tell another run by where a mechanism is missing.
const (
	TellAccessTimes = "access times of shared files"      // no mount namespace: no read-only binds
	TellPIDs        = "process ids"                       // no PID namespace: pids grow from run to run
	TellCmdlines    = "other processes' command lines"    // no PID namespace: failpass's processes are visible
	TellKeyrings    = "kernel keyrings"                   // no seccomp filter
	TellAbstract    = "abstract unix sockets and signals" // no IPC namespace and no Landlock scopes (ABI 6)
)

// tellsFor lists the tells the missing features leave open.
func tellsFor(have map[Feature]bool, landlockABI int) []string {
	var t []string
	if !have[FeatMountNS] {
		t = append(t, TellAccessTimes)
	}
	if !have[FeatPIDNS] {
		t = append(t, TellPIDs, TellCmdlines)
	}
	if !have[FeatSeccomp] {
		t = append(t, TellKeyrings)
	}
	if !have[FeatIPCNS] && !(have[FeatLandlock] && landlockABI >= 6) {
		t = append(t, TellAbstract)
	}
	return t
}

// OffReport is the report of a run with the sandbox switched off: every
// layer missing, by choice.
func OffReport() Report {
	r := Report{Applied: []string{}, Features: []string{}, Off: true, Tells: tellsFor(nil, 0)}
	for _, l := range Layers {
		r.Missing = append(r.Missing, string(l))
	}
	r.Why = map[string]string{"all": "--sandbox=off",
		string(FeatDiskCap): "--sandbox=off: the worktree and the candidate's caches are capped, but a command's /tmp and HOME are the user's own, uncounted"}
	return r
}

// reportFor turns a set of working features (with reasons for the ones
// that are not) into a Report. Pure, so the mapping is table-tested.
func reportFor(have map[Feature]bool, why map[Feature]string, landlockABI int) Report {
	r := Report{Applied: []string{}, Missing: []string{}, Features: []string{}, Landlock: landlockABI}
	for _, l := range Layers {
		ok := true
		for _, f := range layerNeeds[l] {
			ok = ok && have[f]
		}
		if ok {
			r.Applied = append(r.Applied, string(l))
		} else {
			r.Missing = append(r.Missing, string(l))
		}
	}
	addFeatures(&r, have, why)
	r.Tells = tellsFor(have, landlockABI)
	return r
}

// addFeatures lists the working features of have in r, and why each one
// that is not is missing, where why says.
func addFeatures(r *Report, have map[Feature]bool, why map[Feature]string) {
	for _, f := range allFeatures {
		if have[f] {
			r.Features = append(r.Features, string(f))
		} else if why[f] != "" {
			if r.Why == nil {
				r.Why = map[string]string{}
			}
			r.Why[string(f)] = why[f]
		}
	}
}

var allFeatures = []Feature{FeatUserNS, FeatPIDNS, FeatProc, FeatMountNS, FeatGitRO, FeatGitConfigMasked, FeatPrivateTmp,
	FeatLandlock, FeatLandlockTCP, FeatNetNS, FeatLoopback, FeatIPCNS, FeatUTSNS, FeatNoNewPrivs, FeatNoCaps, FeatSeccomp, FeatRlimits,
	FeatRlimitData, FeatRlimitNproc, FeatCgroupMem, FeatCgroupPids, FeatEnv, FeatArgv0, FeatDiskCap}

// Limits bound what one command may consume. Zero fields take the
// defaults below.
type Limits struct {
	Memory    int64         // bytes, memory cgroup (with swap); default DefaultMemory
	Pids      int64         // tasks (processes and threads), pids cgroup; default DefaultPids
	CPU       time.Duration // CPU time per process (RLIMIT_CPU); default DefaultCPU
	FileSize  int64         // largest file a command may write (RLIMIT_FSIZE); default DefaultFileSize
	OpenFiles uint64        // RLIMIT_NOFILE; default DefaultOpenFiles
	TmpSize   int64         // size of the private /tmp (tmpfs, counted in Memory); default DefaultTmpSize
	TmpFiles  int64         // inodes of the private /tmp (tmpfs nr_inodes): the run's disk cap on files; 0 is tmpfs's default
}

// Defaults. Memory is sized so that `go test` of a real module (a
// compiler and a linker or two at once) fits while a runaway 1 GiB
// allocation does not; a card that needs more is a case for Policy.Limits.
const (
	DefaultMemory    = 1 << 30
	DefaultPids      = 1024
	DefaultCPU       = time.Hour
	DefaultFileSize  = 1 << 30
	DefaultOpenFiles = 8192
	DefaultTmpSize   = 512 << 20
)

func (l Limits) withDefaults() Limits {
	if l.Memory <= 0 {
		l.Memory = DefaultMemory
	}
	if l.Pids <= 0 {
		l.Pids = DefaultPids
	}
	if l.CPU <= 0 {
		l.CPU = DefaultCPU
	}
	if l.FileSize <= 0 {
		l.FileSize = DefaultFileSize
	}
	if l.OpenFiles == 0 {
		l.OpenFiles = DefaultOpenFiles
	}
	if l.TmpSize <= 0 {
		l.TmpSize = DefaultTmpSize
	}
	return l
}

// Policy is what a caller (the gate, through run.Spec) asks of the
// sandbox for one card. A nil *Policy means the sandbox is off.
type Policy struct {
	// CacheDir holds the card's persistent build caches (GOCACHE, pip,
	// npm, ...), kept across runs, never the user's own; see
	// BuildCacheDir. Without Candidate the command may write it (a run
	// of the signed base: hold LockCache meanwhile). Empty means caches
	// live in the private /tmp and die with the run.
	CacheDir string
	// Candidate, when set, says the command runs candidate code: it sees
	// Candidate.Lower (not CacheDir) read-only beneath the candidate's
	// private upper layer, or a private cold cache (see cache.go).
	Candidate *CandidateCache
	// Deps is the card's dependency folder (see DepsDir), which only the
	// card's prepare command writes: every other command sees it
	// read-only, as its Go module cache (GOMODCACHE), pip's and npm's
	// caches and FAILPASS_DEPS. Empty when the card has no prepare
	// command: Go's module cache is then the user's, read-only.
	Deps string
	// PrepareCmd says the command is the card's prepare command, a run of
	// the signed base that fetches dependencies: it gets the network
	// (no network namespace) and Deps writable, and never shares a
	// session's helper. Hold LockCache on CacheDir meanwhile. Candidate
	// must be nil.
	PrepareCmd bool
	// Readable adds folders the command may read (and execute from) to
	// the system and toolchain folders found automatically.
	Readable []string
	// Hidden are folders the command sees empty but for what it is
	// granted below them (where a mount namespace exists; within the git
	// folders Landlock keeps them unreadable too), beside failpass's own
	// folder, which is always hidden but for the run's worktree, git
	// folder and caches: a gate's --log-dir, whose logs would tell a
	// candidate's later runs from its first.
	Hidden []string
	// Secret are folders no command may read at all (a held-out folder
	// whose expected output judges the run, see secret.go): Prepare
	// fails with a *SecretError where the sandbox cannot keep one from
	// the command. CheckSecrets says so before anything runs.
	Secret []string
	// Limits bound the command's resources.
	Limits Limits
	// Role says the command is a loop role's program (reviewer, fixer,
	// decider) or draft's model command, not a card's: the worktree's
	// git folder is a private, throwaway repository of its own (RoleGit),
	// never the user's, and nothing of it is checked afterwards.
	Role *Role
}

// networked says the policy keeps the host's network for a role.
func (p *Policy) networked() bool { return p.Role != nil && p.Role.Network }

// Role is what a role's program is granted beyond a card command's
// sandbox (see docs/loop.md, "What the roles can reach").
type Role struct {
	// GitWritable lets the program write the worktree's git folder (the
	// fixer's private repository: it may commit there).
	GitWritable bool
	// Network keeps the host's network (no network namespace): a role
	// that calls a model itself, granted by the loop's settings.
	Network bool
}

// Error is a layer that should have been applied and was not: the helper
// failed closed before the command started.
type Error struct {
	Step string // "mount /proc", "landlock", ...
	Err  string
}

func (e *Error) Error() string { return "sandbox: " + e.Step + ": " + e.Err }

// status is what the helper tells the tool through its status pipe: how
// the command ended, or why it never started. PID 1 of a namespace cannot
// die by its own signal, so a command's death by signal travels here
// rather than in the helper's exit status.
type status struct {
	Started  bool      `json:"started"`
	Exit     int       `json:"exit"`
	Signal   string    `json:"signal,omitempty"`
	Step     string    `json:"step,omitempty"`
	Err      string    `json:"error,omitempty"`
	Cache    string    `json:"cache,omitempty"`    // how the command saw the card's build cache (a candidate's)
	Features []Feature `json:"features,omitempty"` // probe mode: what worked
	Why      map[Feature]string
	Written  []string `json:"written,omitempty"` // a view's overlay writes (view_linux.go)
}

func (s status) marshal() []byte {
	b, _ := json.Marshal(s)
	return b
}
