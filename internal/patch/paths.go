package patch

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxPathLen bounds one path in a patch (PATH_MAX on Linux).
const MaxPathLen = 4096

const hintPath = "a patch may only touch files inside the repository's working tree; regenerate it with `git diff` from the repository root"

// CheckPath says why a repository-relative path is one no patch may touch:
// empty, absolute, with an empty, "." or ".." segment, a segment that is
// .git in any case (or its NTFS and trailing-dot spellings), a control
// character, a format character (bidi overrides, zero-width spaces: a path
// a reviewer cannot read as written), a backslash, invalid UTF-8, or more
// than MaxPathLen bytes. nil when the path is safe.
func CheckPath(p string) error {
	switch {
	case p == "":
		return fmt.Errorf("empty path")
	case len(p) > MaxPathLen:
		return fmt.Errorf("path of %d bytes, over the %d-byte limit", len(p), MaxPathLen)
	case strings.HasPrefix(p, "/"):
		return fmt.Errorf("absolute path %q", p)
	case !utf8.ValidString(p):
		return fmt.Errorf("path %q is not valid UTF-8", p)
	}
	for i := 0; i < len(p); i++ {
		if c := p[i]; c < 0x20 || c == 0x7f {
			return fmt.Errorf("path %q contains a control character", p)
		}
		if p[i] == '\\' {
			return fmt.Errorf("path %q contains a backslash", p)
		}
	}
	for _, r := range p {
		if unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp) {
			return fmt.Errorf("path %q contains the invisible or control character %U", p, r)
		}
	}
	for _, seg := range strings.Split(p, "/") {
		switch {
		case seg == "":
			return fmt.Errorf("path %q has an empty segment", p)
		case seg == "." || seg == "..":
			return fmt.Errorf("path %q has a %q segment", p, seg)
		case isDotGit(seg):
			return fmt.Errorf("path %q is inside a .git folder", p)
		}
	}
	return nil
}

// isDotGit reports a segment a checkout on some file system would treat as
// ".git": any case, trailing dots or spaces (NTFS), the 8.3 name GIT~1.
func isDotGit(seg string) bool {
	t := strings.TrimRight(seg, ". ")
	return strings.EqualFold(t, ".git") || strings.EqualFold(seg, "git~1")
}

// checkPaths refuses unsafe paths (diff.path).
func checkPaths(secs []*section) error {
	for _, s := range secs {
		for _, p := range s.Paths() {
			if err := CheckPath(p); err != nil {
				return &Error{Rule: RulePath, Line: s.line, Msg: fmt.Sprintf("diff line %d: %v", s.line, err), Hint: hintPath}
			}
		}
	}
	return nil
}

// checkSections refuses a diff whose sections overlap in a way whose
// meaning depends on the order git applies them: a path may be the new side
// of one section only, the old side of one non-copy section only, created
// only after it was deleted or renamed away, and copied only from the base.
// This is what git diff produces (a type change is a deletion then a
// creation; -C copies from a file another section may change).
func checkSections(secs []*section) error {
	newSide := map[string]int{}  // path -> line of the section writing it
	oldSide := map[string]int{}  // path -> line of the non-copy section reading it
	created := map[string]bool{} // created or written by a rename/copy
	for _, s := range secs {
		if s.OldPath != "" {
			if s.Status == Copied {
				if created[s.OldPath] {
					return parseErr(s.line, hintPure, "copy from %q, which the diff itself creates", s.OldPath)
				}
			} else {
				if l, ok := oldSide[s.OldPath]; ok {
					return parseErr(s.line, "put every change to one file in one patch section", "%q is changed again (first on line %d)", s.OldPath, l)
				}
				if created[s.OldPath] {
					return parseErr(s.line, "put every change to one file in one patch section", "%q is changed after the diff created it", s.OldPath)
				}
				oldSide[s.OldPath] = s.line
			}
		}
		if s.NewPath != "" {
			if l, ok := newSide[s.NewPath]; ok {
				return parseErr(s.line, "put every change to one file in one patch section", "%q is written twice (first on line %d)", s.NewPath, l)
			}
			newSide[s.NewPath] = s.line
			if s.Status != Modified {
				created[s.NewPath] = true
			}
		}
	}
	return nil
}
