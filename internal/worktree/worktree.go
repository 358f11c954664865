// Package worktree owns failpass's disposable detached worktrees under
// <git common dir>/failpass/worktrees and the removal of what dead runs left.
package worktree

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/rogpeppe/go-internal/lockedfile"

	"github.com/failpass/failpass/internal/gitx"
)

// Layout, all under <git common dir>/failpass/:
//
//	worktrees/<id>/        the worktree itself (git's admin entry: <common>/worktrees/<id>)
//	worktrees/<id>.owner   who owns it: pid, process start time, boot id (JSON)
//	locks/worktrees.lock   serializes gc sweeps and owner writes across processes
//
// The owner file is written before the worktree exists and removed after
// it is gone, so a worktree without a live owner is always a leftover.

// removeTimeout bounds a removal that runs after the caller's context was
// canceled (SIGINT): cleanup must happen, but not hang forever.
const removeTimeout = 2 * time.Minute

// idPattern is the shape of every id Add makes; gc touches nothing else.
var idPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{16}$`) })

// Worktree is one disposable detached worktree.
type Worktree struct {
	Dir string // absolute
	ID  string

	repo   *gitx.Repo
	gitDir string // the admin entry, recorded at creation, before any command ran in Dir
}

// Add creates a detached worktree at commit under the repository's
// failpass folder, recording this process as its owner. It first removes
// what dead runs left (a leftover that cannot be removed does not stop
// Add; `failpass gc` reports it). Callers `defer w.Remove(ctx)`.
func Add(ctx context.Context, repo *gitx.Repo, commit string) (*Worktree, error) {
	GC(ctx, repo)
	sha, err := resolveCommit(ctx, repo, commit)
	if err != nil {
		return nil, err
	}
	id, err := newID()
	if err != nil {
		return nil, err
	}
	base := repo.StateDir("worktrees")
	if err := os.MkdirAll(base, 0o755); err != nil {
		return nil, fmt.Errorf("worktree: %w", err)
	}
	w := &Worktree{Dir: filepath.Join(base, id), ID: id, repo: repo}
	o := currentOwner()
	o.Commit = sha
	// git worktree add and remove run under the lock, one at a time across
	// failpass processes: remove deletes git's worktrees folder once it
	// is empty, and an add that had just made sure the folder exists
	// then fails to create its entry in it.
	err = withLock(repo, func() error {
		if err := writeOwner(ownerPath(repo, id), o); err != nil {
			return err
		}
		if _, err := repo.Git(ctx, "worktree", "add", "--detach", w.Dir, sha); err != nil {
			removeOne(context.WithoutCancel(ctx), repo, id)
			return fmt.Errorf("worktree: add at %s: %w", sha, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	gitDir, err := readGitFile(w.Dir)
	if err != nil {
		w.Remove(ctx)
		return nil, err
	}
	w.gitDir = gitDir
	return w, nil
}

// GitDir is the worktree's own git directory (git's admin entry for it).
func (w *Worktree) GitDir() string { return w.gitDir }

// Git runs git in the worktree with its git directory and work tree given
// explicitly. A command that ran in the worktree can rewrite its `.git`
// file to point at the user's repository; git discovery would then follow
// it, and a `checkout -f` would hit the user's checkout. Every git call on
// a worktree after a command ran in it goes through here.
func (w *Worktree) Git(ctx context.Context, args ...string) ([]byte, error) {
	return w.GitInput(ctx, nil, args...)
}

// GitInput is Git with stdin (`git apply -` of a candidate diff).
func (w *Worktree) GitInput(ctx context.Context, stdin []byte, args ...string) ([]byte, error) {
	full := append([]string{"--git-dir=" + w.gitDir, "--work-tree=" + w.Dir}, args...)
	return gitx.Command(ctx, w.Dir, stdin, full...)
}

// Reset puts the worktree back to a clean checkout of commit, for reuse:
// the .git file as Add made it, tracked files restored, index reset,
// untracked and ignored files removed.
func (w *Worktree) Reset(ctx context.Context, commit string) error {
	sha, err := resolveCommit(ctx, w.repo, commit)
	if err != nil {
		return err
	}
	gitFile := filepath.Join(w.Dir, ".git")
	if err := removeAll(gitFile); err != nil {
		return err
	}
	if err := os.WriteFile(gitFile, []byte("gitdir: "+w.gitDir+"\n"), 0o644); err != nil {
		return fmt.Errorf("worktree: reset: %w", err)
	}
	if _, err := w.Git(ctx, "checkout", "-f", "--detach", sha); err != nil {
		return fmt.Errorf("worktree: reset to %s: %w", sha, err)
	}
	if _, err := w.Git(ctx, "clean", "-ffdx"); err != nil {
		return fmt.Errorf("worktree: reset to %s: %w", sha, err)
	}
	return nil
}

// Keep marks the worktree as kept on purpose (--keep-worktree): gc leaves
// it even after its owner exited. `git worktree remove DIR` removes it;
// gc then drops the owner file.
func (w *Worktree) Keep() error {
	return withLock(w.repo, func() error {
		p := ownerPath(w.repo, w.ID)
		o, err := readOwner(p)
		if err != nil {
			return err
		}
		o.Kept = true
		return writeOwner(p, o)
	})
}

// Remove deletes the worktree, git's admin entry for it and its owner
// file. It runs to the end even when ctx is already canceled (the CLI's
// context ends on SIGINT and SIGTERM, and that is exactly when cleanup
// matters); callers stop commands running in it first (run.Run honours
// ctx).
func (w *Worktree) Remove(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), removeTimeout)
	defer cancel()
	return withLock(w.repo, func() error { return removeOne(ctx, w.repo, w.ID) })
}

// GC removes every failpass worktree in repo whose owner is dead (or
// unknown), with git's admin entries and owner files, and returns the
// paths it removed. It never touches a live owner's worktree, a kept one,
// or anything outside failpass's worktrees folder.
func GC(ctx context.Context, repo *gitx.Repo) ([]string, error) {
	var removed []string
	var errs []error
	err := withLock(repo, func() error {
		base := repo.StateDir("worktrees")
		ids, err := leftovers(repo, base)
		if err != nil {
			return err
		}
		for _, id := range ids {
			dir := filepath.Join(base, id)
			o, oerr := readOwner(ownerPath(repo, id))
			if oerr == nil && o.alive() {
				continue
			}
			if oerr == nil && o.Kept && exists(dir) {
				continue
			}
			if err := removeOne(ctx, repo, id); err != nil {
				errs = append(errs, err)
				continue
			}
			removed = append(removed, dir)
		}
		return nil
	})
	if err != nil {
		return removed, err
	}
	return removed, errors.Join(errs...)
}

// leftovers lists the ids with anything of theirs left: a folder, an
// owner file or a git admin entry pointing into base.
func leftovers(repo *gitx.Repo, base string) ([]string, error) {
	seen := map[string]bool{}
	entries, err := os.ReadDir(base)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("worktree: %w", err)
	}
	for _, e := range entries {
		name := e.Name()
		if i := strings.Index(name, ".owner"); i >= 0 {
			if strings.Contains(name[i:], ".tmp") {
				// Owner files are written under the lock gc holds, so a
				// temporary one here is what a crash left.
				os.Remove(filepath.Join(base, name))
				continue
			}
			name = name[:i]
		}
		if idPattern().MatchString(name) {
			seen[name] = true
		}
	}
	admins, _ := filepath.Glob(filepath.Join(repo.CommonDir, "worktrees", "*", "gitdir"))
	for _, a := range admins {
		if dir, ok := adminTarget(a); ok && filepath.Dir(dir) == base && idPattern().MatchString(filepath.Base(dir)) {
			seen[filepath.Base(dir)] = true
		}
	}
	ids := make([]string, 0, len(seen))
	for id := range seen {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids, nil
}

// removeOne removes everything of id: processes still running in its
// folder, the folder (git's own removal first, then by hand), git's admin
// entry, and last the owner file.
func removeOne(ctx context.Context, repo *gitx.Repo, id string) error {
	base := repo.StateDir("worktrees")
	dir := filepath.Join(base, id)
	killIn(dir)
	if exists(dir) {
		// `worktree remove` refuses a worktree whose .git file a command
		// rewrote; the fallback below handles that case.
		repo.Git(ctx, "worktree", "remove", "--force", "--force", dir)
	}
	var errs []error
	if err := removeAll(dir); err != nil {
		errs = append(errs, err)
	}
	// Drop git's admin entry ourselves rather than `git worktree prune`,
	// which would also drop the user's own entries whose folders happen to
	// be missing (an unmounted disk).
	admins, _ := filepath.Glob(filepath.Join(repo.CommonDir, "worktrees", "*", "gitdir"))
	for _, a := range admins {
		if target, ok := adminTarget(a); ok && target == dir {
			if err := os.RemoveAll(filepath.Dir(a)); err != nil {
				errs = append(errs, fmt.Errorf("worktree: %w", err))
			}
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if err := os.Remove(ownerPath(repo, id)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("worktree: %w", err)
	}
	return nil
}

// adminTarget reads a git admin entry's gitdir file and returns the
// worktree folder it names.
func adminTarget(gitdirFile string) (string, bool) {
	b, err := os.ReadFile(gitdirFile)
	if err != nil {
		return "", false
	}
	p := strings.TrimSpace(string(b))
	if !filepath.IsAbs(p) || filepath.Base(p) != ".git" {
		return "", false
	}
	return filepath.Dir(filepath.Clean(p)), true
}

// readGitFile reads the `.git` file git wrote into a new worktree.
func readGitFile(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, ".git"))
	if err != nil {
		return "", fmt.Errorf("worktree: %w", err)
	}
	p, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
	if !ok || !filepath.IsAbs(p) {
		return "", fmt.Errorf("worktree: unexpected .git file in %s: %q", dir, b)
	}
	return p, nil
}

// removeAll removes dir even when a command left folders without write
// or search permission in it.
func removeAll(dir string) error {
	if err := os.RemoveAll(dir); err == nil {
		return nil
	}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if d != nil && d.IsDir() {
			os.Chmod(p, 0o700)
		}
		return nil
	})
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("worktree: %w", err)
	}
	return nil
}

func resolveCommit(ctx context.Context, repo *gitx.Repo, commit string) (string, error) {
	// A full object id needs no lookup: the git call that uses it fails on
	// anything but a commit, and each git process here costs ~10 ms.
	if isObjectID(commit) {
		return commit, nil
	}
	out, err := repo.Git(ctx, "rev-parse", "--verify", "--quiet", "--end-of-options", commit+"^{commit}")
	if err != nil {
		return "", fmt.Errorf("worktree: %q is not a commit in %s: %w", commit, repo.Dir, err)
	}
	return strings.TrimSpace(string(out)), nil
}

func withLock(repo *gitx.Repo, f func() error) error {
	if err := os.MkdirAll(repo.StateDir("locks"), 0o755); err != nil {
		return fmt.Errorf("worktree: %w", err)
	}
	unlock, err := lockedfile.MutexAt(repo.StateDir("locks", "worktrees.lock")).Lock()
	if err != nil {
		return fmt.Errorf("worktree: %w", err)
	}
	defer unlock()
	return f()
}

func newID() (string, error) {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("worktree: %w", err)
	}
	return hex.EncodeToString(b), nil
}

func ownerPath(repo *gitx.Repo, id string) string {
	return repo.StateDir("worktrees", id+".owner")
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// isObjectID reports whether s is a full SHA-1 or SHA-256 object id in
// lowercase hex.
func isObjectID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
