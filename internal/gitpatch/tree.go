package gitpatch

import (
	"context"
	"errors"
	"path/filepath"
	"strings"

	"github.com/failpass/failpass/internal/gitx"
	"github.com/failpass/failpass/internal/scratch"
)

// PatchedTree returns the tree diff makes from the commit base, computed
// in git's object store alone: a throwaway index (GIT_INDEX_FILE in a
// temp folder), `git read-tree <base>`, `git apply --cached` with the diff
// on stdin, `git write-tree`. No checkout, no worktree, no card command:
// the user's index and working tree are never touched, and the only trace
// is the blobs and trees written to the object store (unreferenced, so gc
// collects them). Git runs against the common git directory by path, so
// no repository discovery follows a planted .git file.
//
// It is the one definition of a record's subject tree: the gate computes
// it for a record (gate.Options.PatchedTree) and `record verify`
// recomputes it to check one. applied is false, with no tree, when git
// refuses to apply the diff to the base's tree; that is not an error.
// base must be a commit id.
func PatchedTree(ctx context.Context, repo *gitx.Repo, base string, diff []byte) (tree string, applied bool, err error) {
	sd, err := scratch.New("tree-index")
	if err != nil {
		return "", false, err
	}
	defer sd.Remove()
	tmp := sd.Path
	env := []string{"GIT_INDEX_FILE=" + filepath.Join(tmp, "index")}
	git := func(stdin []byte, args ...string) (string, error) {
		out, err := gitx.CommandEnv(ctx, tmp, stdin, env, append([]string{"--git-dir=" + repo.CommonDir}, args...)...)
		return strings.TrimSpace(string(out)), err
	}
	if _, err := git(nil, "read-tree", base); err != nil {
		return "", false, err
	}
	if _, err := git(diff, "apply", "--cached", "--whitespace=nowarn", "-"); err != nil {
		var ge *gitx.Error
		if errors.As(err, &ge) {
			return "", false, nil
		}
		return "", false, err
	}
	if tree, err = git(nil, "write-tree"); err != nil {
		return "", false, err
	}
	return tree, true, nil
}
