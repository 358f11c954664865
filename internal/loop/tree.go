package loop

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/failpass/failpass/internal/gitx"
	"github.com/failpass/failpass/internal/scratch"
	"github.com/failpass/failpass/internal/worktree"
)

// An attemptTree reads what a fixer left in its attempt's worktree and
// turns it into a git tree, without ever running git where the fixer
// could have written: not in the worktree (its `.git` file), not through
// its git admin folder (HEAD, index, commondir, config), not with the
// user's global configuration. A fixer may rewrite all of those (as root
// or where no view holds them read-only); git run through them would run
// the fixer's clean filter or hook outside any sandbox, with failpass's
// environment, and could commit other bytes than the ones validation
// ran on.
//
// So failpass makes a git directory of its own (gitx.Private: its own
// config and index over the repository's objects) after the fixer
// returned, starts its index from the head's tree, and updates the
// index itself with the files the fixer changed: failpass lists them
// (worktree.Changed, by stat against the checkout it made), reads each
// through an os.Root (no symlink leads outside the worktree), copies
// the bytes into its own folder and hashes that copy with no filter
// (`hash-object --no-filters`); a symlink is its target. git adds
// nothing: no clean filter, no text conversion, no hook runs. The
// result is the exact tree committed and validated (in a fresh
// checkout of the commit, not in the fixer's worktree).
//
// A changed path to which the head's attributes give a `filter` (git
// LFS and the like) is refused (filterError): committing its bytes
// unfiltered would store what the filter was meant to replace, and
// running the filter would run a program on the fixer's bytes.
// Untracked files the attempt's ignore rules (its .gitignore files, the
// repository's info/exclude) ignore are left out, as `git add --all`
// leaves them; git reads those rules as data.
type attemptTree struct {
	repo     *gitx.Repo
	w        *worktree.Worktree
	head     string
	headTree string

	dir  *scratch.Dir
	priv *gitx.Private
	tree string // the last build, "" when none or stale
}

// treeAdd is one file to add: its path, git mode and the private copy
// of its bytes.
type treeAdd struct{ path, mode, copy string }

// filterError says a changed path has a filter attribute.
type filterError struct{ path, filter string }

func (e *filterError) Error() string {
	return fmt.Sprintf("%s has the attribute filter=%s in the head's .gitattributes: failpass never runs a filter on a fixer's bytes and does not commit them unfiltered", e.path, e.filter)
}

// fileError says the fixer left a file failpass cannot read or commit:
// the attempt fails with it.
type fileError struct{ err error }

func (e *fileError) Error() string { return "the attempt's files cannot be read: " + e.err.Error() }
func (e *fileError) Unwrap() error { return e.err }

// newAttemptTree prepares to read w, a worktree Add made at head. It is
// made after the fixer returned: its private folder never existed while
// the fixer ran.
func newAttemptTree(ctx context.Context, repo *gitx.Repo, w *worktree.Worktree, head string) (*attemptTree, error) {
	ht, err := repo.Tree(ctx, head)
	if err != nil {
		return nil, err
	}
	d, err := scratch.New("attempt-git")
	if err != nil {
		return nil, err
	}
	t := &attemptTree{repo: repo, w: w, head: head, headTree: ht, dir: d}
	return t, nil
}

// Close removes the private folder.
func (t *attemptTree) Close() { t.dir.Remove() }

// private makes the private git directory anew (its index at the head).
func (t *attemptTree) private(ctx context.Context) (*gitx.Private, error) {
	gd := filepath.Join(t.dir.Path, "git")
	if err := scratch.RemoveAll(gd); err != nil {
		return nil, err
	}
	if err := os.Mkdir(gd, 0o700); err != nil {
		return nil, err
	}
	return gitx.NewPrivate(ctx, t.repo, gd, t.head, t.w.Dir)
}

// Changed says whether the worktree's tree differs from the head's.
func (t *attemptTree) Changed(ctx context.Context) (bool, error) {
	tree, err := t.Build(ctx)
	if err != nil {
		return false, err
	}
	return tree != t.headTree, nil
}

// Apply applies a model's diff to the worktree with git apply run
// through the private directory (never the worktree's own git).
func (t *attemptTree) Apply(ctx context.Context, diff []byte, check bool) error {
	p, err := t.private(ctx)
	if err != nil {
		return err
	}
	args := []string{"apply"}
	if check {
		args = append(args, "--check")
	}
	t.tree = ""
	_, err = p.Git(ctx, diff, append(args, "-")...)
	return err
}

// Build returns the tree of the worktree's files as they are now.
func (t *attemptTree) Build(ctx context.Context) (string, error) {
	if t.tree != "" {
		return t.tree, nil
	}
	p, err := t.private(ctx)
	if err != nil {
		return "", err
	}
	t.priv = p
	paths, err := t.changedPaths()
	if err != nil {
		return "", &fileError{err}
	}
	root, err := os.OpenRoot(t.w.Dir)
	if err != nil {
		return "", &fileError{err}
	}
	defer root.Close()
	blobs := filepath.Join(t.dir.Path, "blobs")
	if err := scratch.RemoveAll(blobs); err != nil {
		return "", err
	}
	if err := os.Mkdir(blobs, 0o700); err != nil {
		return "", err
	}
	var adds []treeAdd
	var dels []string
	for _, rel := range paths {
		fi, err := lstatBelow(root, rel)
		switch {
		case errors.Is(err, fs.ErrNotExist) || errors.Is(err, errBeyond):
			dels = append(dels, rel)
			continue
		case err != nil:
			return "", &fileError{err}
		}
		cp := filepath.Join(blobs, strconv.Itoa(len(adds)))
		mode := "100644"
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := root.Readlink(rel)
			if err != nil {
				return "", &fileError{err}
			}
			if err := os.WriteFile(cp, []byte(target), 0o600); err != nil {
				return "", err
			}
			mode = "120000"
		case fi.Mode().IsRegular():
			if fi.Mode()&0o100 != 0 {
				mode = "100755"
			}
			if err := copyOut(root, rel, cp); err != nil {
				return "", &fileError{err}
			}
		case isRuleFile(rel):
			// A fifo where git reads ignore rules would hang check-ignore
			// (git opens it and waits for a writer): the attempt fails.
			return "", &fileError{fmt.Errorf("%s is neither a regular file nor a symlink", rel)}
		default:
			// A fifo, socket or device: git add refuses it too, and it
			// holds no content to commit. A folder (Changed lists none)
			// likewise.
			continue
		}
		adds = append(adds, treeAdd{path: rel, mode: mode, copy: cp})
	}
	// Ignored untracked files stay out, as `git add --all` leaves them.
	// Tracked paths are never reported ignored (the index is the head's).
	if len(adds) > 0 {
		ignored, err := t.ignored(ctx, p, adds)
		if err != nil {
			return "", err
		}
		kept := adds[:0]
		for _, a := range adds {
			if !ignored[a.path] {
				kept = append(kept, a)
			}
		}
		adds = kept
	}
	if len(adds) > 0 {
		list := make([]string, len(adds))
		for i, a := range adds {
			list[i] = a.path
		}
		if err := t.checkFilters(ctx, p, list); err != nil {
			return "", err
		}
	}
	var info bytes.Buffer
	zero := strings.Repeat("0", len(t.headTree))
	for _, d := range dels {
		fmt.Fprintf(&info, "0 %s\t%s\x00", zero, d)
	}
	if len(adds) > 0 {
		var copies strings.Builder
		for _, a := range adds {
			copies.WriteString(a.copy + "\n")
		}
		out, err := p.Git(ctx, []byte(copies.String()), "hash-object", "-w", "--no-filters", "--stdin-paths")
		if err != nil {
			return "", err
		}
		oids := strings.Fields(string(out))
		if len(oids) != len(adds) {
			return "", fmt.Errorf("git hash-object: %d ids for %d files", len(oids), len(adds))
		}
		for i, a := range adds {
			fmt.Fprintf(&info, "%s %s\t%s\x00", a.mode, oids[i], a.path)
		}
	}
	if info.Len() > 0 {
		if _, err := p.Git(ctx, info.Bytes(), "update-index", "--add", "--remove", "--replace", "-z", "--index-info"); err != nil {
			return "", &fileError{err}
		}
	}
	out, err := p.Git(ctx, nil, "write-tree")
	if err != nil {
		return "", &fileError{err}
	}
	t.tree = strings.TrimSpace(string(out))
	return t.tree, nil
}

// Commit commits tree onto the head with failpass's message, identity
// given (authorEnv: GIT_AUTHOR_NAME and the like), and returns it.
func (t *attemptTree) Commit(ctx context.Context, tree string, ident []string, subject, body string) (string, error) {
	p := t.priv
	if p == nil {
		var err error
		if p, err = t.private(ctx); err != nil {
			return "", err
		}
	}
	out, err := p.GitEnv(ctx, nil, ident, "commit-tree", tree, "-p", t.head, "-m", subject, "-m", body)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// changedPaths lists every path where the worktree may differ from the
// head: what worktree.Changed finds by stat against the checkout Add
// made, else (times too coarse to tell) every file there and every path
// of the head. Paths inside a `.git` folder are never committed (a
// fixer's throwaway repository; git refuses them too).
func (t *attemptTree) changedPaths() ([]string, error) {
	var paths []string
	ok := false
	if now, err := t.w.Snapshot(); err == nil {
		paths, ok, err = t.w.Changed(t.head, now)
		if err != nil {
			ok = false
		}
	}
	if !ok {
		var err error
		if paths, err = t.allPaths(); err != nil {
			return nil, err
		}
	}
	out := paths[:0]
	for _, p := range paths {
		if !inGitFolder(p) {
			out = append(out, p)
		}
	}
	return out, nil
}

// allPaths is every file and symlink of the worktree and every path of
// the head's tree.
func (t *attemptTree) allPaths() ([]string, error) {
	seen := map[string]bool{}
	root, err := os.OpenRoot(t.w.Dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	err = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == "." {
			return nil
		}
		if strings.EqualFold(d.Name(), ".git") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if !d.IsDir() {
			seen[p] = true
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	files, err := t.repo.Files(context.Background(), t.head)
	if err != nil {
		return nil, err
	}
	for _, p := range files {
		seen[p] = true
	}
	paths := make([]string, 0, len(seen))
	for p := range seen {
		paths = append(paths, p)
	}
	return paths, nil
}

// ignored says which of the added paths git's ignore rules ignore.
func (t *attemptTree) ignored(ctx context.Context, p *gitx.Private, adds []treeAdd) (map[string]bool, error) {
	var in strings.Builder
	for _, a := range adds {
		in.WriteString(a.path + "\x00")
	}
	out, err := p.Git(ctx, []byte(in.String()), "check-ignore", "-z", "--stdin")
	var ge *gitx.Error
	if errors.As(err, &ge) && ge.Exit == 1 {
		return nil, nil // nothing ignored
	}
	if err != nil {
		return nil, err
	}
	res := map[string]bool{}
	for _, f := range strings.Split(string(out), "\x00") {
		if f != "" {
			res[f] = true
		}
	}
	return res, nil
}

// checkFilters refuses a path to which the head's attributes (its
// .gitattributes files, read from the private index, which holds the
// head's tree, and the repository's info/attributes) give a filter.
func (t *attemptTree) checkFilters(ctx context.Context, p *gitx.Private, paths []string) error {
	out, err := p.Git(ctx, []byte(strings.Join(paths, "\x00")+"\x00"), "check-attr", "--cached", "-z", "--stdin", "filter")
	if err != nil {
		return err
	}
	f := strings.Split(string(out), "\x00")
	for i := 0; i+2 < len(f); i += 3 {
		switch v := f[i+2]; v {
		case "unspecified", "unset":
		default:
			return &filterError{path: f[i], filter: v}
		}
	}
	return nil
}

// isRuleFile says git reads rules from a file at p (.gitignore,
// .gitattributes), in any case.
func isRuleFile(p string) bool {
	b := path.Base(p)
	return strings.EqualFold(b, ".gitignore") || strings.EqualFold(b, ".gitattributes")
}

// inGitFolder says a path has a `.git` component (in any case).
func inGitFolder(p string) bool {
	for _, c := range strings.Split(p, "/") {
		if strings.EqualFold(c, ".git") {
			return true
		}
	}
	return false
}

// errBeyond says a path lies beyond a symlink or a file: git holds no
// file there.
var errBeyond = errors.New("beyond a symlink or file")

// lstatBelow is root.Lstat of rel, checking first that every folder on
// its way is a folder (os.Root follows a symlink that stays inside).
func lstatBelow(root *os.Root, rel string) (fs.FileInfo, error) {
	parts := strings.Split(rel, "/")
	for i := 1; i < len(parts); i++ {
		fi, err := root.Lstat(path.Join(parts[:i]...))
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() {
			return nil, errBeyond
		}
	}
	return root.Lstat(rel)
}

// copyOut copies the regular file rel of root to to.
func copyOut(root *os.Root, rel, to string) error {
	f, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is no longer a regular file", rel)
	}
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, f); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
