package patch

import (
	"bytes"
	"context"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/failpass/failpass/internal/gitx"
)

// treeEntry is one `git ls-tree` entry of the base.
type treeEntry struct {
	mode, typ, oid string
}

// maxArgBytes keeps ls-tree's command line far below ARG_MAX.
var maxArgBytes = 64 << 10

// lsTree returns the base tree's entries at exactly the given paths.
func lsTree(ctx context.Context, repo *gitx.Repo, base string, paths []string) (map[string]treeEntry, error) {
	out := map[string]treeEntry{}
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
	for _, rec := range bytes.Split(raw, []byte{0}) {
		if len(rec) == 0 {
			continue
		}
		meta, name, ok := strings.Cut(string(rec), "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 3 {
			return nil, fmt.Errorf("git ls-tree: unexpected record %q", rec)
		}
		if want[name] {
			out[name] = treeEntry{mode: f[0], typ: f[1], oid: f[2]}
		}
	}
	return out, nil
}

// ResolveModes completes the change set from the base tree, which knows
// what a patch need not say: the mode of a file the patch changes without
// a mode line (so a hand-written diff cannot edit a symlink's target while
// passing it off as a text file), and the target of a symlink renamed or
// copied without a content change. It refuses (*Error, rule diff.apply) a
// patch that does not fit the base: a changed, deleted, renamed or copied
// file missing from it, a created file already in it, a mode line that
// contradicts it, or a path below a file or symlink of the base (git apply
// refuses to write beyond a symlink; failpass refuses before running
// anything).
func (cs *ChangeSet) ResolveModes(ctx context.Context, repo *gitx.Repo, base string) error {
	tree, err := lsTree(ctx, repo, base, basePaths(cs.Files))
	if err != nil {
		return err
	}
	return cs.resolve(ctx, repo, base, tree)
}

// Stated says the patch itself states everything about its files that
// ResolveModes could add: every mode of every side that exists, and the
// target of every symlink it leaves. Then resolving only confirms the
// modes against the base (or refuses the diff as not fitting it), and
// rules that judge the change set (the budget) judge the same set before
// the base is read as after.
func (cs *ChangeSet) Stated() bool {
	for _, f := range cs.Files {
		switch {
		case f.Status != Added && f.OldMode == "",
			f.Status != Deleted && f.NewMode == "",
			f.Status != Deleted && f.NewMode == ModeSymlink && f.SymlinkTarget == "":
			return false
		}
	}
	return true
}

// basePaths lists what ResolveModes asks the base tree about: every path
// the files touch and every folder above them.
func basePaths(files []File) []string {
	want := map[string]bool{}
	for _, f := range files {
		for _, p := range f.Paths() {
			want[p] = true
			for d := path.Dir(p); d != "."; d = path.Dir(d) {
				want[d] = true
			}
		}
	}
	var paths []string
	for p := range want {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	return paths
}

// resolve is ResolveModes once the base tree's entries are known.
func (cs *ChangeSet) resolve(ctx context.Context, repo *gitx.Repo, base string, tree map[string]treeEntry) error {
	refuse := func(format string, args ...any) error {
		return &Error{Rule: RuleApply, Msg: fmt.Sprintf(format, args...),
			Hint: "make the diff against the card's base commit (" + base + ")"}
	}
	written := map[string]bool{} // every path the diff leaves a file or symlink at
	goneAt := map[string]int{}   // path -> first section that deletes or renames it away
	for i, f := range cs.Files {
		if f.NewPath != "" {
			written[f.NewPath] = true
		}
		if _, ok := goneAt[f.OldPath]; !ok && (f.Status == Deleted || f.Status == Renamed) {
			goneAt[f.OldPath] = i
		}
	}
	goneBefore := func(p string, i int) bool { at, ok := goneAt[p]; return ok && at < i }
	created := map[string]bool{}
	for i := range cs.Files {
		f := &cs.Files[i]
		for _, p := range f.Paths() {
			for d := path.Dir(p); d != "."; d = path.Dir(d) {
				if e, ok := tree[d]; ok && e.typ != "tree" && !goneBefore(d, len(cs.Files)) {
					return refuse("%s is below %s, which is not a folder in the base (mode %s)", p, d, e.mode)
				}
				if written[d] {
					return refuse("%s is below %s, which the diff makes a file or symlink", p, d)
				}
			}
		}
		if f.Status == Added {
			if _, ok := tree[f.NewPath]; ok && !created[f.NewPath] {
				if !goneBefore(f.NewPath, i) {
					return refuse("the diff creates %s, which already exists in the base", f.NewPath)
				}
			}
			created[f.NewPath] = true
			continue
		}
		e, ok := tree[f.OldPath]
		if !ok || e.typ == "tree" {
			return refuse("the diff changes %s, which is not a file in the base", f.OldPath)
		}
		if (f.Status == Renamed || f.Status == Copied) && !created[f.NewPath] {
			if _, exists := tree[f.NewPath]; exists && !goneBefore(f.NewPath, i) {
				return refuse("the diff writes %s over a file of the base", f.NewPath)
			}
		}
		if f.OldMode != "" && f.OldMode != e.mode {
			return refuse("the diff says %s has mode %s, the base has %s", f.OldPath, f.OldMode, e.mode)
		}
		f.OldMode = e.mode
		if f.Status == Deleted {
			f.Symlink = e.mode == ModeSymlink
			f.Submodule = f.Submodule || e.mode == ModeGitlink
			continue
		}
		if f.NewMode == "" {
			f.NewMode = e.mode
		}
		f.Submodule = f.Submodule || e.mode == ModeGitlink
		if f.NewMode != ModeSymlink {
			continue
		}
		f.Symlink = true
		if f.SymlinkTarget != "" {
			continue
		}
		if t, ok := cs.lineTargets[i]; ok {
			f.SymlinkTarget = t
			continue
		}
		if f.Added+f.Deleted > 0 {
			return &Error{Rule: RuleParse, Hint: hintHeader,
				Msg: fmt.Sprintf("symlink %s: the patch changes it but does not give its new target as one line", f.NewPath)}
		}
		target, err := gitx.Command(ctx, repo.Dir, nil, "cat-file", "blob", e.oid)
		if err != nil {
			return err
		}
		f.SymlinkTarget = string(target)
	}
	return nil
}
