package fromcommit

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/failpass/failpass/internal/card"
	"github.com/failpass/failpass/internal/gitx"
	"github.com/failpass/failpass/internal/sandbox"
	"github.com/failpass/failpass/internal/testrunner"
)

// pytestBase is how every pytest command of a card starts: no cache
// folder, so no run leaves state that steers the next (--lf, --ff).
func pytestBase(py string) []string { return []string{py, "-m", "pytest", "-p", "no:cacheprovider"} }

// pyReport is what one `pytest -rA` run said.
type pyReport struct {
	Rootdir string            // absolute, from the header
	Status  map[string]string // node id → PASSED, FAILED, ERROR, SKIPPED, XFAIL, XPASS
	Collect []string          // "path - message" of files that did not collect
	Last    string            // the last line, pytest's summary
	FirstE  string            // the first "E   ..." line: the first error pytest explains
}

func parsePytest(log []byte) *pyReport {
	r := &pyReport{Status: map[string]string{}}
	sc := bufio.NewScanner(bytes.NewReader(testrunner.StripANSI(log)))
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if t := strings.TrimSpace(line); t != "" {
			r.Last = t
		}
		if rest, ok := strings.CutPrefix(line, "E "); ok {
			// The exception, not the traceback's first line: for code that
			// does not parse, pytest's first E line is `File "...", line
			// N`, and the SyntaxError comes after it.
			rest = strings.TrimSpace(rest)
			if r.FirstE == "" || !pyExceptionLine.MatchString(r.FirstE) && pyExceptionLine.MatchString(rest) {
				r.FirstE = rest
			}
		}
		if rest, ok := strings.CutPrefix(line, "rootdir: "); ok && r.Rootdir == "" {
			r.Rootdir, _, _ = strings.Cut(rest, ", ")
			continue
		}
		word, rest, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		switch word {
		case "PASSED", "FAILED", "ERROR", "XFAIL", "XPASS":
			id, msg := pytestSplit(word, rest)
			if word == "ERROR" && !strings.Contains(id, "::") {
				if msg == "" {
					msg = r.FirstE // pytest before 7.3 prints no message here
				}
				r.Collect = append(r.Collect, strings.TrimSpace(id+" - "+msg))
				continue
			}
			if prev := r.Status[id]; prev == "FAILED" || prev == "ERROR" {
				continue // a test that failed and then errored in teardown stays failed
			}
			r.Status[id] = word
		}
	}
	return r
}

// pytestSplit splits a summary line's rest into the node id and the
// message. PASSED lines carry no message; a parametrized id may itself
// hold " - " inside its brackets.
func pytestSplit(word, rest string) (string, string) {
	if word == "PASSED" {
		return rest, ""
	}
	search := 0
	if open, first := strings.Index(rest, "["), strings.Index(rest, " - "); open >= 0 && (first < 0 || open < first) {
		if end := strings.Index(rest[open:], "] - "); end >= 0 {
			search = open + end + 1
		} else if strings.HasSuffix(rest, "]") {
			return rest, ""
		}
	}
	if i := strings.Index(rest[search:], " - "); i >= 0 {
		return rest[:search+i], rest[search+i+3:]
	}
	return rest, ""
}

// pyTests finds the fix's fail-to-pass tests among the tests of the test
// files it adds or changes, and the invariant: the other tests of those
// files (or, when none is left, of their folders) that pass on both trees.
func (b *builder) pyTests(ctx context.Context, tests []Change) (fail, inv card.Command, err error) {
	in := b.inst
	py := b.py
	var files []string
	for _, c := range tests {
		if c.Status != 'D' && isPythonTestModule(c.Path) {
			files = append(files, c.Path)
		}
	}
	if len(files) == 0 {
		return fail, inv, &UnusableError{Rev: in.Rev, Cause: "it deletes test files and adds none"}
	}
	slices.Sort(files)

	reports := map[side]*pyReport{}
	workdir := "."
	for _, s := range []side{onBase, onFix} {
		done := b.step("running them " + s.where())
		out, res, err := b.exec(ctx, s, ".", append(append(pytestBase(py), "-rA"), files...))
		if err != nil {
			return fail, inv, err
		}
		r := parsePytest(out)
		if len(r.Collect) > 0 || res.Exit >= 2 && res.Exit <= 4 {
			if err := b.missingModule(ctx, out, py); err != nil {
				return fail, inv, err
			}
			what := "the base does not collect"
			if s == onFix {
				what = "the tests do not collect with the fix"
			}
			cause := r.Last
			if len(r.Collect) > 0 {
				cause = r.Collect[0]
			}
			return fail, inv, &UnusableError{Rev: in.Rev, Cause: fmt.Sprintf("%s: %s (pytest exit %d)", what, b.treePaths(cause), res.Exit),
				Hints: collectHints(cause, py)}
		}
		reports[s] = r
		if s == onBase {
			workdir = b.rootdir(r.Rootdir)
		}
		done()
	}
	base, fix := reports[onBase].Status, reports[onFix].Status
	var f, bad []string
	for id, st := range base {
		switch {
		case (st == "FAILED" || st == "ERROR") && fix[id] == "PASSED":
			f = append(f, id)
		case st != "PASSED" || fix[id] != "PASSED":
			bad = append(bad, id)
		}
	}
	if len(f) == 0 {
		return fail, inv, &UnusableError{Rev: in.Rev, Cause: "no test in the test files it changes fails on the base and passes with the fix (" + pySummary(files, base, fix) + ")"}
	}
	slices.Sort(f)
	slices.Sort(bad)
	done := b.step("running the chosen tests alone, as the card will")
	if f, err = b.pyAlone(ctx, workdir, py, f); err != nil {
		return fail, inv, err
	}
	done()
	in.FailToPass = f
	env, err := b.pyEnv(ctx, workdir)
	if err != nil {
		return fail, inv, err
	}
	fail = card.Command{Workdir: workdir, Cmd: append(pytestBase(py), f...), Env: env}

	// The invariant: the other tests of F's files; when they hold no test
	// that passes on both trees, their folders.
	var targets []string
	others := false
	for _, id := range f {
		file, _, _ := strings.Cut(id, "::")
		if !slices.Contains(targets, file) {
			targets = append(targets, file)
		}
	}
	for id, st := range base {
		file, _, _ := strings.Cut(id, "::")
		if slices.Contains(targets, file) && st == "PASSED" && fix[id] == "PASSED" {
			others = true
		}
	}
	if !others {
		var dirs []string
		for _, t := range targets {
			if d := path.Dir(t); !slices.Contains(dirs, d) {
				dirs = append(dirs, d)
			}
		}
		targets = dirs
	}
	deselect := append(slices.Clone(f), bad...)
	for _, s := range []side{onBase, onFix} {
		done := b.step("checking the rest of the tests " + s.where())
		if deselect, err = b.pyInvariant(ctx, s, workdir, py, targets, deselect); err != nil {
			return fail, inv, err
		}
		done()
	}
	for _, id := range deselect[len(f):] {
		in.Notes = append(in.Notes, fmt.Sprintf("the invariant deselects %s: it does not pass on both trees", id))
	}
	cmd := append(pytestBase(py), targets...)
	for _, id := range deselect {
		cmd = append(cmd, "--deselect", id)
	}
	inv = card.Command{Workdir: workdir, Cmd: cmd, Env: env}
	return fail, inv, nil
}

// pyAlone is aloneIDs for pytest node ids, run from workdir.
func (b *builder) pyAlone(ctx context.Context, workdir, py string, f []string) ([]string, error) {
	return b.aloneIDs(f, func(s side, ids []string) (map[string]string, error) {
		out, _, err := b.exec(ctx, s, workdir, append(append(pytestBase(py), "-rA"), ids...))
		if err != nil {
			return nil, err
		}
		return parsePytest(out).Status, nil
	}, "PASSED", "FAILED", "ERROR")
}

// rootdir is pytest's rootdir as a workdir relative to the worktree: node
// ids are relative to it, so the card's commands run there.
func (b *builder) rootdir(abs string) string {
	if abs == "" {
		return "."
	}
	root := b.wt.Dir
	// Contained, pytest ran in the worktree's view (sandbox.TreeView).
	abs = sandbox.FromView(abs, root)
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "."
	}
	return filepath.ToSlash(rel)
}

// pyInvariant runs targets with deselect on one side, deselecting every
// test that fails, until the run passes.
func (b *builder) pyInvariant(ctx context.Context, s side, workdir, py string, targets, deselect []string) ([]string, error) {
	for round := 0; round < maxRounds; round++ {
		cmd := append(append(pytestBase(py), "-rA"), targets...)
		for _, id := range deselect {
			cmd = append(cmd, "--deselect", id)
		}
		out, res, err := b.exec(ctx, s, workdir, cmd)
		if err != nil {
			return nil, err
		}
		r := parsePytest(out)
		switch {
		case res.Exit == 0:
			return deselect, nil
		case res.Exit == 5:
			return nil, &UnusableError{Rev: b.inst.Rev, Cause: fmt.Sprintf("no other test is left in %s for the invariant", strings.Join(targets, ", "))}
		case res.Exit != 1 || len(r.Collect) > 0:
			cause := r.Last
			if len(r.Collect) > 0 {
				cause = r.Collect[0]
			}
			return nil, &UnusableError{Rev: b.inst.Rev, Cause: fmt.Sprintf("the rest of the tests in %s do not run %s: %s (pytest exit %d)", strings.Join(targets, ", "), s.where(), cause, res.Exit)}
		}
		added := false
		for id, st := range r.Status {
			if (st == "FAILED" || st == "ERROR") && !slices.Contains(deselect, id) {
				deselect, added = append(deselect, id), true
			}
		}
		if !added {
			return nil, &UnusableError{Rev: b.inst.Rev, Cause: fmt.Sprintf("the rest of the tests fail %s outside any test: %s", s.where(), r.Last)}
		}
	}
	return nil, &UnusableError{Rev: b.inst.Rev, Cause: fmt.Sprintf("the rest of the tests still fail %s after deselecting %d", s.where(), len(deselect))}
}

func pySummary(files []string, base, fix map[string]string) string {
	if len(base) == 0 {
		return "pytest collected no test from " + strings.Join(files, ", ")
	}
	var ids []string
	for id := range base {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var parts []string
	for _, id := range ids {
		st := fix[id]
		if st == "" {
			st = "did not run"
		}
		parts = append(parts, fmt.Sprintf("%s: %s on the base, %s with the fix", id, base[id], st))
	}
	if len(parts) > 6 {
		parts = append(parts[:6], fmt.Sprintf("%d more", len(parts)-6))
	}
	return strings.Join(parts, "; ")
}

var missingModuleRE = regexp.MustCompile(`ModuleNotFoundError: No module named '([A-Za-z_][A-Za-z0-9_.]*)'`)

// missingModule is the environment trouble a collection error shows, or
// nil: a module the tests import (ModuleNotFoundError) that the
// repository does not hold, in the base or the fix. Either its top-level
// package is in neither tree (a third-party dependency to install), or
// the package is and the module is in neither (one the project generates
// when it is built or installed, as hatch-vcs writes a _version.py). A
// module the fix's tree holds is the new API the tests call: no
// environment's fault.
func (b *builder) missingModule(ctx context.Context, out []byte, py string) error {
	m := missingModuleRE.FindSubmatch(testrunner.StripANSI(out))
	if m == nil {
		return nil
	}
	module := string(m[1])
	top, _, _ := strings.Cut(module, ".")
	file := strings.ReplaceAll(module, ".", "/")
	var hasTop, hasModule bool
	for _, commit := range []string{b.inst.Base, b.inst.Rev} {
		files, err := gitx.CommandEnv(ctx, b.o.Repo.Dir, nil, nil, "ls-tree", "-r", "-z", "--name-only", commit)
		if err != nil {
			return nil
		}
		for _, p := range strings.Split(string(files), "\x00") {
			if p == "" {
				continue
			}
			for _, part := range strings.Split(p, "/") {
				if part == top || part == top+".py" {
					hasTop = true
				}
			}
			q := "/" + p
			if strings.HasSuffix(q, "/"+file+".py") || strings.Contains(q, "/"+file+"/") {
				hasModule = true
			}
		}
	}
	switch {
	case !hasTop:
		return missingDependencyError(top, py)
	case !hasModule && module != top:
		return &EnvError{
			Msg: fmt.Sprintf("the tests import %s, which neither the base nor the fix holds: the project makes it when it is built or installed", module),
			Hints: []string{
				fmt.Sprintf("install the project into that interpreter (%s -m pip install -e .), or pass --python PATH of an environment where it is installed", py),
				"a card that must find it on a clean machine needs a prepare command that builds it (docs/sandbox.md, \"the prepare command\")",
			},
		}
	}
	return nil
}

// missingDependencyError is the environment trouble of a test run that
// could not import module, which the repository does not hold.
func missingDependencyError(module, py string) *EnvError {
	return &EnvError{
		Msg: fmt.Sprintf("the tests import %s, which is not installed for %s and is not in the repository", module, py),
		Hints: []string{
			fmt.Sprintf("install it for that interpreter (%s -m pip install %s; its package may have another name), or pass --python PATH of an environment that has the project's test dependencies", py, module),
			"a card that must find it on a clean machine needs a prepare command that installs it (docs/sandbox.md, \"the prepare command\")",
		},
	}
}

// pyExceptionLine is the line of a traceback that names the exception.
var pyExceptionLine = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.]*(Error|Exception|Exit|Interrupt)\b`)

// treePaths names the files of a discovery run's output as the
// repository does: the run saw its worktree at a path of its own (the
// worktree's folder, or the sandbox's view of it), which is gone by the
// time anyone reads the cause.
func (b *builder) treePaths(s string) string {
	for _, dir := range []string{b.wt.Dir, sandbox.TreeView} {
		s = strings.ReplaceAll(s, dir+"/", "")
	}
	return s
}

// collectHints says what to do about test files that do not collect,
// given the error: code the interpreter cannot parse is the
// interpreter's mismatch with the project, not a fault of the fix.
func collectHints(cause, py string) []string {
	if strings.Contains(cause, "SyntaxError") || strings.Contains(cause, "IndentationError") {
		return []string{fmt.Sprintf("the code does not parse with %s: if the project needs another Python version, pass --python PATH of an interpreter it supports", py)}
	}
	return []string{"a fix whose new tests import an API the fix adds cannot fail on the base for the right reason"}
}
