package patch

import (
	"bytes"
	"fmt"
	"strings"
)

// Headers is a diff's strict reading of its raw headers: the half of a
// static change set that needs no git. The reader in package gitpatch
// scans the headers first (an oversize diff, an unsafe path or prose
// around the patch is refused before git runs), then has git read the
// same diff and calls Agree.
type Headers struct{ secs []*section }

// ScanHeaders reads diff's raw headers strictly: the size bound, the
// strict raw header scan and the path rules. Errors are *Error with rule
// diff.parse or diff.path.
func ScanHeaders(diff []byte) (*Headers, error) {
	secs, err := readSections(diff)
	if err != nil {
		return nil, err
	}
	return &Headers{secs: secs}, nil
}

// BasePaths is ChangeSet.BasePaths of the change set the headers state,
// known before git reads the diff: the base can be listed meanwhile.
func (h *Headers) BasePaths() []string {
	cs := ChangeSet{Files: make([]File, len(h.secs))}
	for i, sec := range h.secs {
		cs.Files[i] = sec.File
	}
	return cs.BasePaths()
}

// Agree returns the change set once git's own reading of the same diff
// (the output of `git apply --numstat --summary -z`) matches the headers'
// rendered the way git prints it, byte for byte; any disagreement (git
// normalizing "+++ /etc/x" to "etc/x", git skipping prose around a patch,
// a header git reads another way) is an *Error diff.parse.
//
// The change set has the modes the patch states; Resolve fills in the
// rest from the base tree.
func (h *Headers) Agree(git []byte) (*ChangeSet, error) {
	return build(h.secs, git)
}

// Unreadable is the diff.parse error for a diff git's patch parser
// refused outright; msg is git's fatal line.
func Unreadable(msg string) *Error {
	return &Error{Rule: RuleParse, Msg: "git apply cannot read the diff: " + msg, Hint: hintPure}
}

// readSections is the part of reading a diff that needs no git: the size bound, the
// strict raw header scan and the path rules.
func readSections(diff []byte) ([]*section, error) {
	if err := checkSize(len(diff)); err != nil {
		return nil, err
	}
	secs, err := scan(diff)
	if err != nil {
		return nil, err
	}
	if err := checkSecs(secs); err != nil {
		return nil, err
	}
	for _, s := range secs {
		if err := s.symlink(); err != nil {
			return nil, err
		}
	}
	return secs, nil
}

func checkSize(size int) error {
	if size > MaxSize {
		return &Error{Rule: RuleParse, Msg: fmt.Sprintf("the diff is %d bytes, over the %d-byte limit", size, MaxSize),
			Hint: "split the change into smaller patches"}
	}
	return nil
}

func checkSecs(secs []*section) error {
	if err := checkPaths(secs); err != nil {
		return err
	}
	return checkSections(secs)
}

// Lead reads the whole patches at the start of lines (without their
// newlines) with the same strict scan and path rules as ScanHeaders, and
// returns how many lines they take and the files they change as their
// headers say. It stops, without an error, at the first line after a
// complete patch that starts no other patch, so a caller can find where
// a diff embedded in other text ends (a model's reply); what follows is
// the caller's to judge. Errors are *Error with rule diff.parse or
// diff.path, and their line numbers count from lines[0].
func Lead(lines []string) (int, []File, error) {
	size := 0
	for _, l := range lines {
		size += len(l) + 1
	}
	if err := checkSize(size); err != nil {
		return 0, nil, err
	}
	s := &scanner{lines: lines}
	secs, err := s.sections()
	if err != nil {
		return 0, nil, err
	}
	if len(secs) == 0 {
		return 0, nil, s.stray()
	}
	if err := checkSecs(secs); err != nil {
		return 0, nil, err
	}
	files := make([]File, len(secs))
	for i, sec := range secs {
		files[i] = sec.File
	}
	return s.i, files, nil
}

// build checks git's reading against the raw one and makes the change set.
func build(secs []*section, got []byte) (*ChangeSet, error) {
	if err := agree(secs, got); err != nil {
		return nil, err
	}
	cs := &ChangeSet{Files: make([]File, len(secs)), lineTargets: map[int]string{}, firstLines: map[int]int{}}
	for i, s := range secs {
		cs.Files[i] = s.File
		if s.firstLine > 0 && !s.Binary {
			cs.firstLines[i] = s.firstLine
		}
		if s.hasTarget && s.hunkNewSide == 1 && !s.targetNL && s.target != "" {
			cs.lineTargets[i] = s.target
		}
	}
	return cs, nil
}

// symlink sets Symlink and SymlinkTarget where the patch's own modes say
// the file is a symlink (Resolve covers files whose mode only the base
// tree knows).
func (s *section) symlink() error {
	switch {
	case s.Status == Deleted:
		s.Symlink = s.OldMode == ModeSymlink
		return nil
	case s.NewMode == ModeSymlink:
		s.Symlink = true
	default:
		return nil
	}
	if s.hunks == 0 {
		if s.OldMode == ModeSymlink || s.Status == Renamed || s.Status == Copied {
			return nil // content unchanged: Resolve reads the target from the base
		}
		return parseErr(s.line, hintHeader, "%q becomes a symlink but the patch does not give its target", s.NewPath)
	}
	return s.takeTarget()
}

// takeTarget moves the hunk's one new-side line into SymlinkTarget.
func (s *section) takeTarget() error {
	switch {
	case !s.hasTarget || s.hunkNewSide != 1:
		return parseErr(s.line, hintHeader, "symlink %q: the new target must be the hunk's only new line", s.NewPath)
	case s.targetNL:
		return parseErr(s.line, "a symlink's target has no trailing newline; the line needs \"\\ No newline at end of file\"", "symlink %q: target ends with a newline", s.NewPath)
	case s.target == "":
		return parseErr(s.line, hintHeader, "symlink %q: empty target", s.NewPath)
	}
	s.SymlinkTarget = s.target
	return nil
}

// render prints sections the way git apply --numstat --summary -z does:
// every numstat record (NUL-terminated, raw name), then every summary line
// (newline-terminated, raw names).
func render(secs []*section) []byte {
	var b bytes.Buffer
	for _, s := range secs {
		if s.gitBinary {
			b.WriteString("-\t-\t")
		} else {
			fmt.Fprintf(&b, "%d\t%d\t", s.Added, s.Deleted)
		}
		name := s.NewPath
		if name == "" {
			name = s.OldPath
		}
		b.WriteString(name)
		b.WriteByte(0)
	}
	for _, s := range secs {
		b.WriteString(summaryLine(s))
	}
	return b.Bytes()
}

// summaryLine is git's summary_patch_list for one patch.
func summaryLine(s *section) string {
	modeChange := func(name bool) string {
		if !s.modeChange {
			return ""
		}
		if name {
			return fmt.Sprintf(" mode change %s => %s %s\n", s.OldMode, s.NewMode, s.NewPath)
		}
		return fmt.Sprintf(" mode change %s => %s\n", s.OldMode, s.NewMode)
	}
	fileMode := func(verb, mode, name string) string {
		if mode != "" {
			return fmt.Sprintf(" %s mode %s %s\n", verb, mode, name)
		}
		return fmt.Sprintf(" %s %s\n", verb, name)
	}
	switch s.Status {
	case Added:
		return fileMode("create", s.NewMode, s.NewPath)
	case Deleted:
		return fileMode("delete", s.OldMode, s.OldPath)
	case Renamed, Copied:
		verb := "rename"
		if s.Status == Copied {
			verb = "copy"
		}
		// git prints a common leading folder once: "a/{x => y}".
		oldRest, newRest := s.OldPath, s.NewPath
		for {
			io, in := strings.IndexByte(oldRest, '/'), strings.IndexByte(newRest, '/')
			if io < 0 || in < 0 || io != in || oldRest[:io] != newRest[:in] {
				break
			}
			oldRest, newRest = oldRest[io+1:], newRest[in+1:]
		}
		var line string
		if prefix := s.OldPath[:len(s.OldPath)-len(oldRest)]; prefix != "" {
			line = fmt.Sprintf(" %s %s{%s => %s} (%d%%)\n", verb, prefix, oldRest, newRest, s.score)
		} else {
			line = fmt.Sprintf(" %s %s => %s (%d%%)\n", verb, s.OldPath, s.NewPath, s.score)
		}
		return line + modeChange(false)
	}
	line := ""
	if s.rewrite && s.score > 0 {
		line = fmt.Sprintf(" rewrite %s (%d%%)\n", s.NewPath, s.score)
	}
	return line + modeChange(!(s.rewrite && s.score > 0))
}

// agree compares git's output with the rendering of the scan and names the
// first file they disagree on.
func agree(secs []*section, got []byte) error {
	want := render(secs)
	if bytes.Equal(got, want) {
		return nil
	}
	hint := "failpass only accepts a diff that git reads exactly as written; regenerate it with `git diff`"
	gotRecs, gotSummary := splitOutput(got)
	wantRecs, wantSummary := splitOutput(want)
	if len(gotRecs) != len(wantRecs) {
		return &Error{Rule: RuleParse, Hint: hint,
			Msg: fmt.Sprintf("git reads %d patches in the diff, failpass reads %d", len(gotRecs), len(wantRecs))}
	}
	for i := range wantRecs {
		if gotRecs[i] != wantRecs[i] {
			return &Error{Rule: RuleParse, Line: secs[i].line, Hint: hint,
				Msg: fmt.Sprintf("diff line %d: git reads this patch as %q, failpass as %q", secs[i].line, gotRecs[i], wantRecs[i])}
		}
	}
	g, w := strings.Split(gotSummary, "\n"), strings.Split(wantSummary, "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return &Error{Rule: RuleParse, Hint: hint,
				Msg: fmt.Sprintf("git summarizes the diff as %q, failpass as %q", strings.TrimSpace(gl), strings.TrimSpace(wl))}
		}
	}
	return &Error{Rule: RuleParse, Hint: hint, Msg: "git reads the diff differently"}
}

// splitOutput separates the numstat records from the summary text.
func splitOutput(out []byte) ([]string, string) {
	var recs []string
	rest := out
	for {
		i := bytes.IndexByte(rest, 0)
		if i < 0 || bytes.IndexByte(rest[:i], '\n') >= 0 {
			break
		}
		recs = append(recs, string(rest[:i]))
		rest = rest[i+1:]
	}
	return recs, string(rest)
}
