package testrunner

import (
	"bytes"
	"fmt"
	"strings"
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
	if e := pyScan(src, i, func(j, depth int) bool { return src[j] == '\n' && depth == 0 }); e >= 0 {
		return e + 1
	}
	return len(src)
}

// pyScan walks src from i as Python's tokenizer reads it and calls at
// with the index and bracket depth of every byte outside comments,
// strings (whose opening quote it is called with) and backslash escapes.
// It returns the first index at which at says true, or -1.
func pyScan(src []byte, i int, at func(i, depth int) bool) int {
	depth := 0
	for i < len(src) {
		switch c := src[i]; c {
		case '#':
			for i < len(src) && src[i] != '\n' {
				i++
			}
			continue
		case '\\':
			i += 2 // a continuation ("\\\n") or an escape outside a string
			continue
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			if depth > 0 {
				depth--
			}
		}
		if at(i, depth) {
			return i
		}
		if c := src[i]; c == '\'' || c == '"' {
			i = endOfString(src, i)
			continue
		}
		i++
	}
	return -1
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

// pythonOracle finds the oracle test in Python source src of file: the
// function fn, at top level or in class; for fn "", the first test
// method of class, or, for class "" too, the first test function (for
// pytest) or the first test method of the first TestCase class that has
// one (for unittest, which runs nothing else). Its assertion is the
// runner's own: self.assertEqual in a unittest.TestCase, a plain assert
// elsewhere. It goes on a line of its own before the test's first
// statement (its docstring stays one), and a test marked to be skipped
// or to fail is refused: there a failing assertion would not fail the
// run.
func pythonOracle(file string, src []byte, kind Kind, class, fn string) (*oracle, error) {
	lines := pythonLines(src)
	if class == "" && fn == "" && (kind == Unittest || pyFindDef(src, lines, 0, len(lines), "", "def", "", true) < 0) {
		// A module: the first TestCase class with a test method.
		for j := range lines {
			name := pyDefName(src, lines[j], "", "class")
			if name == "" || !pyTestCase(src, lines[j]) {
				continue
			}
			if o, err := pythonTest(file, src, lines, name, ""); err == nil {
				return o, nil
			}
		}
		return nil, pyNotFound(file, "TestCase class with a test method")
	}
	return pythonTest(file, src, lines, class, fn)
}

func pyNotFound(file, what string) error {
	return &NotRecognizedError{fmt.Sprintf("%s declares no %s failpass can find", file, what)}
}

// pythonTest is pythonOracle for a test named by its class (or "") and
// function (or "", for the first test function).
func pythonTest(file string, src []byte, lines []pyLine, class, fn string) (*oracle, error) {
	// The block of class (or the whole file), and its indentation.
	lo, hi, indent, testCase := 0, len(lines), "", false
	if class != "" {
		ci := pyFindDef(src, lines, 0, len(lines), "", "class", class, false)
		if ci < 0 {
			return nil, pyNotFound(file, "class "+class)
		}
		if pyMarked(src, lines, ci) {
			return nil, &NotRecognizedError{fmt.Sprintf("class %s in %s is marked to be skipped or to fail", class, file)}
		}
		testCase = pyTestCase(src, lines[ci])
		lo, hi = ci+1, pyBlockEnd(src, lines, ci)
		for j := lo; j < hi; j++ {
			if !lines[j].blank {
				indent = pyIndent(src, lines[j])
				break
			}
		}
		if indent == "" {
			return nil, pyNotFound(file, "test method in class "+class)
		}
	}
	di := pyFindDef(src, lines, lo, hi, indent, "def", fn, fn == "")
	if di < 0 {
		if fn == "" {
			return nil, pyNotFound(file, "test function")
		}
		return nil, pyNotFound(file, "test "+fn)
	}
	name := pyDefName(src, lines[di], indent, "def")
	if pyMarked(src, lines, di) {
		return nil, &NotRecognizedError{fmt.Sprintf("%s in %s is marked to be skipped or to fail", name, file)}
	}
	def := src[lines[di].start:lines[di].end]
	colon := pySignatureEnd(def)
	if colon < 0 || !pyBlank(def[colon+1:]) {
		return nil, &NotRecognizedError{fmt.Sprintf("%s in %s is not a def with a body of its own lines", name, file)}
	}
	// The body's first statement; after a docstring, the next one.
	body := -1
	for j := di + 1; j < hi && j < len(lines); j++ {
		if lines[j].blank {
			continue
		}
		if ind := pyIndent(src, lines[j]); len(ind) > len(indent) && strings.HasPrefix(ind, indent) {
			body = j
		}
		break
	}
	if body < 0 {
		return nil, &NotRecognizedError{fmt.Sprintf("%s in %s has no body failpass can find", name, file)}
	}
	bodyIndent := pyIndent(src, lines[body])
	if pyStringStatement(src, lines[body]) {
		for j := body + 1; j < hi; j++ {
			if lines[j].blank {
				continue
			}
			if pyIndent(src, lines[j]) == bodyIndent {
				body = j
			}
			break
		}
	}
	nl := "\n"
	if e := bytes.IndexByte(src, '\n'); e > 0 && src[e-1] == '\r' {
		nl = "\r\n"
	}
	assert := func(got, want string) string {
		return fmt.Sprintf("%sassert %q == %q%s", bodyIndent, got, want, nl)
	}
	if testCase {
		self := pyFirstParam(def)
		if self == "" {
			return nil, &NotRecognizedError{fmt.Sprintf("%s in %s takes no self", name, file)}
		}
		assert = func(got, want string) string {
			return fmt.Sprintf("%s%s.assertEqual(%q, %q)%s", bodyIndent, self, got, want, nl)
		}
	}
	test := name
	if class != "" {
		test = class + "." + name
	}
	end := len(src) // where the test's block ends: the mutation looks no further
	if e := pyBlockEnd(src, lines, di); e < len(lines) {
		end = lines[e].start
	}
	return &oracle{file: file, test: test, src: src, at: lines[body].start, assert: assert,
		py: &pyBody{indent: bodyIndent, end: end, self: selfOf(testCase, def)}}, nil
}

// pyIndent is the whitespace that starts line l.
func pyIndent(src []byte, l pyLine) string {
	j := l.start
	for j < l.end && (src[j] == ' ' || src[j] == '\t' || src[j] == '\f') {
		j++
	}
	return string(src[l.start:j])
}

// pyDefName is the name line l defines with keyword ("def" or "class")
// at exactly indent, or "". "async def" counts as def.
func pyDefName(src []byte, l pyLine, indent, keyword string) string {
	if l.blank || pyIndent(src, l) != indent {
		return ""
	}
	rest := string(src[l.start+len(indent) : l.end])
	if keyword == "def" {
		if r, ok := strings.CutPrefix(rest, "async"); ok && r != "" && (r[0] == ' ' || r[0] == '\t') {
			rest = strings.TrimLeft(r, " \t")
		}
	}
	r, ok := strings.CutPrefix(rest, keyword)
	if !ok || r == "" || (r[0] != ' ' && r[0] != '\t') {
		return ""
	}
	r = strings.TrimLeft(r, " \t")
	n := 0
	for n < len(r) && isIdent(r[n]) {
		n++
	}
	return r[:n]
}

// pyFindDef is the index of the line among lines[lo:hi] that defines
// name with keyword at indent: the last such (the one Python keeps), or
// with first, the first whose name starts with "test". -1 if none.
func pyFindDef(src []byte, lines []pyLine, lo, hi int, indent, keyword, name string, first bool) int {
	found := -1
	for j := lo; j < hi; j++ {
		n := pyDefName(src, lines[j], indent, keyword)
		switch {
		case n == "":
		case first && strings.HasPrefix(n, "test"):
			return j
		case !first && n == name:
			found = j
		}
	}
	return found
}

// pyBlockEnd is the index of the first line after the block that line i
// opens: the next statement indented no deeper than it.
func pyBlockEnd(src []byte, lines []pyLine, i int) int {
	ind := pyIndent(src, lines[i])
	for j := i + 1; j < len(lines); j++ {
		if !lines[j].blank && len(pyIndent(src, lines[j])) <= len(ind) {
			return j
		}
	}
	return len(lines)
}

// pyMarked says whether the decorators of the definition on line i mark
// it to be skipped or to fail (unittest.skip, expectedFailure,
// pytest.mark.skip, skipif, xfail).
func pyMarked(src []byte, lines []pyLine, i int) bool {
	for j := i - 1; j >= 0; j-- {
		if lines[j].blank {
			continue
		}
		if lines[j].word != "@" {
			return false
		}
		d := strings.ToLower(string(src[lines[j].start:lines[j].end]))
		if strings.Contains(d, "skip") || strings.Contains(d, "xfail") || strings.Contains(d, "expectedfailure") {
			return true
		}
	}
	return false
}

// pyTestCase says whether the class statement on line l has a base whose
// name says TestCase (unittest.TestCase, a project's own
// SomethingTestCase).
func pyTestCase(src []byte, l pyLine) bool {
	s := src[l.start:l.end]
	open := bytes.IndexByte(s, '(')
	return open >= 0 && bytes.Contains(s[open:], []byte("TestCase"))
}

// pySignatureEnd is the index in the def statement of the colon that
// ends its signature (the first at bracket depth 0, outside strings and
// comments), or -1.
func pySignatureEnd(def []byte) int {
	return pyScan(def, 0, func(i, depth int) bool { return def[i] == ':' && depth == 0 })
}

// pyBlank says whether s holds nothing but whitespace and a comment.
func pyBlank(s []byte) bool {
	return pyScan(s, 0, func(i, _ int) bool {
		return s[i] != ' ' && s[i] != '\t' && s[i] != '\f' && s[i] != '\r' && s[i] != '\n'
	}) < 0
}

// pyFirstParam is the first parameter's name in a def statement.
func pyFirstParam(def []byte) string {
	open := bytes.IndexByte(def, '(')
	if open < 0 {
		return ""
	}
	r := bytes.TrimLeft(def[open+1:], " \t\r\n\\")
	n := 0
	for n < len(r) && isIdent(r[n]) {
		n++
	}
	return string(r[:n])
}

// pyStringStatement says whether line l is a string literal alone (a
// docstring, when it is a body's first statement).
func pyStringStatement(src []byte, l pyLine) bool {
	s := bytes.TrimLeft(src[l.start:l.end], " \t\f")
	s = bytes.TrimLeft(s, "rRbBuU")
	if len(s) == 0 || (s[0] != '"' && s[0] != '\'') {
		return false
	}
	end := endOfString(s, 0)
	return pyBlank(s[end:])
}

// selfOf is a TestCase method's first parameter, "" elsewhere.
func selfOf(testCase bool, def []byte) string {
	if !testCase {
		return ""
	}
	return pyFirstParam(def)
}
