// Package gitpatch reads change sets with git: a diff's static change set (its raw headers cross-checked against git's own patch parser), the base tree's modes of the files it touches, and what a worktree actually changed.
package gitpatch

import (
	"context"
	"errors"
	"path/filepath"
	"strings"

	"github.com/failpass/failpass/internal/gitx"
	"github.com/failpass/failpass/internal/patch"
	"github.com/failpass/failpass/internal/scratch"
)

// Read returns the static change set of a diff, before any worktree
// exists. The diff is read twice: by a strict scan of its raw headers
// (patch.ScanHeaders) and by git's own patch parser (git apply --numstat
// --summary -z, run in an empty folder outside any repository, so no tree
// is touched); the two readings must agree byte for byte
// (patch.Headers.Agree).
//
// Errors: *patch.Error with Rule diff.parse (not a pure patch, oversize,
// git disagrees) or diff.path (an unsafe path); other errors are trouble
// (git missing, a temp folder that cannot be made).
//
// The change set has the modes the patch states; ResolveModes fills in
// the rest from the base tree.
func Read(ctx context.Context, diff []byte) (*patch.ChangeSet, error) {
	h, err := patch.ScanHeaders(diff)
	if err != nil {
		return nil, err
	}
	got, err := numstatSummary(ctx, diff)
	if err != nil {
		return nil, err
	}
	return h.Agree(got)
}

// numstatSummary runs git's patch parser on the diff alone.
func numstatSummary(ctx context.Context, diff []byte) ([]byte, error) {
	out, err := applyAlone(ctx, diff, "apply", "--numstat", "--summary", "-z", "--whitespace=nowarn", "-")
	if err != nil {
		var ge *gitx.Error
		if errors.As(err, &ge) {
			msg := strings.TrimSpace(ge.Stderr)
			if i := strings.LastIndexByte(msg, '\n'); i >= 0 {
				msg = msg[i+1:] // git's fatal line comes last
			}
			return nil, patch.Unreadable(msg)
		}
		return nil, err
	}
	return out, nil
}

// applyAlone runs git apply (args, reading the diff on stdin) in an
// empty folder outside any repository, with no one's configuration: the
// reading depends on the diff alone and touches no tree. A failure is
// git's *gitx.Error.
func applyAlone(ctx context.Context, diff []byte, args ...string) ([]byte, error) {
	sd, err := scratch.New("patch")
	if err != nil {
		return nil, err
	}
	defer sd.Remove()
	dir := sd.Path
	env := []string{
		"GIT_CEILING_DIRECTORIES=" + filepath.Dir(dir), // never find a repository above
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=/dev/null", // the reading may not depend on anyone's config
		"HOME=" + dir,
	}
	return gitx.CommandEnv(ctx, dir, diff, env, args...)
}

// ResolveModes completes cs from the base tree (patch.ChangeSet.Resolve):
// it lists the base's entries at cs.BasePaths with one `git ls-tree`, and
// reads a symlink's target from the base when the patch leaves it out.
func ResolveModes(ctx context.Context, repo *gitx.Repo, base string, cs *patch.ChangeSet) error {
	tree, err := BaseEntries(ctx, repo, base, cs.BasePaths())
	if err != nil {
		return err
	}
	return ResolveFrom(ctx, repo, base, cs, tree)
}

// ResolveFrom is ResolveModes with the base's entries at cs.BasePaths
// listed already (BaseEntries).
func ResolveFrom(ctx context.Context, repo *gitx.Repo, base string, cs *patch.ChangeSet, tree map[string]patch.BaseEntry) error {
	return cs.Resolve(base, tree, func(oid string) ([]byte, error) {
		return gitx.Command(ctx, repo.Dir, nil, "cat-file", "blob", oid)
	})
}

// maxArgBytes keeps ls-tree's command line far below ARG_MAX.
var maxArgBytes = 64 << 10

// BaseEntries lists the base tree's entries at exactly the given paths
// (one git ls-tree): what ResolveFrom needs, for a caller that knows the
// paths before the change set (patch.Headers.BasePaths).
func BaseEntries(ctx context.Context, repo *gitx.Repo, base string, paths []string) (map[string]patch.BaseEntry, error) {
	out := map[string]patch.BaseEntry{}
	if len(paths) == 0 {
		return out, nil
	}
	args := append([]string{"ls-tree", "-z", "--full-tree", base, "--"}, paths...)
	size := 0
	for _, p := range paths {
		size += len(p) + 1
	}
	if size > maxArgBytes {
		// Too many paths for one command line: list the whole tree
		// (folders too) and keep the ones asked for.
		args = []string{"ls-tree", "-r", "-t", "-z", "--full-tree", base}
	}
	want := map[string]bool{}
	for _, p := range paths {
		want[p] = true
	}
	raw, err := gitx.CommandEnv(ctx, repo.Dir, nil, []string{"GIT_LITERAL_PATHSPECS=1"}, args...)
	if err != nil {
		return nil, err
	}
	entries, err := gitx.ParseTree(raw, false)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if want[e.Name] {
			out[e.Name] = patch.BaseEntry{Mode: e.Mode, Type: e.Type, OID: e.OID}
		}
	}
	return out, nil
}

// BaseFiles lists the files of base's whole tree: its regular,
// executable and symlink entries, never a folder or a submodule. These
// are the entries budget.OracleFiles counts as files, as the gate does
// with the base entries of the paths a diff touches (ResolveModes); a
// reader that needs every oracle file (the draft's prose check, the
// loop's scope) lists them here.
func BaseFiles(ctx context.Context, repo *gitx.Repo, base string) (map[string]bool, error) {
	raw, err := repo.Git(ctx, "ls-tree", "-r", "-z", "--full-tree", base)
	if err != nil {
		return nil, err
	}
	entries, err := gitx.ParseTree(raw, false)
	if err != nil {
		return nil, err
	}
	files := map[string]bool{}
	for _, e := range entries {
		switch e.Mode {
		case patch.ModeFile, patch.ModeExecutable, patch.ModeSymlink:
			files[e.Name] = true
		}
	}
	return files, nil
}
