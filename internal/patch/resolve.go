package patch

import (
	"fmt"
	"path"
	"sort"
)

// Stated says the patch itself states everything about its files that
// Resolve could add: every mode of every side that exists, and the
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

// BasePaths lists what Resolve needs to know of the base tree: every
// path the files touch and every folder above them, sorted.
func (cs *ChangeSet) BasePaths() []string {
	want := map[string]bool{}
	for _, f := range cs.Files {
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

// BaseEntry is the base tree's entry at one path, as `git ls-tree` lists
// it: mode, type (blob, tree, commit) and object id.
type BaseEntry struct {
	Mode, Type, OID string
}

// Resolve completes the change set from the base tree, which knows what
// a patch need not say: the mode of a file the patch changes without a
// mode line (so a hand-written diff cannot edit a symlink's target while
// passing it off as a text file), and the target of a symlink renamed or
// copied without a content change. tree holds the base's entries at
// BasePaths (a path missing from it is missing from the base); blob reads
// a symlink's target from the base by object id. It refuses (*Error, rule
// diff.apply) a patch that does not fit the base: a changed, deleted,
// renamed or copied file missing from it, a created file already in it,
// a mode line that contradicts it, or a path below a file or symlink of
// the base (git apply refuses to write beyond a symlink; failpass refuses
// before running anything). base names the commit in the hint.
func (cs *ChangeSet) Resolve(base string, tree map[string]BaseEntry, blob func(oid string) ([]byte, error)) error {
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
				if e, ok := tree[d]; ok && e.Type != "tree" && !goneBefore(d, len(cs.Files)) {
					return refuse("%s is below %s, which is not a folder in the base (mode %s)", p, d, e.Mode)
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
		if !ok || e.Type == "tree" {
			return refuse("the diff changes %s, which is not a file in the base", f.OldPath)
		}
		if (f.Status == Renamed || f.Status == Copied) && !created[f.NewPath] {
			if _, exists := tree[f.NewPath]; exists && !goneBefore(f.NewPath, i) {
				return refuse("the diff writes %s over a file of the base", f.NewPath)
			}
		}
		if f.OldMode != "" && f.OldMode != e.Mode {
			return refuse("the diff says %s has mode %s, the base has %s", f.OldPath, f.OldMode, e.Mode)
		}
		f.OldMode = e.Mode
		if f.Status == Deleted {
			f.Symlink = e.Mode == ModeSymlink
			f.Submodule = f.Submodule || e.Mode == ModeGitlink
			continue
		}
		if f.NewMode == "" {
			f.NewMode = e.Mode
		}
		f.Submodule = f.Submodule || e.Mode == ModeGitlink
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
		target, err := blob(e.OID)
		if err != nil {
			return err
		}
		f.SymlinkTarget = string(target)
	}
	return nil
}
