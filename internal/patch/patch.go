// Package patch owns the change-set value: what a diff changes (its raw headers read strictly, checked against git's reading), its comparison with what a worktree changed, and the path rules; pure, it runs nothing (package gitpatch reads change sets with git).
package patch

import (
	"fmt"
	"sort"
)

// MaxSize bounds a diff failpass will read. A bigger diff is refused with
// an *Error (rule diff.parse) before anything parses it.
const MaxSize = 8 << 20

// Rule ids this package reports (see the rule table of README.md).
const (
	RuleParse  = "diff.parse"  // not a pure patch, or git reads it differently
	RulePath   = "diff.path"   // a path failpass never lets a patch touch
	RuleApply  = "diff.apply"  // the patch does not fit the base tree
	RuleActual = "diff.actual" // the applied worktree differs from the static change set
)

// Status is what a patch does to one file.
type Status string

// The statuses of a File.
const (
	Added    Status = "added"
	Deleted  Status = "deleted"
	Modified Status = "modified"
	Renamed  Status = "renamed"
	Copied   Status = "copied"
)

// Modes as git writes them in patch headers.
const (
	ModeFile       = "100644"
	ModeExecutable = "100755"
	ModeSymlink    = "120000"
	ModeGitlink    = "160000"
)

// File is one file-level change: one section of a patch, or one entry of a
// worktree's change set.
type File struct {
	OldPath, NewPath string // "" for the /dev/null side; equal for in-place modifications
	Status           Status
	Added, Deleted   int
	// Binary is set for binary patches ("GIT binary patch", "Binary files
	// ... differ") and for text hunks that carry NUL bytes, which is binary
	// content whatever the hunk syntax says.
	Binary           bool
	OldMode, NewMode string // octal as in headers ("100644","100755","120000","160000"); "" when unknown
	// Symlink is set when the new side (or, for deletions, the old side) is
	// a symlink.
	Symlink bool
	// SymlinkTarget is the new target of a symlink the change creates,
	// changes, renames or copies ("" for deleted symlinks).
	SymlinkTarget string
	Submodule     bool // either side is a gitlink (mode 160000)
}

// Paths returns both sides of the change, deduplicated, without "".
func (f File) Paths() []string {
	switch {
	case f.OldPath == "":
		return []string{f.NewPath}
	case f.NewPath == "" || f.NewPath == f.OldPath:
		return []string{f.OldPath}
	}
	return []string{f.OldPath, f.NewPath}
}

// ChangeSet is everything a diff (or a worktree) changes, file by file, in
// the order of the patch.
type ChangeSet struct {
	Files []File

	// lineTargets holds, by index into Files, the one new-side line of a
	// patch whose new content is a single line without a newline: the
	// target, should the base tree say the file is a symlink.
	lineTargets map[int]string
	// firstLines holds, by index into Files, the new-side line number of
	// the file's first added or deleted line, for pointing a reader at it.
	firstLines map[int]int
}

// FirstLine is the line, in the new version of path, of the first line
// the change adds or deletes there, or 0 when the change set does not
// change path's content (a deletion, a mode change, a binary patch, a
// path only on the old side of a rename).
func (cs *ChangeSet) FirstLine(path string) int {
	for i, f := range cs.Files {
		if f.NewPath == path && f.Status != Deleted {
			return cs.firstLines[i]
		}
	}
	return 0
}

// Paths returns every path a change touches (both sides of renames and
// copies), sorted and deduplicated.
func (cs *ChangeSet) Paths() []string {
	seen := map[string]bool{}
	var out []string
	for _, f := range cs.Files {
		for _, p := range f.Paths() {
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	sort.Strings(out)
	return out
}

// ChangedLines is the number of added plus deleted lines over all files.
func (cs *ChangeSet) ChangedLines() int {
	n := 0
	for _, f := range cs.Files {
		n += f.Added + f.Deleted
	}
	return n
}

// ChangedFiles counts distinct changed files: every path whose content,
// mode or existence changes, where a rename counts once unless its old path
// is also re-created or changed by another section (then both count). A
// copy counts its new path only; mode-only changes count.
func (cs *ChangeSet) ChangedFiles() int {
	eff := cs.effects()
	n := len(eff)
	uses := map[string]int{}
	for _, f := range cs.Files {
		for _, p := range f.Paths() {
			uses[p]++
		}
	}
	for _, f := range cs.Files {
		if f.Status == Renamed && uses[f.OldPath] == 1 {
			n--
		}
	}
	return n
}

// Error is a diff failpass refuses. Rule is RuleParse, RulePath or
// RuleApply; Line is the 1-based line of the diff it concerns (0 when none).
type Error struct {
	Rule string
	Msg  string
	Line int
	Hint string
}

func (e *Error) Error() string { return e.Msg }

// Hints returns how to fix the diff, for the CLI's "hint:" lines.
func (e *Error) Hints() []string {
	if e.Hint == "" {
		return nil
	}
	return []string{e.Hint}
}

func parseErr(line int, hint, format string, args ...any) *Error {
	msg := fmt.Sprintf(format, args...)
	if line > 0 {
		msg = fmt.Sprintf("diff line %d: %s", line, msg)
	}
	return &Error{Rule: RuleParse, Msg: msg, Line: line, Hint: hint}
}
