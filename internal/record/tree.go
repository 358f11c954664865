package record

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/failpass/failpass/internal/gitpatch"
	"github.com/failpass/failpass/internal/gitx"
	"github.com/failpass/failpass/internal/patch"
)

// Patched is the tree a diff makes from a base commit.
type Patched struct {
	Base string // the base commit id
	// Tree is the patched tree id, or the base's own tree when git could
	// not apply the diff to it (Applied false).
	Tree    string
	Applied bool
}

// PatchedTree computes the tree diff makes from base entirely in git's
// object store: a throwaway index (GIT_INDEX_FILE in a temp folder),
// `git read-tree <base>`, `git apply --cached` with the diff on stdin,
// `git write-tree`. No checkout, no worktree, no command of the card: the
// user's index and working tree are never touched, and the only trace is
// the blobs and trees written to the object store (unreferenced, so gc
// collects them).
//
// A diff git refuses to apply is not an error: the result is the base's
// tree with Applied false, so a record of a refused candidate still names
// a tree. Git is run against the common git directory by path, so no
// repository discovery follows a planted .git file.
func PatchedTree(ctx context.Context, repo *gitx.Repo, base string, diff []byte) (*Patched, error) {
	tmp, err := os.MkdirTemp("", "failpass-record-index-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	env := []string{"GIT_INDEX_FILE=" + filepath.Join(tmp, "index")}
	git := func(stdin []byte, args ...string) (string, error) {
		out, err := gitx.CommandEnv(ctx, tmp, stdin, env, append([]string{"--git-dir=" + repo.CommonDir}, args...)...)
		return strings.TrimSpace(string(out)), err
	}
	commit, err := git(nil, "rev-parse", "--verify", "--quiet", "--end-of-options", base+"^{commit}")
	if err != nil {
		return nil, &BaseError{Base: base, Repo: repo.Dir}
	}
	baseTree, err := git(nil, "rev-parse", "--verify", "--end-of-options", commit+"^{tree}")
	if err != nil {
		return nil, err
	}
	if _, err := git(nil, "read-tree", commit); err != nil {
		return nil, err
	}
	if _, err := git(diff, "apply", "--cached", "--whitespace=nowarn", "-"); err != nil {
		var ge *gitx.Error
		if errors.As(err, &ge) {
			return &Patched{Base: commit, Tree: baseTree, Applied: false}, nil
		}
		return nil, err
	}
	tree, err := git(nil, "write-tree")
	if err != nil {
		return nil, err
	}
	return &Patched{Base: commit, Tree: tree, Applied: true}, nil
}

// BaseError is a base commit the repository does not hold: the tree
// cannot be rebuilt here. It is trouble (exit 2), not a verdict on the
// record.
type BaseError struct{ Base, Repo string }

func (e *BaseError) Error() string { return "base " + e.Base + " is not a commit in " + e.Repo }

// Hints says how to get the commit.
func (e *BaseError) Hints() []string {
	return []string{"run record verify with --repo naming a clone that holds the record's base commit (git fetch)"}
}

// Numstat is the per-file numstat of a change set, in its order.
func Numstat(cs *patch.ChangeSet) []FileStat {
	out := []FileStat{}
	if cs == nil {
		return out
	}
	for _, f := range cs.Files {
		fs := FileStat{Path: f.NewPath, OldPath: f.OldPath, Added: f.Added, Deleted: f.Deleted, Binary: f.Binary}
		if fs.Path == "" {
			fs.Path = f.OldPath
		}
		if fs.OldPath == fs.Path {
			fs.OldPath = ""
		}
		out = append(out, fs)
	}
	return out
}

// ReadNumstat is Numstat of git's reading of diff (gitpatch.Read). A diff
// failpass's parser refuses has an empty numstat: the gate refused it at
// diff.parse or diff.path, and the record says so by its steps.
func ReadNumstat(ctx context.Context, diff []byte) ([]FileStat, error) {
	cs, err := gitpatch.Read(ctx, diff)
	if err != nil {
		var pe *patch.Error
		if errors.As(err, &pe) {
			return []FileStat{}, nil
		}
		return nil, err
	}
	return Numstat(cs), nil
}
