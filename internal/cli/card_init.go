package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/failpass/failpass/internal/card"
	"github.com/failpass/failpass/internal/run"
)

const cardInitUsage = "failpass card init [--card FILE] [--id ID] [--force] [--repo DIR] [--runner go|pytest|unittest|npm|cargo] [--python PATH]"

// Placeholder starts every value of a card template the maintainer must
// replace; `card lint` exits 1 while one is left.
const Placeholder = "REPLACE-"

// initRunner is a test runner card init writes a card for.
type initRunner struct {
	name   string
	what   string   // for the message: "a Go module (go.mod)"
	python string   // the module a Python interpreter must import, "" for others
	fail   []string // argv; "{python}" is the interpreter
	inv    []string
	failEx int // the runner's exit code for a failing test
	deny   []string
	// prepare fetches the project's dependencies (the card's prepare
	// block); with prepareOn it is written active, else as a comment.
	prepare   []string
	prepareOn bool
}

var initRunners = map[string]*initRunner{
	"go": {name: "go", what: "a Go module (go.mod)",
		fail:   []string{"go", "test", "-count=1", "-run", "^" + Placeholder + "TestName$", "./" + Placeholder + "package"},
		inv:    []string{"go", "test", "-count=1", "./" + Placeholder + "package"},
		failEx: 1, deny: []string{".github/**", "go.mod", "go.sum", "vendor/**"},
		prepare: []string{"go", "mod", "download"}, prepareOn: true},
	"pytest": {name: "pytest", what: "a pytest project", python: "pytest",
		fail:   []string{"{python}", "-m", "pytest", "-q", Placeholder + "tests/test_file.py::test_name"},
		inv:    []string{"{python}", "-m", "pytest", "-q", Placeholder + "tests/test_file.py"},
		failEx: 1, deny: []string{".github/**", "pyproject.toml", "setup.cfg", "setup.py", "tox.ini", "pytest.ini", "**/conftest.py"},
		prepare: []string{"{python}", "-m", "pip", "install", "-r", "requirements.txt"}},
	"unittest": {name: "unittest", what: "a Python project (unittest)", python: "unittest",
		fail:   []string{"{python}", "-m", "unittest", Placeholder + "tests.test_module.TestCase.test_name"},
		inv:    []string{"{python}", "-m", "unittest", Placeholder + "tests.test_module"},
		failEx: 1, deny: []string{".github/**", "pyproject.toml", "setup.cfg", "setup.py", "tox.ini"},
		prepare: []string{"{python}", "-m", "pip", "install", "-r", "requirements.txt"}},
	"npm": {name: "npm", what: "an npm package (package.json)",
		fail:   []string{"npm", "test", "--", Placeholder + "test-file-or-pattern"},
		inv:    []string{"npm", "test"},
		failEx: 1, deny: []string{".github/**", "package.json", "package-lock.json", "npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml", "node_modules/**"}},
	"cargo": {name: "cargo", what: "a Cargo crate (Cargo.toml)",
		fail:   []string{"cargo", "test", Placeholder + "test_name", "--", "--exact"},
		inv:    []string{"cargo", "test"},
		failEx: 101, deny: []string{".github/**", "Cargo.toml", "Cargo.lock", "build.rs", "rust-toolchain*"}},
}

// initOrder is the detection order when several runners fit.
var initOrder = []string{"go", "cargo", "pytest", "unittest", "npm"}

// detectRunners lists the runners whose marks dir holds, in initOrder.
func detectRunners(dir string) []string {
	has := func(name string) bool {
		_, err := os.Stat(filepath.Join(dir, name))
		return err == nil
	}
	contains := func(name, text string) bool {
		b, err := readSmall(filepath.Join(dir, name))
		return err == nil && strings.Contains(string(b), text)
	}
	pytest := has("pytest.ini") || has("conftest.py") || has("tests/conftest.py") || has("test/conftest.py") ||
		contains("pyproject.toml", "[tool.pytest") || contains("setup.cfg", "[tool:pytest]") || contains("tox.ini", "[pytest]")
	python := has("pyproject.toml") || has("setup.py") || has("setup.cfg")
	if !python {
		py, _ := filepath.Glob(filepath.Join(dir, "*.py"))
		tests, _ := filepath.Glob(filepath.Join(dir, "test*", "test*.py"))
		python = len(py)+len(tests) > 0
	}
	found := map[string]bool{
		"go": has("go.mod"), "cargo": has("Cargo.toml"), "npm": has("package.json"),
		"pytest": pytest, "unittest": python && !pytest,
	}
	var out []string
	for _, r := range initOrder {
		if found[r] {
			out = append(out, r)
		}
	}
	return out
}

// readSmall reads at most 1 MiB of a project file for detection.
func readSmall(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, 1<<20)
	n, err := f.Read(b)
	if n > 0 {
		err = nil
	}
	return b[:n], err
}

func runCardInit(ctx context.Context, env *Env, args []string) error {
	fs := newFlags(env, "card init", cardInitUsage)
	path := fs.String("card", "card.yml", "write the template to `FILE`")
	id := fs.String("id", Placeholder+"ISSUE-ID", "the card's `ID`, usually the issue it locks")
	force := fs.Bool("force", false, "overwrite FILE if it exists")
	dir := fs.String("repo", ".", "the project `DIR` whose test runner is detected")
	runnerName := fs.String("runner", "", "write a card for this runner (`NAME`: go, pytest, unittest, npm, cargo) instead of detecting one")
	python := fs.String("python", "", "the Python interpreter `PATH` of a pytest or unittest card (default: $VIRTUAL_ENV/bin/python, else the first python3 or python on PATH that imports the runner)")
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return &UsageError{Msg: fmt.Sprintf("unexpected argument %q", pos[0]), Hint: "name the file with --card FILE"}
	}
	if *runnerName != "" && initRunners[*runnerName] == nil {
		return &UsageError{Msg: fmt.Sprintf("--runner %q: want go, pytest, unittest, npm or cargo", *runnerName)}
	}
	r := initRunners[*runnerName]
	if r == nil {
		if st, err := os.Stat(*dir); err != nil || !st.IsDir() {
			return Errorf("--repo %s: no such folder", *dir).Hint("pass the project's folder")
		}
		found := detectRunners(*dir)
		if len(found) == 0 {
			return Errorf("no test runner detected in %s (no go.mod, Cargo.toml, package.json, pytest or Python project files)", *dir).
				Hint("name it: failpass card init --runner go|pytest|unittest|npm|cargo").
				Hint("or run card init in the project's folder, or pass --repo DIR")
		}
		r = initRunners[found[0]]
		also := ""
		if len(found) > 1 {
			also = fmt.Sprintf(" (also found: %s; --runner picks another)", strings.Join(found[1:], ", "))
		}
		fmt.Fprintf(env.Stderr, "detected %s%s\n", r.what, also)
	}
	if *python != "" && r.python == "" {
		return &UsageError{Msg: fmt.Sprintf("--python goes with a pytest or unittest card, not %s", r.name)}
	}
	interp := ""
	if r.python != "" {
		if interp, err = findPython(ctx, env, *python, r.python); err != nil {
			return err
		}
		fmt.Fprintf(env.Stderr, "python: %s\n", interp)
	}
	data := []byte(cardTemplate(r, *id, interp))
	if _, err := card.Parse(*path, data); err != nil {
		var pe *card.ParseError
		if errors.As(err, &pe) && pe.Field == "id" {
			return Errorf("--id %q: %s", *id, pe.Msg).Hint("give a non-empty id without control characters, e.g. --id ISSUE-4419")
		}
		if errors.As(err, &pe) && interp != "" {
			return Errorf("the interpreter path %q cannot go into a card: %s", interp, pe.Msg).Hint("pass another with --python PATH")
		}
		return fmt.Errorf("card template does not parse: %w", err)
	}
	if err := writeNew(*path, data, *force); err != nil {
		if errors.Is(err, os.ErrExist) {
			return Errorf("%s already exists", *path).Hint("pass --force to overwrite it, or choose another --card FILE")
		}
		return Errorf("cannot write %s: %v", *path, err).Hint("choose a --card FILE in a writable folder")
	}
	fmt.Fprintf(env.Stdout, "card %s: written (%s)\n", *path, r.name)
	fmt.Fprintf(env.Stderr, "next: replace every %s... value, then run 'failpass card lint --card %s'\n", Placeholder, *path)
	return nil
}

// findPython picks the interpreter of a Python card: --python when given,
// else $VIRTUAL_ENV/bin/python, else the first python3 or python on PATH
// that can import module. Shims (pyenv's, a wrapper script) are resolved:
// the card names the interpreter the shim runs (sys.executable), which a
// sandboxed command can run without the shim's environment.
func findPython(ctx context.Context, env *Env, given, module string) (string, error) {
	if given != "" {
		p := given
		if !strings.Contains(p, "/") {
			if lp, err := lookPath(env, p); err == nil {
				p = lp
			}
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			return "", err
		}
		exe, why := probePython(ctx, env, abs, module)
		if exe == "" {
			return "", Errorf("--python %s cannot import %s: %s", given, module, why).
				Hint("pass an interpreter that has %s installed (a virtualenv's bin/python)", module)
		}
		return exe, nil
	}
	if venv := env.Getenv("VIRTUAL_ENV"); venv != "" {
		p := filepath.Join(venv, "bin", "python")
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
	}
	seen := map[string]bool{}
	var tried []string
	for _, d := range filepath.SplitList(env.Getenv("PATH")) {
		if d == "" || !filepath.IsAbs(d) {
			continue // a relative PATH entry would depend on the folder
		}
		for _, name := range []string{"python3", "python"} {
			p := filepath.Join(d, name)
			if st, err := os.Stat(p); err != nil || st.IsDir() || st.Mode()&0o111 == 0 || seen[p] {
				continue
			}
			seen[p] = true
			exe, _ := probePython(ctx, env, p, module)
			if exe != "" {
				return exe, nil
			}
			tried = append(tried, p)
		}
	}
	e := Errorf("no python3 or python on PATH can import %s", module)
	if len(tried) > 0 {
		e = Errorf("no python3 or python on PATH can import %s (tried %s)", module, strings.Join(tried, ", "))
	}
	return "", e.Hint("pass the interpreter with --python PATH (a virtualenv's bin/python), or activate the virtualenv").
		Hint("or install it: %s -m pip install %s", "python3", module)
}

// lookPath finds name on the environment's PATH.
func lookPath(env *Env, name string) (string, error) {
	for _, d := range filepath.SplitList(env.Getenv("PATH")) {
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", os.ErrNotExist
}

// probePython runs python and asks it to import module and say which
// interpreter it is. It returns "" and why when that fails.
func probePython(ctx context.Context, env *Env, python, module string) (string, string) {
	tmp, err := os.MkdirTemp("", "failpass-python-")
	if err != nil {
		return "", err.Error()
	}
	defer os.RemoveAll(tmp)
	log := filepath.Join(tmp, "out.log")
	// The environment a card command gets, and pyenv's variables: a
	// pyenv shim needs them to pick the interpreter the user means, and
	// the card then names that interpreter by its own path.
	penv := run.Allowed(env.Getenv, append(slices.Clone(run.CommandEnv), "PYENV_ROOT", "PYENV_VERSION")...)
	res, err := run.Run(ctx, run.Spec{
		Argv: []string{python, "-c", "import sys, " + module + "; sys.stdout.write('\\n' + sys.executable + '\\n')"},
		Root: tmp, Env: penv, Timeout: 30 * time.Second, Log: log, MaxLog: 64 << 10,
	})
	if err != nil {
		return "", err.Error()
	}
	if res.Exit != 0 || res.Inconclusive() {
		return "", res.String()
	}
	out, _ := os.ReadFile(log)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	exe := strings.TrimSpace(lines[len(lines)-1])
	if !filepath.IsAbs(exe) {
		return python, "" // an interpreter that does not know its path: take the one found
	}
	return exe, ""
}

// cardTemplate is the card `card init` writes for r: valid YAML whose
// commands hold Placeholder values, with the field reference in comments.
func cardTemplate(r *initRunner, id, python string) string {
	argv := func(a []string) string {
		q := make([]string, len(a))
		for i, s := range a {
			if s == "{python}" {
				s = python
			}
			q[i] = strconv.Quote(s)
		}
		return "[" + strings.Join(q, ", ") + "]"
	}
	var deny strings.Builder
	for _, g := range r.deny {
		fmt.Fprintf(&deny, "    - %s\n", strconv.Quote(g))
	}
	// The only card command with the network, run once per base before
	// the others; they read what it fetched (docs/card.md#prepare).
	prepare := "\n# prepare: {cmd: [...]}                # fetches dependencies once per base, with the network\n"
	switch {
	case r.prepareOn:
		prepare = "\n# Fetches dependencies once per base, with the network; the commands above\n# run without it and read what it fetched.\nprepare: {cmd: " + argv(r.prepare) + "}\n"
	case r.prepare != nil:
		prepare = "\n# prepare: {cmd: " + argv(r.prepare) + "}   # fetches dependencies once per base, with the network\n"
	}
	return fmt.Sprintf(`# failpass contract card (%s); field reference: docs/card.md
# Replace every value that starts with %s with the issue's own
# reproduction, run 'failpass card lint --card FILE' (it exits 1 while one
# is left), then sign it with 'failpass card sign'.
# Strings are best double-quoted; integers are plain decimal.

id: %-34s # the issue this card locks
# origin: "https://github.com/OWNER/REPO/issues/0000"
base_ref: "main"                       # the revision the fail command must fail on
# expires: "2027-01-01T00:00:00Z"      # optional, a quoted RFC 3339 time

# Must exit expect_exit on the unpatched base: the bug, frozen.
fail:
  workdir: "."                         # relative to the repository root
  cmd: %s   # argv, no shell
  expect_exit: %d
  # timeout: "10m"                     # a Go duration, at most 24h
  # env: {KEY: "value"}

# The same test must pass on the patched tree: the cheapest honest oracle.
pass:
  workdir: "."
  cmd: %s
  expect_exit: 0

# A nearby suite that must pass on both trees.
invariant:
  workdir: "."
  cmd: %s
  expect_exit: 0

# Hard limits for any patch; annotations may only tighten them.
budget:
  max_files: 3                         # files the stack names, plus one
  max_changed_lines: 80                # the smallest plausible fix
  deny_globs:                          # paths no patch may touch
%s  # allow_harness: []                  # runner inputs (conftest.py, _test.go, ...) a patch may touch all the same

# sandbox: {require: [network, filesystem, processes, resources]}
%s`, r.name, Placeholder, strconv.Quote(id), argv(r.fail), r.failEx, argv(r.fail), argv(r.inv), deny.String(), prepare)
}
