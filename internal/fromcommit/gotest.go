package fromcommit

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/failpass/failpass/internal/card"
	"github.com/failpass/failpass/internal/gitx"
)

// goTestFuncs maps each top-level test function of a Go test file to its
// printed source, and returns the printed source of everything else
// (helpers, variables, imports) as one string. A file that does not parse
// gives nil and ok false.
func goTestFuncs(src []byte) (funcs map[string]string, rest string, ok bool) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "x_test.go", src, parser.SkipObjectResolution)
	if err != nil {
		return nil, "", false
	}
	funcs = map[string]string{}
	var others strings.Builder
	print := func(n any) string {
		var b bytes.Buffer
		printer.Fprint(&b, fset, n)
		return b.String()
	}
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && isGoTestName(fd.Name.Name) {
			funcs[fd.Name.Name] = print(fd)
			continue
		}
		others.WriteString(print(d))
		others.WriteString("\n")
	}
	return funcs, f.Name.Name + "\n" + others.String(), true
}

// isGoTestName says whether name is a name `go test` runs as a test:
// "Test" followed by nothing or by a character that is not lower case.
func isGoTestName(name string) bool {
	rest, ok := strings.CutPrefix(name, "Test")
	if !ok {
		return false
	}
	if rest == "" {
		return true
	}
	r, _ := utf8.DecodeRuneInString(rest)
	return !unicode.IsLower(r)
}

// changedGoTests compares the old and new source of one test file: the
// test functions that are new or whose source changed, and whether
// anything else in the file changed (a helper every test may call). A
// file that does not parse on either side counts as changed throughout.
func changedGoTests(old, new []byte) (tests []string, restChanged bool) {
	nf, nrest, ok := goTestFuncs(new)
	if !ok {
		return nil, true
	}
	of, orest := map[string]string{}, ""
	if old != nil {
		var ok bool
		if of, orest, ok = goTestFuncs(old); !ok {
			return nil, true
		}
	}
	for name, src := range nf {
		if of[name] != src {
			tests = append(tests, name)
		}
	}
	sort.Strings(tests)
	return tests, old != nil && orest != nrest
}

// nameRegexp is the anchored alternation go test's -run and -skip take
// for exactly these top-level test names.
func nameRegexp(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = regexp.QuoteMeta(n)
	}
	return "^(" + strings.Join(q, "|") + ")$"
}

// goEvent is one line of `go test -json` (test2json) output, with the
// build events Go 1.24 added.
type goEvent struct {
	Action      string
	Package     string
	ImportPath  string
	Test        string
	Output      string
	FailedBuild string
}

// goReport is what one `go test -json` run said: each top-level test's
// last status by package, and the lines that explain a package that
// failed without a failing test (it did not build, its set-up failed,
// TestMain or init failed, or the binary died).
type goReport struct {
	Tests  map[string]map[string]string // package → test → "pass" | "fail" | "skip"
	Broken map[string]bool              // packages that failed to build or set up
	Output map[string][]string          // package (or import path) → output lines
	Raw    []string                     // lines that were not JSON (older toolchains print build errors so)
	Failed map[string]bool              // packages whose result was fail
}

func parseGoJSON(log []byte) *goReport {
	r := &goReport{Tests: map[string]map[string]string{}, Broken: map[string]bool{}, Output: map[string][]string{}, Failed: map[string]bool{}}
	sc := bufio.NewScanner(bytes.NewReader(log))
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e goEvent
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			if s := strings.TrimSpace(string(line)); s != "" {
				r.Raw = append(r.Raw, s)
			}
			continue
		}
		switch e.Action {
		case "build-output":
			r.Output[e.ImportPath] = append(r.Output[e.ImportPath], strings.TrimRight(e.Output, "\n"))
		case "build-fail":
			r.Broken[e.ImportPath] = true
		case "output":
			if e.Test == "" {
				r.Output[e.Package] = append(r.Output[e.Package], strings.TrimRight(e.Output, "\n"))
			}
		case "pass", "fail", "skip":
			if e.Test == "" {
				if e.Action == "fail" {
					r.Failed[e.Package] = true
					if e.FailedBuild != "" {
						r.Broken[e.Package] = true
					}
				}
				continue
			}
			if strings.Contains(e.Test, "/") {
				continue // a subtest: its parent carries the verdict
			}
			if r.Tests[e.Package] == nil {
				r.Tests[e.Package] = map[string]string{}
			}
			r.Tests[e.Package][e.Test] = e.Action
		}
	}
	return r
}

// goFileLine matches a compiler or vet diagnostic: "./x_test.go:9:5: ...".
var goFileLine = regexp.MustCompile(`^\S+\.go:\d+(:\d+)?: `)

// cause is the first line that says why the run failed outside any test:
// a compiler diagnostic if there is one, else the first line of output
// that is not a "#" header, a FAIL summary or "exit status".
func (r *goReport) cause() string {
	var lines []string
	var pkgs []string
	for p := range r.Output {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	for _, p := range pkgs {
		lines = append(lines, r.Output[p]...)
	}
	lines = append(lines, r.Raw...)
	for _, l := range lines {
		if goFileLine.MatchString(strings.TrimSpace(l)) {
			return strings.TrimSpace(l)
		}
	}
	for _, l := range lines {
		l = strings.TrimSpace(l)
		switch {
		case l == "", strings.HasPrefix(l, "#"), strings.HasPrefix(l, "FAIL"), strings.HasPrefix(l, "exit status"),
			strings.HasPrefix(l, "ok "), l == "PASS", strings.HasPrefix(l, "=== "), strings.HasPrefix(l, "--- "):
			continue
		}
		return l
	}
	return "no reason printed"
}

// goPackage is one package whose tests the fix changes.
type goPackage struct {
	Dir        string          // repository-relative folder
	ImportPath string          // as go test -json names it
	Arg        string          // as the card names it, relative to the module root
	All        bool            // a helper or testdata changed: any test may be the proof
	Changed    map[string]bool // the test functions the fix adds or changes
	Tests      map[string]bool // every test function in the base
}

func (p *goPackage) candidate(name string) bool { return p.Tests[name] && (p.All || p.Changed[name]) }

// goTests finds the fix's fail-to-pass tests among the tests it adds or
// changes, and the invariant: every other test of their packages that
// passes on both trees.
func (b *builder) goTests(ctx context.Context, tests []Change) (fail, inv card.Command, err error) {
	in := b.inst
	done := b.step("finding the tests the fix adds or changes")
	pkgs, modRoot, err := b.goPackages(ctx, tests)
	if err != nil {
		return fail, inv, err
	}
	done()
	if needs, err := b.goNeedsModules(ctx, modRoot); err != nil {
		return fail, inv, err
	} else if needs {
		done := b.step("fetching the base's modules (go mod download)")
		b.goModDownload(ctx, modRoot)
		in.Prepare = goPrepare(modRoot)
		in.Notes = append(in.Notes, "the card fetches the base's modules with prepare: go mod download (its one command with the network)")
		done()
	}

	status := map[side]map[string]map[string]string{}
	for _, s := range []side{onBase, onFix} {
		done := b.step("running them " + s.where())
		if status[s], err = b.goCandidates(ctx, s, modRoot, pkgs); err != nil {
			return fail, inv, err
		}
		done()
	}
	// F: fail on the base, pass with the fix. A name in F selects that
	// name in every package the command lists, so a name that does not
	// pass with the fix in one of them is dropped until none is left.
	f := map[string]map[string]bool{}
	for _, p := range pkgs {
		for name := range p.Tests {
			if p.candidate(name) && status[onBase][p.ImportPath][name] == "fail" && status[onFix][p.ImportPath][name] == "pass" {
				if f[p.ImportPath] == nil {
					f[p.ImportPath] = map[string]bool{}
				}
				f[p.ImportPath][name] = true
			}
		}
	}
	for changed := true; changed; {
		changed = false
		names, inF := goNames(f), goPkgsIn(pkgs, f)
		for _, p := range inF {
			for _, n := range names {
				if p.Tests[n] && status[onFix][p.ImportPath][n] != "pass" {
					for _, q := range pkgs {
						delete(f[q.ImportPath], n)
					}
					changed = true
				}
			}
		}
	}
	names, inF := goNames(f), goPkgsIn(pkgs, f)
	if len(names) == 0 {
		return fail, inv, &UnusableError{Rev: in.Rev, Cause: "no test it adds or changes fails on the base and passes with the fix (" + goSummary(pkgs, status) + ")"}
	}
	done = b.step("running the chosen tests alone, as the card will")
	if err := b.goAlone(ctx, modRoot, pkgs, f); err != nil {
		return fail, inv, err
	}
	done()
	names, inF = goNames(f), goPkgsIn(pkgs, f)
	var args []string
	for _, p := range inF {
		args = append(args, p.Arg)
		for n := range f[p.ImportPath] {
			in.FailToPass = append(in.FailToPass, p.ImportPath+" "+n)
		}
	}
	slices.Sort(in.FailToPass)
	fail = card.Command{Workdir: modRoot, Cmd: append([]string{"go", "test", "-count=1", "-run", nameRegexp(names)}, args...)}

	// The invariant skips F and every candidate that does not pass on
	// both trees, then whatever else fails on either tree.
	skip := slices.Clone(names)
	for _, p := range inF {
		for n := range p.Tests {
			if p.candidate(n) && !slices.Contains(skip, n) && (status[onBase][p.ImportPath][n] != "pass" || status[onFix][p.ImportPath][n] != "pass") {
				skip = append(skip, n)
			}
		}
	}
	for _, s := range []side{onBase, onFix} {
		done := b.step("checking the rest of the package tests " + s.where())
		if skip, err = b.goInvariant(ctx, s, modRoot, args, skip); err != nil {
			return fail, inv, err
		}
		done()
	}
	slices.Sort(skip[len(names):])
	for _, n := range skip[len(names):] {
		in.Notes = append(in.Notes, fmt.Sprintf("the invariant skips %s: it does not pass on both trees", n))
	}
	inv = card.Command{Workdir: modRoot, Cmd: append([]string{"go", "test", "-count=1", "-skip", nameRegexp(skip)}, args...)}
	return fail, inv, nil
}

// goAlone runs the tests of f as the card's fail and pass commands will,
// selected alone (-run), on the base and with the fix (aloneIDs), and
// drops from f every test that does not fail on the base or pass with the
// fix there: one whose result depends on state other tests of its
// package leave (a global one of them sets, a file one writes) flipped in
// the runs of the whole package, and card sign would refuse the card
// minutes later. A name selects its test in every listed package, so it
// stays only where it holds in each of them.
func (b *builder) goAlone(ctx context.Context, modRoot string, pkgs []*goPackage, f map[string]map[string]bool) error {
	kept, err := b.aloneIDs(goNames(f), func(s side, names []string) (map[string]string, error) {
		var args []string
		inF := goPkgsIn(pkgs, f)
		for _, p := range inF {
			args = append(args, p.Arg)
		}
		out, _, err := b.exec(ctx, s, modRoot, append([]string{"go", "test", "-json", "-count=1", "-run", nameRegexp(names)}, args...))
		if err != nil {
			return nil, err
		}
		r := parseGoJSON(out)
		want := map[side]string{onBase: "fail", onFix: "pass"}[s]
		status := map[string]string{}
		for _, n := range names {
			status[n] = want
			for _, p := range inF {
				if got := r.Tests[p.ImportPath][n]; f[p.ImportPath][n] && got != want {
					status[n] = got
				}
			}
		}
		return status, nil
	}, "pass", "fail")
	for _, p := range pkgs {
		for n := range f[p.ImportPath] {
			if !slices.Contains(kept, n) {
				delete(f[p.ImportPath], n)
			}
		}
	}
	return err
}

func goNames(f map[string]map[string]bool) []string {
	var names []string
	for _, m := range f {
		for n := range m {
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	slices.Sort(names)
	return names
}

func goPkgsIn(pkgs []*goPackage, f map[string]map[string]bool) []*goPackage {
	var out []*goPackage
	for _, p := range pkgs {
		if len(f[p.ImportPath]) > 0 {
			out = append(out, p)
		}
	}
	return out
}

// goSummary says what became of the candidates, for an unusable verdict.
func goSummary(pkgs []*goPackage, status map[side]map[string]map[string]string) string {
	var parts []string
	for _, p := range pkgs {
		var names []string
		for n := range p.Tests {
			if p.candidate(n) {
				names = append(names, n)
			}
		}
		slices.Sort(names)
		for _, n := range names {
			st := func(s side) string {
				if v := status[s][p.ImportPath][n]; v != "" {
					return v
				}
				return "did not run"
			}
			parts = append(parts, fmt.Sprintf("%s: %s on the base, %s with the fix", n, st(onBase), st(onFix)))
		}
	}
	if len(parts) > 6 {
		parts = append(parts[:6], fmt.Sprintf("%d more", len(parts)-6))
	}
	return strings.Join(parts, "; ")
}

// goPackages lists the packages whose tests the fix changes, with their
// candidate tests, and the module root they share (the card's workdir).
func (b *builder) goPackages(ctx context.Context, tests []Change) ([]*goPackage, string, error) {
	in, repo := b.inst, b.o.Repo
	byDir := map[string]*goPackage{}
	get := func(dir string) *goPackage {
		if byDir[dir] == nil {
			byDir[dir] = &goPackage{Dir: dir, Changed: map[string]bool{}, Tests: map[string]bool{}}
		}
		return byDir[dir]
	}
	for _, c := range tests {
		if i := slices.Index(strings.Split(c.Path, "/"), "testdata"); i >= 0 {
			get(path.Join(append([]string{"."}, strings.Split(c.Path, "/")[:i]...)...)).All = true
			continue
		}
		if !strings.HasSuffix(c.Path, "_test.go") || c.Status == 'D' {
			continue
		}
		p := get(path.Dir(c.Path))
		newSrc, err := catFile(ctx, repo, in.Rev, c.Path)
		if err != nil {
			return nil, "", err
		}
		oldSrc, err := catFile(ctx, repo, in.Parent, c.Path)
		if err != nil {
			return nil, "", err
		}
		names, rest := changedGoTests(oldSrc, newSrc)
		for _, n := range names {
			p.Changed[n] = true
		}
		if rest {
			p.All = true
		}
	}
	var pkgs []*goPackage
	modRoot, modPath := "", ""
	for _, p := range byDir {
		files, err := lsFiles(ctx, repo, in.Base, p.Dir)
		if err != nil {
			return nil, "", err
		}
		for _, f := range files {
			if !strings.HasSuffix(f, "_test.go") {
				continue
			}
			src, err := catFile(ctx, repo, in.Base, path.Join(p.Dir, f))
			if err != nil {
				return nil, "", err
			}
			if funcs, _, ok := goTestFuncs(src); ok {
				for n := range funcs {
					p.Tests[n] = true
				}
			}
		}
		if len(p.Tests) == 0 || (!p.All && len(p.Changed) == 0) {
			continue
		}
		root, mod, err := goModule(ctx, repo, in.Base, p.Dir)
		if err != nil {
			return nil, "", err
		}
		if root == "" {
			return nil, "", &UnusableError{Rev: in.Rev, Cause: fmt.Sprintf("%s is in no Go module (no go.mod above it)", p.Dir)}
		}
		if modRoot != "" && root != modRoot {
			return nil, "", &UnusableError{Rev: in.Rev, Cause: fmt.Sprintf("its tests are in two Go modules (%s and %s); a card's commands run in one", modRoot, root)}
		}
		modRoot, modPath = root, mod
		rel := strings.TrimPrefix(strings.TrimPrefix(p.Dir, root), "/")
		if root == "." {
			rel = p.Dir
		}
		p.Arg, p.ImportPath = "./"+rel, modPath+"/"+rel
		if rel == "." || rel == "" {
			p.Arg, p.ImportPath = ".", modPath
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) == 0 {
		return nil, "", &UnusableError{Rev: in.Rev, Cause: "its test files add or change no Go test function (a change of comments or layout is none), or none that the base has"}
	}
	slices.SortFunc(pkgs, func(a, b *goPackage) int { return strings.Compare(a.Dir, b.Dir) })
	return pkgs, modRoot, nil
}

// goModule finds the go.mod at or above dir in rev: its folder and its
// module path. "" when there is none.
func goModule(ctx context.Context, repo *gitx.Repo, rev, dir string) (string, string, error) {
	for d := dir; ; d = path.Dir(d) {
		src, err := catFile(ctx, repo, rev, path.Join(d, "go.mod"))
		if err != nil {
			return "", "", err
		}
		if src != nil {
			m := goModuleLine.FindSubmatch(src)
			if m == nil {
				return "", "", &UnusableError{Rev: rev, Cause: path.Join(d, "go.mod") + " has no module line"}
			}
			return d, strings.Trim(string(m[1]), `"`), nil
		}
		if d == "." {
			return "", "", nil
		}
	}
}

var goModuleLine = regexp.MustCompile(`(?m)^module\s+(\S+)`)

// goCandidates runs the candidate tests on one side with `go test -json`
// and returns each test's status by import path. A test binary that dies
// (a panic) leaves the tests after the dying one without a status; they
// run again, up to maxRounds times.
func (b *builder) goCandidates(ctx context.Context, s side, modRoot string, pkgs []*goPackage) (map[string]map[string]string, error) {
	got := map[string]map[string]string{}
	for round := 0; round < maxRounds; round++ {
		var names, args []string
		for _, p := range pkgs {
			pending := false
			for n := range p.Tests {
				if p.candidate(n) && got[p.ImportPath][n] == "" {
					pending = true
					if !slices.Contains(names, n) {
						names = append(names, n)
					}
				}
			}
			if pending {
				args = append(args, p.Arg)
			}
		}
		if len(names) == 0 {
			break
		}
		slices.Sort(names)
		out, res, err := b.exec(ctx, s, modRoot, append([]string{"go", "test", "-json", "-count=1", "-run", nameRegexp(names)}, args...))
		if err != nil {
			return nil, err
		}
		r := parseGoJSON(out)
		if len(r.Broken) > 0 || (res.Exit != 0 && len(r.Tests) == 0) {
			if missingModules(out) {
				return nil, &EnvError{Msg: fmt.Sprintf("go test %s needs modules it could not fetch: %s", s.where(), r.cause()),
					Hints: []string{"from-commit fetched the base's modules with go mod download (with the network) and some are still missing: see that log's note above, check the network and GOPROXY, or run with --sandbox=off"}}
			}
			what := "the base does not build"
			if s == onFix {
				what = "the tests do not build with the fix"
			}
			if len(r.Broken) == 0 {
				what = "go test fails " + s.where() + " before any test runs"
			}
			return nil, &UnusableError{Rev: b.inst.Rev, Cause: what + ": " + r.cause(),
				Hints: []string{"a fix whose new tests call an API the fix adds cannot fail on the base for the right reason"}}
		}
		progress := false
		for pkg, tests := range r.Tests {
			if got[pkg] == nil {
				got[pkg] = map[string]string{}
			}
			for n, st := range tests {
				if got[pkg][n] == "" {
					progress = true
				}
				got[pkg][n] = st
			}
		}
		if !progress {
			break
		}
	}
	return got, nil
}

// goInvariant runs the packages' other tests on one side, adding to skip
// every test that fails, until the run passes.
func (b *builder) goInvariant(ctx context.Context, s side, modRoot string, args, skip []string) ([]string, error) {
	for round := 0; round < maxRounds; round++ {
		out, res, err := b.exec(ctx, s, modRoot, append([]string{"go", "test", "-json", "-count=1", "-skip", nameRegexp(skip)}, args...))
		if err != nil {
			return nil, err
		}
		if res.Exit == 0 {
			return skip, nil
		}
		r := parseGoJSON(out)
		added := false
		for _, tests := range r.Tests {
			for n, st := range tests {
				if st == "fail" && !slices.Contains(skip, n) {
					skip, added = append(skip, n), true
				}
			}
		}
		if !added {
			return nil, &UnusableError{Rev: b.inst.Rev, Cause: fmt.Sprintf("the rest of the package tests fail %s outside any test: %s", s.where(), r.cause())}
		}
	}
	return nil, &UnusableError{Rev: b.inst.Rev, Cause: fmt.Sprintf("the rest of the package tests still fail %s after skipping %d failing tests", s.where(), len(skip))}
}

// missingModules says whether go test failed because modules were not
// in the cache and could not be fetched: the environment's fault, not the
// commit's.
func missingModules(out []byte) bool {
	for _, m := range []string{"missing go.sum entry", "module lookup disabled", "dial tcp", "no such host",
		"cannot find module providing package", "reading https://", "GOPROXY=off", "-mod=mod"} {
		if bytes.Contains(out, []byte(m)) {
			return true
		}
	}
	return false
}
