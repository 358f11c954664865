package model

import (
	"bytes"
	"github.com/failpass/failpass/internal/patch"
	"slices"
	"strings"
	"unicode/utf8"
)

// MaxProse bounds the prose a drafter may put around its diff: a short
// note is fine, an essay is a reply that is doing something else.
const MaxProse = 2000

// Reply is a model reply split into the one diff it carries and the prose
// around it (fenced blocks that are not diffs count as prose).
type Reply struct {
	Diff  []byte   // one unified diff, ending in a newline
	Prose string   // everything else, fences removed
	Files []string // every path the diff's headers name (both sides of a rename)
}

// ExtractDiff finds the one unified diff in a reply: a bare diff, or
// exactly one fenced block holding a diff, with short prose around either.
// It refuses, with the reason, a reply with no diff, more than one (two
// fenced diffs, a second diff in the prose, the same file changed twice),
// a hunk that does not match its header, an unterminated fence, or too
// much prose. It never returns a diff together with an error.
func ExtractDiff(reply []byte) (*Reply, error) {
	r, err := extractDiff(reply)
	if err != nil {
		return nil, err
	}
	return r, nil
}

func extractDiff(reply []byte) (*Reply, *RefusedError) {
	if !utf8.Valid(reply) || bytes.IndexByte(reply, 0) >= 0 {
		return nil, refuse(RoleDrafter, "the reply is not text (invalid UTF-8 or a NUL byte)")
	}
	lines := splitLines(string(reply))
	var prose []string
	var diffBlocks [][]string
	for i := 0; i < len(lines); i++ {
		ch, n, info, ok := fenceOpen(lines[i])
		if !ok {
			prose = append(prose, lines[i])
			continue
		}
		j := i + 1
		for ; j < len(lines) && !fenceClose(lines[j], ch, n); j++ {
		}
		if j == len(lines) {
			return nil, refuse(RoleDrafter, "a fenced block opened on line %d is never closed", i+1)
		}
		body := lines[i+1 : j]
		if isDiffInfo(info) || findSection(body, 0) >= 0 {
			diffBlocks = append(diffBlocks, body)
		} else {
			prose = append(prose, body...)
		}
		i = j
	}
	var region []string
	fenced := false
	switch len(diffBlocks) {
	case 0:
		region, prose = prose, nil
	case 1:
		region = diffBlocks[0]
		if findSection(prose, 0) >= 0 {
			return nil, refuse(RoleDrafter, "the reply holds more than one diff (one fenced, one outside the fence)")
		}
		fenced = true
	default:
		return nil, refuse(RoleDrafter, "the reply holds %d fenced diffs; want exactly one", len(diffBlocks))
	}
	start := findSection(region, 0)
	if start < 0 {
		return nil, refuse(RoleDrafter, "the reply holds no unified diff")
	}
	end, files, rerr := diffEnd(region, start)
	if rerr != nil {
		return nil, rerr
	}
	if fenced && (strings.TrimSpace(strings.Join(region[:start], "")) != "" || strings.TrimSpace(strings.Join(region[end:], "")) != "") {
		// Prose belongs outside the fence; text inside it is either part
		// of the diff that failed to parse or a second reading of it.
		return nil, refuse(RoleDrafter, "the fenced diff block holds text that is not part of the diff")
	}
	prose = append(append(prose, region[:start]...), region[end:]...)
	if findSection(region[end:], 0) >= 0 {
		return nil, refuse(RoleDrafter, "the reply holds more than one diff (a second one after the first)")
	}
	text := strings.TrimSpace(strings.Join(prose, ""))
	if utf8.RuneCountInString(text) > MaxProse {
		return nil, refuse(RoleDrafter, "the reply has %d characters of prose around the diff (at most %d)", utf8.RuneCountInString(text), MaxProse)
	}
	diff := strings.Join(region[start:end], "")
	if !strings.HasSuffix(diff, "\n") {
		diff += "\n"
	}
	return &Reply{Diff: []byte(diff), Prose: text, Files: files}, nil
}

// splitLines splits s into lines that keep their "\n".
func splitLines(s string) []string {
	var out []string
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

func bare(line string) string { return strings.TrimRight(line, "\r\n") }

// fenceOpen reads a CommonMark fence opener: up to three spaces, then
// three or more backticks or tildes, then an info string.
func fenceOpen(line string) (ch byte, n int, info string, ok bool) {
	l := bare(line)
	t := strings.TrimLeft(l, " ")
	if len(l)-len(t) > 3 || len(t) < 3 || (t[0] != '`' && t[0] != '~') {
		return 0, 0, "", false
	}
	if len(l) != len(t) {
		// An indented fence is valid Markdown, but a diff's context line
		// " ```" must never open or close one, so fences start at column 0.
		return 0, 0, "", false
	}
	ch = t[0]
	for n < len(t) && t[n] == ch {
		n++
	}
	if n < 3 {
		return 0, 0, "", false
	}
	info = strings.TrimSpace(t[n:])
	if ch == '`' && strings.ContainsRune(info, '`') {
		return 0, 0, "", false
	}
	return ch, n, info, true
}

// fenceClose: a line of at least n fence characters from column 0 and
// nothing else. A diff line never is one (it starts with ' ', '+', '-',
// '@' or a header word), so a fenced diff cannot close its own fence early.
func fenceClose(line string, ch byte, n int) bool {
	t := strings.TrimRight(bare(line), " \t")
	if len(t) < n {
		return false
	}
	for i := 0; i < len(t); i++ {
		if t[i] != ch {
			return false
		}
	}
	return true
}

func isDiffInfo(info string) bool {
	f := strings.Fields(strings.ToLower(info))
	return len(f) > 0 && (f[0] == "diff" || f[0] == "patch" || f[0] == "udiff")
}

// findSection returns the index of the first line at or after from that
// starts a patch, or -1.
func findSection(lines []string, from int) int {
	for i := from; i < len(lines); i++ {
		if sectionStart(lines, i) {
			return i
		}
	}
	return -1
}

// sectionStart reports whether lines[i] starts a patch. Only the two
// lines that can decide it are trimmed, so a long reply stays linear.
func sectionStart(lines []string, i int) bool {
	head := []string{bare(lines[i])}
	if i+1 < len(lines) {
		head = append(head, bare(lines[i+1]))
	}
	return patch.StartsPatch(head)
}

// diffEnd reads the patches that start at lines[start] with the gate's own
// strict scanner (package patch) and returns the index just past them and
// the paths they name: a
// diff the gate would refuse is refused here, with the same reason. The
// diff ends at the first line after a complete patch that starts no
// other patch.
func diffEnd(lines []string, start int) (int, []string, *RefusedError) {
	trimmed := make([]string, len(lines)-start)
	for i, l := range lines[start:] {
		trimmed[i] = strings.TrimSuffix(l, "\n")
	}
	n, changes, err := patch.Lead(trimmed)
	if err != nil {
		return 0, nil, refuse(RoleDrafter, "the diff does not parse: %v", err)
	}
	end := start + n
	// A diff line right after a complete hunk means its header undercounts:
	// using the hunk as counted would drop part of the change.
	if end < len(lines) {
		if h := bare(lines[end]); h != "" && (h[0] == '+' || h[0] == '-' || h[0] == ' ') {
			return 0, nil, refuse(RoleDrafter, "the hunk before line %d of the diff is longer than its header says", n+1)
		}
	}
	var files []string
	for _, f := range changes {
		for _, p := range f.Paths() {
			if !slices.Contains(files, p) {
				files = append(files, p)
			}
		}
	}
	return end, files, nil
}
