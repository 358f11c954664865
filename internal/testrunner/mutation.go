package testrunner

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
)

// Mutation is the oracle test with one literal expectation changed to a
// value that cannot equal it (ImpossibleBench's one-off mutation): a
// run of the patched tree that still passes it proves a shortcut, a
// result that compares equal to anything. The gate runs it in place of
// the inserted assertion only where the card's sign-off saw it fail on
// the reference fix, and knows it by Digest.
type Mutation struct {
	// File and Test are the canary's: the oracle test file and test.
	File, Test string
	// Mutated is the oracle test file with the expectation changed.
	Mutated []byte
	// Line is the 1-based line of the literal changed, Was and Now its
	// text before and after.
	Line     int
	Was, Now string
	// Before and After are that line, trimmed and cut to 120 bytes, as
	// the file has it and as the mutation makes it: for a reason.
	Before, After string
	// Digest is "sha256:<hex>" of Mutated: the sign-off records it, and
	// the gate uses a mutation only when its own has the same.
	Digest string
}

// NoMutationError says why an oracle test has no mutation: no top-level
// statement of it compares a computed value with a literal.
type NoMutationError struct{ Why string }

func (e *NoMutationError) Error() string { return "no mutation: " + e.Why }

// Mutate finds the mutation of the canary's oracle test: the first
// top-level statement of the test that compares a computed value with a
// literal (or, in Go, with a variable the test sets to one), its literal
// changed. The oracle file is the candidate's input: Mutate never
// panics on it and changes one literal or nothing.
func (c *Canary) Mutate() (*Mutation, error) {
	if c.mutate == nil {
		return nil, &NoMutationError{"the oracle test was not planned by failpass"}
	}
	m, err := c.mutate()
	if m != nil {
		m.File, m.Test = c.File, c.Test
	}
	return m, err
}

// edit is a change of src[from:to] to repl.
type edit struct {
	from, to int
	repl     string
}

func mutationOf(src []byte, e edit) *Mutation {
	b := make([]byte, 0, len(src)+len(e.repl))
	b = append(append(append(b, src[:e.from]...), e.repl...), src[e.to:]...)
	sum := sha256.Sum256(b)
	ls := bytes.LastIndexByte(src[:e.from], '\n') + 1
	line := func(s []byte, end int) string {
		if n := bytes.IndexByte(s[end:], '\n'); n >= 0 {
			end += n
		} else {
			end = len(s)
		}
		t := strings.TrimSpace(string(s[ls:end]))
		if len(t) > 120 {
			t = t[:120] + "..."
		}
		return strings.ToValidUTF8(t, "?")
	}
	return &Mutation{Mutated: b, Line: 1 + bytes.Count(src[:e.from], []byte("\n")),
		Was: string(src[e.from:e.to]), Now: e.repl, Digest: "sha256:" + hex.EncodeToString(sum[:]),
		Before: line(src, e.to), After: line(b, e.from+len(e.repl))}
}

// flipInt is an integer literal's value with its last bit flipped,
// written in decimal: a different value of the same width (no overflow,
// whatever the type), and usually of the same length.
func flipInt(lit string) (string, bool) {
	v, err := strconv.ParseUint(lit, 0, 64)
	if err != nil {
		return "", false
	}
	return strconv.FormatUint(v^1, 10), true
}

// ---- Go ----

// goMutate is the mutation of Go test fn in src: the first top-level
// statement of its body that compares with a literal, directly or
// through a variable a top-level `x := lit` or `var x = lit` set.
func goMutate(file string, src []byte, fn string) (*Mutation, error) {
	fset := token.NewFileSet()
	af, err := parser.ParseFile(fset, file, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, &NoMutationError{"the test file does not parse"}
	}
	var body *ast.BlockStmt
	for _, d := range af.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && fd.Name.Name == fn && fd.Body != nil {
			body = fd.Body
		}
	}
	if body == nil {
		return nil, &NoMutationError{fn + " is not in " + file}
	}
	off := func(p token.Pos) int { return fset.Position(p).Offset }
	bound := map[string]ast.Expr{} // variables set to a literal, by name
	literal := func(x ast.Expr) (edit, bool) {
		if id, ok := x.(*ast.Ident); ok {
			if b, ok := bound[id.Name]; ok {
				x = b
			} else {
				return edit{}, false
			}
		}
		return goLiteral(src, x, off)
	}
	// pair is the edit for comparing a with b: exactly one a literal.
	pair := func(a, b ast.Expr) (edit, bool) {
		ea, oka := literal(a)
		eb, okb := literal(b)
		switch {
		case oka && !okb:
			return ea, true
		case okb && !oka:
			return eb, true
		}
		return edit{}, false
	}
	for _, st := range body.List {
		switch s := st.(type) {
		case *ast.AssignStmt:
			if s.Tok == token.DEFINE && len(s.Lhs) == 1 && len(s.Rhs) == 1 {
				if id, ok := s.Lhs[0].(*ast.Ident); ok {
					if _, ok := goLiteral(src, s.Rhs[0], off); ok {
						bound[id.Name] = s.Rhs[0]
					} else {
						delete(bound, id.Name)
					}
				}
			}
		case *ast.DeclStmt:
			if g, ok := s.Decl.(*ast.GenDecl); ok && g.Tok == token.VAR {
				for _, sp := range g.Specs {
					if vs, ok := sp.(*ast.ValueSpec); ok && len(vs.Names) == 1 && len(vs.Values) == 1 {
						if _, ok := goLiteral(src, vs.Values[0], off); ok {
							bound[vs.Names[0].Name] = vs.Values[0]
						}
					}
				}
			}
		case *ast.IfStmt:
			if e, ok := goIfCompare(s, pair); ok {
				return mutationOf(src, e), nil
			}
		case *ast.ExprStmt:
			// testify: assert.Equal(t, want, got), require.Equal(...).
			if call, ok := s.X.(*ast.CallExpr); ok && len(call.Args) >= 3 && goCallee(call, "assert", "Equal", "EqualValues") || ok && len(call.Args) >= 3 && goCallee(call, "require", "Equal", "EqualValues") {
				if e, ok := pair(call.Args[1], call.Args[2]); ok {
					return mutationOf(src, e), nil
				}
			}
		}
	}
	return nil, &NoMutationError{fmt.Sprintf("no top-level statement of %s compares a result with a literal", fn)}
}

// goIfCompare is the edit for an if statement that compares with a
// literal: `got != want`, `!reflect.DeepEqual(got, want)`,
// `!cmp.Equal(got, want)`, `diff := cmp.Diff(want, got); diff != ""`,
// `!got.Equal(want)`.
func goIfCompare(s *ast.IfStmt, pair func(a, b ast.Expr) (edit, bool)) (edit, bool) {
	if as, ok := s.Init.(*ast.AssignStmt); ok && len(as.Rhs) == 1 {
		if call, ok := as.Rhs[0].(*ast.CallExpr); ok && goCallee(call, "cmp", "Diff") && len(call.Args) >= 2 {
			return pair(call.Args[0], call.Args[1])
		}
	}
	switch c := s.Cond.(type) {
	case *ast.BinaryExpr:
		if c.Op == token.NEQ || c.Op == token.EQL {
			return pair(c.X, c.Y)
		}
	case *ast.UnaryExpr:
		call, ok := c.X.(*ast.CallExpr)
		if c.Op == token.NOT && ok && len(call.Args) >= 2 && (goCallee(call, "reflect", "DeepEqual") || goCallee(call, "cmp", "Equal")) {
			return pair(call.Args[0], call.Args[1])
		}
		// got.Equal(want): the method a type defines to compare itself.
		if sel, isSel := callFun(call); c.Op == token.NOT && ok && isSel && sel.Sel.Name == "Equal" && len(call.Args) == 1 {
			return pair(sel.X, call.Args[0])
		}
	}
	return edit{}, false
}

func callFun(call *ast.CallExpr) (*ast.SelectorExpr, bool) {
	if call == nil {
		return nil, false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	return sel, ok
}

// goCallee says whether call calls pkg.name for one of names.
func goCallee(call *ast.CallExpr, pkg string, names ...string) bool {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	if !ok || id.Name != pkg {
		return false
	}
	for _, n := range names {
		if sel.Sel.Name == n {
			return true
		}
	}
	return false
}

// goLiteral is the edit that changes literal x: an integer or string
// literal, or a composite literal of them (its first element; in a
// keyed one, the first value), nested as deep as it goes.
func goLiteral(src []byte, x ast.Expr, off func(token.Pos) int) (edit, bool) {
	switch v := x.(type) {
	case *ast.ParenExpr:
		return goLiteral(src, v.X, off)
	case *ast.UnaryExpr:
		if b, ok := v.X.(*ast.BasicLit); ok && v.Op == token.SUB && b.Kind == token.INT {
			return goLiteral(src, b, off)
		}
	case *ast.BasicLit:
		from, to := off(v.Pos()), off(v.End())
		if from < 0 || to > len(src) || from >= to {
			return edit{}, false
		}
		switch v.Kind {
		case token.INT:
			if r, ok := flipInt(v.Value); ok {
				return edit{from, to, r}, true
			}
		case token.STRING:
			// A char put before the closing quote: longer, so different.
			if len(v.Value) >= 2 {
				return edit{to - 1, to - 1, "x"}, true
			}
		}
	case *ast.CompositeLit:
		var first edit
		found := false
		for _, el := range v.Elts {
			if kv, ok := el.(*ast.KeyValueExpr); ok {
				if _, ok := goLiteral(src, kv.Key, off); !ok && !isIdent0(kv.Key) {
					return edit{}, false
				}
				el = kv.Value
			}
			e, ok := goLiteral(src, el, off)
			if !ok {
				return edit{}, false // every element a literal, or it is no literal
			}
			if !found {
				first, found = e, true
			}
		}
		return first, found
	}
	return edit{}, false
}

// isIdent0 says whether x is a plain name: a struct literal's field key.
func isIdent0(x ast.Expr) bool { _, ok := x.(*ast.Ident); return ok }

// ---- Python ----

// pyBody is where a Python test's top-level statements are: from the
// oracle's insertion point to end, each starting with indent; self is a
// TestCase method's first parameter.
type pyBody struct {
	indent, self string
	end          int
}

// pyMutate is the mutation of the Python test whose body o.py locates:
// the first top-level `assert A == B` (a message after it allowed) or
// `self.assertEqual(A, B)` with exactly one of A, B a literal.
func pyMutate(src []byte, at int, b *pyBody, test string) (*Mutation, error) {
	end := min(b.end, len(src))
	if at < 0 || at > end {
		return nil, &NoMutationError{"the test's body is not where it was planned"}
	}
	for _, l := range pythonLines(src[at:end]) {
		if l.blank {
			continue
		}
		from, to := at+l.start, at+l.end
		line := src[from:to]
		if !bytes.HasPrefix(line, []byte(b.indent)) || len(line) > len(b.indent) && (line[len(b.indent)] == ' ' || line[len(b.indent)] == '\t') {
			continue // a nested statement
		}
		stmt := line[len(b.indent):pyCodeEnd(line, len(b.indent))]
		base := from + len(b.indent)
		var a, c [2]int // the compared sides, as offsets into stmt
		ok := false
		switch {
		case l.word == "assert":
			a, c, ok = pyAssertSides(stmt)
		case b.self != "" && bytes.HasPrefix(stmt, []byte(b.self+".assertEqual(")):
			a, c, ok = pyCallSides(stmt, len(b.self)+len(".assertEqual("))
		}
		if !ok {
			continue
		}
		ea, oka := pyLiteralEdit(stmt, a)
		ec, okc := pyLiteralEdit(stmt, c)
		var e edit
		switch {
		case oka && !okc:
			e = ea
		case okc && !oka:
			e = ec
		default:
			continue
		}
		e.from, e.to = e.from+base, e.to+base
		return mutationOf(src, e), nil
	}
	return nil, &NoMutationError{fmt.Sprintf("no top-level statement of %s compares a result with a literal", test)}
}

// pyAssertSides splits `assert A == B[, msg]` into A and B: one == at
// bracket depth 0, no other statement on the line.
func pyAssertSides(stmt []byte) (a, b [2]int, ok bool) {
	i := len("assert")
	if len(stmt) <= i || (stmt[i] != ' ' && stmt[i] != '\t' && stmt[i] != '(') {
		return a, b, false
	}
	end, eq, n := len(stmt), -1, 0
	bad := false
	pyScan(stmt, i, func(j, depth int) bool {
		if depth != 0 {
			return false
		}
		switch stmt[j] {
		case ';':
			bad = true
			return true
		case ',':
			end = j
			return true
		case '=', '!', '<', '>':
			if j+1 < len(stmt) && stmt[j] == '=' && stmt[j+1] == '=' && (j == 0 || !strings.ContainsRune("=!<>", rune(stmt[j-1]))) {
				eq, n = j, n+1
			} else if stmt[j] != '=' || j == 0 || stmt[j-1] != '=' {
				bad = true // another comparison: not one equality
			}
		}
		return false
	})
	if bad || n != 1 || eq < i || eq+2 > end {
		return a, b, false
	}
	return [2]int{i, eq}, [2]int{eq + 2, end}, true
}

// pyCallSides splits the call whose arguments start at open into its
// first two arguments: the call ends the statement.
func pyCallSides(stmt []byte, open int) (a, b [2]int, ok bool) {
	var commas []int
	close := -1
	pyScan(stmt, open-1, func(j, depth int) bool { // from the call's own (
		switch {
		case depth == 0 && stmt[j] == ')':
			close = j
			return true
		case depth == 1 && stmt[j] == ',':
			commas = append(commas, j)
		}
		return false
	})
	if close < 0 || close != len(stmt)-1 || len(commas) == 0 {
		return a, b, false
	}
	second := close
	if len(commas) > 1 {
		second = commas[1]
	}
	return [2]int{open, commas[0]}, [2]int{commas[0] + 1, second}, true
}

// pyLiteralEdit is the edit that changes the literal stmt[side[0]:side[1]]
// (spaces around it allowed), or false when that side is no literal.
func pyLiteralEdit(stmt []byte, side [2]int) (edit, bool) {
	from, to := side[0], side[1]
	for from < to && isSpace(stmt[from]) {
		from++
	}
	for to > from && isSpace(stmt[to-1]) {
		to--
	}
	if from >= to {
		return edit{}, false
	}
	p := &pyLit{s: stmt[:to]}
	e, ok := p.value(from)
	if !ok || p.end != to || e.repl == "" { // True, False, None: nothing to change
		return edit{}, false
	}
	return e, true
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\\' }

// pyLit parses a Python literal: decimal integers (a sign allowed),
// plain or bytes strings (adjacent ones concatenated), tuples, lists
// and dicts of literals, True, False, None. It reads no comments.
type pyLit struct {
	s   []byte
	end int
}

func (p *pyLit) skip(i int) int {
	for i < len(p.s) && isSpace(p.s[i]) {
		i++
	}
	return i
}

// value parses the literal at i, sets p.end past it and returns the
// edit of its first mutable part (in a dict, its last value: the one a
// repeated key keeps).
func (p *pyLit) value(i int) (edit, bool) {
	i = p.skip(i)
	if i >= len(p.s) {
		return edit{}, false
	}
	s := p.s
	switch c := s[i]; {
	case c == '-' || c == '+' || c >= '0' && c <= '9':
		j := i
		if c == '-' || c == '+' {
			j = p.skip(i + 1)
		}
		k := j
		for k < len(s) && s[k] >= '0' && s[k] <= '9' {
			k++
		}
		if k == j || k < len(s) && (isIdent(s[k]) || s[k] == '.') || k-j > 1 && s[j] == '0' {
			return edit{}, false // a float, a hex literal, 0-prefixed: left alone
		}
		r, ok := flipInt(string(s[j:k]))
		p.end = k
		return edit{j, k, r}, ok
	case c == '\'' || c == '"' || (c == 'b' || c == 'B') && i+1 < len(s) && (s[i+1] == '\'' || s[i+1] == '"'):
		j := i
		if s[j] == 'b' || s[j] == 'B' {
			j++
		}
		k := endOfString(s, j)
		if k <= j+1 || s[k-1] != s[j] {
			return edit{}, false
		}
		p.end = k
		// Adjacent literals are one string: the edit goes in the first.
		if n := p.skip(k); n < len(s) && (s[n] == '\'' || s[n] == '"') {
			if _, ok := p.value(n); !ok {
				return edit{}, false
			}
		}
		return edit{k - 1, k - 1, "x"}, true
	case c == '(' || c == '[' || c == '{':
		return p.container(i)
	case isIdent(c):
		k := i
		for k < len(s) && isIdent(s[k]) {
			k++
		}
		switch string(s[i:k]) {
		case "True", "False", "None":
			p.end = k
			return edit{}, true // a literal, but no part to change
		}
	}
	return edit{}, false
}

// container parses a tuple, list or dict at i. An empty one gets an
// element: None, or None: None.
func (p *pyLit) container(i int) (edit, bool) {
	s := p.s
	open := s[i]
	close := map[byte]byte{'(': ')', '[': ']', '{': '}'}[open]
	j := p.skip(i + 1)
	if j < len(s) && s[j] == close {
		p.end = j + 1
		switch open {
		case '(':
			return edit{j, j, "None,"}, true
		case '[':
			return edit{j, j, "None"}, true
		}
		return edit{}, false // {} is a dict, but set() compares with it too: left alone
	}
	var found edit
	has := false
	dict := false
	for n := 0; ; n++ {
		e, ok := p.value(j)
		if !ok {
			return edit{}, false
		}
		j = p.skip(p.end)
		if j < len(s) && s[j] == ':' {
			if open != '{' || n > 0 && !dict {
				return edit{}, false
			}
			dict = true
			e, ok = p.value(j + 1)
			if !ok {
				return edit{}, false
			}
			j = p.skip(p.end)
		} else if open == '{' {
			return edit{}, false // a set: a changed element may equal another
		}
		if e.repl != "" && (!has || dict) {
			found, has = e, true
		}
		switch {
		case j < len(s) && s[j] == ',':
			j = p.skip(j + 1)
			if j < len(s) && s[j] == close {
				p.end = j + 1
				return found, has
			}
		case j < len(s) && s[j] == close:
			if open == '(' && n == 0 {
				return edit{}, false // (x) is x parenthesized: left to the caller's reading
			}
			p.end = j + 1
			return found, has
		default:
			return edit{}, false
		}
	}
}

// pyCodeEnd is the index in line just past its last byte of code, from
// i: a trailing comment and spaces are not code.
func pyCodeEnd(line []byte, i int) int {
	end := i
	pyScan(line, i, func(j, _ int) bool {
		switch c := line[j]; {
		case c == '\'' || c == '"':
			end = endOfString(line, j)
		case !isSpace(c):
			end = j + 1
		}
		return false
	})
	return end
}
