package fromcommit

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/failpass/failpass/internal/card"
	"github.com/failpass/failpass/internal/testrunner"
)

// utReport is what one `python -m unittest -v` run said.
type utReport struct {
	Status  map[string]string // dotted id → ok, FAIL, ERROR, skipped, expected failure, unexpected success
	Collect []string          // modules that did not import, with the first error line
	Error   string            // the first "SomethingError: ..." line
}

// utHead matches a verbose result line's test: "test_a (pkg.mod.Class.test_a)"
// (Python 3.11+) or "test_a (pkg.mod.Class)" (before).
var utHead = regexp.MustCompile(`^(\w+) \(([\w.]+)\)`)

// utError matches the line of a traceback that says what went wrong.
var utError = regexp.MustCompile(`^[A-Za-z_][\w.]*(Error|Exception): `)

func parseUnittest(log []byte) *utReport {
	r := &utReport{Status: map[string]string{}}
	pending := ""
	var failed []string
	sc := bufio.NewScanner(bytes.NewReader(testrunner.StripANSI(log)))
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if r.Error == "" && utError.MatchString(line) && !strings.Contains(line, "Failed to import test module") {
			r.Error = line
		}
		if m := utHead.FindStringSubmatch(line); m != nil {
			id := m[2]
			if !strings.HasSuffix(id, "."+m[1]) {
				id += "." + m[1]
			}
			pending = id
		}
		// A docstring puts the status on the line after the test's name,
		// and what the test prints comes before it.
		if pending == "" {
			continue
		}
		st := strings.TrimSpace(line)
		if i := strings.LastIndex(line, " ... "); i >= 0 {
			st = line[i+5:]
		}
		switch {
		case strings.HasPrefix(st, "skipped"):
			st = "skipped"
		case st != "ok" && st != "FAIL" && st != "ERROR" && st != "expected failure" && st != "unexpected success":
			continue
		}
		if strings.HasPrefix(pending, "unittest.loader._FailedTest.") || strings.HasPrefix(pending, "unittest.loader.ModuleImportFailure.") {
			failed = append(failed, strings.TrimPrefix(strings.TrimPrefix(pending, "unittest.loader._FailedTest."), "unittest.loader.ModuleImportFailure."))
		} else {
			r.Status[pending] = st
		}
		pending = ""
	}
	for _, m := range failed {
		r.Collect = append(r.Collect, strings.TrimSpace(m+" - "+r.Error))
	}
	return r
}

// unittestModule is the dotted module name of a test file, as unittest
// imports it from the repository root.
func unittestModule(file string) string {
	return strings.ReplaceAll(strings.TrimSuffix(file, ".py"), "/", ".")
}

// unittestTests finds the fix's fail-to-pass tests among the tests of the
// test modules it adds or changes, with unittest (no pytest): their dotted
// ids are the fail and pass command; unittest cannot deselect, so the
// invariant names every other test of those modules that passes on both
// trees.
func (b *builder) unittestTests(ctx context.Context, tests []Change) (fail, inv card.Command, err error) {
	in, py := b.inst, b.py
	var mods []string
	for _, c := range tests {
		if c.Status != 'D' && isPythonTestModule(c.Path) {
			mods = append(mods, unittestModule(c.Path))
		}
	}
	if len(mods) == 0 {
		return fail, inv, &UnusableError{Rev: in.Rev, Cause: "it deletes test files and adds none"}
	}
	slices.Sort(mods)
	reports := map[side]*utReport{}
	for _, s := range []side{onBase, onFix} {
		done := b.step("running them " + s.where())
		out, _, err := b.exec(ctx, s, ".", append([]string{py, "-m", "unittest", "-v"}, mods...))
		if err != nil {
			return fail, inv, err
		}
		r := parseUnittest(out)
		if len(r.Collect) > 0 {
			if err := b.missingModule(ctx, out, py); err != nil {
				return fail, inv, err
			}
			what := "the base does not import"
			if s == onFix {
				what = "the tests do not import with the fix"
			}
			return fail, inv, &UnusableError{Rev: in.Rev, Cause: what + ": " + b.treePaths(r.Collect[0]),
				Hints: collectHints(r.Collect[0], py)}
		}
		reports[s] = r
		done()
	}
	base, fix := reports[onBase].Status, reports[onFix].Status
	var f, keep []string
	for id, st := range base {
		switch {
		case (st == "FAIL" || st == "ERROR") && fix[id] == "ok":
			f = append(f, id)
		case st == "ok" && fix[id] == "ok":
			keep = append(keep, id)
		case st != "skipped" || fix[id] != "skipped":
			in.Notes = append(in.Notes, fmt.Sprintf("the invariant leaves out %s: it does not pass on both trees", id))
		}
	}
	if len(f) == 0 {
		return fail, inv, &UnusableError{Rev: in.Rev, Cause: "no test in the test modules it changes fails on the base and passes with the fix (" + utSummary(mods, base, fix) + ")"}
	}
	if len(keep) == 0 {
		return fail, inv, &UnusableError{Rev: in.Rev, Cause: "no other test in " + strings.Join(mods, ", ") + " passes on both trees, and unittest cannot run a module without its fail-to-pass tests: there is no invariant",
			Hints: []string{"install pytest for the interpreter (--python PATH): its invariant can deselect tests"}}
	}
	slices.Sort(f)
	slices.Sort(keep)
	slices.Sort(in.Notes)
	done := b.step("running the chosen tests alone, as the card will")
	f, err = b.aloneIDs(f, func(s side, ids []string) (map[string]string, error) {
		out, _, err := b.exec(ctx, s, ".", append([]string{py, "-m", "unittest", "-v"}, ids...))
		if err != nil {
			return nil, err
		}
		return parseUnittest(out).Status, nil
	}, "ok", "FAIL", "ERROR")
	if err != nil {
		return fail, inv, err
	}
	done()
	in.FailToPass = f
	env, err := b.pyEnv(ctx, ".")
	if err != nil {
		return fail, inv, err
	}
	fail = card.Command{Workdir: ".", Cmd: append([]string{py, "-m", "unittest"}, f...), Env: env}
	inv = card.Command{Workdir: ".", Cmd: append([]string{py, "-m", "unittest"}, keep...), Env: env}
	return fail, inv, nil
}

func utSummary(mods []string, base, fix map[string]string) string {
	if len(base) == 0 {
		return "unittest ran no test from " + strings.Join(mods, ", ")
	}
	return pySummary(mods, base, fix)
}
