// Package gitx owns every call failpass makes to git. Git is always the git
// binary (its patch parser and apply are the truth), called through Command,
// which disables everything a repository's config or a planted file could
// make git execute.
package gitx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// hardening is passed to every git call: no hooks, no fsmonitor, no
// external diff or textconv, no clean/smudge or process filters, no pager,
// no automatic maintenance. A card command or a fixer can write the
// repository config; none of it may run inside failpass's own git calls.
var hardening = []string{
	"-c", "core.fsmonitor=false",
	"-c", "core.hooksPath=/dev/null",
	"-c", "core.untrackedCache=false",
	"-c", "core.pager=cat",
	"-c", "gc.auto=0",
	"-c", "maintenance.auto=false",
	"-c", "filter.lfs.process=",
	"-c", "protocol.file.allow=always",
	"-c", "advice.detachedHead=false",
	"-c", "color.ui=false",
}

// Error is a git command that failed: its arguments, exit code and stderr.
type Error struct {
	Args   []string
	Exit   int
	Stderr string
}

func (e *Error) Error() string {
	return fmt.Sprintf("git %s: exit %d: %s", strings.Join(e.Args, " "), e.Exit, e.Reason())
}

// Reason is the line of stderr that says why git failed: its first
// "fatal:" or "error:" line (git may print progress first, as worktree
// add's "Preparing worktree"), else its first line.
func (e *Error) Reason() string {
	lines := strings.Split(strings.TrimSpace(e.Stderr), "\n")
	for _, l := range lines {
		if strings.HasPrefix(l, "fatal: ") || strings.HasPrefix(l, "error: ") {
			return strings.TrimSpace(l)
		}
	}
	return strings.TrimSpace(lines[0])
}

// ErrNoGit is returned when the git binary cannot be found.
var ErrNoGit = errors.New("git is not installed or not on PATH")

// Repo is a git repository failpass works in: the top of a working tree
// (Dir) and the common git directory shared by all its worktrees.
type Repo struct {
	Dir       string // top level of the working tree
	CommonDir string // absolute `git rev-parse --git-common-dir`
}

// NotRepoError says dir is not inside a git repository, or (Dubious) is
// inside one that git refuses to open because another user owns it.
type NotRepoError struct {
	Dir     string
	Dubious bool   // git's "dubious ownership": safe.directory does not list it
	Top     string // with Dubious: the repository's top folder, as git names it
}

func (e *NotRepoError) Error() string {
	if e.Dubious {
		return fmt.Sprintf("%s is in a repository another user owns, which git refuses to open (dubious ownership)", e.Dir)
	}
	return fmt.Sprintf("%s is not inside a git repository", e.Dir)
}

// UserFacing marks the error as the user's to fix.
func (e *NotRepoError) UserFacing() bool { return true }

// NotFolderError says the folder given as a repository is missing or is
// not a folder: a bad command line, not a fault of failpass.
type NotFolderError struct {
	Dir string // as given
	Err error
}

func (e *NotFolderError) Error() string {
	msg := e.Err.Error()
	var pe *os.PathError
	if errors.As(e.Err, &pe) {
		msg = pe.Err.Error() // the path is said once, as given
	}
	return fmt.Sprintf("repository folder %s: %s", e.Dir, msg)
}

func (e *NotFolderError) Unwrap() error { return e.Err }

// Open finds the repository containing dir.
func Open(ctx context.Context, dir string) (*Repo, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(abs); err != nil {
		return nil, &NotFolderError{Dir: dir, Err: err}
	} else if !fi.IsDir() {
		return nil, &NotFolderError{Dir: dir, Err: errors.New("not a folder")}
	}
	out, err := Command(ctx, abs, nil, "rev-parse", "--path-format=absolute", "--show-toplevel", "--git-common-dir")
	if err != nil {
		var ge *Error
		if errors.As(err, &ge) {
			e := &NotRepoError{Dir: abs, Top: abs}
			if _, rest, ok := strings.Cut(ge.Stderr, "dubious ownership in repository at '"); ok {
				e.Dubious = true
				if top, _, ok := strings.Cut(rest, "'\n"); ok {
					e.Top = top
				}
			}
			return nil, e
		}
		return nil, err
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 {
		return nil, &NotRepoError{Dir: abs}
	}
	return &Repo{Dir: lines[0], CommonDir: lines[1]}, nil
}

// Git runs git in the repository's working tree and returns stdout.
func (r *Repo) Git(ctx context.Context, args ...string) ([]byte, error) {
	return Command(ctx, r.Dir, nil, args...)
}

// Commit resolves rev (a branch, tag, commit id or any revision) to the
// full id of the commit it names. A rev that names no commit here is a
// *Error (git's own exit), so callers can tell it from trouble running
// git.
func (r *Repo) Commit(ctx context.Context, rev string) (string, error) {
	out, err := r.Git(ctx, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}")
	return strings.TrimSpace(string(out)), err
}

// Tree resolves rev to the full id of its tree, as Commit does for its
// commit.
func (r *Repo) Tree(ctx context.Context, rev string) (string, error) {
	out, err := r.Git(ctx, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{tree}")
	return strings.TrimSpace(string(out)), err
}

// Files lists the paths in the tree of rev (git ls-tree -r --name-only),
// from its top, in git's order; never nil without an error.
func (r *Repo) Files(ctx context.Context, rev string) ([]string, error) {
	out, err := r.Git(ctx, "ls-tree", "-r", "-z", "--name-only", rev)
	if err != nil {
		return nil, err
	}
	return nulList(out), nil
}

// nulList is a -z listing's entries (NUL-terminated paths), never nil.
func nulList(out []byte) []string {
	paths := []string{}
	for _, p := range strings.Split(string(out), "\x00") {
		if p != "" {
			paths = append(paths, p)
		}
	}
	return paths
}

// RemoteURL is the URL of the remote name (git remote get-url); a name
// that is no remote here is a *Error.
func (r *Repo) RemoteURL(ctx context.Context, name string) (string, error) {
	out, err := r.Git(ctx, "remote", "get-url", "--", name)
	return strings.TrimSpace(string(out)), err
}

// RemoteHead is the commit the ref (a full name, refs/heads/x) names on
// the remote (git ls-remote); a remote without it is an error naming
// both.
func (r *Repo) RemoteHead(ctx context.Context, remote, ref string) (string, error) {
	out, err := r.Git(ctx, "ls-remote", "--refs", "--", remote, ref)
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if sha, name, ok := strings.Cut(line, "\t"); ok && name == ref {
			return sha, nil
		}
	}
	return "", fmt.Errorf("%s has no ref %s", remote, ref)
}

// UpdateRef points ref at commit with reason in its reflog; with old
// given, only while ref still points at old (or, old "", does not
// exist), as git update-ref checks it.
func (r *Repo) UpdateRef(ctx context.Context, reason, ref, commit string, old ...string) error {
	_, err := r.Git(ctx, append([]string{"update-ref", "-m", reason, ref, commit}, old...)...)
	return err
}

// Tracked lists the files of the index, as paths from the top of the
// repository (git ls-files --full-name).
func (r *Repo) Tracked(ctx context.Context) ([]string, error) {
	out, err := r.Git(ctx, "ls-files", "-z", "--full-name")
	if err != nil {
		return nil, err
	}
	return nulList(out), nil
}

// Subject is the subject line of the commit rev names, as git prints it
// (%s): untrusted text from the commit's author.
func (r *Repo) Subject(ctx context.Context, rev string) (string, error) {
	out, err := r.Git(ctx, "show", "-s", "--format=%s", rev)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// Config is the value of the configuration key as the repository sees
// it (git config --get: local, global and system files), trimmed; "" with
// no error when the key is not set.
func (r *Repo) Config(ctx context.Context, key string) (string, error) {
	out, err := r.Git(ctx, "config", "--get", "--end-of-options", key)
	var ge *Error
	if errors.As(err, &ge) && ge.Exit == 1 {
		return "", nil // git's exit for a key that is not set
	}
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// ConfigPath is a pathname setting of git config (gpg.ssh.allowedSignersFile),
// as git reads it: a leading ~/ is the user's home, and a relative path
// is taken from the repository's folder, where git runs. "" when unset.
func (r *Repo) ConfigPath(ctx context.Context, key string) (string, error) {
	out, err := r.Git(ctx, "config", "--type=path", "--get", "--end-of-options", key)
	var ge *Error
	if errors.As(err, &ge) && ge.Exit == 1 {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	p := strings.TrimSpace(string(out))
	if p != "" && !filepath.IsAbs(p) {
		p = filepath.Join(r.Dir, p)
	}
	return p, nil
}

// StateDir is where failpass keeps everything of its own for this
// repository: <git common dir>/failpass/<sub>.
func (r *Repo) StateDir(sub ...string) string {
	return filepath.Join(append([]string{r.CommonDir, "failpass"}, sub...)...)
}

// Status is the checkout at dir as `git status --porcelain=v1 -z
// --untracked-files=all` lists it (with ignored, --ignored=matching too):
// NUL-separated entries, empty for a clean checkout.
func Status(ctx context.Context, dir string, ignored bool) ([]byte, error) {
	args := []string{"status", "--porcelain=v1", "-z", "--untracked-files=all"}
	if ignored {
		args = append(args, "--ignored=matching")
	}
	return Command(ctx, dir, nil, args...)
}

// Command runs `git <hardening> args...` in dir with stdin (may be nil) and
// returns stdout. A non-zero exit is an *Error. The environment is the
// process's, minus variables that would redirect git to another repository
// or run programs (GIT_DIR, GIT_EXTERNAL_DIFF, ...).
func Command(ctx context.Context, dir string, stdin []byte, args ...string) ([]byte, error) {
	return CommandEnv(ctx, dir, stdin, nil, args...)
}

// CommandEnv is Command with extra environment entries (GIT_INDEX_FILE=...).
func CommandEnv(ctx context.Context, dir string, stdin []byte, extraEnv []string, args ...string) ([]byte, error) {
	path, err := exec.LookPath("git")
	if err != nil {
		return nil, ErrNoGit
	}
	full := append(append([]string{}, hardening...), withoutDrivers(args)...)
	cmd := exec.CommandContext(ctx, path, full...)
	cmd.Dir = dir
	cmd.Env = append(cleanEnv(os.Environ()), extraEnv...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return stdout.Bytes(), &Error{Args: args, Exit: ee.ExitCode(), Stderr: stderr.String()}
		}
		return nil, fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	return stdout.Bytes(), nil
}

// withoutDrivers adds --no-ext-diff and --no-textconv to the porcelain
// commands that would otherwise run a diff.external or textconv program
// from the repository's config. (An empty -c diff.external= does not
// disable it: git then fails trying to run "".)
func withoutDrivers(args []string) []string {
	i := 0
	for i < len(args) && strings.HasPrefix(args[i], "--") && strings.Contains(args[i], "=") {
		i++ // global options such as --git-dir=DIR
	}
	if i == len(args) {
		return args
	}
	switch args[i] {
	case "diff", "log", "show":
		out := make([]string, 0, len(args)+2)
		out = append(out, args[:i+1]...)
		out = append(out, "--no-ext-diff", "--no-textconv")
		return append(out, args[i+1:]...)
	}
	return args
}

// cleanEnv drops the variables through which an environment could point
// git at another repository, index or program.
func cleanEnv(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case k == "GIT_DIR", k == "GIT_WORK_TREE", k == "GIT_INDEX_FILE", k == "GIT_COMMON_DIR",
			k == "GIT_OBJECT_DIRECTORY", k == "GIT_ALTERNATE_OBJECT_DIRECTORIES",
			k == "GIT_EXTERNAL_DIFF", k == "GIT_PAGER", k == "GIT_EDITOR",
			k == "GIT_CONFIG", k == "GIT_CONFIG_PARAMETERS", k == "GIT_CONFIG_COUNT",
			strings.HasPrefix(k, "GIT_CONFIG_KEY_"), strings.HasPrefix(k, "GIT_CONFIG_VALUE_"),
			k == "GIT_EXEC_PATH", k == "GIT_TRACE", k == "GIT_NAMESPACE":
			continue
		}
		out = append(out, kv)
	}
	return append(out, "GIT_TERMINAL_PROMPT=0", "LC_ALL=C", "GIT_OPTIONAL_LOCKS=0")
}
