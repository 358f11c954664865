package card

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"

	"github.com/failpass/failpass/internal/testrunner"
)

// Placeholder starts every value of a card template the maintainer must
// replace; `card lint` exits 1 while one is left (Placeholders).
const Placeholder = "REPLACE-"

// Template is the card `card init` writes for one test runner: commands
// whose selections are Placeholder values, the runner's exit code for a
// failing test, the files no fix should touch, and the step that fetches
// dependencies.
type Template struct {
	Name   string          // the --runner name: go, pytest, unittest, npm, cargo
	Kind   testrunner.Kind // the runner Detect reports for the project
	What   string          // for the message: "a Go module (go.mod)"
	Python string          // the module a Python interpreter must import, "" for others
	// Fail and Invariant are argv; "{python}" stands for the interpreter.
	Fail, Invariant []string
	FailExit        int // the runner's exit code for a failing test
	Deny            []string
	// Prepare fetches the project's dependencies (the card's prepare
	// block); with PrepareOn it is written active, else as a comment.
	Prepare   []string
	PrepareOn bool
}

// templates are in Detect's order.
var templates = []*Template{
	{Name: "go", Kind: testrunner.GoTest, What: "a Go module (go.mod)",
		Fail:      []string{"go", "test", "-count=1", "-run", "^" + Placeholder + "TestName$", "./" + Placeholder + "package"},
		Invariant: []string{"go", "test", "-count=1", "./" + Placeholder + "package"},
		FailExit:  1, Deny: []string{".github/**", "go.mod", "go.sum", "vendor/**"},
		Prepare: []string{"go", "mod", "download"}, PrepareOn: true},
	{Name: "cargo", Kind: testrunner.Cargo, What: "a Cargo crate (Cargo.toml)",
		Fail:      []string{"cargo", "test", Placeholder + "test_name", "--", "--exact"},
		Invariant: []string{"cargo", "test"},
		FailExit:  101, Deny: []string{".github/**", "Cargo.toml", "Cargo.lock", "build.rs", "rust-toolchain*"}},
	{Name: "pytest", Kind: testrunner.Pytest, What: "a pytest project", Python: "pytest",
		Fail:      []string{"{python}", "-m", "pytest", "-q", Placeholder + "tests/test_file.py::test_name"},
		Invariant: []string{"{python}", "-m", "pytest", "-q", Placeholder + "tests/test_file.py"},
		FailExit:  1, Deny: []string{".github/**", "pyproject.toml", "setup.cfg", "setup.py", "tox.ini", "pytest.ini", "**/conftest.py"},
		Prepare: []string{"{python}", "-m", "pip", "install", "-r", "requirements.txt"}},
	{Name: "unittest", Kind: testrunner.Unittest, What: "a Python project (unittest)", Python: "unittest",
		Fail:      []string{"{python}", "-m", "unittest", Placeholder + "tests.test_module.TestCase.test_name"},
		Invariant: []string{"{python}", "-m", "unittest", Placeholder + "tests.test_module"},
		FailExit:  1, Deny: []string{".github/**", "pyproject.toml", "setup.cfg", "setup.py", "tox.ini"},
		Prepare: []string{"{python}", "-m", "pip", "install", "-r", "requirements.txt"}},
	{Name: "npm", Kind: testrunner.NPM, What: "an npm package (package.json)",
		Fail:      []string{"npm", "test", "--", Placeholder + "test-file-or-pattern"},
		Invariant: []string{"npm", "test"},
		FailExit:  1, Deny: []string{".github/**", "package.json", "package-lock.json", "npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml", "node_modules/**"}},
}

// TemplateNamed is the template of the --runner name, nil for none.
func TemplateNamed(name string) *Template {
	for _, t := range templates {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// TemplateFor is the template of a runner Detect reported, nil for none.
func TemplateFor(k testrunner.Kind) *Template {
	for _, t := range templates {
		if t.Kind == k {
			return t
		}
	}
	return nil
}

// TemplatesFor lists the templates of the runners a project's files
// point at (testrunner.Detect on fsys, the project's folder), most specific
// first.
func TemplatesFor(fsys fs.FS) []*Template {
	var out []*Template
	for _, k := range testrunner.Detect(fsys) {
		if t := TemplateFor(k); t != nil {
			out = append(out, t)
		}
	}
	return out
}

// Card is the card file t writes: valid YAML whose commands hold
// Placeholder values, with the field reference in comments. python is the
// interpreter of a Python runner's "{python}".
func (t *Template) Card(id, python string) []byte {
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
	for _, g := range t.Deny {
		fmt.Fprintf(&deny, "    - %s\n", strconv.Quote(g))
	}
	// The only card command with the network, run once per base before
	// the others; they read what it fetched (docs/card.md#prepare).
	prepare := "\n# prepare: {cmd: [...]}                # fetches dependencies once per base, with the network\n"
	switch {
	case t.PrepareOn:
		prepare = "\n# Fetches dependencies once per base, with the network; the commands above\n# run without it and read what it fetched.\nprepare: {cmd: " + argv(t.Prepare) + "}\n"
	case t.Prepare != nil:
		prepare = "\n# prepare: {cmd: " + argv(t.Prepare) + "}   # fetches dependencies once per base, with the network\n"
	}
	return []byte(fmt.Sprintf(`# failpass contract card (%s); field reference: docs/card.md
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
%s`, t.Name, Placeholder, strconv.Quote(id), argv(t.Fail), t.FailExit, argv(t.Fail), argv(t.Invariant), deny.String(), prepare))
}

// Placeholders lists, in order, the fields of the card's canonical JSON
// whose value still holds Placeholder: fail.cmd[4], id, ...
func (c *Card) Placeholders() []string {
	canon, err := c.Canonical()
	if err != nil {
		return nil
	}
	var v any
	if json.Unmarshal(canon, &v) != nil {
		return nil
	}
	var out []string
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case string:
			if strings.Contains(x, Placeholder) {
				out = append(out, path)
			}
		case []any:
			for i, e := range x {
				walk(fmt.Sprintf("%s[%d]", path, i), e)
			}
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				p := k
				if path != "" {
					p = path + "." + k
				}
				walk(p, x[k])
			}
		}
	}
	walk("", v)
	return out
}
