// Package pathglob owns the card's glob language: gitignore/CODEOWNERS-style
// patterns over slash-separated paths relative to the repository root.
//
// Semantics (documented for users in docs/card.md):
//
//   - A pattern is a list of segments separated by "/". Within a segment,
//     "*" matches any run of characters, "?" one character and "[...]" one
//     character of a class ("[^...]" negates); none of them matches "/".
//   - A segment "**" matches zero or more whole segments, so it crosses
//     directories: "a/**/b", "**/x", "x/**". "**" inside a longer segment
//     ("a**", "**.go") is refused rather than silently read as "*".
//   - A pattern with no "/" other than a trailing one ("*.lock", "vendor",
//     "docs/") matches at any depth, as if written "**/pattern". A pattern
//     with a leading or inner "/" ("/setup.cfg", "docs/**", "src/*.c") is
//     anchored at the repository root; a leading "/" only says so.
//   - A pattern that matches a directory matches everything under it, as in
//     gitignore: "vendor" matches "a/vendor/x/y.go". "dir/" and "dir/**" mean
//     the same: everything under dir, and also the path "dir" itself (a
//     file or symlink that replaces the directory still touches the tree a
//     deny list protects; over-matching is the safe direction for a deny
//     list).
//   - Matching is case-sensitive and byte-exact, like git's default.
//
// Refused patterns: empty, "!" negation (a deny list cannot be punched
// through), "..", "." or empty segments, backslashes (no escapes: write
// "[*]" for a literal star), "[!...]" classes (write "[^...]"), malformed
// classes, and control, format or bidi characters.
package pathglob

import (
	"fmt"
	"path"
	"strings"
	"unicode"
)

// MaxLen bounds a pattern; a deny glob is a short path expression.
const MaxLen = 1024

// Pattern is a compiled glob. The zero value matches nothing.
type Pattern struct {
	src  string
	segs []string // "**" is a segment of its own; never empty
}

// Error is a refused pattern: what is wrong and how to write it instead.
type Error struct {
	Pattern string
	Msg     string
	Hint    string
}

func (e *Error) Error() string { return fmt.Sprintf("glob %q: %s", e.Pattern, e.Msg) }

// Hints returns the fix, so the CLI prints it as a hint: line.
func (e *Error) Hints() []string {
	if e.Hint == "" {
		return nil
	}
	return []string{e.Hint}
}

// Compile checks pattern and returns its compiled form. A refused pattern
// returns a nil *Pattern and an *Error.
func Compile(pattern string) (*Pattern, error) {
	fail := func(msg, hint string) (*Pattern, error) {
		return nil, &Error{Pattern: pattern, Msg: msg, Hint: hint}
	}
	if pattern == "" {
		return fail("empty pattern", "remove the entry or name a path, e.g. \"docs/**\"")
	}
	if len(pattern) > MaxLen {
		return fail(fmt.Sprintf("longer than %d bytes", MaxLen), "shorten the pattern")
	}
	if r, ok := BadRune(pattern); ok {
		return fail(fmt.Sprintf("contains the control, format or bidi character %U", r), "remove invisible characters from the pattern")
	}
	if strings.HasPrefix(pattern, "!") {
		return fail("negation (\"!\") is not supported", "a deny list only adds paths; narrow the other patterns instead")
	}
	if strings.Contains(pattern, `\`) {
		return fail("backslashes are not supported", "separate directories with \"/\"; match a literal special character with a class, e.g. \"[*]\"")
	}
	body := pattern
	anchored := false
	if strings.HasPrefix(body, "/") {
		anchored = true
		body = body[1:]
	}
	body = strings.TrimSuffix(body, "/")
	if body == "" {
		return fail("names no path", "name a path, e.g. \"docs/**\"")
	}
	if strings.Contains(body, "/") {
		anchored = true
	}
	segs := strings.Split(body, "/")
	for _, s := range segs {
		switch {
		case s == "":
			return fail("has an empty path segment (\"//\")", "write a single \"/\" between directories")
		case s == "." || s == "..":
			return fail(fmt.Sprintf("has a %q segment", s), "write the path relative to the repository root without \".\" or \"..\"")
		case s == "**":
		case strings.Contains(s, "**"):
			return fail(fmt.Sprintf("segment %q uses \"**\" inside a name", s), "\"**\" must be a whole segment (\"a/**/b\"); use \"*\" within a name")
		case strings.Contains(s, "[!"):
			return fail(fmt.Sprintf("segment %q uses \"[!...]\"", s), "negate a character class with \"[^...]\"")
		default:
			if _, err := path.Match(s, ""); err != nil {
				return fail(fmt.Sprintf("segment %q is malformed (unclosed or bad \"[...]\" class)", s), "close every \"[\" with \"]\", or match a literal \"[\" with \"[[]\"")
			}
		}
	}
	// "dir/**" means the same as "dir" under the directory rule; dropping
	// the trailing "**" keeps one matching path for both spellings.
	if len(segs) > 1 && segs[len(segs)-1] == "**" {
		segs = segs[:len(segs)-1]
	}
	if !anchored && segs[0] != "**" {
		segs = append([]string{"**"}, segs...)
	}
	// Collapse runs of "**": they match the same and would only cost time.
	out := segs[:0:0]
	for _, s := range segs {
		if s == "**" && len(out) > 0 && out[len(out)-1] == "**" {
			continue
		}
		out = append(out, s)
	}
	return &Pattern{src: pattern, segs: out}, nil
}

// String returns the pattern as written.
func (p *Pattern) String() string {
	if p == nil {
		return ""
	}
	return p.src
}

// Match reports whether the slash-separated, repository-relative path p
// matches: the pattern matches the path itself or one of its parent
// directories. The path is cleaned first ("a/./b" is "a/b"); the empty path
// and "." match nothing.
func (p *Pattern) Match(name string) bool {
	if p == nil || len(p.segs) == 0 {
		return false
	}
	name = strings.TrimPrefix(path.Clean("/"+name), "/")
	if name == "" {
		return false
	}
	parts := strings.Split(name, "/")
	// reach[j]: the pattern consumed so far can match exactly parts[:j].
	// One pass of dynamic programming over the segments keeps matching
	// linear in len(pattern)*len(path), whatever the number of "**".
	reach := make([]bool, len(parts)+1)
	reach[0] = true
	for _, seg := range p.segs {
		next := make([]bool, len(parts)+1)
		if seg == "**" {
			any := false
			for j := range reach {
				any = any || reach[j]
				next[j] = any
			}
		} else {
			for j := 0; j < len(parts); j++ {
				if reach[j] {
					if ok, _ := path.Match(seg, parts[j]); ok {
						next[j+1] = true
					}
				}
			}
		}
		reach = next
	}
	// A match of any non-empty prefix is a match of the directory holding
	// the path (the gitignore directory rule).
	for j := 1; j <= len(parts); j++ {
		if reach[j] {
			return true
		}
	}
	return false
}

// MatchAny reports whether any of patterns matches name, and which.
func MatchAny(patterns []*Pattern, name string) (*Pattern, bool) {
	for _, p := range patterns {
		if p.Match(name) {
			return p, true
		}
	}
	return nil, false
}

// BadRune reports the first rune of s that has no place in a path, an argv
// item or a name a human reviews: control characters (C0, DEL, C1), format
// characters (Cf: bidi overrides and isolates, zero-width joiners, the
// byte-order mark), line and paragraph separators, and invalid UTF-8
// (reported as U+FFFD).
func BadRune(s string) (rune, bool) {
	for _, r := range s {
		if IsBadRune(r) {
			return r, true
		}
	}
	return 0, false
}

// IsBadRune is the per-rune test of BadRune.
func IsBadRune(r rune) bool {
	return r == unicode.ReplacementChar || unicode.IsControl(r) ||
		unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp)
}
