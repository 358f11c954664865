package model

import (
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Prose checks are heuristics over the text around a diff. They are
// deliberately eager: a false alarm costs one more draft, a missed request
// to "just raise max_files" costs a reviewer's trust in the card.

// cardFieldWords are card fields a drafter has no business naming.
var cardFieldWords = lazyRegexp(`(?i)\b(max_files|max_changed_lines|deny_globs|expect_exit|base_ref|base_sha|signoff|signatures|annotations|deny[- ]?list|deny globs?)\b`)

// cardChangeRequests are phrases that ask for the card, its budget or its
// commands to change.
var cardChangeRequests = sync.OnceValue(func() []*regexp.Regexp {
	return []*regexp.Regexp{
		regexp.MustCompile(`(?i)\b(raise|raising|increase|increasing|bump|bumping|relax|relaxing|loosen|loosening|lift|lifting|extend|extending|widen|widening|exceed|exceeding|double|doubling|lower|lowering|adjust|adjusting)\b(\W+\w+){0,4}?\W+(budget|limits?|max(imum)?|caps?|allowance|quota|globs?|timeout)\b`),
		regexp.MustCompile(`(?i)\b(change|changing|update|updating|edit|editing|modify|modifying|amend|amending|rewrite|rewriting|drop|dropping|remove|removing|delete|deleting|disable|disabling|skip|skipping|replace|replacing|loosen|relax)\s+(the\s+|this\s+|its\s+|that\s+)?(card|contract|budget|limits?|deny|glob|globs|fail command|pass command|invariant( command)?|expected exit( code)?|exit code|test command)\b`),
		regexp.MustCompile(`(?i)\b(card|contract|budget|limits?|glob|globs|invariant|fail command|pass command|timeout)\s+(should|must|needs? to|has to|could|would need to)\s+(be\s+)?(raised|increased|relaxed|loosened|lifted|extended|widened|changed|updated|edited|modified|dropped|removed|adjusted|bumped|doubled)\b`),
		regexp.MustCompile(`(?i)\b(over|beyond|outside|exceeds?|exceeding)\s+(the\s+)?(budget|limits?|allowed (files|lines))\b`),
		regexp.MustCompile(`(?i)\bmore (files|lines) than (the budget|allowed|permitted|the card)`),
	}
})

// sourceExt are extensions that make a word without a slash a file name
// (header.py), as opposed to an identifier (header.strip).
var sourceExt = map[string]bool{}

func init() {
	for _, e := range strings.Fields(`py pyi pyx go mod sum js mjs cjs ts tsx jsx rs c h cc cpp cxx hpp hh java kt kts
		rb php cs swift m mm scala sh bash zsh fish toml yaml yml json jsonc cfg ini conf txt md rst adoc lock xml html
		htm css scss less sql proto gradle properties env mk cmake in vue svelte lua pl pm r jl ex exs erl hrl hs ml
		mli dart tf tfvars nix bzl bazel star gitignore gitattributes dockerignore editorconfig patch diff csv tsv
		ipynb gemspec podspec sln csproj vcxproj plist`) {
		sourceExt[e] = true
	}
}

var pathChars = lazyRegexp(`^[A-Za-z0-9_.+@-][A-Za-z0-9_./+@-]*$`)

// ProsePaths returns the repository paths prose names, as written
// (backticks, quotes and sentence punctuation removed).
func ProsePaths(prose string) []string {
	var out []string
	for _, f := range strings.Fields(prose) {
		quoted := strings.Contains(f, "`")
		t := f
		for prev := ""; prev != t; {
			prev = t
			t = strings.Trim(t, "`'\"“”‘’()[]{}<>,;:!?*")
			t = strings.TrimRight(t, ".")
		}
		t = strings.TrimPrefix(t, "./")
		if t == "" || strings.Contains(t, "://") || !pathChars().MatchString(t) || strings.Contains(t, "..") {
			continue
		}
		if strings.HasSuffix(t, "()") {
			continue
		}
		if looksLikePath(t, quoted) && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

func looksLikePath(t string, quoted bool) bool {
	base := path.Base(strings.TrimSuffix(t, "/"))
	ext := strings.ToLower(strings.TrimPrefix(path.Ext(base), "."))
	hasLetter := strings.IndexFunc(strings.TrimSuffix(base, path.Ext(base)), func(r rune) bool {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
	}) >= 0
	if strings.Contains(t, "/") {
		// "and/or" and "n/a" are words; a slash path with an extension, a
		// trailing slash, two slashes or a dot folder is a path.
		return quoted || sourceExt[ext] || strings.HasSuffix(t, "/") || strings.Count(t, "/") >= 2 || strings.HasPrefix(t, ".")
	}
	if strings.HasPrefix(base, ".") && sourceExt[strings.TrimPrefix(base, ".")] {
		return true // .gitignore
	}
	switch base {
	case "Makefile", "Dockerfile", "Gemfile", "Rakefile", "Justfile", "justfile", "CODEOWNERS", "LICENSE":
		return true
	}
	return hasLetter && sourceExt[ext]
}

// CheckProse refuses, with the reason, prose around a diff that names a
// repository path the diff does not touch, names a denied or oracle path,
// or asks for the card to change (raise a limit, drop a glob, change a
// command). touched are the paths the diff changes; denied and oracle may
// be nil.
func CheckProse(prose string, touched []string, denied, oracle func(string) bool) error {
	if m := cardFieldWords().FindString(prose); m != "" {
		return refuse(RoleDrafter, "the prose names the card field %q; a draft may not ask to change the card", m)
	}
	for _, re := range cardChangeRequests() {
		if m := re.FindString(prose); m != "" {
			return refuse(RoleDrafter, "the prose asks to change the card (%q)", strings.Join(strings.Fields(m), " "))
		}
	}
	for _, p := range ProsePaths(prose) {
		switch {
		case denied != nil && denied(p):
			return refuse(RoleDrafter, "the prose names %s, a path the card denies", p)
		case oracle != nil && oracle(p):
			return refuse(RoleDrafter, "the prose names %s, an oracle file of the card", p)
		case !namedTouched(p, touched):
			return refuse(RoleDrafter, "the prose names %s, which the diff does not touch", p)
		}
	}
	return nil
}

// namedTouched says whether a path named in prose is one the diff touches:
// the same path, a trailing part of one (header.py for src/header.py), or
// a folder holding one.
func namedTouched(p string, touched []string) bool {
	// A path in prose may keep the a/ or b/ of the diff's headers.
	cand := []string{p}
	if q, ok := strings.CutPrefix(p, "a/"); ok {
		cand = append(cand, q)
	} else if q, ok := strings.CutPrefix(p, "b/"); ok {
		cand = append(cand, q)
	}
	for _, cand := range cand {
		for _, t := range touched {
			if cand == t || strings.HasSuffix(t, "/"+cand) {
				return true
			}
			if dir := strings.TrimSuffix(cand, "/"); strings.HasPrefix(t, dir+"/") {
				return true
			}
		}
	}
	return false
}

// lazyRegexp compiles a pattern on first use: every failpass process,
// including the sandbox helper started for each card command, would
// otherwise compile these at init.
func lazyRegexp(pattern string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(pattern) })
}
