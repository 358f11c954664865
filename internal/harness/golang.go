package harness

import (
	"fmt"
	"go/parser"
	"go/token"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/failpass/failpass/internal/testrunner"
)

// Why go test loads a file.
const (
	whyGoTest     = "a test file of a tested Go package: go test compiles every _test.go of the package, and a new or changed one can define TestMain or init"
	whyGoTestdata = "test data of a tested Go package (its tests read it)"
	whyGoConfig   = "go test reads it (go.mod, go.sum, go.work, go.work.sum and vendor/ from the tested package up to the root)"
)

var goModFiles = []string{"go.mod", "go.sum", "go.work", "go.work.sum"}

func goPlan(c testrunner.Command, env map[string]string, t *memo) (*plan, error) {
	pl := &plan{}
	w := c.Workdir
	var pkgs, roots []string // tested package folders; folders of "./..." patterns
	var byImport []testrunner.Target
	for _, tg := range c.Targets {
		switch p := tg.Path; {
		case strings.HasSuffix(p, ".go"): // go test a_test.go a.go: the files' package
			pkgs = append(pkgs, path.Dir(path.Clean(path.Join(w, p))))
		case tg.Local() || p == "...":
			if tg.Recursive() {
				roots = append(roots, c.Dir(tg))
			} else {
				pkgs = append(pkgs, c.Dir(tg))
			}
		default:
			byImport = append(byImport, tg)
		}
	}
	if len(byImport) > 0 {
		mod, modDir, err := nearestModule(w, t)
		if err != nil {
			return nil, err
		}
		for _, tg := range byImport {
			ip := strings.TrimSuffix(tg.Path, "/...")
			rec := tg.Recursive()
			if ip == "all" {
				ip, rec = mod, true
			}
			if rel, ok := inModule(ip, mod); ok && mod != "" {
				if d := path.Join(modDir, rel); rec {
					roots = append(roots, d)
				} else {
					pkgs = append(pkgs, d)
				}
			}
		}
	}
	pkgs = slices.DeleteFunc(pkgs, func(d string) bool { return !inRepo(d) })
	roots = slices.DeleteFunc(roots, func(d string) bool { return !inRepo(d) })
	for _, d := range pkgs {
		pl.names(d, whyGoTest, "*_test.go")
		pl.below(path.Join(d, "testdata"), whyGoTestdata)
	}
	for _, r := range roots {
		pl.add(r, true, func(rel string) string {
			switch b := path.Base(rel); {
			case strings.HasSuffix(b, "_test.go"):
				return whyGoTest
			case segment(rel, "testdata"):
				return whyGoTestdata
			case slices.Contains(goModFiles, b), segment(rel, "vendor"):
				// A go.mod below a ./... pattern takes its folder out of it.
				return whyGoConfig
			}
			return ""
		})
	}
	seen := map[string]bool{}
	for _, d := range append(slices.Clone(pkgs), roots...) {
		for _, a := range ancestors(d) {
			if !seen[a] {
				seen[a] = true
				pl.names(a, whyGoConfig, goModFiles...)
				pl.below(path.Join(a, "vendor"), whyGoConfig)
			}
		}
	}
	// -modfile and -overlay in the argv or the card's GOFLAGS, and GOWORK.
	goflags := testrunner.Recognize(append([]string{"go", "test"}, strings.Fields(env["GOFLAGS"])...), w)
	for _, cfg := range []string{c.Config, goflags.Config, env["GOWORK"]} {
		if p := path.Clean(path.Join(w, cfg)); cfg != "" && cfg != "off" && !path.IsAbs(cfg) && inRepo(p) && p != "." {
			why := "go test reads it (the card names it with -modfile, -overlay or GOWORK)"
			pl.file(p, why)
			switch {
			case strings.HasSuffix(p, ".mod"):
				pl.file(strings.TrimSuffix(p, ".mod")+".sum", why)
			case strings.HasSuffix(p, ".work"):
				pl.file(p+".sum", why)
			}
		}
	}
	if len(pkgs) > 0 {
		pl.lazy = append(pl.lazy, goHelpers(pkgs, roots))
	}
	return pl, nil
}

// goHelpers finds the open paths that belong to a test-only helper of a
// tested package: a package of the same module that the package's test
// files import and its other files do not. Everything in such a package
// is the test's own code. The base is read only when an open path lies
// outside the tested packages (a fix to the code under test never needs
// it, nor a path that is no Go source or test data): one listing of the
// tested folders and one read of their Go files and of the go.mod files
// above them.
//
// A helper is found one import deep: a package a helper imports, but no
// test, is library code as far as this rule knows.
func goHelpers(pkgs, roots []string) func([]string, *memo) (map[string]string, error) {
	return func(open []string, t *memo) (map[string]string, error) {
		out := map[string]string{}
		var maybe []string
		for _, p := range open {
			d := path.Dir(p)
			if !goBuildFile(p) && !segment(p, "testdata") ||
				slices.Contains(pkgs, d) || slices.ContainsFunc(roots, func(r string) bool { return r == d || isAncestor(r, d) }) {
				continue
			}
			maybe = append(maybe, p)
		}
		if len(maybe) == 0 {
			return out, nil
		}
		lists, err := t.List(pkgs)
		if err != nil {
			return nil, err
		}
		var want []string
		for _, d := range pkgs {
			for _, n := range lists[d] {
				if strings.HasSuffix(n, ".go") {
					want = append(want, path.Join(d, n))
				}
			}
			for _, a := range ancestors(d) {
				want = append(want, path.Join(a, "go.mod"))
			}
		}
		files, err := t.Read(want)
		if err != nil {
			return nil, err
		}
		helpers := map[string]string{} // helper folder -> the tested package whose tests import it
		for _, d := range pkgs {
			mod, modDir := "", ""
			for _, a := range ancestors(d) {
				if b, ok := files[path.Join(a, "go.mod")]; ok {
					mod, modDir = modulePath(b), a
					break
				}
			}
			if mod == "" {
				continue
			}
			tests, lib := map[string]bool{}, map[string]bool{}
			for _, n := range lists[d] {
				if !strings.HasSuffix(n, ".go") {
					continue
				}
				into := lib
				if strings.HasSuffix(n, "_test.go") {
					into = tests
				}
				for _, imp := range imports(files[path.Join(d, n)]) {
					into[imp] = true
				}
			}
			for imp := range tests {
				rel, ok := inModule(imp, mod)
				if !ok || lib[imp] {
					continue
				}
				h := path.Join(modDir, rel)
				if _, dup := helpers[h]; !dup && !slices.Contains(pkgs, h) {
					helpers[h] = d
				}
			}
		}
		for _, p := range maybe {
			for h, d := range helpers {
				if path.Dir(p) == h && goBuildFile(p) || isAncestor(path.Join(h, "testdata"), p) {
					out[p] = fmt.Sprintf("it is in %s, a package only the tests of %s import (a test-only helper)", h, d)
					break
				}
			}
		}
		return out, nil
	}
}

// goBuildFile says whether the go command builds a file into its folder's
// package: Go, assembly, cgo sources and .syso objects. (A file a
// helper embeds with //go:embed is not known here.)
func goBuildFile(p string) bool {
	switch path.Ext(p) {
	case ".go", ".s", ".S", ".sx", ".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".hxx", ".m", ".f", ".F", ".for", ".f90", ".syso", ".swig", ".swigcxx":
		return true
	}
	return false
}

// nearestModule reads the go.mod nearest above dir: its module path and
// folder ("" when there is none in the repository).
func nearestModule(dir string, t *memo) (mod, modDir string, err error) {
	var want []string
	for _, a := range ancestors(dir) {
		want = append(want, path.Join(a, "go.mod"))
	}
	files, err := t.Read(want)
	if err != nil {
		return "", "", err
	}
	for _, a := range ancestors(dir) {
		if b, ok := files[path.Join(a, "go.mod")]; ok {
			return modulePath(b), a, nil
		}
	}
	return "", "", nil
}

// inModule is an import path's folder relative to its module's root, when
// the module path covers it.
func inModule(imp, mod string) (string, bool) {
	if mod == "" {
		return "", false
	}
	if imp == mod {
		return ".", true
	}
	rel, ok := strings.CutPrefix(imp, mod+"/")
	return rel, ok && rel != "" && path.Clean(rel) == rel && inRepo(rel)
}

// modulePath reads the module directive of a go.mod ("" when it has none).
func modulePath(gomod []byte) string {
	for _, line := range strings.Split(string(gomod), "\n") {
		line, _, _ = strings.Cut(line, "//")
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == "module" {
			if s, err := strconv.Unquote(f[1]); err == nil {
				return s
			}
			return f[1]
		}
	}
	return ""
}

// imports lists the import paths of a Go file; a file that does not parse
// gives the imports read before the error.
func imports(src []byte) []string {
	f, _ := parser.ParseFile(token.NewFileSet(), "", src, parser.ImportsOnly)
	if f == nil {
		return nil
	}
	var out []string
	for _, s := range f.Imports {
		if p, err := strconv.Unquote(s.Path.Value); err == nil {
			out = append(out, p)
		}
	}
	return out
}
