package patch

import (
	"fmt"
	"sort"
)

// effect is what a change set leaves at one path: gone, or there with a
// mode ("" when unknown, which matches any mode).
type effect struct {
	gone bool
	mode string
}

func (e effect) String() string {
	if e.gone {
		return "absent"
	}
	if e.mode == "" {
		return "present"
	}
	return "present with mode " + e.mode
}

// effects replays the files in order and returns, for every path whose
// content, mode or existence changes, what is left there. A copy's source
// is unaffected; a path deleted and created again (a type change) ends as
// created.
func (cs *ChangeSet) effects() map[string]effect {
	eff := map[string]effect{}
	after := func(f File) string {
		if f.NewMode != "" {
			return f.NewMode
		}
		return f.OldMode
	}
	for _, f := range cs.Files {
		switch f.Status {
		case Added:
			eff[f.NewPath] = effect{mode: f.NewMode}
		case Deleted:
			eff[f.OldPath] = effect{gone: true}
		case Modified:
			eff[f.NewPath] = effect{mode: after(f)}
		case Renamed:
			if _, ok := eff[f.OldPath]; !ok {
				eff[f.OldPath] = effect{gone: true}
			}
			eff[f.NewPath] = effect{mode: after(f)}
		case Copied:
			eff[f.NewPath] = effect{mode: after(f)}
		}
	}
	return eff
}

// Equal reports whether two change sets describe the same change, and
// otherwise explains the first difference. It compares what both a
// patch's headers and a worktree can know: which paths end up changed,
// absent or present, with which mode; and, for every file both sides pair
// the same way (same status and paths), added and deleted lines and
// whether the content is binary. Rename detection may pair files on one
// side only; those files are compared by their effects alone.
func (cs *ChangeSet) Equal(other *ChangeSet) (bool, string) {
	a, b := cs.effects(), other.effects()
	var paths []string
	for p := range a {
		paths = append(paths, p)
	}
	for p := range b {
		if _, ok := a[p]; !ok {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	for _, p := range paths {
		ea, inA := a[p]
		eb, inB := b[p]
		switch {
		case !inA:
			return false, fmt.Sprintf("%s: changed (%s) but not in the first change set", p, eb)
		case !inB:
			return false, fmt.Sprintf("%s: changed (%s) in the first change set only", p, ea)
		case ea.gone != eb.gone:
			return false, fmt.Sprintf("%s: %s in the first change set, %s in the second", p, ea, eb)
		case ea.mode != "" && eb.mode != "" && ea.mode != eb.mode:
			return false, fmt.Sprintf("%s: mode %s in the first change set, %s in the second", p, ea.mode, eb.mode)
		}
	}
	type key struct {
		status   Status
		old, new string
	}
	byKey := map[key]File{}
	for _, f := range other.Files {
		byKey[key{f.Status, f.OldPath, f.NewPath}] = f
	}
	for _, f := range cs.Files {
		g, ok := byKey[key{f.Status, f.OldPath, f.NewPath}]
		if !ok {
			continue
		}
		name := f.NewPath
		if name == "" {
			name = f.OldPath
		}
		switch {
		case f.Binary != g.Binary:
			return false, fmt.Sprintf("%s: binary %t in the first change set, %t in the second", name, f.Binary, g.Binary)
		case !f.Binary && (f.Added != g.Added || f.Deleted != g.Deleted):
			return false, fmt.Sprintf("%s: +%d -%d lines in the first change set, +%d -%d in the second", name, f.Added, f.Deleted, g.Added, g.Deleted)
		}
	}
	return true, ""
}
