package model

import (
	"bytes"
	"strconv"
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
	end, files, rerr := scanDiff(region, start)
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
// starts a file section of a diff ("diff --git", or "--- " directly
// followed by "+++ "), or -1.
func findSection(lines []string, from int) int {
	for i := from; i < len(lines); i++ {
		if sectionStart(lines, i) {
			return i
		}
	}
	return -1
}

func sectionStart(lines []string, i int) bool {
	l := bare(lines[i])
	if strings.HasPrefix(l, "diff --git ") {
		return true
	}
	return strings.HasPrefix(l, "--- ") && i+1 < len(lines) && strings.HasPrefix(bare(lines[i+1]), "+++ ")
}

var hunkHeader = lazyRegexp(`^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@`)

// gitHeaderPrefixes are the extended header lines of a git diff section.
var gitHeaderPrefixes = []string{
	"index ", "old mode ", "new mode ", "deleted file mode ", "new file mode ",
	"similarity index ", "dissimilarity index ", "rename from ", "rename to ",
	"copy from ", "copy to ", "Binary files ", "GIT binary patch",
}

// scanDiff reads file sections from start, counting hunk lines against
// their headers, and returns the index just past the diff and the paths
// it names. The diff ends at the first line that is neither a header, a
// hunk line nor the start of another section.
func scanDiff(lines []string, start int) (int, []string, *RefusedError) {
	var files []string
	seen := map[string]bool{}
	i := start
	for i < len(lines) && sectionStart(lines, i) {
		l := bare(lines[i])
		var oldPath, newPath string
		changes := false // a hunk, a mode change, a rename, a binary patch
		if strings.HasPrefix(l, "diff --git ") {
			oldPath, newPath = splitGitHeader(strings.TrimPrefix(l, "diff --git "))
			i++
			binary := false
			for i < len(lines) {
				h := bare(lines[i])
				if binary {
					if h == "" {
						binary = false
					}
					i++
					continue
				}
				matched := false
				for _, p := range gitHeaderPrefixes {
					if strings.HasPrefix(h, p) {
						matched = true
						if p != "index " {
							changes = true
						}
						switch p {
						case "rename from ", "copy from ":
							oldPath = unquote(strings.TrimPrefix(h, p))
						case "rename to ", "copy to ":
							newPath = unquote(strings.TrimPrefix(h, p))
						case "GIT binary patch":
							binary = true
						}
					}
				}
				if !matched {
					break
				}
				i++
			}
		}
		if i+1 < len(lines) && strings.HasPrefix(bare(lines[i]), "--- ") && strings.HasPrefix(bare(lines[i+1]), "+++ ") {
			if o := headerPath(bare(lines[i])[4:]); o != "/dev/null" {
				oldPath = stripSide(o)
			}
			if n := headerPath(bare(lines[i+1])[4:]); n != "/dev/null" {
				newPath = stripSide(n)
			}
			i += 2
		}
		for i < len(lines) {
			m := hunkHeader().FindStringSubmatch(bare(lines[i]))
			if m == nil {
				break
			}
			changes = true
			oldN, newN := count(m[2]), count(m[4])
			at := i + 1
			i++
			for oldN > 0 || newN > 0 {
				if i >= len(lines) {
					return 0, nil, refuse(RoleDrafter, "the hunk at line %d is shorter than its header says", at)
				}
				h := bare(lines[i])
				switch {
				case h == "" || h[0] == ' ':
					oldN--
					newN--
				case h[0] == '-':
					oldN--
				case h[0] == '+':
					newN--
				case h[0] == '\\':
				default:
					return 0, nil, refuse(RoleDrafter, "the hunk at line %d is shorter than its header says", at)
				}
				if oldN < 0 || newN < 0 {
					return 0, nil, refuse(RoleDrafter, "the hunk at line %d does not match its header", at)
				}
				i++
			}
			if i < len(lines) && strings.HasPrefix(bare(lines[i]), `\ `) {
				i++
			}
			// A diff line right after a complete hunk means the header
			// undercounts: using the hunk as counted would drop part of
			// the change, so the whole reply is refused.
			if i < len(lines) && !sectionStart(lines, i) && !hunkHeader().MatchString(bare(lines[i])) {
				if h := bare(lines[i]); h != "" && (h[0] == '+' || h[0] == '-' || h[0] == ' ') {
					return 0, nil, refuse(RoleDrafter, "the hunk at line %d is longer than its header says", at)
				}
			}
		}
		key := newPath
		if key == "" {
			key = oldPath
		}
		if key == "" {
			return 0, nil, refuse(RoleDrafter, "a file section of the diff names no path")
		}
		if !changes {
			return 0, nil, refuse(RoleDrafter, "the diff for %s has no hunks", key)
		}
		if seen[key] {
			return 0, nil, refuse(RoleDrafter, "the reply holds more than one diff (%s is changed twice)", key)
		}
		seen[key] = true
		for _, p := range []string{oldPath, newPath} {
			if p != "" && !contains(files, p) {
				files = append(files, p)
			}
		}
	}
	return i, files, nil
}

func count(s string) int {
	if s == "" {
		return 1
	}
	n, err := strconv.Atoi(s)
	if err != nil || n > 1<<24 {
		return 1 << 24
	}
	return n
}

// headerPath reads the path of a "--- "/"+++ " line: quoted, or up to a
// tab (a timestamp may follow).
func headerPath(s string) string {
	if i := strings.IndexByte(s, '\t'); i >= 0 {
		s = s[:i]
	}
	return unquote(strings.TrimRight(s, " "))
}

func unquote(s string) string {
	if strings.HasPrefix(s, `"`) {
		if u, err := strconv.Unquote(s); err == nil {
			return u
		}
	}
	return s
}

func stripSide(p string) string {
	if strings.HasPrefix(p, "a/") || strings.HasPrefix(p, "b/") {
		return p[2:]
	}
	return p
}

// splitGitHeader splits "a/x b/y" (possibly quoted) into x and y. With
// unquoted paths holding " b/" it cannot know where the split is; the
// ---/+++ lines or rename lines that follow correct it.
func splitGitHeader(s string) (string, string) {
	if strings.HasPrefix(s, `"`) {
		if end := strings.Index(s[1:], `" `); end >= 0 {
			return stripSide(unquote(s[:end+2])), stripSide(unquote(strings.TrimSpace(s[end+3:])))
		}
	}
	if i := strings.LastIndex(s, " b/"); i >= 0 {
		return stripSide(s[:i]), stripSide(unquote(s[i+1:]))
	}
	return "", ""
}
