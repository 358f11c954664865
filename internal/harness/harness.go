// Package harness finds the implicit inputs of a card's test runners: the
// files a runner loads beside the tests it is told to run (conftest.py and
// configuration, __init__.py on the test's path, modules that shadow the
// standard library, a Go package's test files and test-only helper
// packages, package.json, Cargo.toml). It is pure: it reads the base tree
// only through the Tree it is given, and only what deciding the paths it
// is asked about needs.
package harness

import (
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/failpass/failpass/internal/card"
	"github.com/failpass/failpass/internal/testrunner"
)

// Tree is the base tree, read on demand. Paths are repository-relative,
// slash-separated and clean; "." is the root.
type Tree interface {
	// List returns the names of the files (blobs and symlinks, not
	// folders) directly in each of dirs. A folder the base does not have
	// has no entry.
	List(dirs []string) (map[string][]string, error)
	// Read returns the contents of the files at paths. A path that is not
	// a file of the base has no entry.
	Read(paths []string) (map[string][]byte, error)
}

// Find returns, for every path of paths that is an implicit input of the
// runner one of cmds invokes for the card's tests, why it is one. Paths
// no runner loads have no entry. A command whose runner is not recognized
// contributes nothing (Warnings says so).
//
// The reasons complete "PATH: ..." (budget.harness words the rest).
//
// Most inputs follow from the argv alone (conftest.py on the test's path,
// go.mod above a tested package); the base tree is read only for what a
// path could be but the argv cannot tell: which plugins the base's pytest
// configuration names, whether a folder on a pytest test's path is the one
// pytest puts on sys.path, which packages only the tests of a tested Go
// package import, and where a Go import path lives.
func Find(cmds []card.Command, paths []string, tree Tree) (map[string]string, error) {
	t := &memo{tree: tree, lists: map[string][]string{}, listed: map[string]bool{}, files: map[string][]byte{}, read: map[string]bool{}}
	out := map[string]string{}
	var open []string // paths no rule decided yet
	var plans []*plan
	for _, c := range cmds {
		rc := testrunner.Recognize(c.Cmd, c.Workdir)
		p, err := planFor(rc, c.Env, t)
		if err != nil {
			return nil, err
		}
		if p != nil {
			plans = append(plans, p)
			// What the lazy checks may read, fetched together with the
			// first read any of them makes: one git process, not one each.
			t.readAlso = append(t.readAlso, p.reads...)
			t.listAlso = append(t.listAlso, p.lists...)
		}
	}
	for _, p := range paths {
		for _, pl := range plans {
			if why := pl.match(p); why != "" {
				out[p] = why
				break
			}
		}
		if _, ok := out[p]; !ok {
			open = append(open, p)
		}
	}
	// What the argv cannot decide, in command order, reading the base
	// only for a command some open path could concern.
	for _, pl := range plans {
		if len(open) == 0 {
			break
		}
		for _, l := range pl.lazy {
			if len(open) == 0 {
				break
			}
			found, err := l(open, t)
			if err != nil {
				return nil, err
			}
			var still []string
			for _, p := range open {
				if why, ok := found[p]; ok {
					out[p] = why
				} else {
					still = append(still, p)
				}
			}
			open = still
		}
	}
	return out, nil
}

// plan is one command's inputs: rules the argv decides, and lazy checks
// that read the base tree.
type plan struct {
	rules []rule
	lazy  []func(open []string, t *memo) (map[string]string, error)
	// reads and lists are what the lazy checks may ask the tree for,
	// known in advance.
	reads, lists []string
}

// rule matches paths in folder dir (and below it when deep): match gets
// the path relative to dir and says why it is an input, or "".
type rule struct {
	dir   string
	deep  bool
	match func(rel string) string
}

func (pl *plan) match(p string) string {
	for _, r := range pl.rules {
		rel, ok := relTo(p, r.dir)
		if !ok || (!r.deep && strings.Contains(rel, "/")) {
			continue
		}
		if why := r.match(rel); why != "" {
			return why
		}
	}
	return ""
}

func (pl *plan) add(dir string, deep bool, match func(rel string) string) {
	pl.rules = append(pl.rules, rule{dir: dir, deep: deep, match: match})
}

// file adds a rule for exactly the path p.
func (pl *plan) file(p, why string) {
	pl.add(path.Dir(p), false, func(rel string) string {
		if rel == path.Base(p) {
			return why
		}
		return ""
	})
}

// names adds a rule for the files directly in dir whose name matches one
// of globs (path.Match patterns).
func (pl *plan) names(dir, why string, globs ...string) {
	pl.add(dir, false, func(rel string) string {
		for _, g := range globs {
			if ok, _ := path.Match(g, rel); ok {
				return why
			}
		}
		return ""
	})
}

// below adds a rule for everything below dir.
func (pl *plan) below(dir, why string) {
	pl.add(dir, true, func(string) string { return why })
}

// relTo is p relative to folder dir, when p is below it.
func relTo(p, dir string) (string, bool) {
	if dir == "." {
		return p, p != "."
	}
	rest, ok := strings.CutPrefix(p, dir+"/")
	return rest, ok && rest != ""
}

// ancestors lists dir and every folder above it, up to the root ".".
func ancestors(dir string) []string {
	out := []string{dir}
	for dir != "." {
		dir = path.Dir(dir)
		out = append(out, dir)
	}
	return out
}

// chain lists dir and the folders above it up to top (inclusive) when dir
// is top or below it, else up to the root.
func chain(dir, top string) []string {
	var out []string
	for {
		out = append(out, dir)
		if dir == top || dir == "." {
			return out
		}
		dir = path.Dir(dir)
	}
}

// inRepo says whether a repository-relative path stays in the repository.
func inRepo(p string) bool {
	return p != ".." && !strings.HasPrefix(p, "../") && !path.IsAbs(p)
}

// segment says whether rel has seg as one of its folders (not its last
// element).
func segment(rel, seg string) bool {
	parts := strings.Split(rel, "/")
	for _, s := range parts[:len(parts)-1] {
		if s == seg {
			return true
		}
	}
	return false
}

func planFor(c testrunner.Command, env map[string]string, t *memo) (*plan, error) {
	if !inRepo(c.Workdir) {
		return nil, nil
	}
	switch c.Kind {
	case testrunner.Pytest, testrunner.Unittest:
		return pythonPlan(c, env), nil
	case testrunner.GoTest:
		return goPlan(c, env, t)
	case testrunner.NPM, testrunner.Jest, testrunner.Vitest, testrunner.NodeTest:
		return jsPlan(c), nil
	case testrunner.Cargo:
		return cargoPlan(c), nil
	}
	return nil, nil
}

// memo is a Tree that asks its tree for each folder and file once, and
// with the first request of each kind also for what readAlso and
// listAlso name.
type memo struct {
	tree               Tree
	lists              map[string][]string
	listed             map[string]bool
	files              map[string][]byte
	read               map[string]bool
	readAlso, listAlso []string
}

func (m *memo) List(dirs []string) (map[string][]string, error) {
	var want []string
	for _, d := range append(slices.Clone(dirs), m.listAlso...) {
		if !m.listed[d] && !slices.Contains(want, d) {
			want = append(want, d)
		}
	}
	m.listAlso = nil
	if len(want) > 0 {
		sort.Strings(want)
		got, err := m.tree.List(want)
		if err != nil {
			return nil, err
		}
		for _, d := range want {
			m.listed[d] = true
			if names, ok := got[d]; ok {
				m.lists[d] = names
			}
		}
	}
	out := map[string][]string{}
	for _, d := range dirs {
		if names, ok := m.lists[d]; ok {
			out[d] = names
		}
	}
	return out, nil
}

func (m *memo) Read(paths []string) (map[string][]byte, error) {
	var want []string
	for _, p := range append(slices.Clone(paths), m.readAlso...) {
		if !m.read[p] && !slices.Contains(want, p) {
			want = append(want, p)
		}
	}
	m.readAlso = nil
	if len(want) > 0 {
		sort.Strings(want)
		got, err := m.tree.Read(want)
		if err != nil {
			return nil, err
		}
		for _, p := range want {
			m.read[p] = true
			if b, ok := got[p]; ok {
				m.files[p] = b
			}
		}
	}
	out := map[string][]byte{}
	for _, p := range paths {
		if b, ok := m.files[p]; ok {
			out[p] = b
		}
	}
	return out, nil
}

// Warnings says, for each card command whose tests failpass cannot
// locate (an unrecognized runner, a selection the argv narrows, pytest
// with no test named), what budget.harness then cannot protect. Commands
// with the same argv and workdir share one warning. The JavaScript
// runners and cargo are recognized at the level of their configuration
// files by design, which is not warned about.
func Warnings(c *card.Card) []string {
	type warning struct {
		key, why string
		roles    []string
	}
	var ws []*warning
	for _, r := range card.Roles {
		cmd := c.Command(r)
		rc := testrunner.Recognize(cmd.Cmd, cmd.Workdir)
		var why string
		switch {
		case !rc.Recognized():
			why = "its test runner is not recognized, so budget.harness cannot tell which files the runner loads; protect them with deny_globs"
		case rc.Discover != nil:
			why = fmt.Sprintf("%s: failpass cannot tell which tests run, so budget.harness guards what discovery imports (the modules its pattern matches, the test folders' __init__.py) but not what those tests import", rc.Narrowed)
		case rc.Narrowed != "":
			why = fmt.Sprintf("%s: failpass cannot tell which files the selected tests live in, so budget.harness guards the runner's configuration but not the tests' own folders", rc.Narrowed)
		case rc.Kind == testrunner.Pytest && len(rc.Targets) == 0:
			why = "pytest with no test named: failpass cannot tell which files the tests live in, so budget.harness guards the runner's configuration but not the tests' own folders"
		default:
			continue
		}
		key := cmd.Workdir + "\x00" + strings.Join(cmd.Cmd, "\x00")
		role := string(r) + ".cmd"
		if i := slices.IndexFunc(ws, func(w *warning) bool { return w.key == key }); i >= 0 {
			ws[i].roles = append(ws[i].roles, role)
			continue
		}
		ws = append(ws, &warning{key: key, why: why, roles: []string{role}})
	}
	var out []string
	for _, w := range ws {
		out = append(out, strings.Join(w.roles, ", ")+": "+w.why)
	}
	return out
}
