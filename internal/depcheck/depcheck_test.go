package depcheck

import (
	"bufio"
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/failpass/failpass/"

// design is what docs/design.md states about the packages.
type design struct {
	imports  map[string][]string // "internal/gate" -> ["internal/budget", ...]; nil for "everything"
	starters []string            // the packages that may start processes
	pure     []string            // the packages that must not link os/exec at all
}

// readDesign reads the package table under "## Packages" and the
// sentence above it naming the packages that start processes.
func readDesign(t *testing.T) design {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "design.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Packages\n")
	if !ok {
		t.Fatal("docs/design.md has no \"## Packages\" section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	d := design{imports: map[string][]string{}}
	prose, _, _ := strings.Cut(section, "\n|")
	prose = strings.Join(strings.Fields(prose), " ")
	m := regexp.MustCompile(`Only ((?:` + "`[a-z/]+`" + `(?:, | and )?)+) start processes`).FindStringSubmatch(prose)
	if m == nil {
		t.Fatal("docs/design.md: no sentence \"Only `a`, `b` and `c` start processes\" above the package table")
	}
	for _, n := range regexp.MustCompile("`([a-z/]+)`").FindAllStringSubmatch(m[1], -1) {
		d.starters = append(d.starters, "internal/"+n[1])
	}
	m = regexp.MustCompile(`the pure ones \(((?:` + "`[a-z]+`" + `(?:, )?)+)\) never do`).FindStringSubmatch(prose)
	if m == nil {
		t.Fatal("docs/design.md: no sentence \"the pure ones (`a`, `b`) never do\" above the package table")
	}
	for _, n := range regexp.MustCompile("`([a-z]+)`").FindAllStringSubmatch(m[1], -1) {
		d.pure = append(d.pure, "internal/"+n[1])
	}
	sc := bufio.NewScanner(strings.NewReader(section))
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), " | ")
		if len(cells) != 3 {
			t.Fatalf("docs/design.md: package row %q has %d cells, want 3", line, len(cells))
		}
		name := strings.Trim(strings.TrimSpace(cells[0]), "`")
		if _, dup := d.imports[name]; dup {
			t.Fatalf("docs/design.md: package %s is listed twice", name)
		}
		switch imp := strings.TrimSpace(cells[2]); imp {
		case "everything":
			d.imports[name] = nil
		case "—":
			d.imports[name] = []string{}
		default:
			list := []string{}
			for _, p := range strings.Split(imp, ", ") {
				list = append(list, "internal/"+strings.TrimSpace(p))
			}
			d.imports[name] = list
		}
	}
	return d
}

// pkg is what `go list -json` says of one package of the module, plus
// whether its own code starts processes.
type pkg struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	Imports    []string
	Deps       []string
	starts     []string // where its code starts a process
}

// listPackages runs `go list -json ./...` for goos.
func listPackages(t *testing.T, goos string) map[string]*pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", "./...")
	cmd.Dir = filepath.Join("..", "..")
	cmd.Env = append(os.Environ(), "GOOS="+goos)
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("go list: %v\n%s", err, stderr)
	}
	pkgs := map[string]*pkg{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(p.ImportPath, module)
		p.starts = processStarts(t, p.Dir, p.GoFiles)
		pkgs[name] = &p
	}
	return pkgs
}

// processStarts names the places in files that start a process: an
// import of os/exec, or a call of os.StartProcess, syscall.ForkExec,
// syscall.Exec, syscall.StartProcess or unix.Exec.
func processStarts(t *testing.T, dir string, files []string) []string {
	t.Helper()
	calls := map[string][]string{
		"os":                    {"StartProcess"},
		"syscall":               {"ForkExec", "Exec", "StartProcess"},
		"golang.org/x/sys/unix": {"Exec"},
	}
	var found []string
	fset := token.NewFileSet()
	for _, name := range files {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		local := map[string]string{} // local name -> import path, for the packages in calls
		for _, im := range f.Imports {
			path, _ := strconv.Unquote(im.Path.Value)
			if path == "os/exec" {
				found = append(found, name+": imports os/exec")
			}
			if _, ok := calls[path]; ok {
				n := filepath.Base(path)
				if im.Name != nil {
					n = im.Name.Name
				}
				local[n] = path
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			x, ok := sel.X.(*ast.Ident)
			if !ok {
				return true
			}
			if path, ok := local[x.Name]; ok && slices.Contains(calls[path], sel.Sel.Name) {
				found = append(found, fset.Position(sel.Pos()).String()+": "+x.Name+"."+sel.Sel.Name)
			}
			return true
		})
	}
	return found
}

// TestLayering holds the code to docs/design.md on Linux and macOS: the
// table lists every package, each package imports exactly the internal
// packages its row names (cli: any; nothing imports cli), only the
// packages the text names start processes, and a package links os/exec
// only through one of them (so a pure package, budget or patch, never
// does, whatever a dependency drags in).
func TestLayering(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	d := readDesign(t)
	// A row lists what the package imports on any system: the union.
	imported := map[string]map[string]bool{}
	for _, goos := range []string{"linux", "darwin"} {
		pkgs := listPackages(t, goos)
		for name, p := range pkgs {
			if imported[name] == nil {
				imported[name] = map[string]bool{}
			}
			for _, im := range p.Imports {
				if in, ok := strings.CutPrefix(im, module); ok {
					imported[name][in] = true
				}
			}
		}
		t.Run(goos, func(t *testing.T) { checkProcesses(t, d, pkgs) })
	}
	checkImports(t, d, imported)
}

// checkImports compares every package's internal imports with its row.
func checkImports(t *testing.T, d design, imported map[string]map[string]bool) {
	for name := range d.imports {
		if imported[name] == nil {
			t.Errorf("docs/design.md lists %s, which does not exist", name)
		}
	}
	var names []string
	for name := range imported {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		want, listed := d.imports[name]
		if !listed {
			t.Errorf("%s is missing from the package table of docs/design.md", name)
			continue
		}
		got := imported[name]
		if got["internal/cli"] && name != "cmd/failpass" {
			t.Errorf("%s imports internal/cli; nothing but cmd/failpass may", name)
		}
		if want == nil {
			continue // cli: everything
		}
		for _, g := range slices.Sorted(maps.Keys(got)) {
			if !slices.Contains(want, g) {
				t.Errorf("%s imports %s, which its row in docs/design.md does not list", name, g)
			}
		}
		for _, w := range want {
			if !got[w] {
				t.Errorf("docs/design.md says %s imports %s; it does not", name, w)
			}
		}
	}
}

// checkProcesses holds the packages of one system to the process rules.
func checkProcesses(t *testing.T, d design, pkgs map[string]*pkg) {
	for _, s := range d.starters {
		if _, ok := d.imports[s]; !ok {
			t.Errorf("docs/design.md says %s starts processes, but its table has no such package", s)
		}
	}
	// reaches reports whether name reaches a process starter by the
	// table's imports (cli imports everything, so it does).
	var reaches func(name string, seen map[string]bool) bool
	reaches = func(name string, seen map[string]bool) bool {
		imports, ok := d.imports[name]
		if ok && imports == nil {
			return true
		}
		for _, im := range imports {
			if slices.Contains(d.starters, im) {
				return true
			}
			if !seen[im] {
				seen[im] = true
				if reaches(im, seen) {
					return true
				}
			}
		}
		return false
	}
	for _, name := range slices.Sorted(maps.Keys(pkgs)) {
		p := pkgs[name]
		starter := slices.Contains(d.starters, name)
		if len(p.starts) > 0 && !starter {
			t.Errorf("%s starts processes, which docs/design.md reserves to %s:\n\t%s", name, strings.Join(d.starters, ", "), strings.Join(p.starts, "\n\t"))
		}
		if slices.Contains(d.pure, name) && slices.Contains(p.Deps, "os/exec") {
			t.Errorf("%s is pure by docs/design.md, yet links os/exec: %s", name, execPath(pkgs, p))
		}
		if slices.Contains(p.Deps, "os/exec") && !starter && !reaches(name, map[string]bool{}) {
			t.Errorf("%s links os/exec, yet by docs/design.md it reaches none of %s: %s", name, strings.Join(d.starters, ", "), execPath(pkgs, p))
		}
	}
}

// execPath explains how p links os/exec: the first of its direct imports
// whose dependencies include it.
func execPath(pkgs map[string]*pkg, p *pkg) string {
	for _, im := range p.Imports {
		if im == "os/exec" {
			return "it imports os/exec"
		}
		if q := pkgs[strings.TrimPrefix(im, module)]; q != nil && slices.Contains(q.Deps, "os/exec") {
			return "through " + im
		}
	}
	return "through a dependency outside the module"
}
