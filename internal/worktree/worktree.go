// Package worktree owns failpass's disposable detached worktrees under
// <git common dir>/failpass/worktrees and the removal of what dead runs left.
package worktree

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/rogpeppe/go-internal/lockedfile"

	"github.com/failpass/failpass/internal/gitx"
	"github.com/failpass/failpass/internal/scratch"
)

// Layout, under <git common dir>/failpass/:
//
//	worktrees/<id>.git/    its private git directory: HEAD, commondir, gitdir, index
//	worktrees/<id>.owner   who owns it: pid, process start time, boot id, the tree's folder (JSON)
//	locks/worktrees.lock   serializes gc sweeps and owner writes across processes
//
// and the worktree itself (the tree; its .git file names <id>.git) in the
// user's cache folder, outside the repository:
//
//	<cache>/failpass/trees/<repository key>/<id>/
//
// Runners look upward from the tree for their configuration and
// workspaces (pytest's ini files and rootdir, go.work, a cargo workspace,
// package.json): inside the repository (worktrees/<id>/, where trees
// lived before) that walk reached the user's checkout, whose files the
// sandbox refuses a command, and what a run found depended on where the
// user keeps the repository. Where the sandbox has a mount namespace the
// command sees the tree at a fixed folder of its private /tmp anyway
// (sandbox.TreeView); where it has none (Landlock alone, --sandbox=off),
// the walk from the cache folder passes only failpass's folders and the
// user's cache and home folders. Without a cache folder (no HOME), trees
// live in worktrees/<id>/ as before.
//
// The owner file is written before the worktree exists and removed after
// it is gone, so a worktree without a live owner is always a leftover.
//
// Design note: a worktree is made the way `git worktree add` makes one,
// minus the parts that cost processes and show to the user. git finds a
// linked worktree's repository through its .git file and the git
// directory's commondir file, wherever that directory lives; only `git
// worktree list` and `prune` look in <common>/worktrees. So the git
// directory lives beside the worktree, failpass writes its three files
// itself, and one `git read-tree --reset -u` fills index and files (`git
// worktree add` runs two more git processes, update-ref and reset --hard,
// and `git worktree remove` a fourth). The user's `git worktree list`
// never shows failpass's worktrees, and removal is a removal of folders.
// What git does not know about it does not guard either: a `git gc
// --prune=now` the user runs during a gate may prune objects only the
// worktree's index holds (git's default keeps unreferenced objects two
// weeks); a gate's base is usually referenced anyway.

// idPattern is the shape of every id Add makes; gc touches nothing else.
var idPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{16}$`) })

// Worktree is one disposable detached worktree.
type Worktree struct {
	Dir string // absolute
	ID  string

	repo   *gitx.Repo
	gitDir string // the admin entry, recorded at creation, before any command ran in Dir

	// commit and checkout are what Add checked out, recorded before any
	// command ran in Dir. A Reset to the same commit restores checkout
	// without git when nothing it recorded changed (Restore), and else
	// removes what is not among its paths itself rather than running
	// `git clean`. checkout is nil once a Reset went to another commit;
	// restorable is false once git rewrote files, which leaves
	// checkout's stat behind.
	commit     string
	checkout   *Snapshot
	restorable bool
}

// Add creates a detached worktree at commit under the repository's
// failpass folder, recording this process as its owner. Meanwhile it
// removes what dead runs left (a leftover that cannot be removed does
// not stop Add; `failpass gc` reports it). Callers `defer w.Remove(ctx)`.
//
// A commit given as a full object id is not looked up: it must name a
// commit (a tree's id fails; a tag's id would leave HEAD at the tag).
func Add(ctx context.Context, repo *gitx.Repo, commit string) (*Worktree, error) {
	sha, err := resolveCommit(ctx, repo, commit)
	if err != nil {
		return nil, err
	}
	base := repo.StateDir("worktrees")
	if err := os.MkdirAll(base, 0o755); err != nil {
		return nil, fmt.Errorf("worktree: %w", err)
	}
	o := currentOwner()
	o.Commit = sha
	// The slot is taken and the owner file written under the lock a gc
	// sweep holds (a sweep takes a temporary owner file for a crash's
	// leftover); the folders need no lock: nothing else touches an id
	// whose owner lives.
	trees := treesOf(repo)
	if trees != "" {
		if err := os.MkdirAll(trees, 0o755); err != nil {
			trees = "" // an unwritable cache folder: the tree lives in the repository
		}
	}
	var id string
	if err := withLock(repo, func() error {
		id = freeSlot(repo, base, trees)
		o.Tree = filepath.Join(base, id)
		if trees != "" {
			o.Tree = filepath.Join(trees, id)
		}
		return writeOwner(ownerPath(repo, id), o)
	}); err != nil {
		return nil, err
	}
	w := &Worktree{Dir: o.Tree, ID: id, repo: repo, gitDir: gitDirOf(base, id)}
	// What dead runs left goes while git checks this one out: a sweep
	// leaves a live owner's worktree, this one included.
	swept := make(chan struct{})
	go func() {
		defer close(swept)
		GC(ctx, repo)
	}()
	defer func() { <-swept }()
	if err := w.populate(ctx, sha); err != nil {
		w.Remove(ctx)
		return nil, fmt.Errorf("worktree: add at %s: %w", sha, err)
	}
	return w, nil
}

// populate writes the git directory's files and the .git file as `git
// worktree add --detach` would, then checks commit out with one git
// process.
func (w *Worktree) populate(ctx context.Context, commit string) error {
	if err := os.Mkdir(w.gitDir, 0o755); err != nil {
		return err
	}
	// commondir is relative, as git writes it: <common>/failpass/worktrees/<id>.git -> <common>.
	for name, content := range map[string]string{
		"HEAD":      commit + "\n",
		"commondir": "../../..\n",
		"gitdir":    filepath.Join(w.Dir, ".git") + "\n",
	} {
		if err := os.WriteFile(filepath.Join(w.gitDir, name), []byte(content), 0o644); err != nil {
			return err
		}
	}
	// The repository's folder of trees may go with the last tree a
	// concurrent run removes, even between making it and making the tree
	// in it: make both again until the tree's folder stands.
	for try := 0; ; try++ {
		if err := os.MkdirAll(filepath.Dir(w.Dir), 0o755); err != nil {
			return err
		}
		err := os.Mkdir(w.Dir, 0o755)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrNotExist) || try == 100 {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(w.Dir, ".git"), []byte("gitdir: "+w.gitDir+"\n"), 0o644); err != nil {
		return err
	}
	// ^{commit}: a full id that names a tree must not check out.
	if _, err := w.Git(ctx, "read-tree", "--reset", "-u", commit+"^{commit}"); err != nil {
		return err
	}
	snap, err := w.Snapshot()
	if err != nil {
		return err
	}
	w.commit, w.checkout, w.restorable = commit, snap, true
	return nil
}

// sweep removes from dir what s does not have (Snapshot.prune).
func sweep(dir string, s *Snapshot) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	return s.prune(root, nil)
}

// GitDir is the worktree's own git directory (HEAD, index; its commondir
// file names the repository's common dir).
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
// untracked and ignored files removed. Back at the commit Add checked
// out, before git ever rewrote a file, it costs no git process when
// the runs changed nothing Add wrote (Restore).
func (w *Worktree) Reset(ctx context.Context, commit string) error {
	sha, err := resolveCommit(ctx, w.repo, commit)
	if err != nil {
		return err
	}
	if sha == w.commit && w.restorable {
		if same, err := w.Restore(w.checkout); err == nil && same {
			return nil
		}
	}
	gitFile := filepath.Join(w.Dir, ".git")
	if err := removeAll(gitFile); err != nil {
		return err
	}
	if err := os.WriteFile(gitFile, []byte("gitdir: "+w.gitDir+"\n"), 0o644); err != nil {
		return fmt.Errorf("worktree: reset: %w", err)
	}
	// Back at the commit Add checked out, failpass removes what the
	// checkout did not write itself, one git process fewer; anything
	// odd (a folder a command made unreadable) goes to git clean.
	swept := sha == w.commit && w.checkout != nil && sweep(w.Dir, w.checkout) == nil
	if sha != w.commit {
		w.checkout = nil
	}
	w.restorable = false
	// No reflog: a HEAD log that grows with every reset would tell a
	// candidate's run after a reset (the gate's canary) from its first.
	if _, err := w.Git(ctx, "-c", "core.logAllRefUpdates=false", "checkout", "-f", "--detach", sha); err != nil {
		return fmt.Errorf("worktree: reset to %s: %w", sha, err)
	}
	if swept {
		return nil
	}
	if _, err := w.Git(ctx, "clean", "-ffdx"); err != nil {
		return fmt.Errorf("worktree: reset to %s: %w", sha, err)
	}
	return nil
}

// Keep marks the worktree as kept on purpose (--keep-worktree): gc leaves
// it even after its owner exited. Deleting its folder (`rm -rf DIR`)
// gives it up; gc then drops its git directory and owner file.
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

// Remove deletes the worktree, its git directory and its owner file,
// without git. It runs to the end even when ctx is already canceled (the
// CLI's context ends on SIGINT and SIGTERM, and that is exactly when
// cleanup matters); callers stop commands running in it first (run.Run
// honours ctx). It needs no lock: a gc sweep leaves an id alone while
// its owner file names a live process, and the owner file goes last.
func (w *Worktree) Remove(ctx context.Context) error {
	_, err := removeOne(w.repo, w.ID, w.Dir)
	return err
}

// GC removes every failpass worktree in repo whose owner is dead (or
// unknown), with git's admin entries and owner files, and the temporary
// folders dead failpass processes left (scratch.Sweep), and returns the
// paths it removed. Without root, what another user's runs left is
// returned as skipped, not an error: only that user (or root) can remove
// it. It never touches a live owner's worktree or folder,
// a kept worktree, or anything outside failpass's worktrees folder and
// its own temporary folders.
func GC(ctx context.Context, repo *gitx.Repo) (removed, skipped []string, err error) {
	var errs []error
	base := repo.StateDir("worktrees")
	err = withLock(repo, func() error {
		ids, err := leftovers(repo, base)
		if err != nil {
			return err
		}
		for _, id := range ids {
			dir := filepath.Join(base, id)
			if p, ok := scratch.OwnedByAnother(dir, gitDirOf(base, id), ownerPath(repo, id)); ok {
				// Another user's run (root's gate, killed, seen by a
				// user's gc): only they can remove it, and its owner
				// file may be unreadable here.
				skipped = append(skipped, p)
				continue
			}
			o, oerr := readOwner(ownerPath(repo, id))
			if oerr == nil && o.alive() {
				continue
			}
			tree := treeOf(repo, id, o)
			if oerr == nil && o.Kept && (exists(dir) || tree != "" && exists(tree)) {
				continue
			}
			if !exists(dir) && tree != "" && (exists(tree) || o.Tree == tree) {
				dir = tree // reported where it lies (or lay: its folder removed by hand)
			}
			legacy, lerr := removeLegacy(repo, filepath.Join(base, id))
			found, err := removeOne(repo, id, tree)
			if err = errors.Join(lerr, err); err != nil {
				errs = append(errs, err)
				continue
			}
			if found || legacy {
				// Not found: the live owner removed its own worktree
				// between the listing and now.
				removed = append(removed, dir)
			}
		}
		return nil
	})
	if errors.Is(err, fs.ErrPermission) {
		// The lock belongs to another user, and so does everything it
		// guards: failpass made the lock before any worktree. Listed,
		// not removed.
		ids, lerr := leftovers(repo, base)
		for _, id := range ids {
			if p, ok := scratch.OwnedByAnother(filepath.Join(base, id), gitDirOf(base, id), ownerPath(repo, id)); ok {
				skipped = append(skipped, p)
			}
		}
		if lerr == nil && len(skipped) == len(ids) {
			err = nil
		}
	}
	// What dead runs left in the system's temporary folder too.
	removed = append(removed, scratch.Sweep()...)
	if err != nil {
		return removed, skipped, err
	}
	return removed, skipped, errors.Join(errs...)
}

// leftovers lists the ids with anything of theirs left: a folder, a git
// directory, an owner file, or an admin entry in git's own worktrees
// folder pointing into base (what failpass versions that ran `git
// worktree add` left).
func leftovers(repo *gitx.Repo, base string) ([]string, error) {
	seen := map[string]bool{}
	entries, err := os.ReadDir(base)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("worktree: %w", err)
	}
	for _, e := range entries {
		name := strings.TrimSuffix(e.Name(), ".git")
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
// folders, its tree (in the cache folder, tree; "" for none) and the
// folder where trees lived before, its git directory, and last the owner
// file. It reports whether there was anything to remove.
func removeOne(repo *gitx.Repo, id, tree string) (bool, error) {
	base := repo.StateDir("worktrees")
	dir := filepath.Join(base, id)
	owner := ownerPath(repo, id)
	found := exists(dir) || exists(gitDirOf(base, id)) || exists(owner) || tree != "" && exists(tree)
	folders := []string{dir}
	if tree != "" && tree != dir {
		folders = append(folders, tree)
	}
	for _, d := range folders {
		killIn(d)
	}
	var errs []error
	for _, p := range append(folders, gitDirOf(base, id)) {
		if err := removeAll(p); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return found, errors.Join(errs...)
	}
	if tree != "" && tree != dir {
		os.Remove(filepath.Dir(tree)) // the repository's folder of trees, once empty
	}
	if err := os.Remove(owner); err != nil && !errors.Is(err, os.ErrNotExist) {
		return found, fmt.Errorf("worktree: %w", err)
	}
	return found, nil
}

// removeLegacy drops git's own admin entry for dir, which failpass
// versions that ran `git worktree add` made. It does so by hand rather
// than with `git worktree prune`, which would also drop the user's own
// entries whose folders happen to be missing (an unmounted disk).
func removeLegacy(repo *gitx.Repo, dir string) (bool, error) {
	admins, _ := filepath.Glob(filepath.Join(repo.CommonDir, "worktrees", "*", "gitdir"))
	found := false
	var errs []error
	for _, a := range admins {
		if target, ok := adminTarget(a); ok && target == dir {
			found = true
			if err := os.RemoveAll(filepath.Dir(a)); err != nil {
				errs = append(errs, fmt.Errorf("worktree: %w", err))
			}
		}
	}
	return found, errors.Join(errs...)
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

// removeAll is scratch.RemoveAll: a command may have left folders
// without write or search permission in a worktree too.
func removeAll(dir string) error {
	if err := scratch.RemoveAll(dir); err != nil {
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
	out, err := repo.Commit(ctx, commit)
	if err != nil {
		return "", fmt.Errorf("worktree: %q is not a commit in %s: %w", commit, repo.Dir, err)
	}
	return out, nil
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

// freeSlot is the lowest id with nothing of its own in base: no folder,
// git directory or owner file. The caller holds the lock.
//
// Ids are slots, not random, because a worktree's path is part of every
// build its commands make: the go command keys a package's compiled
// output by its folder (without -trimpath the object names its source
// files), and so do Python's and cargo's caches. A gate that checks the
// candidate out where the last gate of the repository did finds its base
// build in the card's cache; a random folder per gate rebuilt every
// package of the module, twice per base run, each gate. Concurrent gates
// take the next slots, and warm those.
func freeSlot(repo *gitx.Repo, base, trees string) string {
	for n := 0; ; n++ {
		id := fmt.Sprintf("%016x", n)
		if !exists(filepath.Join(base, id)) && !exists(gitDirOf(base, id)) && !exists(ownerPath(repo, id)) &&
			(trees == "" || !exists(filepath.Join(trees, id))) {
			return id
		}
	}
}

// treesOf is the folder of repo's trees in the user's cache folder:
// <cache>/failpass/trees/<key>, the key a digest of the repository's
// common dir, so every repository has a folder of its own and a tree's
// path is the same from run to run. "" when there is no cache folder.
func treesOf(repo *gitx.Repo) string {
	cache, err := os.UserCacheDir()
	if err != nil || !filepath.IsAbs(cache) {
		return ""
	}
	return filepath.Join(cache, "failpass", "trees", repoKey(repo))
}

// Trees is every folder repo's worktrees' trees live in, for a check
// that must refuse anything of a tree under test (trust roots): its
// folder in this user's cache folder, and worktrees/ in the repository,
// where trees lived before and live without a cache folder.
func Trees(repo *gitx.Repo) []string {
	dirs := []string{repo.StateDir("worktrees")}
	if t := treesOf(repo); t != "" {
		dirs = append(dirs, t)
	}
	return dirs
}

// repoKey names repo's folder of trees.
func repoKey(repo *gitx.Repo) string {
	common := repo.CommonDir
	if r, err := filepath.EvalSymlinks(common); err == nil {
		common = r
	}
	sum := sha256.Sum256([]byte(filepath.Clean(common)))
	return hex.EncodeToString(sum[:8])
}

// treeOf is where worktree id of repo has its tree, as its owner file o
// records it (a tree in another user's or another HOME's cache folder
// too), else where this process would put it; "" for none. A recorded
// folder counts only if it has the shape of a tree of repo: gc removes
// it.
func treeOf(repo *gitx.Repo, id string, o owner) string {
	key := repoKey(repo)
	if t := filepath.Clean(o.Tree); filepath.IsAbs(t) && filepath.Base(t) == id &&
		filepath.Base(filepath.Dir(t)) == key && filepath.Base(filepath.Dir(filepath.Dir(t))) == "trees" {
		return t
	}
	if trees := treesOf(repo); trees != "" {
		return filepath.Join(trees, id)
	}
	return ""
}

// gitDirOf is the private git directory of worktree id in base.
func gitDirOf(base, id string) string { return filepath.Join(base, id+".git") }

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
