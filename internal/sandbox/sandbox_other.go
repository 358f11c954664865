//go:build !linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/failpass/failpass/internal/scratch"
)

// Off Linux there are no namespaces, Landlock or cgroups: every layer is
// missing, and the only protections left are the environment allow-list,
// argv[0] resolution outside the worktree, a private HOME and TMPDIR, and
// the git configuration snapshot. Commands run uncontained (Launch is nil).

// Probe says which layers this machine provides: none, off Linux.
func Probe() Report {
	why := map[Feature]string{}
	for _, f := range allFeatures {
		why[f] = "not Linux"
	}
	return reportFor(map[Feature]bool{FeatEnv: true, FeatArgv0: true, FeatDiskCap: true}, why, 0)
}

// Prepared is the sandbox set up for one command.
type Prepared struct {
	Env    []string
	Report Report

	git       *GitSnapshot
	scratch   *scratch.Dir // the private temp folder
	candidate string       // a candidate's private folder (cache layers)
	done      bool
}

// Prepare sets up what can be set up off Linux: the environment, a
// private temp folder and HOME, the git snapshot.
func (p *Policy) Prepare(root string, base []string) (*Prepared, error) {
	if err := p.CheckSecrets(root, base); err != nil {
		return nil, err
	}
	if p.PrepareCmd && p.Candidate != nil {
		return nil, errors.New("sandbox: candidate code never runs as the prepare command")
	}
	gp, err := findGitPaths(root)
	if err != nil {
		return nil, err
	}
	pr := &Prepared{Report: Probe()}
	if p.Role == nil {
		if pr.git, err = SnapshotGit(gp.gitDir, gp.commonDir); err != nil {
			return nil, err
		}
	}
	if pr.scratch, err = scratch.New("sandbox"); err != nil {
		return nil, fmt.Errorf("sandbox: private temp folder: %w", err)
	}
	home := filepath.Join(pr.scratch.Path, "home")
	if err := makeHome(home); err != nil {
		pr.scratch.Remove()
		return nil, fmt.Errorf("sandbox: private home: %w", err)
	}
	hostHome := ""
	for _, kv := range base {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			hostHome = v
		}
	}
	cache := p.CacheDir
	if p.Candidate != nil {
		// Candidate code never writes the card's cache: without a mount
		// namespace to overlay it, the candidate's caches are its own,
		// cold, but for the go command's, which reads the card's beneath
		// the candidate's own layer (GoEnv).
		cache = p.Candidate.Cold()
		pr.candidate = p.Candidate.Dir
		pr.Report.Cache = CachePrivateCold
	}
	pr.Env = buildEnv(base, envLayout{Root: root, Tmp: pr.scratch.Path, Home: home, CacheDir: cache, Deps: p.Deps, Prepare: p.PrepareCmd, HostHome: hostHome},
		func(d string) bool { fi, err := os.Stat(d); return err == nil && fi.IsDir() })
	if c := p.Candidate; c != nil {
		if goEnv, _, layered := c.cardGoEnv(); layered {
			pr.Env = withEnv(pr.Env, goEnv)
			pr.Report.Cache = CacheGoLayered
		}
	}
	return pr, nil
}

// Launch is how to start the helper; off Linux there is none.
type Launch struct {
	Path       string
	Args       []string
	Env        []string
	ExtraFiles []*os.File
}

// Command is the command to contain, as the caller checked it.
type Command struct {
	Path string
	Argv []string
	Dir  string
}

// Outcome is how a contained command ended, as the helper saw it.
type Outcome struct {
	Known    bool
	Started  bool
	Exit     int
	Signal   string
	StartErr error
	Cache    string
}

// Launch returns nil: the caller runs the command itself.
func (pr *Prepared) Launch(c Command) (*Launch, error) { return nil, nil }

// Started has no cgroups to fill off Linux.
func (pr *Prepared) Started(pid int) {}

// Finish removes the private folder and checks the git configuration.
func (pr *Prepared) Finish() (Outcome, error) {
	pr.Close()
	return Outcome{Cache: pr.Report.Cache}, pr.git.Check()
}

// DiskAreas are the folders the command may write beside its worktree,
// which count towards its disk cap: its private folder (/tmp, HOME) and
// a candidate's folder.
func (pr *Prepared) DiskAreas() []string {
	out := []string{pr.scratch.Path}
	if pr.candidate != "" {
		out = append(out, pr.candidate)
	}
	return out
}

// Close removes the private folder.
func (pr *Prepared) Close() error {
	if !pr.done {
		pr.done = true
		pr.scratch.Remove()
	}
	return nil
}

// Main is the helper; off Linux it is never started.
func Main(args []string) int {
	fmt.Fprintln(os.Stderr, "failpass: the sandbox helper runs only on Linux")
	return 125
}

// RemoveStaleCgroups has nothing to remove off Linux.
func RemoveStaleCgroups() (removed int, skipped []string, err error) { return 0, nil, nil }

// UsesHelper says whether contained commands start through the helper;
// off Linux they do not.
func UsesHelper() bool { return false }

// Helper exists off Linux only so that callers compile: NewHelper always
// fails, and UsesHelper says not to call it.
type Helper struct{ Launch }

// NewHelper fails: there is no helper off Linux.
func NewHelper() (*Helper, error) { return nil, errors.New("sandbox: no helper off Linux") }

// Started does nothing off Linux.
func (h *Helper) Started(err error) {}

// Discard does nothing off Linux.
func (h *Helper) Discard() {}

// Hand fails: there is no helper off Linux.
func (pr *Prepared) Hand(h *Helper, pid int, c Command) error {
	return errors.New("sandbox: no helper off Linux")
}

// Session exists off Linux only so that callers compile: NewSession
// returns none, and each command runs as Prepare sets it up.
type Session struct{ Launch }

// NewSession returns nil: there is no helper off Linux.
func NewSession(p *Policy) (*Session, error) { return nil, nil }

// Started does nothing off Linux.
func (s *Session) Started(pid int, err error) {}

// Prepare is Policy.Prepare off Linux.
func (s *Session) Prepare(p *Policy, root string, base []string) (*Prepared, error) {
	return p.Prepare(root, base)
}

// Send fails: there is no helper off Linux.
func (s *Session) Send(pr *Prepared, c Command, out ...*os.File) error {
	return errors.New("sandbox: no helper off Linux")
}

// Wait finishes pr.
func (s *Session) Wait(pr *Prepared) (Outcome, error) { return pr.Finish() }

// Broken is always true off Linux.
func (s *Session) Broken() bool { return true }

// Close does nothing off Linux.
func (s *Session) Close() error { return nil }

// CheckSecrets fails for any Secret folder: off Linux nothing keeps a
// folder from a command.
func (p *Policy) CheckSecrets(root string, base []string) error {
	for _, s := range p.Secret {
		return &SecretError{Path: s, Why: "there is no sandbox off Linux"}
	}
	return nil
}
