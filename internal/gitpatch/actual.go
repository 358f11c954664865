package gitpatch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/failpass/failpass/internal/gitx"
	"github.com/failpass/failpass/internal/patch"
	"github.com/failpass/failpass/internal/scratch"
)

// Actual returns what a worktree really changed against base: every
// tracked, untracked and ignored file (git apply without --index leaves new
// files untracked, and a plain git diff would miss them), staged into a
// throwaway index so neither the worktree's index nor the user's is
// touched, then diffed with rename detection (-M, git's default
// similarity). Compare it with the static change set with Equal (rule
// diff.actual).
//
// A submodule's commit is not visible in a worktree whose submodules are
// not checked out, so a patch that moves a gitlink shows up as a
// difference.
func Actual(ctx context.Context, repo *gitx.Repo, worktreeDir, base string) (*patch.ChangeSet, error) {
	return actual(ctx, repo, "", worktreeDir, base, false)
}

// ActualIn is Actual for a linked worktree whose git directory is given
// explicitly, so no git discovery follows a `.git` file a command may have
// rewritten. With useIndex, it starts the throwaway index from a copy of
// the worktree's own index: `add --all` makes it match the files whatever
// it held, and a fresh index's stat data saves the read-tree call and
// rehashing every file. Stat data can be wrong the way git's always can
// (a file rewritten within a clock tick at the same size: racy git);
// without useIndex every file is read.
func ActualIn(ctx context.Context, repo *gitx.Repo, gitDir, worktreeDir, base string, useIndex bool) (*patch.ChangeSet, error) {
	return actual(ctx, repo, gitDir, worktreeDir, base, useIndex)
}

// A BaseIndex is a throwaway git index of base's tree with no stat
// data at all: git reads every file it is asked to add into it, whatever
// its stat says (ActualAt). It needs no worktree, so the caller makes it
// while the diff is applied.
type BaseIndex struct {
	dir  *scratch.Dir
	base string
}

// NewBaseIndex reads base's tree into a new BaseIndex (one git process).
func NewBaseIndex(ctx context.Context, repo *gitx.Repo, base string) (*BaseIndex, error) {
	dir, err := scratch.New("index")
	if err != nil {
		return nil, err
	}
	ix := &BaseIndex{dir: dir, base: base}
	if _, err := gitx.CommandEnv(ctx, repo.Dir, nil, ix.env(), "read-tree", base); err != nil {
		ix.Remove()
		return nil, err
	}
	return ix, nil
}

// Remove removes the index.
func (ix *BaseIndex) Remove() { ix.dir.Remove() }

// env points git at the index. Literal pathspecs: a name with glob
// characters names itself alone.
func (ix *BaseIndex) env() []string {
	return []string{"GIT_INDEX_FILE=" + filepath.Join(ix.dir.Path, "index"), "GIT_LITERAL_PATHSPECS=1"}
}

// ActualAt is ActualIn for a caller that knows every path at which the
// worktree can differ from ix's base (changed: worktree.Changed compares
// the tree with the checkout of base it started from). git reads those
// files alone, each whatever its stat, into ix, which it uses up; every
// other path is taken to be as base has it.
func ActualAt(ctx context.Context, repo *gitx.Repo, ix *BaseIndex, gitDir, worktreeDir string, changed []string) (*patch.ChangeSet, error) {
	git := func(stdin []byte, args ...string) ([]byte, error) {
		global := []string{"--git-dir=" + gitDir, "--work-tree=" + worktreeDir}
		return gitx.CommandEnv(ctx, worktreeDir, stdin, ix.env(), append(global, args...)...)
	}
	if len(changed) > 0 {
		// The paths on stdin, never the command line: no length limit.
		// --force: a file written under an ignored path is a change.
		list := []byte(strings.Join(changed, "\x00") + "\x00")
		if _, err := git(list, "add", "--all", "--force", "--pathspec-from-file=-", "--pathspec-file-nul"); err != nil {
			return nil, err
		}
	}
	out, err := git(nil, diffCached(ix.base)...)
	if err != nil {
		return nil, err
	}
	return readActual(ctx, repo, out)
}

// diffCached is the git command that lists an index's changes against
// base: with rename detection, no driver of the repository's.
func diffCached(base string) []string {
	return []string{"diff", "--cached", "--raw", "--numstat", "-z", "-M",
		"--no-ext-diff", "--no-textconv", "--ignore-submodules=none", base, "--"}
}

// actual stages every file of the worktree into a throwaway index and
// diffs it with base.
func actual(ctx context.Context, repo *gitx.Repo, gitDir, worktreeDir, base string, useIndex bool) (*patch.ChangeSet, error) {
	tmp, err := scratch.New("index")
	if err != nil {
		return nil, err
	}
	defer tmp.Remove()
	index := filepath.Join(tmp.Path, "index")
	env := []string{"GIT_INDEX_FILE=" + index}
	var global []string
	if gitDir != "" {
		global = []string{"--git-dir=" + gitDir, "--work-tree=" + worktreeDir}
	}
	git := func(args ...string) ([]byte, error) {
		return gitx.CommandEnv(ctx, worktreeDir, nil, env, append(global, args...)...)
	}
	if !useIndex || gitDir == "" || copyFile(filepath.Join(gitDir, "index"), index) != nil {
		if _, err := git("read-tree", base); err != nil {
			return nil, err
		}
	}
	// --force: a file written under an ignored path is a change.
	if _, err := git("add", "--all", "--force"); err != nil {
		return nil, err
	}
	out, err := git(diffCached(base)...)
	if err != nil {
		return nil, err
	}
	return readActual(ctx, repo, out)
}

// ActualTree is what tree changes against base, both read from the
// repository's objects (no work tree, no index): a tree failpass built
// itself from a worktree it does not trust to run git in.
func ActualTree(ctx context.Context, repo *gitx.Repo, base, tree string) (*patch.ChangeSet, error) {
	out, err := repo.Git(ctx, "diff", "--raw", "--numstat", "-z", "-M", "--ignore-submodules=none", base, tree, "--")
	if err != nil {
		return nil, err
	}
	return readActual(ctx, repo, out)
}

// readActual reads git's listing of the changes (diffCached) into a
// change set, with the targets of symlinks read from their objects.
func readActual(ctx context.Context, repo *gitx.Repo, out []byte) (*patch.ChangeSet, error) {
	cs, err := patch.ParseRawNumstat(out)
	if err != nil {
		return nil, err
	}
	for i := range cs.Files {
		f := &cs.Files[i]
		if f.Status == patch.Deleted || f.NewMode != patch.ModeSymlink || f.SymlinkTarget == "" {
			continue
		}
		// ParseRawNumstat leaves the new object id in SymlinkTarget.
		target, err := gitx.Command(ctx, repo.Dir, nil, "cat-file", "blob", f.SymlinkTarget)
		if err != nil {
			return nil, err
		}
		f.SymlinkTarget = string(target)
	}
	return cs, nil
}

// copyFile copies a git index and keeps its modification time. Git trusts
// an entry whose file stat matches unless the file is not older than the
// index itself ("racy git"); a copy with a fresh mtime would make a file
// that git apply rewrote in the same clock tick, at the same size, look
// unchanged.
func copyFile(from, to string) error {
	fi, err := os.Lstat(from)
	if err != nil || !fi.Mode().IsRegular() {
		return fmt.Errorf("gitpatch: %s is not a regular file", from)
	}
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		return err
	}
	return os.Chtimes(to, fi.ModTime(), fi.ModTime())
}
