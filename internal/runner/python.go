package runner

import (
	"bytes"
	"slices"
)

// pyLine is one logical line of Python source: src[start:end], end past
// its newline (a statement continued inside brackets, strings or after a
// backslash is one logical line).
type pyLine struct {
	start, end int
	indented   bool   // its first physical line starts with whitespace
	blank      bool   // only whitespace and a comment
	word       string // its first word ("import", "def", "@", "x", ...)
}

// pythonLines splits src into logical lines. It is a tokenizer's line
// joining, not a parser: it needs to be right about strings, comments,
// brackets and backslashes, and is never wrong in a way that loses bytes
// (the lines cover src exactly).
func pythonLines(src []byte) []pyLine {
	var lines []pyLine
	for i := 0; i < len(src); {
		l := pyLine{start: i}
		j := i
		for j < len(src) && (src[j] == ' ' || src[j] == '\t' || src[j] == '\f') {
			j++
		}
		l.indented = j > i
		if j >= len(src) || src[j] == '\n' || src[j] == '\r' || src[j] == '#' {
			l.blank = true
			for j < len(src) && src[j] != '\n' {
				j++
			}
			l.end = min(j+1, len(src))
			lines = append(lines, l)
			i = l.end
			continue
		}
		if src[j] == '@' {
			l.word = "@"
		} else {
			k := j
			for k < len(src) && isIdent(src[k]) {
				k++
			}
			l.word = string(src[j:k])
		}
		l.end = endOfLogicalLine(src, j)
		lines = append(lines, l)
		i = l.end
	}
	return lines
}

func isIdent(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

// endOfLogicalLine scans from i to just past the newline that ends the
// logical line, or to len(src).
func endOfLogicalLine(src []byte, i int) int {
	depth := 0
	for i < len(src) {
		switch c := src[i]; c {
		case '#':
			for i < len(src) && src[i] != '\n' {
				i++
			}
			continue
		case '\'', '"':
			i = endOfString(src, i)
			continue
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			if depth > 0 {
				depth--
			}
		case '\\':
			i += 2 // a continuation ("\\\n") or an escape outside a string
			continue
		case '\n':
			if depth == 0 {
				return i + 1
			}
		}
		i++
	}
	return len(src)
}

// endOfString returns the index just past the string literal that opens
// at src[i]. A single-quoted string that reaches a newline ends there (it
// is a syntax error; the oracle file would not have imported).
func endOfString(src []byte, i int) int {
	q := src[i]
	triple := i+2 < len(src) && src[i+1] == q && src[i+2] == q
	if triple {
		i += 3
	} else {
		i++
	}
	for i < len(src) {
		switch c := src[i]; {
		case c == '\\':
			i += 2
			continue
		case triple && c == q && i+2 < len(src) && src[i+1] == q && src[i+2] == q:
			return i + 3
		case !triple && c == q:
			return i + 1
		case !triple && c == '\n':
			return i
		}
		i++
	}
	return len(src)
}

// pythonImports is what a canary module copies of an oracle test file so
// that it imports what the oracle imports, in the same order and context:
//
//   - the file from its start through the last top-level statement before
//     the first definition (def, class, decorator) that imports something,
//     verbatim: the docstring, `from __future__` imports (which must come
//     first), and any sys.path set-up the imports rely on;
//   - every later top-level statement that imports something, and every
//     import statement inside a function or class (a test that imports
//     the library in its body), each in a try block, since they may
//     depend on what the canary does not copy.
func pythonImports(src []byte) []byte {
	lines := pythonLines(src)
	type group struct {
		start, end int
		def        bool
		imports    bool
	}
	var groups []group
	in := make([]int, len(lines)) // the group each line belongs to; -1 before the first
	for i, l := range lines {
		clause := l.word == "except" || l.word == "else" || l.word == "elif" || l.word == "finally"
		if !l.indented && !l.blank && !(clause && len(groups) > 0) {
			groups = append(groups, group{start: l.start, end: l.end,
				def: l.word == "def" || l.word == "class" || l.word == "async" || l.word == "@"})
		} else if len(groups) > 0 && !l.blank {
			groups[len(groups)-1].end = l.end
		}
		in[i] = len(groups) - 1
		if len(groups) > 0 && (l.word == "import" || l.word == "from") && !l.blank {
			groups[len(groups)-1].imports = true
		}
	}
	cut, first := 0, len(groups)
	for i, g := range groups {
		if g.def {
			first = i
			break
		}
		if g.imports {
			cut = g.end
		}
	}
	var b bytes.Buffer
	b.Write(src[:cut])
	if cut > 0 && src[cut-1] != '\n' {
		b.WriteByte('\n')
	}
	var later [][]byte
	for _, g := range groups[first:] {
		if !g.def && g.imports {
			later = append(later, src[g.start:g.end])
		}
	}
	// Imports inside definitions, dedented to one statement each.
	for i, l := range lines {
		if !l.indented || l.blank || (l.word != "import" && l.word != "from") || in[i] < 0 || !groups[in[i]].def {
			continue
		}
		stmt := bytes.TrimLeft(src[l.start:l.end], " \t\f")
		if !slices.ContainsFunc(later, func(x []byte) bool { return bytes.Equal(x, stmt) }) {
			later = append(later, stmt)
		}
	}
	for _, s := range later {
		b.WriteString("try:\n")
		for _, line := range bytes.SplitAfter(s, []byte("\n")) {
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			b.WriteString("    ")
			b.Write(line)
		}
		if s[len(s)-1] != '\n' {
			b.WriteByte('\n')
		}
		b.WriteString("except Exception:\n    pass\n")
	}
	return b.Bytes()
}
