package testrunner

import (
	"errors"
	"fmt"
	"go/ast"
	"go/build/constraint"
	"go/parser"
	"go/token"
	"io/fs"
	"path"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Canary is one assertion that must fail, put first in a card
// command's oracle test, and its decoy: the same assertion made to hold.
// The gate runs the command as signed, once with the canary in the oracle
// test: it must fail, or the runner no longer reports failures at all (a
// candidate that neuters the test framework from library code makes every
// test pass, the oracle too). Every other run of the candidate gets the
// decoy, so the canary's run has the same argv, the same files and the
// same oracle test as the runs it guards; only the two strings the
// assertion compares tell them apart.
type Canary struct {
	// File is the oracle test file, repository-relative and
	// slash-separated.
	File string
	// Test names the oracle test the assertion goes into, as its runner
	// names it ("TestAdd", "test_add", "T.test_add").
	Test string
	// Original is File as the tree has it; Canary and Decoy are File
	// with the failing, and the holding, assertion put first in Test.
	Original, Canary, Decoy []byte
	// Argv is the command: the canary runs under the very argv the card
	// signed.
	Argv []string

	// mutate finds the oracle test's Mutation (see Mutate).
	mutate func() (*Mutation, error)
}

// NotRecognizedError says why no canary can be planned for a command:
// its runner, or its selection, is not one failpass follows.
type NotRecognizedError struct{ Why string }

func (e *NotRecognizedError) Error() string { return "runner not recognized: " + e.Why }

// TokenLen is the length of a canary token: lowercase letters and
// digits, the first a letter. A token's halves are the two strings an
// assertion compares.
const TokenLen = 12

var tokenRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9]{11}$`) })

// maxOracleSize bounds what PlanCanary reads of an oracle test file, and
// maxWalk how many entries it visits finding a Go test under "./...".
const (
	maxOracleSize = 4 << 20
	maxWalk       = 200_000
)

// PlanCanary plans the canary for argv run in workdir, reading the tree
// (the patched worktree) through fsys. The canary compares the halves of
// token, which must differ; the decoy compares the first half of decoy
// with itself. Both are random (see TokenLen), so that nothing in the
// card predicts them. An unrecognized runner or selection is a
// *NotRecognizedError; any other error is trouble reading fsys.
func PlanCanary(fsys fs.FS, argv []string, workdir, token, decoy string) (*Canary, error) {
	for _, t := range []string{token, decoy} {
		if !tokenRE().MatchString(t) {
			return nil, fmt.Errorf("runner: canary token %q is not %d lowercase letters and digits", t, TokenLen)
		}
	}
	if token[:TokenLen/2] == token[TokenLen/2:] {
		return nil, fmt.Errorf("runner: canary token %q compares equal strings", token)
	}
	c := Recognize(argv, workdir)
	switch {
	case c.Kind == Unknown:
		return nil, &NotRecognizedError{"the command runs no test runner failpass knows"}
	case c.Kind != Pytest && c.Kind != Unittest && c.Kind != GoTest:
		return nil, &NotRecognizedError{string(c.Kind) + " is recognized only by its configuration files"}
	case c.Narrowed != "":
		return nil, &NotRecognizedError{c.Narrowed}
	case len(c.Targets) == 0:
		return nil, &NotRecognizedError{"the command names no test"}
	case !inTree(c.Workdir):
		return nil, &NotRecognizedError{"the workdir leaves the repository"}
	}
	half := TokenLen / 2
	pair := [2][2]string{{token[:half], token[half:]}, {decoy[:half], decoy[:half]}}
	var (
		o   *oracle
		err error
	)
	switch c.Kind {
	case Pytest:
		o, err = c.pytestOracle(fsys)
	case Unittest:
		o, err = c.unittestOracle(fsys)
	default:
		o, err = c.goOracleTest(fsys)
	}
	if err != nil {
		return nil, err
	}
	canary, decoyed := o.insert(pair[0]), o.insert(pair[1])
	mutate := func() (*Mutation, error) {
		if o.py != nil {
			return pyMutate(o.src, o.at, o.py, o.test)
		}
		return goMutate(o.file, o.src, o.test)
	}
	return &Canary{File: o.file, Test: o.test, Original: o.src, Canary: canary, Decoy: decoyed, Argv: slices.Clone(argv), mutate: mutate}, nil
}

// CanaryArgv says whether the canary can follow argv run in workdir as
// far as argv alone tells: nil when only the tree (the oracle test's
// file and source) could still keep it from running, else the
// *NotRecognizedError PlanCanary gives whatever the tree. record verify
// uses it to refuse a record that says the canary did not run for a
// command it follows.
func CanaryArgv(argv []string, workdir string) error {
	c := Recognize(argv, workdir)
	switch {
	case c.Kind == Unknown:
		return &NotRecognizedError{"the command runs no test runner failpass knows"}
	case c.Kind != Pytest && c.Kind != Unittest && c.Kind != GoTest:
		return &NotRecognizedError{string(c.Kind) + " is recognized only by its configuration files"}
	case c.Narrowed != "":
		return &NotRecognizedError{c.Narrowed}
	case len(c.Targets) == 0:
		return &NotRecognizedError{"the command names no test"}
	case !inTree(c.Workdir):
		return &NotRecognizedError{"the workdir leaves the repository"}
	}
	t := c.Targets[0]
	switch c.Kind {
	case Pytest:
		if !strings.HasSuffix(t.Path, ".py") || strings.Count(t.ID, "::") > 1 {
			return &NotRecognizedError{fmt.Sprintf("pytest selects %q", t.Path)}
		}
	case Unittest:
		if t.Path != "" && !strings.HasSuffix(t.Path, ".py") {
			return &NotRecognizedError{fmt.Sprintf("unittest selects %q, not a test module", t.Path)}
		}
	case GoTest:
		names := goTestNames(c.Run)
		switch {
		case len(c.Targets) != 1 || !t.Local() || (c.Run != "" && names == nil) || !inTree(c.Dir(t)):
			return &NotRecognizedError{"go test's selection"}
		case t.Recursive() && names == nil:
			return &NotRecognizedError{"go test runs every package under " + t.Path + " and -run names no test"}
		case c.Skip != "":
			return &NotRecognizedError{"go test's -skip may skip the oracle"}
		}
	}
	return nil
}

// oracle is where an assertion goes: at offset at of file's source src,
// in the runner's own words (assert).
type oracle struct {
	file, test string
	src        []byte
	at         int
	assert     func(got, want string) string
	// py is, for a Python test, its body's statements: from at to
	// py.end at py.indent.
	py *pyBody
}

func (o *oracle) insert(pair [2]string) []byte {
	b := make([]byte, 0, len(o.src)+128)
	b = append(b, o.src[:o.at]...)
	b = append(b, o.assert(pair[0], pair[1])...)
	return append(b, o.src[o.at:]...)
}

func inTree(p string) bool {
	return p != ".." && !strings.HasPrefix(p, "../") && !path.IsAbs(p)
}

// oracleFile reads the oracle test file at repository path p: a regular
// file inside the tree.
func oracleFile(fsys fs.FS, p string) ([]byte, error) {
	if !inTree(p) || !fs.ValidPath(p) {
		return nil, &NotRecognizedError{fmt.Sprintf("the test file %s is outside the repository", p)}
	}
	fi, err := fs.Stat(fsys, p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &NotRecognizedError{fmt.Sprintf("the test file %s does not exist", p)}
		}
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &NotRecognizedError{fmt.Sprintf("%s is not a test file", p)}
	}
	if fi.Size() > maxOracleSize {
		return nil, &NotRecognizedError{fmt.Sprintf("the test file %s is over %d bytes", p, maxOracleSize)}
	}
	return fs.ReadFile(fsys, p)
}

// pytestOracle is the test a pytest command selects first: the node id's
// function or method, or for a file the first test function in it.
func (c Command) pytestOracle(fsys fs.FS) (*oracle, error) {
	t := c.Targets[0]
	if !strings.HasSuffix(t.Path, ".py") {
		return nil, &NotRecognizedError{fmt.Sprintf("pytest selects %q, not a test file or node id", t.Path)}
	}
	file := path.Join(c.Workdir, t.Path)
	src, err := oracleFile(fsys, file)
	if err != nil {
		return nil, err
	}
	class, fn := "", ""
	if t.ID != "" {
		id, _, _ := strings.Cut(t.ID, "[") // a parametrized test's id
		parts := strings.Split(id, "::")
		switch len(parts) {
		case 1:
			fn = parts[0]
			if strings.HasPrefix(fn, "Test") {
				class, fn = fn, "" // pytest collects classes named so, functions named test*
			}
		case 2:
			class, fn = parts[0], parts[1]
		default:
			return nil, &NotRecognizedError{fmt.Sprintf("pytest selects %q, a test nested in more than one class", t.ID)}
		}
	}
	return pythonOracle(file, src, Pytest, class, fn)
}

// unittestOracle is the test a unittest command selects first: the
// dotted id's method, or the first test method of its class or module.
func (c Command) unittestOracle(fsys fs.FS) (*oracle, error) {
	t := c.Targets[0]
	if t.Path != "" && !strings.HasSuffix(t.Path, ".py") {
		return nil, &NotRecognizedError{fmt.Sprintf("unittest selects %q, not a test module", t.Path)}
	}
	for _, cand := range c.UnittestModule(t) {
		fi, err := fs.Stat(fsys, cand.File)
		if err != nil || !fi.Mode().IsRegular() || !inTree(cand.File) {
			continue
		}
		src, err := oracleFile(fsys, cand.File)
		if err != nil {
			return nil, err
		}
		class, fn, _ := strings.Cut(cand.Rest, ".")
		if strings.Contains(fn, ".") {
			return nil, &NotRecognizedError{fmt.Sprintf("unittest selects %q, deeper than a test method", t.ID)}
		}
		return pythonOracle(cand.File, src, Unittest, class, fn)
	}
	return nil, &NotRecognizedError{fmt.Sprintf("no module file in the tree for %q", t.ID)}
}

// goOracleTest is the test a go test command runs first: the one -run
// names, or without -run the first test function of the package's first
// test file that builds everywhere.
func (c Command) goOracleTest(fsys fs.FS) (*oracle, error) {
	if len(c.Targets) != 1 {
		return nil, &NotRecognizedError{"go test names several packages"}
	}
	t := c.Targets[0]
	if !t.Local() {
		return nil, &NotRecognizedError{fmt.Sprintf("go test names %q, not a package folder (./...)", t.Path)}
	}
	names := goTestNames(c.Run)
	if c.Run != "" && names == nil {
		return nil, &NotRecognizedError{"go test's -run names no test by name"}
	}
	dir := c.Dir(t)
	if !inTree(dir) {
		return nil, &NotRecognizedError{fmt.Sprintf("the package %s is outside the repository", t.Path)}
	}
	if t.Recursive() {
		if names == nil {
			return nil, &NotRecognizedError{"go test runs every package under " + t.Path + " and -run names no test"}
		}
		found, err := findGoTest(fsys, dir, names[0])
		if err != nil {
			return nil, err
		}
		if found == "" {
			return nil, &NotRecognizedError{fmt.Sprintf("no single package under %s declares %s", t.Path, names[0])}
		}
		dir, names = found, names[:1]
	}
	o, err := goOracle(fsys, dir, names)
	if err != nil {
		return nil, err
	}
	if c.Skip != "" {
		if re, err := regexp.Compile(strings.Split(c.Skip, "/")[0]); err != nil || re.MatchString(o.test) {
			return nil, &NotRecognizedError{fmt.Sprintf("go test's -skip may skip %s", o.test)}
		}
	}
	return o, nil
}

// goTestNames are the tests a -run pattern names: "^TestX$", "TestX",
// "^TestX$/^sub$", and the form card from-commit writes, "^(TestA|TestB)$";
// nil when it names none, or names them by a pattern.
func goTestNames(run string) []string {
	first, _, _ := strings.Cut(run, "/")
	first = strings.TrimSuffix(strings.TrimPrefix(first, "^"), "$")
	if inner, ok := strings.CutPrefix(first, "("); ok {
		if first, ok = strings.CutSuffix(inner, ")"); !ok {
			return nil
		}
	}
	names := strings.Split(first, "|")
	for _, n := range names {
		if !goIdentRE().MatchString(n) {
			return nil
		}
	}
	return names
}

var goIdentRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(Test|Example|Fuzz)[A-Za-z0-9_]*$`) })

// goOracle finds the oracle test in the package folder dir: the first of
// the test functions names declared (for none, the first test function)
// in the first test file, in name order, that go builds here and declares
// one. Its assertion is
// t.Errorf on the test's own *testing.T, put on the line of the opening
// brace, so that no line of the file moves (a test that checks the line
// a log names still passes).
func goOracle(fsys fs.FS, dir string, names []string) (*oracle, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &NotRecognizedError{fmt.Sprintf("the package folder %s does not exist", dir)}
		}
		return nil, err
	}
	var files []string
	for _, e := range entries {
		n := e.Name()
		if e.Type().IsRegular() && strings.HasSuffix(n, "_test.go") && !strings.HasPrefix(n, "_") && !strings.HasPrefix(n, ".") {
			files = append(files, n)
		}
	}
	slices.Sort(files)
	if len(files) == 0 {
		return nil, &NotRecognizedError{fmt.Sprintf("the package %s has no test file", dir)}
	}
	var tests []string
	for _, n := range names {
		if !strings.HasPrefix(n, "Example") {
			tests = append(tests, n)
		}
	}
	if len(names) > 0 && len(tests) == 0 {
		return nil, &NotRecognizedError{fmt.Sprintf("%s is an example, whose output is its test", names[0])}
	}
	name := strings.Join(tests, " or ")
	declared := func(src []byte) bool {
		return len(tests) == 0 || slices.ContainsFunc(tests, func(n string) bool { return declares(src, n) })
	}
	notBuilt := "" // a file that declares one of tests, but is not built
	for _, f := range files {
		file := path.Join(dir, f)
		src, err := oracleFile(fsys, file)
		if err != nil {
			return nil, err
		}
		if !declared(src) {
			continue
		}
		if !goBuilt(f, src) {
			if name != "" && notBuilt == "" {
				notBuilt = file
			}
			continue
		}
		fset := token.NewFileSet()
		af, err := parser.ParseFile(fset, file, src, parser.SkipObjectResolution)
		if err != nil {
			return nil, &NotRecognizedError{fmt.Sprintf("the test file %s does not parse: %v", file, err)}
		}
		for _, d := range af.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv != nil || fd.Body == nil || (len(tests) > 0 && !slices.Contains(tests, fd.Name.Name)) {
				continue
			}
			t, ok := testParam(fd)
			if !ok {
				if name != "" {
					return nil, &NotRecognizedError{fmt.Sprintf("%s takes no named *testing.T or *testing.F", fd.Name.Name)}
				}
				continue
			}
			return &oracle{
				file: file, test: fd.Name.Name, src: src,
				at:     fset.Position(fd.Body.Lbrace).Offset + 1,
				assert: goAssert(t),
			}, nil
		}
	}
	if notBuilt != "" {
		return nil, &NotRecognizedError{fmt.Sprintf("%s, which declares %s, is not built here", notBuilt, name)}
	}
	if name != "" {
		return nil, &NotRecognizedError{fmt.Sprintf("no test file of %s that go builds here declares %s", dir, name)}
	}
	return nil, &NotRecognizedError{fmt.Sprintf("the package %s has no test function go builds here", dir)}
}

// testParam is the name of a test's *testing.T (or a fuzz test's
// *testing.F) when fd is a test function go test runs.
func testParam(fd *ast.FuncDecl) (string, bool) {
	n := fd.Name.Name
	rest, isTest := strings.CutPrefix(n, "Test")
	if !isTest {
		if rest, isTest = strings.CutPrefix(n, "Fuzz"); !isTest {
			return "", false
		}
	}
	if r, _ := utf8.DecodeRuneInString(rest); rest != "" && unicode.IsLower(r) {
		return "", false // Testing is no test
	}
	ps := fd.Type.Params.List
	if len(ps) != 1 || len(ps[0].Names) != 1 || fd.Type.Results != nil || fd.Type.TypeParams != nil {
		return "", false
	}
	star, ok := ps[0].Type.(*ast.StarExpr)
	if !ok {
		return "", false
	}
	sel, ok := star.X.(*ast.SelectorExpr)
	if !ok || (sel.Sel.Name != "T" && sel.Sel.Name != "F") {
		return "", false
	}
	t := ps[0].Names[0].Name
	return t, t != "_"
}

// goAssert is the assertion in Go: the two strings compared inside an
// if statement's own scope, so that no name of the test is shadowed.
func goAssert(t string) func(got, want string) string {
	a, b := "got", "want"
	if t == a || t == b {
		a, b = "have", "expected"
	}
	return func(got, want string) string {
		return fmt.Sprintf(" if %s, %s := %q, %q; %s != %s { %s.Errorf(\"got %%q, want %%q\", %s, %s) };", a, b, got, want, a, b, t, a, b)
	}
}

// goBuilt says whether the go command builds the test file name, with
// source src, on this machine: its name's GOOS and GOARCH suffixes and
// its //go:build line (go/build's rules, which that package would apply
// only by running the go command). A tag it cannot know (cgo, a custom
// tag) counts as unset: a canary put where go may not build it would
// pass, and refuse an honest fix.
func goBuilt(name string, src []byte) bool {
	stem := strings.TrimSuffix(strings.TrimSuffix(name, ".go"), "_test")
	parts := strings.Split(stem, "_")
	n := len(parts)
	switch {
	case n >= 3 && goKnownOS[parts[n-2]] && goKnownArch[parts[n-1]]:
		if parts[n-2] != runtime.GOOS || parts[n-1] != runtime.GOARCH {
			return false
		}
	case n >= 2 && goKnownOS[parts[n-1]]:
		if parts[n-1] != runtime.GOOS {
			return false
		}
	case n >= 2 && goKnownArch[parts[n-1]]:
		if parts[n-1] != runtime.GOARCH {
			return false
		}
	}
	af, err := parser.ParseFile(token.NewFileSet(), name, src, parser.PackageClauseOnly|parser.ParseComments)
	if err != nil {
		return false
	}
	for _, g := range af.Comments {
		if g.Pos() > af.Package {
			break
		}
		for _, c := range g.List {
			if !constraint.IsGoBuild(c.Text) && !constraint.IsPlusBuild(c.Text) {
				continue
			}
			x, err := constraint.Parse(c.Text)
			if err != nil {
				return false
			}
			ok := x.Eval(func(tag string) bool {
				switch {
				case tag == runtime.GOOS, tag == runtime.GOARCH, tag == "gc":
					return true
				case tag == "unix":
					return runtime.GOOS != "windows" && runtime.GOOS != "plan9" && runtime.GOOS != "js" && runtime.GOOS != "wasip1"
				}
				return strings.HasPrefix(tag, "go1.")
			})
			if !ok {
				return false
			}
		}
	}
	return true
}

// goKnownOS and goKnownArch are the GOOS and GOARCH values a file name's
// suffix may name (go/build's lists).
var (
	goKnownOS   = setOf("aix android darwin dragonfly freebsd hurd illumos ios js linux nacl netbsd openbsd plan9 solaris wasip1 windows zos")
	goKnownArch = setOf("386 amd64 amd64p32 arm armbe arm64 arm64be loong64 mips mipsle mips64 mips64le mips64p32 mips64p32le ppc ppc64 ppc64le riscv riscv64 s390 s390x sparc sparc64 wasm")
)

func setOf(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// declares says whether Go source declares the test function name.
func declares(src []byte, name string) bool {
	return regexp.MustCompile(`(?m)^func\s+` + regexp.QuoteMeta(name) + `\s*\(`).Match(src)
}

// findGoTest finds the one package folder under dir whose test files
// declare name, as go test ./... would visit them: no testdata, vendor,
// "." or "_" folders, no nested modules.
func findGoTest(fsys fs.FS, dir, name string) (string, error) {
	var found []string
	seen := 0
	err := fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // an unreadable folder is one go test would fail on too
		}
		if seen++; seen > maxWalk {
			return fs.SkipAll
		}
		if d.IsDir() {
			n := d.Name()
			if p != dir && (n == "testdata" || n == "vendor" || strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_")) {
				return fs.SkipDir
			}
			if p != dir {
				if _, err := fs.Stat(fsys, path.Join(p, "go.mod")); err == nil {
					return fs.SkipDir
				}
			}
			return nil
		}
		if !d.Type().IsRegular() || !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		src, err := oracleFile(fsys, p)
		if err != nil {
			return nil
		}
		if declares(src, name) && !slices.Contains(found, path.Dir(p)) {
			found = append(found, path.Dir(p))
		}
		return nil
	})
	if err != nil || len(found) != 1 {
		return "", err
	}
	return found[0], nil
}
