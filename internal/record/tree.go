package record

import (
	"context"
	"errors"
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

// PatchedTree is gitpatch.PatchedTree of the commit base names, with
// the base's own tree standing for the patched one when git refuses the
// diff (Applied false), so a record of a refused candidate still names a
// tree. A base the repository does not hold is a *BaseError.
func PatchedTree(ctx context.Context, repo *gitx.Repo, base string, diff []byte) (*Patched, error) {
	rev := func(arg string) (string, error) {
		out, err := gitx.Command(ctx, repo.CommonDir, nil, "--git-dir="+repo.CommonDir, "rev-parse", "--verify", "--quiet", "--end-of-options", arg)
		return strings.TrimSpace(string(out)), err
	}
	commit, err := rev(base + "^{commit}")
	if err != nil {
		return nil, &BaseError{Base: base, Repo: repo.Dir}
	}
	tree, applied, err := gitpatch.PatchedTree(ctx, repo, commit, diff)
	if err != nil {
		return nil, err
	}
	if !applied {
		if tree, err = rev(commit + "^{tree}"); err != nil {
			return nil, err
		}
	}
	return &Patched{Base: commit, Tree: tree, Applied: applied}, nil
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
