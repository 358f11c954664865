package patch

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// The raw header scan. It accepts a strict subset of what git apply
// accepts: whole patches one after another and nothing else, every header
// at most once, names that all readings agree on. Whatever it accepts is
// then rendered the way git apply --numstat --summary -z prints it and
// compared with git's own output (see Read), so the scan does not need to
// model git exactly: where it and git part ways, the diff is refused.

// section is one patch of a diff: a File plus what the cross-check with git
// and the later steps need.
type section struct {
	File
	line        int  // 1-based line of the section's first header
	git         bool // a "diff --git" section (else a traditional ---/+++ patch)
	score       int  // similarity (rename, copy) or dissimilarity (rewrite)
	rewrite     bool // "dissimilarity index" given
	gitBinary   bool // git counts it as binary ("-" in --numstat)
	modeChange  bool // both "old mode" and "new mode" lines given
	hunks       int
	target      string // new-side content of a one-line file, a symlink target candidate
	hasTarget   bool
	targetNL    bool // that line ended with a newline
	hunkNewSide int  // number of new-side lines over all hunks
	hunkOldSide int  // number of old-side lines over all hunks
	firstLine   int  // new-side line of the first added or deleted line (0 before any hunk)
}

// Header prefixes of a diff --git section, as git apply knows them.
const (
	hOldMode     = "old mode "
	hNewMode     = "new mode "
	hDeletedMode = "deleted file mode "
	hNewFileMode = "new file mode "
	hSimilarity  = "similarity index "
	hDissimilar  = "dissimilarity index "
	hRenameFrom  = "rename from "
	hRenameTo    = "rename to "
	hCopyFrom    = "copy from "
	hCopyTo      = "copy to "
	hIndex       = "index "
)

var extHeaders = []string{hOldMode, hNewMode, hDeletedMode, hNewFileMode, hSimilarity,
	hDissimilar, hRenameFrom, hRenameTo, hCopyFrom, hCopyTo, hIndex}

const devNull = "/dev/null"

// maxHeaderLine bounds a header line: two quoted paths of MaxPathLen bytes
// (an escape spells one byte in four) and the words around them.
const maxHeaderLine = 8*MaxPathLen + 64

// scanner walks the diff line by line; lines exclude their "\n".
type scanner struct {
	lines []string
	i     int // index of the current line
}

func (s *scanner) more() bool  { return s.i < len(s.lines) }
func (s *scanner) cur() string { return s.lines[s.i] }
func (s *scanner) lineNo() int { return s.i + 1 }

const (
	hintPure   = "give failpass the output of `git diff` (or `git diff --binary`) alone, with no text before, between or after the patches"
	hintFence  = "remove the Markdown fence (```) and any prose around the diff"
	hintCRLF   = "the diff has CRLF line endings; convert it to LF (for example with dos2unix)"
	hintHeader = "regenerate the diff with `git diff` (default a/ and b/ prefixes)"
)

// scan reads the raw diff into sections. It enforces the shape only; path
// safety and git's agreement are checked by the caller.
func scan(diff []byte) ([]*section, error) {
	if len(diff) == 0 || len(bytes.TrimSpace(diff)) == 0 {
		return nil, parseErr(0, hintPure, "the diff is empty")
	}
	if diff[len(diff)-1] != '\n' {
		n := bytes.Count(diff, []byte("\n")) + 1
		return nil, parseErr(n, "end the diff with a newline, as git diff does", "the diff does not end with a newline")
	}
	s := &scanner{lines: strings.Split(string(diff[:len(diff)-1]), "\n")}
	out, err := s.sections()
	if err != nil {
		return nil, err
	}
	if s.more() {
		return nil, s.stray()
	}
	return out, nil
}

// sections reads patches one after another up to the first line that
// starts none.
func (s *scanner) sections() ([]*section, error) {
	var out []*section
	for s.more() {
		var sec *section
		var err error
		switch {
		case strings.HasPrefix(s.cur(), "diff --git "):
			sec, err = s.gitSection()
		case StartsPatch(s.lines[s.i:]):
			sec, err = s.traditionalSection()
		default:
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out = append(out, sec)
	}
	return out, nil
}

// StartsPatch reports whether lines (without their newlines) begin with
// the first header of a patch: "diff --git", or a "--- " line directly
// followed by a "+++ " line.
func StartsPatch(lines []string) bool {
	switch {
	case len(lines) == 0:
		return false
	case strings.HasPrefix(lines[0], "diff --git "):
		return true
	}
	return strings.HasPrefix(lines[0], "--- ") && len(lines) > 1 && strings.HasPrefix(lines[1], "+++ ")
}

// stray explains a line that belongs to no patch.
func (s *scanner) stray() error {
	l := s.cur()
	hint := hintPure
	switch {
	case s.fenced():
		hint = hintFence
	case strings.HasSuffix(l, "\r"):
		hint = hintCRLF
	}
	what := "text that is not part of a patch"
	if s.i == 0 {
		what = "the diff does not start with a patch header (diff --git or ---)"
	}
	if l == "" {
		return parseErr(s.lineNo(), hint, "%s: an empty line", what)
	}
	return parseErr(s.lineNo(), hint, "%s: %q", what, clip(l))
}

// fenced reports a Markdown code fence anywhere in the diff, the usual
// wrapping of a model's answer.
func (s *scanner) fenced() bool {
	for _, l := range s.lines {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			return true
		}
	}
	return false
}

func clip(l string) string {
	if len(l) > 60 {
		return l[:60] + "..."
	}
	return l
}

// header checks a header line for a CR or a NUL before it is interpreted.
func (s *scanner) header() (string, error) {
	l := s.cur()
	if len(l) > maxHeaderLine {
		return "", parseErr(s.lineNo(), hintHeader, "header line of %d bytes, over the %d-byte limit", len(l), maxHeaderLine)
	}
	if strings.HasSuffix(l, "\r") {
		return "", parseErr(s.lineNo(), hintCRLF, "header line ends with a carriage return")
	}
	if strings.IndexByte(l, 0) >= 0 {
		return "", parseErr(s.lineNo(), hintPure, "header line contains a NUL byte")
	}
	return l, nil
}

// gitSection reads one "diff --git" patch.
func (s *scanner) gitSection() (*section, error) {
	sec := &section{line: s.lineNo(), git: true}
	first, err := s.header()
	if err != nil {
		return nil, err
	}
	splits := splitGitLine(first[len("diff --git "):])
	s.i++
	seen := map[string]string{}
	seenLine := map[string]int{}
	for s.more() {
		l := s.cur()
		prefix := ""
		for _, p := range extHeaders {
			if strings.HasPrefix(l, p) {
				prefix = p
				break
			}
		}
		if prefix == "" {
			break
		}
		if _, err := s.header(); err != nil {
			return nil, err
		}
		if _, dup := seen[prefix]; dup {
			return nil, parseErr(s.lineNo(), hintHeader, "%q given twice in one patch (first on line %d)", strings.TrimSpace(prefix), seenLine[prefix])
		}
		seen[prefix] = l[len(prefix):]
		seenLine[prefix] = s.lineNo()
		s.i++
	}
	has := func(p string) bool { _, ok := seen[p]; return ok }

	// Names from the extended headers.
	var oldName, newName string
	unq := func(p string) (string, error) {
		n, err := unquoteName(seen[p])
		if err != nil {
			return "", parseErr(seenLine[p], hintHeader, "%s%v", p, err)
		}
		return n, nil
	}
	switch {
	case has(hRenameFrom) || has(hRenameTo):
		if !has(hRenameFrom) || !has(hRenameTo) || has(hCopyFrom) || has(hCopyTo) {
			return nil, parseErr(sec.line, hintHeader, "a rename needs exactly one \"rename from\" and one \"rename to\" line")
		}
		sec.Status = Renamed
		if oldName, err = unq(hRenameFrom); err != nil {
			return nil, err
		}
		if newName, err = unq(hRenameTo); err != nil {
			return nil, err
		}
	case has(hCopyFrom) || has(hCopyTo):
		if !has(hCopyFrom) || !has(hCopyTo) {
			return nil, parseErr(sec.line, hintHeader, "a copy needs exactly one \"copy from\" and one \"copy to\" line")
		}
		sec.Status = Copied
		if oldName, err = unq(hCopyFrom); err != nil {
			return nil, err
		}
		if newName, err = unq(hCopyTo); err != nil {
			return nil, err
		}
	case has(hNewFileMode) && has(hDeletedMode):
		return nil, parseErr(sec.line, hintHeader, "a patch cannot both create and delete a file")
	case has(hNewFileMode):
		sec.Status = Added
	case has(hDeletedMode):
		sec.Status = Deleted
	default:
		sec.Status = Modified
	}
	if (sec.Status == Renamed || sec.Status == Copied) && (has(hNewFileMode) || has(hDeletedMode)) {
		return nil, parseErr(sec.line, hintHeader, "a %s cannot also create or delete a file", strings.TrimSuffix(string(sec.Status), "d"))
	}

	// Modes. A mode on the index line overwrites git's idea of the old
	// mode (git apply keeps the last one it reads), so it may not be
	// combined with any other mode line.
	mode := func(p string) (string, error) {
		m := seen[p]
		if !validMode(m) {
			return "", parseErr(seenLine[p], hintHeader, "unknown file mode %q", m)
		}
		return m, nil
	}
	modeLines := 0
	for _, p := range []string{hOldMode, hNewMode, hNewFileMode, hDeletedMode} {
		if has(p) {
			modeLines++
		}
	}
	if has(hOldMode) != has(hNewMode) {
		return nil, parseErr(sec.line, hintHeader, "\"old mode\" and \"new mode\" must come together")
	}
	if modeLines > 0 && has(hOldMode) && (has(hNewFileMode) || has(hDeletedMode)) {
		return nil, parseErr(sec.line, hintHeader, "a created or deleted file cannot also change mode")
	}
	if has(hOldMode) {
		if sec.OldMode, err = mode(hOldMode); err != nil {
			return nil, err
		}
		if sec.NewMode, err = mode(hNewMode); err != nil {
			return nil, err
		}
		if sec.OldMode == sec.NewMode {
			return nil, parseErr(seenLine[hNewMode], hintHeader, "mode change from %s to itself", sec.OldMode)
		}
		sec.modeChange = true
	}
	if has(hNewFileMode) {
		if sec.NewMode, err = mode(hNewFileMode); err != nil {
			return nil, err
		}
	}
	if has(hDeletedMode) {
		if sec.OldMode, err = mode(hDeletedMode); err != nil {
			return nil, err
		}
	}
	if has(hIndex) {
		m, err := parseIndex(seen[hIndex])
		if err != nil {
			return nil, parseErr(seenLine[hIndex], hintHeader, "index line: %v", err)
		}
		if m != "" {
			if modeLines > 0 {
				return nil, parseErr(seenLine[hIndex], hintHeader, "a mode on the index line conflicts with the mode lines of the same patch")
			}
			switch sec.Status {
			case Added, Deleted:
				return nil, parseErr(seenLine[hIndex], hintHeader, "an index line with a mode on a created or deleted file")
			}
			sec.OldMode, sec.NewMode = m, m
		}
	}

	// Scores.
	if has(hSimilarity) && has(hDissimilar) {
		return nil, parseErr(sec.line, hintHeader, "both a similarity and a dissimilarity index")
	}
	if has(hSimilarity) {
		if sec.Status != Renamed && sec.Status != Copied {
			return nil, parseErr(seenLine[hSimilarity], hintHeader, "a similarity index without a rename or copy")
		}
		if sec.score, err = parseScore(seen[hSimilarity]); err != nil {
			return nil, parseErr(seenLine[hSimilarity], hintHeader, "similarity index: %v", err)
		}
	}
	if has(hDissimilar) {
		if sec.Status != Modified {
			return nil, parseErr(seenLine[hDissimilar], hintHeader, "a dissimilarity index outside an in-place rewrite")
		}
		if sec.score, err = parseScore(seen[hDissimilar]); err != nil {
			return nil, parseErr(seenLine[hDissimilar], hintHeader, "dissimilarity index: %v", err)
		}
		sec.rewrite = true
	}

	// Body: ---/+++ and hunks, a binary patch, or nothing.
	var minus, plus string // names from ---/+++ ("" when absent), devNull kept as is
	minusLine, plusLine := 0, 0
	if s.more() {
		l := s.cur()
		switch {
		case strings.HasPrefix(l, "--- "):
			if minus, minusLine, err = s.fileLine("--- "); err != nil {
				return nil, err
			}
			if !s.more() || !strings.HasPrefix(s.cur(), "+++ ") {
				return nil, parseErr(s.lineNo(), hintHeader, "a \"---\" line must be followed by a \"+++\" line")
			}
			if plus, plusLine, err = s.fileLine("+++ "); err != nil {
				return nil, err
			}
			if err := s.hunks(sec); err != nil {
				return nil, err
			}
		case l == "GIT binary patch":
			if err := s.binaryPatch(); err != nil {
				return nil, err
			}
			sec.Binary, sec.gitBinary = true, true
		case strings.HasPrefix(l, "Binary files ") && strings.HasSuffix(l, " differ"):
			s.i++
			sec.Binary, sec.gitBinary = true, true
		case strings.HasPrefix(l, "@@"):
			return nil, parseErr(s.lineNo(), hintHeader, "hunk without \"---\" and \"+++\" lines")
		case strings.HasPrefix(l, "diff --git "):
		default:
			if _, err := s.header(); err != nil {
				return nil, err
			}
			return nil, parseErr(s.lineNo(), hintPure, "unknown line in the patch headers: %q", clip(l))
		}
	}

	// Reconcile names: the extended headers and ---/+++ against the
	// diff --git line. Every reading that exists must agree.
	stripped := func(name, prefix string, line int) (string, error) {
		if name == devNull {
			return devNull, nil
		}
		if !strings.HasPrefix(name, prefix) {
			if strings.HasPrefix(name, "/") {
				return "", &Error{Rule: RulePath, Line: line, Msg: fmt.Sprintf("diff line %d: absolute path %q", line, name),
					Hint: "a patch may only name paths inside the repository"}
			}
			return "", parseErr(line, hintHeader, "file name %q lacks the %q prefix", name, prefix)
		}
		return name[len(prefix):], nil
	}
	if minusLine > 0 {
		if minus, err = stripped(minus, "a/", minusLine); err != nil {
			return nil, err
		}
		if plus, err = stripped(plus, "b/", plusLine); err != nil {
			return nil, err
		}
		if minus == devNull && plus == devNull {
			return nil, parseErr(minusLine, hintHeader, "both sides are /dev/null")
		}
		if (minus == devNull) != (sec.Status == Added) {
			return nil, parseErr(minusLine, hintHeader, "\"--- /dev/null\" must come with \"new file mode\", and only then")
		}
		if (plus == devNull) != (sec.Status == Deleted) {
			return nil, parseErr(plusLine, hintHeader, "\"+++ /dev/null\" must come with \"deleted file mode\", and only then")
		}
		agree := func(a, b string, line int) error {
			if a != "" && a != b {
				return parseErr(line, hintHeader, "file name %q disagrees with %q from the patch headers", b, a)
			}
			return nil
		}
		if minus != devNull {
			if err := agree(oldName, minus, minusLine); err != nil {
				return nil, err
			}
			oldName = minus
		}
		if plus != devNull {
			if err := agree(newName, plus, plusLine); err != nil {
				return nil, err
			}
			newName = plus
		}
	}
	// The diff --git line: a/OLD b/NEW, where a created file shows its new
	// name on both sides and a deleted file its old name.
	wantA, wantB := oldName, newName
	switch sec.Status {
	case Added:
		wantA = newName
	case Deleted:
		wantB = oldName
	case Modified:
		if oldName == "" {
			oldName = newName
		}
		if newName == "" {
			newName = oldName
		}
		if oldName != newName {
			return nil, parseErr(sec.line, hintHeader, "old name %q and new name %q differ without a rename or copy", oldName, newName)
		}
		wantA, wantB = oldName, newName
	}
	if wantA == "" && wantB == "" {
		// Only the diff --git line names the file: it must say the same
		// name on both sides, readable one way only.
		var names []string
		for _, sp := range splits {
			if sp[0] == sp[1] {
				names = append(names, sp[0])
			}
		}
		if len(names) != 1 {
			return nil, parseErr(sec.line, hintHeader, "cannot read one file name from the diff --git line")
		}
		wantA, wantB = names[0], names[0]
	} else if wantA == "" {
		wantA = wantB
	} else if wantB == "" {
		wantB = wantA
	}
	matched := false
	for _, sp := range splits {
		if sp[0] == wantA && sp[1] == wantB {
			matched = true
			break
		}
	}
	if !matched {
		return nil, parseErr(sec.line, hintHeader, "the diff --git line disagrees with the file names in the patch headers (%q, %q)", wantA, wantB)
	}
	switch sec.Status {
	case Added:
		sec.NewPath = wantB
	case Deleted:
		sec.OldPath = wantA
	default:
		sec.OldPath, sec.NewPath = wantA, wantB
	}
	if err := sec.finish(); err != nil {
		return nil, err
	}
	return sec, nil
}

// traditionalSection reads a patch with only ---/+++ headers.
func (s *scanner) traditionalSection() (*section, error) {
	sec := &section{line: s.lineNo()}
	minus, minusLine, err := s.fileLine("--- ")
	if err != nil {
		return nil, err
	}
	plus, plusLine, err := s.fileLine("+++ ")
	if err != nil {
		return nil, err
	}
	for _, n := range []struct {
		name, prefix string
		line         int
		p            *string
	}{{minus, "a/", minusLine, &minus}, {plus, "b/", plusLine, &plus}} {
		switch {
		case n.name == devNull:
		case strings.HasPrefix(n.name, n.prefix):
			*n.p = n.name[len(n.prefix):]
		case strings.HasPrefix(n.name, "/"):
			return nil, &Error{Rule: RulePath, Line: n.line, Msg: fmt.Sprintf("diff line %d: absolute path %q", n.line, n.name),
				Hint: "a patch may only name paths inside the repository"}
		default:
			return nil, parseErr(n.line, hintHeader, "file name %q lacks the %q prefix", n.name, n.prefix)
		}
	}
	if err := s.hunks(sec); err != nil {
		return nil, err
	}
	switch {
	case minus == devNull && plus == devNull:
		return nil, parseErr(minusLine, hintHeader, "both sides are /dev/null")
	case minus == devNull:
		sec.Status, sec.NewPath = Added, plus
	case plus == devNull:
		sec.Status, sec.OldPath = Deleted, minus
	default:
		if minus != plus {
			return nil, parseErr(plusLine, hintHeader, "\"---\" names %q but \"+++\" names %q; a traditional patch cannot rename", minus, plus)
		}
		// git apply decides from the tree whether a patch with one hunk
		// and no old (or no new) lines creates (deletes) the file; this
		// reading must not depend on the tree.
		if sec.hunks == 1 && (sec.hunkOldSide == 0 || sec.hunkNewSide == 0) {
			return nil, parseErr(sec.line, "write creations as \"--- /dev/null\" and deletions as \"+++ /dev/null\", or use git diff",
				"a one-hunk patch of %q without old or new lines may create or delete the file", plus)
		}
		sec.Status, sec.OldPath, sec.NewPath = Modified, minus, plus
	}
	if err := sec.finish(); err != nil {
		return nil, err
	}
	return sec, nil
}

// finish checks what needs the whole section.
func (sec *section) finish() error {
	switch sec.Status {
	case Added:
		if sec.Deleted > 0 {
			return parseErr(sec.line, hintHeader, "new file %q has old lines", sec.NewPath)
		}
	case Deleted:
		if sec.hunkNewSide > 0 {
			return parseErr(sec.line, hintHeader, "deleted file %q keeps lines", sec.OldPath)
		}
	case Modified:
		if sec.hunks == 0 && !sec.modeChange && !sec.Binary {
			return parseErr(sec.line, hintHeader, "the patch of %q changes nothing", sec.OldPath)
		}
	}
	for _, m := range []string{sec.OldMode, sec.NewMode} {
		if m == ModeGitlink {
			sec.Submodule = true
		}
	}
	return nil
}

// fileLine reads a ---/+++ line and returns its name, unquoted, without
// the tab-separated trailer git and GNU diff may add.
func (s *scanner) fileLine(prefix string) (string, int, error) {
	l, err := s.header()
	if err != nil {
		return "", 0, err
	}
	line := s.lineNo()
	s.i++
	rest := l[len(prefix):]
	var name string
	if strings.HasPrefix(rest, `"`) {
		n, tail, err := unquotePrefix(rest)
		if err != nil {
			return "", 0, parseErr(line, hintHeader, "%s%v", prefix, err)
		}
		if tail != "" && !strings.HasPrefix(tail, "\t") {
			return "", 0, parseErr(line, hintHeader, "text after the quoted file name")
		}
		name = n
	} else {
		name, _, _ = strings.Cut(rest, "\t")
		if strings.Contains(name, `"`) || strings.Contains(name, `\`) {
			return "", 0, parseErr(line, hintHeader, "unquoted file name with a quote or backslash: %q", name)
		}
	}
	if name == "" {
		return "", 0, parseErr(line, hintHeader, "empty file name")
	}
	return name, line, nil
}

// hunks reads one or more "@@ -a,b +c,d @@" hunks, counting lines exactly
// as git apply does: ' ' and an empty line are context, '-' deleted, '+'
// added, "\ " a no-newline marker; a hunk ends when both counts are spent.
func (s *scanner) hunks(sec *section) error {
	if !s.more() || !strings.HasPrefix(s.cur(), "@@ -") {
		line := s.lineNo()
		if !s.more() {
			line = len(s.lines)
		}
		return parseErr(line, hintHeader, "expected a hunk (\"@@ -\") after the ---/+++ lines")
	}
	for s.more() && strings.HasPrefix(s.cur(), "@@ -") {
		hl, err := s.header()
		if err != nil {
			return err
		}
		oldLines, newLines, newStart, err := parseHunkHeader(hl)
		if err != nil {
			return parseErr(s.lineNo(), hintHeader, "hunk header %q: %v", clip(hl), err)
		}
		hunkLine := s.lineNo()
		s.i++
		sec.hunks++
		added, deleted, oldSide := 0, 0, 0
		var newSide []string
		lastPlusNoNL := false
		for oldLines > 0 || newLines > 0 {
			if !s.more() {
				return parseErr(len(s.lines), hintHeader, "hunk at line %d ends early: %d old and %d new lines missing", hunkLine, oldLines, newLines)
			}
			l := s.cur()
			if strings.IndexByte(l, 0) >= 0 {
				sec.Binary = true
			}
			c := byte('\n') // an empty line is context, as in GNU diff
			if l != "" {
				c = l[0]
			}
			if sec.firstLine == 0 && (c == '+' || c == '-') {
				// Where the change is, counted on the new side: a deletion
				// sits at the line that now follows it.
				sec.firstLine = max(newStart, 1) + len(newSide)
			}
			switch c {
			case '\n', ' ':
				oldLines--
				newLines--
				oldSide++
				if l != "" {
					newSide = append(newSide, l[1:])
				} else {
					newSide = append(newSide, "")
				}
			case '-':
				oldLines--
				oldSide++
				deleted++
			case '+':
				newLines--
				added++
				newSide = append(newSide, l[1:])
			case '\\':
				if len(l) < 12 || !strings.HasPrefix(l, `\ `) {
					return parseErr(s.lineNo(), hintHeader, "malformed no-newline marker %q", clip(l))
				}
			default:
				return parseErr(s.lineNo(), hintHeader, "hunk at line %d: line does not start with ' ', '-', '+' or '\\': %q", hunkLine, clip(l))
			}
			if oldLines < 0 || newLines < 0 {
				return parseErr(s.lineNo(), hintHeader, "hunk at line %d has more lines than its header says", hunkLine)
			}
			s.i++
			lastPlusNoNL = false
			if s.more() && strings.HasPrefix(s.cur(), `\ `) && len(s.cur()) >= 12 {
				if c == '+' || c == ' ' || c == '\n' {
					lastPlusNoNL = true
				}
				if oldLines == 0 && newLines == 0 {
					s.i++ // git consumes a marker right after the last line
				}
			}
		}
		if added == 0 && deleted == 0 {
			return parseErr(hunkLine, hintHeader, "hunk changes nothing")
		}
		sec.Added += added
		sec.Deleted += deleted
		sec.hunkNewSide += len(newSide)
		sec.hunkOldSide += oldSide
		if sec.hunks == 1 && len(newSide) == 1 && newStart <= 1 {
			sec.target, sec.hasTarget, sec.targetNL = newSide[0], true, !lastPlusNoNL
		} else {
			sec.hasTarget = false
		}
	}
	return nil
}

// parseHunkHeader reads "@@ -a[,b] +c[,d] @@..." the way git apply does.
func parseHunkHeader(l string) (oldLines, newLines, newStart int, err error) {
	rest := l[len("@@ -"):]
	var oldStart int
	if oldStart, oldLines, rest, err = parseRange(rest); err != nil {
		return
	}
	_ = oldStart
	if !strings.HasPrefix(rest, " +") {
		return 0, 0, 0, fmt.Errorf("expected \" +\" after the old range")
	}
	if newStart, newLines, rest, err = parseRange(rest[2:]); err != nil {
		return
	}
	if !strings.HasPrefix(rest, " @@") {
		return 0, 0, 0, fmt.Errorf("expected \" @@\" after the new range")
	}
	return oldLines, newLines, newStart, nil
}

func parseRange(s string) (start, count int, rest string, err error) {
	digits := func(s string) (int, string, error) {
		i := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == 0 || i > 9 {
			return 0, s, fmt.Errorf("bad line number")
		}
		n, _ := strconv.Atoi(s[:i])
		return n, s[i:], nil
	}
	if start, s, err = digits(s); err != nil {
		return
	}
	count = 1
	if strings.HasPrefix(s, ",") {
		if count, s, err = digits(s[1:]); err != nil {
			return
		}
	}
	return start, count, s, nil
}

// binaryPatch reads "GIT binary patch" and its one or two base85 blocks,
// each "literal N" or "delta N", data lines, and an empty line.
func (s *scanner) binaryPatch() error {
	s.i++ // GIT binary patch
	for block := 0; block < 2; block++ {
		if !s.more() {
			if block == 0 {
				return parseErr(len(s.lines), hintHeader, "binary patch without data")
			}
			return nil
		}
		l := s.cur()
		kind, n, ok := strings.Cut(l, " ")
		if !ok || (kind != "literal" && kind != "delta") || !allDigits(n) {
			if block == 0 {
				return parseErr(s.lineNo(), hintHeader, "expected \"literal N\" or \"delta N\" in a binary patch")
			}
			return nil
		}
		s.i++
		data := 0
		for s.more() && s.cur() != "" {
			if !base85Line(s.cur()) {
				return parseErr(s.lineNo(), hintHeader, "malformed binary patch data")
			}
			data++
			s.i++
		}
		if !s.more() {
			return parseErr(len(s.lines), hintHeader, "binary patch data does not end with an empty line")
		}
		if data == 0 && n != "0" {
			return parseErr(s.lineNo(), hintHeader, "binary patch block without data")
		}
		s.i++ // the empty line
	}
	return nil
}

func allDigits(s string) bool {
	if s == "" || len(s) > 10 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

const base85Chars = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~"

func base85Line(l string) bool {
	if len(l) < 6 || (len(l)-1)%5 != 0 {
		return false
	}
	c := l[0]
	if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z') {
		return false
	}
	for i := 1; i < len(l); i++ {
		if strings.IndexByte(base85Chars, l[i]) < 0 {
			return false
		}
	}
	return true
}

func validMode(m string) bool {
	switch m {
	case ModeFile, ModeExecutable, ModeSymlink, ModeGitlink:
		return true
	}
	return false
}

func parseScore(v string) (int, error) {
	n, ok := strings.CutSuffix(v, "%")
	if !ok || !allDigits(n) || len(n) > 3 {
		return 0, fmt.Errorf("%q is not a percentage", v)
	}
	p, _ := strconv.Atoi(n)
	if p > 100 {
		return 0, fmt.Errorf("%q is over 100%%", v)
	}
	return p, nil
}

// parseIndex reads "HEX..HEX[ MODE]" and returns the mode ("" if absent).
func parseIndex(v string) (string, error) {
	ids, mode, hasMode := strings.Cut(v, " ")
	a, b, ok := strings.Cut(ids, "..")
	if !ok || !isHex(a) || !isHex(b) {
		return "", fmt.Errorf("%q is not OLD..NEW object ids", ids)
	}
	if hasMode && !validMode(mode) {
		return "", fmt.Errorf("unknown file mode %q", mode)
	}
	return mode, nil
}

func isHex(s string) bool {
	if len(s) < 4 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// splitGitLine returns every way to read "a/OLD b/NEW" from the rest of a
// diff --git line, names unquoted and stripped of their prefixes. It runs
// in time linear in the line: an unquoted name cannot hold a quote,
// backslash or tab, so at most one split has a quoted new name, and the
// other splits are cut at spaces.
func splitGitLine(rest string) [][2]string {
	if strings.HasPrefix(rest, `"`) {
		a, tail, err := unquotePrefix(rest)
		if err != nil || !strings.HasPrefix(tail, " ") {
			return nil
		}
		b := tail[1:]
		bQuoted := strings.HasPrefix(b, `"`)
		if !bQuoted && strings.ContainsAny(b, "\"\\\t") {
			return nil
		}
		an, err1 := gitLineName(a, "a/", false)
		bn, err2 := gitLineName(b, "b/", bQuoted)
		if err1 != nil || err2 != nil {
			return nil
		}
		return [][2]string{{an, bn}}
	}
	limit := strings.IndexAny(rest, "\"\\\t")
	if limit < 0 {
		limit = len(rest)
	}
	var out [][2]string
	for i := 0; i < limit; i++ {
		if rest[i] != ' ' {
			continue
		}
		b := rest[i+1:]
		if i+1 < limit && !strings.HasPrefix(b, "b/") {
			continue
		}
		if i+1 != limit && limit != len(rest) {
			continue // the special character is inside an unquoted new name
		}
		an, err := gitLineName(rest[:i], "a/", false)
		if err != nil {
			continue
		}
		bn, err := gitLineName(b, "b/", i+1 == limit)
		if err != nil {
			continue
		}
		out = append(out, [2]string{an, bn})
	}
	return out
}

// gitLineName strips prefix from one side of a diff --git line, unquoting
// it first when quoted is set.
func gitLineName(s, prefix string, quoted bool) (string, error) {
	if quoted {
		n, tail, err := unquotePrefix(s)
		if err != nil {
			return "", err
		}
		if tail != "" {
			return "", fmt.Errorf("text after a quoted name")
		}
		s = n
	}
	if !strings.HasPrefix(s, prefix) || len(s) == len(prefix) {
		return "", fmt.Errorf("no %q prefix", prefix)
	}
	return s[len(prefix):], nil
}
