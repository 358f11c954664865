package runner

import (
	"bytes"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Canary is a test that must fail, written beside a card command's oracle
// test: in the same folder and package, importing what the oracle test
// file imports, failing through the assertion its runner's tests use.
// Run under the command retargeted at it, it shows whether the runner
// still reports a failure at all (a candidate that neuters the test
// framework from library code makes every test pass, the canary too).
type Canary struct {
	// File is where to write it, repository-relative and slash-separated.
	File string
	// Source is its content.
	Source []byte
	// Argv is the command retargeted at the canary alone: the same
	// interpreter, wrappers and flags, with the selection replaced.
	Argv []string
	// Oracle is the oracle test file the canary was modelled on.
	Oracle string
}

// NotRecognizedError says why no canary can be planned for a command:
// its runner, or its selection, is not one failpass follows.
type NotRecognizedError struct{ Why string }

func (e *NotRecognizedError) Error() string { return "runner not recognized: " + e.Why }

// TokenLen is the length of a canary token: lowercase letters and
// digits, the first a letter.
const TokenLen = 12

var tokenRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9]{11}$`) })

// maxOracleSize bounds what PlanCanary reads of an oracle test file, and
// maxWalk how many entries it visits finding a Go test under "./...".
const (
	maxOracleSize = 4 << 20
	maxWalk       = 200_000
)

// PlanCanary plans the canary for argv run in workdir, reading the tree
// (the patched worktree) through fsys. token names it: random, so that
// nothing can tell it from the card (see TokenLen); it appears in the
// file, test and argv, and nothing else marks the canary as one. An
// unrecognized runner or selection is a *NotRecognizedError; any other
// error is trouble reading fsys.
func PlanCanary(fsys fs.FS, argv []string, workdir, token string) (*Canary, error) {
	if !tokenRE().MatchString(token) {
		return nil, fmt.Errorf("runner: canary token %q is not %d lowercase letters and digits", token, TokenLen)
	}
	c, l := recognize(argv, workdir)
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
	switch c.Kind {
	case Pytest:
		return c.pytestCanary(fsys, argv, l, token)
	case Unittest:
		return c.unittestCanary(fsys, argv, l, token)
	}
	return c.goCanary(fsys, argv, l, token)
}

func inTree(p string) bool {
	return p != ".." && !strings.HasPrefix(p, "../") && !path.IsAbs(p)
}

// oracleFile reads the oracle test file at repository path p: a regular
// Python file inside the tree.
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

func (c Command) pytestCanary(fsys fs.FS, argv []string, l *layout, token string) (*Canary, error) {
	t := c.Targets[0]
	if !strings.HasSuffix(t.Path, ".py") {
		return nil, &NotRecognizedError{fmt.Sprintf("pytest selects %q, not a test file or node id", t.Path)}
	}
	oracle := path.Join(c.Workdir, t.Path)
	src, err := oracleFile(fsys, oracle)
	if err != nil {
		return nil, err
	}
	file := "test_" + token + ".py"
	rel := path.Join(path.Dir(t.Path), file)
	var b bytes.Buffer
	b.Write(pythonImports(src))
	var node string
	if class, _, ok := strings.Cut(t.ID, "::"); ok && unittestClass(src, class) {
		// The oracle is a unittest.TestCase that pytest runs: so is the
		// canary, failing through self.assertEqual.
		class := "Test" + strings.ToUpper(token[:1]) + token[1:]
		fmt.Fprintf(&b, "import unittest\n\n\nclass %s(unittest.TestCase):\n    def test_%s(self):\n        self.assertEqual(%q, %q)\n", class, token, token[:5], token[5:])
		node = rel + "::" + class + "::test_" + token
	} else {
		fn := pytestFunction(t.ID, token)
		fmt.Fprintf(&b, "\n\ndef %s():\n    got, want = %q, %q\n    assert got == want\n", fn, token[:5], token[5:])
		node = rel + "::" + fn
	}
	return &Canary{
		File: path.Join(path.Dir(oracle), file), Source: b.Bytes(), Oracle: oracle,
		Argv: retarget(argv, l, []string{node}),
	}, nil
}

// unittestClass says whether Python source declares class at top level
// with a base whose name says TestCase (unittest.TestCase, a project's
// own SomethingTestCase).
func unittestClass(src []byte, class string) bool {
	re := regexp.MustCompile(`(?m)^class\s+` + regexp.QuoteMeta(class) + `\s*\(([^)]*)\)`)
	m := re.FindSubmatch(src)
	return m != nil && bytes.Contains(m[1], []byte("TestCase"))
}

// pytestFunction names the canary's test function so pytest collects it
// as it collects the oracle: "test_<token>", or the oracle function's own
// prefix when it does not start with "test" (a project whose
// python_functions says "check_*").
func pytestFunction(id, token string) string {
	name := id
	if i := strings.LastIndex(name, "::"); i >= 0 {
		name = name[i+2:]
	}
	name, _, _ = strings.Cut(name, "[")
	if name == "" || strings.HasPrefix(name, "test") {
		return "test_" + token
	}
	if i := strings.IndexByte(name, '_'); i > 0 {
		return name[:i+1] + token
	}
	return "test_" + token
}

func (c Command) unittestCanary(fsys fs.FS, argv []string, l *layout, token string) (*Canary, error) {
	t := c.Targets[0]
	module := "test_" + token
	var oracle, target string
	if t.Path != "" {
		if !strings.HasSuffix(t.Path, ".py") {
			return nil, &NotRecognizedError{fmt.Sprintf("unittest selects %q, not a test module", t.Path)}
		}
		oracle = path.Join(c.Workdir, t.Path)
		target = path.Join(path.Dir(t.Path), module+".py")
	} else {
		for _, cand := range c.UnittestModule(t) {
			if fi, err := fs.Stat(fsys, cand.File); err == nil && fi.Mode().IsRegular() && inTree(cand.File) {
				oracle = cand.File
				if i := strings.LastIndexByte(cand.Module, '.'); i >= 0 {
					target = cand.Module[:i+1] + module
				} else {
					target = module
				}
				break
			}
		}
		if oracle == "" {
			return nil, &NotRecognizedError{fmt.Sprintf("no module file in the tree for %q", t.ID)}
		}
	}
	src, err := oracleFile(fsys, oracle)
	if err != nil {
		return nil, err
	}
	class := "Test" + strings.ToUpper(token[:1]) + token[1:]
	var b bytes.Buffer
	b.Write(pythonImports(src))
	fmt.Fprintf(&b, "import unittest\n\n\nclass %s(unittest.TestCase):\n    def test_%s(self):\n        self.assertEqual(%q, %q)\n", class, token, token[:5], token[5:])
	return &Canary{
		File: path.Join(path.Dir(oracle), module+".py"), Source: b.Bytes(), Oracle: oracle,
		Argv: retarget(argv, l, []string{target}),
	}, nil
}

func (c Command) goCanary(fsys fs.FS, argv []string, l *layout, token string) (*Canary, error) {
	if len(c.Targets) != 1 {
		return nil, &NotRecognizedError{"go test names several packages"}
	}
	t := c.Targets[0]
	if !t.Local() {
		return nil, &NotRecognizedError{fmt.Sprintf("go test names %q, not a package folder (./...)", t.Path)}
	}
	name := goTestName(c.Run)
	dir := c.Dir(t)
	if !inTree(dir) {
		return nil, &NotRecognizedError{fmt.Sprintf("the package %s is outside the repository", t.Path)}
	}
	pkgArg := t.Path
	if t.Recursive() {
		if name == "" {
			return nil, &NotRecognizedError{"go test runs every package under " + t.Path + " and -run names no single test"}
		}
		found, err := findGoTest(fsys, dir, name)
		if err != nil {
			return nil, err
		}
		if found == "" {
			return nil, &NotRecognizedError{fmt.Sprintf("no single package under %s declares %s", t.Path, name)}
		}
		pkgArg = localPath(path.Join(strings.TrimSuffix(strings.TrimSuffix(t.Path, "..."), "/"), relTo(dir, found)))
		dir = found
	}
	oracle, clause, err := goOracle(fsys, dir, name)
	if err != nil {
		return nil, err
	}
	test := "Test" + strings.ToUpper(token[:1]) + token[1:]
	src := fmt.Sprintf("package %s\n\nimport \"testing\"\n\nfunc %s(t *testing.T) {\n\tgot, want := %q, %q\n\tif got != want {\n\t\tt.Errorf(\"got %%q, want %%q\", got, want)\n\t}\n}\n",
		clause, test, token[:5], token[5:])
	return &Canary{
		File: path.Join(dir, token+"_test.go"), Source: []byte(src), Oracle: oracle,
		Argv: retarget(argv, l, append(noVet(argv), "-run=^"+test+"$", pkgArg)),
	}, nil
}

// noVet is "-vet=off" unless argv sets -vet itself. go test vets a
// package before testing it, and the canary's new file makes it vet the
// package again (vet's results are cached by content): time spent on what
// the canary does not ask, whether failures are still reported.
func noVet(argv []string) []string {
	for _, a := range argv {
		if a == "-vet" || a == "--vet" || strings.HasPrefix(a, "-vet=") || strings.HasPrefix(a, "--vet=") {
			return nil
		}
	}
	return []string{"-vet=off"}
}

// goTestName is the one test a -run pattern names ("^TestX$", "TestX",
// "^TestX$/^sub$"), or "" when it names none or several.
func goTestName(run string) string {
	first, _, _ := strings.Cut(run, "/")
	first = strings.TrimSuffix(strings.TrimPrefix(first, "^"), "$")
	if goIdentRE().MatchString(first) {
		return first
	}
	return ""
}

var goIdentRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(Test|Example|Fuzz)[A-Za-z0-9_]*$`) })

// goOracle picks the oracle test file in dir (the one declaring name
// when given, else the first test file) and returns it with its package
// name: a canary beside it declares the same package, internal or
// external ("x_test").
func goOracle(fsys fs.FS, dir, name string) (string, string, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", "", &NotRecognizedError{fmt.Sprintf("the package folder %s does not exist", dir)}
		}
		return "", "", err
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
		return "", "", &NotRecognizedError{fmt.Sprintf("the package %s has no test file", dir)}
	}
	pick, pickSrc := "", []byte(nil)
	for _, f := range files {
		src, err := oracleFile(fsys, path.Join(dir, f))
		if err != nil {
			return "", "", err
		}
		if pick == "" {
			pick, pickSrc = f, src
		}
		if name != "" && declares(src, name) {
			pick, pickSrc = f, src
			break
		}
	}
	af, err := parser.ParseFile(token.NewFileSet(), pick, pickSrc, parser.PackageClauseOnly)
	if err != nil {
		return "", "", &NotRecognizedError{fmt.Sprintf("the test file %s has no package clause go can read", path.Join(dir, pick))}
	}
	return path.Join(dir, pick), af.Name.Name, nil
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

// relTo is p relative to dir, which contains it.
func relTo(dir, p string) string {
	if dir == "." {
		return p
	}
	return strings.TrimPrefix(strings.TrimPrefix(p, dir), "/")
}

// localPath makes p a relative package path go reads as a folder, never
// an import path.
func localPath(p string) string {
	p = path.Clean(p)
	if p == "." || p == ".." || strings.HasPrefix(p, "./") || strings.HasPrefix(p, "../") {
		return p
	}
	return "./" + p
}

// retarget returns argv with its test selection replaced by sel: the
// positional targets and go test's -run and -skip dropped, sel put where
// the first target was (before go test's -args, or at the end, when
// there was none). Everything else stays as it was.
func retarget(argv []string, l *layout, sel []string) []string {
	drop := map[int]bool{}
	for _, i := range l.targets {
		drop[i] = true
	}
	for i, n := range l.flags {
		for j := i; j < i+n; j++ {
			drop[j] = true
		}
	}
	at := l.end
	if len(l.targets) > 0 {
		at = l.targets[0]
	}
	var out []string
	for i, a := range argv {
		if i == at {
			out = append(out, sel...)
		}
		if !drop[i] {
			out = append(out, a)
		}
	}
	if at >= len(argv) {
		out = append(out, sel...)
	}
	return out
}
