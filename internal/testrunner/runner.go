// Package testrunner recognizes the test runner a card command invokes, from
// its argv alone: which framework, which tests it selects, and where;
// plans the canary test beside a command's oracle test (PlanCanary);
// tells a run that failed for its environment from one that failed at a
// test (Classify); and tells which runners a project uses from its files
// (Detect). It is pure: it starts no process, and reads files only
// through the fs.FS a caller hands PlanCanary or Detect. The harness
// rule, the canary and the environment check build on what it
// recognizes; a command it does not recognize gets none of them, and
// says so.
package testrunner

import (
	"path"
	"strings"
)

// Kind names a test runner.
type Kind string

// The runners failpass recognizes. Pytest, Unittest and GoTest are
// recognized down to the tests they select; the others at the level of
// their configuration files.
const (
	Unknown  Kind = ""
	Pytest   Kind = "pytest"
	Unittest Kind = "unittest"
	GoTest   Kind = "go test"
	NPM      Kind = "npm test"
	Jest     Kind = "jest"
	Vitest   Kind = "vitest"
	NodeTest Kind = "node --test"
	Cargo    Kind = "cargo test"
)

// Command is what one card command runs, as far as its argv tells.
type Command struct {
	Kind Kind
	// Workdir is the command's workdir, repository-relative and clean
	// ("." is the root).
	Workdir string
	// Interpreter is argv[0] for `python -m pytest|unittest` forms; ""
	// for a runner started by its own script (`pytest`, `go`).
	Interpreter string
	// Targets are the positional selections in argv order: pytest paths
	// and node ids ("tests/test_x.py::TestA::test_b"), unittest dotted
	// ids or paths, go test package patterns ("./pkg", "./...").
	Targets []Target
	// Run and Skip are go test's -run and -skip values ("" when absent).
	Run, Skip string
	// Config is a configuration file the argv names explicitly (pytest -c,
	// --rootdir), relative to Workdir; "" when none.
	Config string
	// Plugins are the modules pytest's -p options load ("-p no:NAME",
	// which disables one, is not listed).
	Plugins []string
	// Discover is what unittest's discovery searches (`unittest
	// discover`, or unittest with no test named); nil otherwise.
	Discover *Discovery
	// Narrowed says the argv narrows the selection in a way failpass does
	// not follow (pytest -k or -m, unittest discover, a -run on several
	// packages): the tests that run are not exactly Targets.
	Narrowed string
}

// Discovery is a unittest discovery's start folder, file pattern and
// top-level folder, as written ("" where the argv leaves the default:
// ".", "test*.py", the start folder).
type Discovery struct {
	Start, Pattern, Top string
}

// Target is one positional selection.
type Target struct {
	// Path is the file or folder (pytest, unittest path form) or the
	// package pattern (go test), relative to the command's workdir, as
	// written; "" for a unittest dotted id.
	Path string
	// ID is what follows the path: a pytest node id's parts after the
	// first "::" ("TestA::test_b[1]"), or a unittest dotted id
	// ("tests.test_x.TestA.test_b").
	ID string
}

// Recognized says whether the runner is known at all.
func (c Command) Recognized() bool { return c.Kind != Unknown }

// Recognize reads argv (a card command's cmd) run in workdir.
func Recognize(argv []string, workdir string) Command {
	c := Command{Workdir: cleanWorkdir(workdir)}
	argv = stripWrappers(argv)
	if len(argv) == 0 {
		return c
	}
	prog := path.Base(argv[0])
	rest := argv[1:]
	switch {
	case isPython(prog):
		mod, args, ok := pythonModule(rest)
		if !ok {
			return c
		}
		switch mod {
		case "pytest", "py.test":
			c.Kind, c.Interpreter = Pytest, argv[0]
			c.pytest(args)
		case "unittest":
			c.Kind, c.Interpreter = Unittest, argv[0]
			c.unittest(args)
		}
	case prog == "pytest" || prog == "py.test":
		c.Kind = Pytest
		c.pytest(rest)
	case prog == "go":
		if len(rest) > 0 && rest[0] == "test" {
			c.Kind = GoTest
			c.goTest(rest[1:])
		}
	case prog == "npm" || prog == "pnpm" || prog == "yarn":
		if len(rest) > 0 && (rest[0] == "test" || rest[0] == "t" || (rest[0] == "run" && len(rest) > 1 && rest[1] == "test")) {
			c.Kind = NPM
		}
	case prog == "npx":
		if len(rest) > 0 {
			switch path.Base(rest[0]) {
			case "jest":
				c.Kind = Jest
			case "vitest":
				c.Kind = Vitest
			}
		}
	case prog == "jest":
		c.Kind = Jest
	case prog == "vitest":
		c.Kind = Vitest
	case prog == "node" || prog == "nodejs":
		for _, a := range rest {
			if a == "--test" {
				c.Kind = NodeTest
			}
		}
	case prog == "cargo":
		for _, a := range rest {
			if a == "test" || a == "nextest" {
				c.Kind = Cargo
				break
			}
			if !strings.HasPrefix(a, "+") && !strings.HasPrefix(a, "-") {
				break
			}
		}
	}
	return c
}

func cleanWorkdir(w string) string {
	if w == "" {
		return "."
	}
	return path.Clean(w)
}

// stripWrappers drops `env K=V ...` and `timeout DUR` prefixes, which run
// the same runner.
func stripWrappers(argv []string) []string {
	for len(argv) > 0 {
		switch path.Base(argv[0]) {
		case "env":
			argv = argv[1:]
			for len(argv) > 0 && (strings.Contains(argv[0], "=") || argv[0] == "-i" || argv[0] == "--") {
				argv = argv[1:]
			}
		case "timeout":
			argv = argv[1:]
			for len(argv) > 0 && strings.HasPrefix(argv[0], "-") {
				if (argv[0] == "-k" || argv[0] == "-s") && len(argv) > 1 {
					argv = argv[1:] // their value
				}
				argv = argv[1:]
			}
			if len(argv) > 0 {
				argv = argv[1:] // the duration
			}
		default:
			return argv
		}
	}
	return argv
}

// isPython says whether prog names a Python interpreter: python, python3,
// python3.12, pypy3.
func isPython(prog string) bool {
	for _, p := range []string{"python", "pypy"} {
		if rest, ok := strings.CutPrefix(prog, p); ok {
			return strings.Trim(rest, "0123456789.") == ""
		}
	}
	return false
}

// pythonModule finds `-m MODULE` among the interpreter's options and
// returns the module and the arguments after it.
func pythonModule(args []string) (string, []string, bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-m" && i+1 < len(args):
			return args[i+1], args[i+2:], true
		case strings.HasPrefix(a, "-m") && len(a) > 2:
			return a[2:], args[i+1:], true
		case a == "-X" || a == "-W" || a == "-c":
			if a == "-c" {
				return "", nil, false
			}
			i++
		case strings.HasPrefix(a, "-"):
		default:
			return "", nil, false // a script, not a module
		}
	}
	return "", nil, false
}

// pytestValueFlags take the next argument as their value.
var pytestValueFlags = map[string]bool{
	"-k": true, "-m": true, "-p": true, "-c": true, "-o": true, "-W": true, "-n": true, "-r": true,
	"--rootdir": true, "--confcutdir": true, "--deselect": true, "--ignore": true, "--ignore-glob": true,
	"--tb": true, "--basetemp": true, "--maxfail": true, "--durations": true, "--import-mode": true,
	"--config-file": true, "--override-ini": true, "--junitxml": true, "--junit-xml": true, "--log-level": true,
	"--capture": true, "--cov": true, "--cov-report": true, "--timeout": true, "--dist": true, "--numprocesses": true,
}

func (c *Command) pytest(args []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			for _, t := range args[i+1:] {
				c.Targets = append(c.Targets, pytestTarget(t))
			}
			return
		}
		if !strings.HasPrefix(a, "-") {
			c.Targets = append(c.Targets, pytestTarget(a))
			continue
		}
		name, val, hasVal := strings.Cut(a, "=")
		if !hasVal && pytestValueFlags[name] && i+1 < len(args) {
			val = args[i+1]
			i++
		} else if !hasVal && len(name) > 2 && !strings.HasPrefix(name, "--") && pytestValueFlags[name[:2]] {
			val = name[2:] // -kexpr
			name = name[:2]
		}
		switch name {
		case "-k", "-m":
			c.Narrowed = "pytest " + name + " " + val
		case "-c", "--config-file", "--rootdir":
			c.Config = val
		case "-p":
			if !strings.HasPrefix(val, "no:") && val != "" {
				c.Plugins = append(c.Plugins, val)
			}
		}
	}
}

func pytestTarget(a string) Target {
	p, id, _ := strings.Cut(a, "::")
	return Target{Path: p, ID: id}
}

func (c *Command) unittest(args []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "discover":
			c.Narrowed = "unittest discover"
			c.Discover = discovery(args[i+1:])
			return
		case a == "-k":
			c.Narrowed = "unittest -k"
			i++
		case strings.HasPrefix(a, "-k"):
			c.Narrowed = "unittest -k"
		case strings.HasPrefix(a, "-"):
		case strings.HasSuffix(a, ".py") || strings.Contains(a, "/"):
			c.Targets = append(c.Targets, Target{Path: a})
		default:
			c.Targets = append(c.Targets, Target{ID: a})
		}
	}
	if len(c.Targets) == 0 && c.Narrowed == "" {
		c.Narrowed = "unittest with no test named (discovery)"
		c.Discover = &Discovery{}
	}
}

// discovery reads `unittest discover`'s options and positional start,
// pattern and top-level folder.
func discovery(args []string) *Discovery {
	d := &Discovery{}
	var pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, val, hasVal := strings.Cut(a, "=")
		var dst *string
		switch name {
		case "-s", "--start-directory":
			dst = &d.Start
		case "-p", "--pattern":
			dst = &d.Pattern
		case "-t", "--top-level-directory":
			dst = &d.Top
		case "-k":
			if !hasVal {
				i++
			}
			continue
		default:
			if !strings.HasPrefix(a, "-") {
				pos = append(pos, a)
			}
			continue
		}
		if !hasVal && i+1 < len(args) {
			val = args[i+1]
			i++
		}
		*dst = val
	}
	for i, p := range pos {
		switch {
		case i == 0 && d.Start == "":
			d.Start = p
		case i == 1 && d.Pattern == "":
			d.Pattern = p
		case i == 2 && d.Top == "":
			d.Top = p
		}
	}
	return d
}

// goValueFlags are go test's (and go build's) flags that take a value
// when written without "=". The rest are boolean.
var goValueFlags = map[string]bool{
	"run": true, "skip": true, "count": true, "timeout": true, "tags": true, "p": true, "cpu": true,
	"bench": true, "benchtime": true, "coverprofile": true, "covermode": true, "coverpkg": true,
	"cpuprofile": true, "memprofile": true, "memprofilerate": true, "blockprofile": true, "blockprofilerate": true,
	"mutexprofile": true, "mutexprofilefraction": true, "outputdir": true, "parallel": true, "shuffle": true,
	"vet": true, "mod": true, "modfile": true, "o": true, "exec": true, "ldflags": true, "gcflags": true,
	"asmflags": true, "pgo": true, "C": true, "overlay": true, "list": true, "fuzz": true, "fuzztime": true,
	"fuzzminimizetime": true, "trace": true, "toolexec": true, "installsuffix": true, "compiler": true,
	"gccgoflags": true, "buildmode": true, "buildvcs": true,
}

func (c *Command) goTest(args []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "-args" || a == "--args" {
			break // the rest goes to the test binary
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			c.Targets = append(c.Targets, Target{Path: a})
			continue
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !hasVal && goValueFlags[name] && i+1 < len(args) {
			val = args[i+1]
			i++
		}
		switch name {
		case "run", "test.run":
			c.Run = val
		case "skip", "test.skip":
			c.Skip = val
		case "C":
			c.Workdir = path.Clean(path.Join(c.Workdir, val))
		case "modfile", "overlay":
			c.Config = val
		}
	}
	if len(c.Targets) == 0 {
		c.Targets = []Target{{Path: "."}} // go test with no package tests the current one
	}
	if c.Run != "" && len(c.Targets) > 1 {
		c.Narrowed = "go test -run over several packages"
	}
}

// Dir is the repository-relative folder a target's path names (for a Go
// package pattern, with any "/..." dropped).
func (c Command) Dir(t Target) string {
	p := strings.TrimSuffix(t.Path, "/...")
	if p == "..." {
		p = "."
	}
	return path.Clean(path.Join(c.Workdir, p))
}

// Recursive says whether a go test target covers every package below it.
func (t Target) Recursive() bool {
	return t.Path == "..." || strings.HasSuffix(t.Path, "/...")
}

// Local says whether a go test target is a relative package path ("./x",
// "."), rather than an import path that needs the module to resolve.
func (t Target) Local() bool {
	return t.Path == "." || t.Path == ".." || strings.HasPrefix(t.Path, "./") || strings.HasPrefix(t.Path, "../")
}

// UnittestModule is a unittest target's module file candidates, relative
// to the repository root: for "a.b.C.test_x", a/b/C/test_x.py,
// a/b/C.py, a/b.py, ... (the caller keeps the first that exists), and the
// remaining dotted parts as the id within the module; for a path target,
// the path itself.
func (c Command) UnittestModule(t Target) []Candidate {
	if t.Path != "" {
		return []Candidate{{File: path.Clean(path.Join(c.Workdir, t.Path))}}
	}
	parts := strings.Split(t.ID, ".")
	var out []Candidate
	for n := len(parts); n >= 1; n-- {
		file := path.Join(c.Workdir, path.Join(parts[:n]...)+".py")
		out = append(out, Candidate{File: path.Clean(file), Module: strings.Join(parts[:n], "."), Rest: strings.Join(parts[n:], ".")})
	}
	return out
}

// Candidate is one way to read a unittest dotted id: the module file,
// its dotted name, and the rest of the id (class and method).
type Candidate struct {
	File, Module, Rest string
}
