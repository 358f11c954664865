package harness

import (
	"path"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/failpass/failpass/internal/card"
)

// mapTree is a base tree held in memory: path -> content. It counts the
// calls, so a test can say the base was not read.
type mapTree struct {
	files        map[string]string
	lists, reads int
}

func (m *mapTree) List(dirs []string) (map[string][]string, error) {
	m.lists++
	out := map[string][]string{}
	for p := range m.files {
		if d := path.Dir(p); slices.Contains(dirs, d) {
			out[d] = append(out[d], path.Base(p))
		}
	}
	return out, nil
}

func (m *mapTree) Read(paths []string) (map[string][]byte, error) {
	m.reads++
	out := map[string][]byte{}
	for _, p := range paths {
		if s, ok := m.files[p]; ok {
			out[p] = []byte(s)
		}
	}
	return out, nil
}

func cmd(workdir string, argv ...string) card.Command {
	return card.Command{Workdir: workdir, Cmd: argv}
}

var pyTree = map[string]string{
	"tox.ini":                "[pytest]\naddopts = -q -p tests.plug -p no:cacheprovider\n",
	"tests/plug.py":          "",
	"lib/helpers.py":         "",
	"pyproject.toml":         "",
	"src/app/__init__.py":    "",
	"src/app/core.py":        "",
	"src/app/types.py":       "",
	"tests/test_core.py":     "import app\n",
	"tests/conftest.py":      "pytest_plugins = [\"lib.helpers\", 'lib.more']\n",
	"tests/unit/__init__.py": "",
	"tests/unit/test_x.py":   "",
	"pkg/__init__.py":        "",
	"pkg/tests/__init__.py":  "",
	"pkg/tests/test_y.py":    "",
	"pkg/json.py":            "",
}

const goTestFile = `package header_test

import (
	"testing"

	"example.com/m/header"
	"example.com/m/internal/testutil"
	"example.com/m/internal/parse"
)
`

const goLibFile = `package header

import (
	"strings"

	"example.com/m/internal/parse"
)
`

var goTree = map[string]string{
	"go.mod":                        "module example.com/m // the module\n\ngo 1.22\n",
	"header/header.go":              goLibFile,
	"header/header_test.go":         goTestFile,
	"header/testdata/golden.txt":    "",
	"internal/testutil/testutil.go": "package testutil\n",
	"internal/parse/parse.go":       "package parse\n",
	"internal/other/other.go":       "package other\n",
	"sub/go.mod":                    "module \"example.com/sub\"\n",
	"sub/pkg/pkg.go":                "package pkg\n",
	"sub/pkg/pkg_test.go":           "package pkg\nimport \"example.com/sub/help\"\n",
	"sub/help/help.go":              "package help\n",
	"vendor/example.com/dep/dep.go": "package dep\n",
	"cmd/tool/main.go":              "package main\n",
}

func TestFind(t *testing.T) {
	pytest := []card.Command{cmd(".", "python3", "-m", "pytest", "-q", "tests/test_core.py::test_a")}
	pytestDir := []card.Command{cmd(".", "pytest", "tests")}
	pytestPlug := []card.Command{{Workdir: ".", Cmd: []string{"pytest", "-p", "myplug", "tests/test_core.py"}, Env: map[string]string{"PYTHONPATH": "src", "PYTEST_PLUGINS": "other.plug"}}}
	pytestPkg := []card.Command{cmd(".", "pytest", "pkg/tests/test_y.py")}
	unittest := []card.Command{cmd(".", "python3", "-m", "unittest", "tests.unit.test_x.TestX.test_y")}
	gotest := []card.Command{cmd(".", "go", "test", "-run", "^TestEmpty$", "./header")}
	goImport := []card.Command{cmd(".", "go", "test", "example.com/m/header")}
	goAll := []card.Command{cmd(".", "go", "test", "./...")}
	goSub := []card.Command{cmd("sub", "go", "test", "./pkg")}
	npm := []card.Command{cmd("web", "npm", "test")}
	cargo := []card.Command{cmd(".", "cargo", "test")}
	script := []card.Command{cmd(".", "sh", "tests/check.sh")}

	for _, tc := range []struct {
		name  string
		tree  map[string]string
		cmds  []card.Command
		paths []string
		want  []string // the paths found, sorted
		why   string   // a word the first found path's reason has
		reads int      // Tree calls; -1: any
	}{
		{"pytest conftest at the root", pyTree, pytest, []string{"conftest.py"}, []string{"conftest.py"}, "conftest", 0},
		{"pytest conftest beside the test", pyTree, pytest, []string{"tests/conftest.py"}, []string{"tests/conftest.py"}, "conftest", 0},
		{"pytest conftest elsewhere is library", pyTree, pytest, []string{"src/conftest.py", "src/app/core.py"}, nil, "", 1},
		{"pytest configuration at any level", pyTree, pytest, []string{"pyproject.toml", "tests/pytest.ini", "tox.ini", "setup.cfg", ".pytest.ini", "src/setup.cfg"}, []string{".pytest.ini", "pyproject.toml", "setup.cfg", "tests/pytest.ini", "tox.ini"}, "configuration", 0},
		{"pytest __init__ in the test folder", pyTree, pytest, []string{"tests/__init__.py"}, []string{"tests/__init__.py"}, "__init__", 0},
		{"library __init__ is not an input", pyTree, pytest, []string{"src/app/__init__.py"}, nil, "", 1},
		{"stdlib shadow in the workdir", pyTree, pytest, []string{"unittest.py", "argparse.py", "pytest.py", "json/__init__.py", "_pytest/__init__.py"}, []string{"_pytest/__init__.py", "argparse.py", "json/__init__.py", "pytest.py", "unittest.py"}, "shadows", 0},
		{"a namespace folder does not shadow", pyTree, pytest, []string{"json/decoder.py", "mylib.py"}, nil, "", 1},
		{"packaging metadata anywhere", pyTree, pytest, []string{"x.dist-info/entry_points.txt", "x.dist-info/METADATA", "src/y.egg-info/entry_points.txt", "z.egg-link", "__editable__.z-1.0.pth", "__editable___z_finder.py", "src/app/distinfo.py"}, []string{"__editable__.z-1.0.pth", "__editable___z_finder.py", "src/y.egg-info/entry_points.txt", "x.dist-info/METADATA", "x.dist-info/entry_points.txt", "z.egg-link"}, "", 1},
		{"packaging metadata under unittest", pyTree, unittest, []string{"x.dist-info/entry_points.txt"}, []string{"x.dist-info/entry_points.txt"}, "entry points", -1},
		{"start-up hooks anywhere", pyTree, pytest, []string{"src/sitecustomize.py", "lib/x.pth", "usercustomize.py"}, []string{"lib/x.pth", "src/sitecustomize.py", "usercustomize.py"}, "start-up", 0},
		{"pytest folder: nested conftest and __init__", pyTree, pytestDir, []string{"tests/unit/conftest.py", "tests/unit/__init__.py", "tests/unit/helpers.py"}, []string{"tests/unit/__init__.py", "tests/unit/conftest.py"}, "", 1},
		{"pytest folder: the test modules it collects", pyTree, pytestDir, []string{"tests/test_new.py", "tests/unit/x_test.py", "tests/unit/test_x.py", "tests/data/test_input.txt", "src/app/test_util.py"}, []string{"tests/test_new.py", "tests/unit/test_x.py", "tests/unit/x_test.py"}, "module-level", 1},
		{"pytest plugins and PYTHONPATH", pyTree, pytestPlug, []string{"myplug.py", "src/myplug/__init__.py", "src/other/plug.py", "src/types.py", "src/app/types.py"}, []string{"myplug.py", "src/myplug/__init__.py", "src/other/plug.py", "src/types.py"}, "", 1},
		{"plugins the configuration names", pyTree, pytest, []string{"tests/plug.py", "lib/helpers.py", "lib/more/__init__.py", "lib/__init__.py", "lib/other.py", "no.py"}, []string{"lib/__init__.py", "lib/helpers.py", "lib/more/__init__.py", "tests/plug.py"}, "plugin", 1},
		{"pythonpath in the configuration", map[string]string{"pyproject.toml": "[tool.pytest.ini_options]\npythonpath = [\"src\", 'lib']\n", "setup.cfg": "[tool:pytest]\npythonpath = extra more\n"}, pytest, []string{"src/json.py", "lib/argparse/__init__.py", "extra/types.py", "more/unittest.py", "src/app/json.py", "other/json.py"}, []string{"extra/types.py", "lib/argparse/__init__.py", "more/unittest.py", "src/json.py"}, "pythonpath", 1},
		{"configured plugins are read only for Python paths", pyTree, pytest, []string{"lib/data.json"}, nil, "", 0},
		{"pytest basedir shadows", pyTree, pytest, []string{"tests/types.py"}, []string{"tests/types.py"}, "sys.path", 2},
		{"in a package, the basedir is above it", pyTree, pytestPkg, []string{"pkg/json.py", "pkg/tests/json.py", "json.py"}, []string{"json.py"}, "", 2},
		{"pytest node in a package: the tests' __init__, not the library's", pyTree, pytestPkg, []string{"pkg/__init__.py", "pkg/tests/__init__.py"}, []string{"pkg/tests/__init__.py"}, "__init__", 1},
		{"nested test folders up to the topmost", map[string]string{}, []card.Command{cmd(".", "pytest", "lib/tests/integration/db/test_q.py")}, []string{"lib/tests/integration/db/__init__.py", "lib/tests/integration/__init__.py", "lib/tests/__init__.py", "lib/__init__.py", "__init__.py"}, []string{"lib/tests/__init__.py", "lib/tests/integration/__init__.py", "lib/tests/integration/db/__init__.py"}, "__init__", 1},
		{"a test beside the library: its own folder only", map[string]string{}, []card.Command{cmd(".", "python3", "-m", "unittest", "src/app/test_core.py")}, []string{"src/app/__init__.py", "src/__init__.py"}, []string{"src/app/__init__.py"}, "__init__", 0},
		{"unittest dotted id: module and package forms", pyTree, unittest, []string{"tests/unit/test_x.py", "tests/unit/test_x/__init__.py", "tests/unit/__init__.py", "tests/__init__.py", "tests/unit/test_x/TestX.py"}, []string{"tests/__init__.py", "tests/unit/__init__.py", "tests/unit/test_x.py", "tests/unit/test_x/TestX.py", "tests/unit/test_x/__init__.py"}, "", 0},
		{"unittest ignores conftest", pyTree, unittest, []string{"tests/conftest.py", "setup.cfg", "pyproject.toml"}, nil, "", 1},
		{"unittest discover -s tests", pyTree, []card.Command{cmd(".", "python3", "-m", "unittest", "discover", "-s", "tests")}, []string{"tests/test_new.py", "tests/unit/__init__.py", "tests/__init__.py", "tests/helpers.py", "src/app/__init__.py", "src/app/test_x.py"}, []string{"tests/__init__.py", "tests/test_new.py", "tests/unit/__init__.py"}, "", 0},
		{"unittest discovery from the root", pyTree, []card.Command{cmd(".", "python3", "-m", "unittest")}, []string{"tests/test_new.py", "src/app/test_x.py", "src/app/__init__.py", "tests/__init__.py", "tests/helpers.py", "pkg/tests/deep/__init__.py"}, []string{"pkg/tests/deep/__init__.py", "src/app/test_x.py", "tests/__init__.py", "tests/test_new.py"}, "", 0},
		{"a helper the test imports from its test folder", map[string]string{
			"tests/test_h.py": "import os, tests.support as s\nfrom .helpers import check  # relative\nfrom tests.util import (eq,\n  ne)\nfrom app import core\nfrom . import fixtures\n",
		}, []card.Command{cmd(".", "python3", "-m", "pytest", "tests/test_h.py")}, []string{"tests/helpers.py", "tests/support/__init__.py", "tests/util/eq.py", "tests/fixtures.py", "tests/other.py", "app/core.py", "tests/util.py"}, []string{"tests/fixtures.py", "tests/helpers.py", "tests/support/__init__.py", "tests/util.py", "tests/util/eq.py"}, "test helper", 1},
		{"no helper outside a test folder", map[string]string{"src/app/test_core.py": "from .core import f\n"}, []card.Command{cmd(".", "python3", "-m", "unittest", "src/app/test_core.py")}, []string{"src/app/core.py"}, nil, "", 0},
		{"test data in the tests' folder", pyTree, pytest, []string{"tests/data/expected.json", "tests/golden.txt", "src/app/data.json", "README.md"}, []string{"tests/data/expected.json", "tests/golden.txt"}, "test data", 0},
		{"no test data outside a test folder", map[string]string{}, []card.Command{cmd(".", "python3", "-m", "unittest", "src/app/test_core.py")}, []string{"src/app/expected.json"}, nil, "", 0},
		{"unittest shadowing", pyTree, unittest, []string{"unittest.py", "argparse/__init__.py"}, []string{"argparse/__init__.py", "unittest.py"}, "shadows", 0},

		{"go: test files of the tested package", goTree, gotest, []string{"header/header_test.go", "header/zz_test.go"}, []string{"header/header_test.go", "header/zz_test.go"}, "TestMain", 0},
		{"go: the code under test reads nothing", goTree, gotest, []string{"header/header.go", "header/new.go"}, nil, "", 0},
		{"go: module files and vendor", goTree, gotest, []string{"go.mod", "go.sum", "go.work", "header/go.mod", "vendor/modules.txt", "vendor/example.com/dep/dep.go"}, []string{"go.mod", "go.sum", "go.work", "header/go.mod", "vendor/example.com/dep/dep.go", "vendor/modules.txt"}, "go.mod", 0},
		{"go: testdata", goTree, gotest, []string{"header/testdata/golden.txt"}, []string{"header/testdata/golden.txt"}, "test data", 0},
		{"go: GOFLAGS and GOWORK files", goTree, []card.Command{{Workdir: ".", Cmd: []string{"go", "test", "./header"}, Env: map[string]string{"GOFLAGS": "-modfile=ci/go.mod", "GOWORK": "ci/go.work"}}}, []string{"ci/go.mod", "ci/go.sum", "ci/go.work", "ci/go.work.sum"}, []string{"ci/go.mod", "ci/go.sum", "ci/go.work", "ci/go.work.sum"}, "GOWORK", 0},
		{"go: a test-only helper", goTree, gotest, []string{"internal/testutil/testutil.go", "internal/testutil/new.go"}, []string{"internal/testutil/new.go", "internal/testutil/testutil.go"}, "test-only helper", 2},
		{"go: a package the library imports too", goTree, gotest, []string{"internal/parse/parse.go", "internal/other/other.go"}, nil, "", 2},
		{"go: a helper's own test data, not its notes", goTree, gotest, []string{"internal/testutil/testdata/x.json", "internal/testutil/README.md"}, []string{"internal/testutil/testdata/x.json"}, "test-only helper", 2},
		{"go: files no helper could hold read nothing", goTree, gotest, []string{"README.md", "docs/x.md", "internal/testutil/notes.txt"}, nil, "", 0},
		{"go: an import-path target", goTree, goImport, []string{"header/x_test.go", "internal/testutil/testutil.go", "header/header.go"}, []string{"header/x_test.go", "internal/testutil/testutil.go"}, "", -1},
		{"go: ./... covers every test file and nested module", goTree, goAll, []string{"cmd/tool/main_test.go", "sub/pkg/pkg_test.go", "a/b/go.mod", "cmd/tool/testdata/x", "cmd/tool/main.go"}, []string{"a/b/go.mod", "cmd/tool/main_test.go", "cmd/tool/testdata/x", "sub/pkg/pkg_test.go"}, "", 0},
		{"go: a nested module's own helper", goTree, goSub, []string{"sub/help/help.go", "sub/go.sum", "go.work", "internal/testutil/testutil.go"}, []string{"go.work", "sub/go.sum", "sub/help/help.go"}, "", 2},

		{"npm: configuration at the workdir and above", nil, npm, []string{"web/package.json", "package.json", "web/jest.config.js", "web/tsconfig.build.json", "web/.babelrc", "web/src/app.js", "web/node_modules/x/index.js", "web/__mocks__/fs.js", "other/package.json", "web/packages/ui/package.json", "web/packages/ui/src/button.js"}, []string{"package.json", "web/.babelrc", "web/__mocks__/fs.js", "web/jest.config.js", "web/node_modules/x/index.js", "web/package.json", "web/packages/ui/package.json", "web/tsconfig.build.json"}, "", 0},
		{"cargo", nil, cargo, []string{"Cargo.toml", "Cargo.lock", "build.rs", ".cargo/config.toml", "tests/common/mod.rs", "crates/a/Cargo.toml", "crates/a/build.rs", "crates/a/tests/common/x.rs", "src/lib.rs", "rust-toolchain.toml"}, []string{".cargo/config.toml", "Cargo.lock", "Cargo.toml", "build.rs", "crates/a/Cargo.toml", "crates/a/build.rs", "crates/a/tests/common/x.rs", "rust-toolchain.toml", "tests/common/mod.rs"}, "cargo", 0},
		{"an unrecognized runner has no inputs", pyTree, script, []string{"conftest.py", "unittest.py"}, nil, "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tree := &mapTree{files: tc.tree}
			got, err := Find(tc.cmds, tc.paths, tree)
			if err != nil {
				t.Fatal(err)
			}
			var keys []string
			for k := range got {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			if !slices.Equal(keys, tc.want) {
				t.Errorf("Find(%q) = %q, want %q", tc.paths, keys, tc.want)
			}
			if tc.why != "" && len(keys) > 0 && !strings.Contains(got[keys[0]], tc.why) {
				t.Errorf("Find(%q)[%s] = %q, want it to say %q", tc.paths, keys[0], got[keys[0]], tc.why)
			}
			if calls := tree.lists + tree.reads; tc.reads >= 0 && calls != tc.reads {
				t.Errorf("Find(%q) made %d tree calls, want %d", tc.paths, calls, tc.reads)
			}
		})
	}
}

func TestWarnings(t *testing.T) {
	c := &card.Card{
		Fail:      cmd(".", "python3", "-m", "pytest", "-k", "empty", "tests"),
		Pass:      cmd(".", "python3", "-m", "pytest", "-k", "empty", "tests"),
		Invariant: cmd(".", "sh", "suite.sh"),
	}
	got := Warnings(c)
	if len(got) != 2 || !strings.HasPrefix(got[0], "fail.cmd, pass.cmd: pytest -k empty") || !strings.HasPrefix(got[1], "invariant.cmd: its test runner is not recognized") {
		t.Errorf("Warnings = %q", got)
	}
	c = &card.Card{
		Fail:      cmd(".", "go", "test", "-run", "X", "./a"),
		Pass:      cmd(".", "go", "test", "-run", "X", "./a"),
		Invariant: cmd(".", "python3", "-m", "unittest", "tests.test_x"),
	}
	if got := Warnings(c); len(got) != 0 {
		t.Errorf("Warnings = %q, want none", got)
	}
}

func FuzzFind(f *testing.F) {
	f.Add("python3 -m pytest tests/test_a.py::t", ".", "tests/conftest.py")
	f.Add("go test ./...", "sub", "sub/a/b_test.go")
	f.Add("python3 -m unittest a.b.C", "x", "x/a/__init__.py")
	f.Fuzz(func(t *testing.T, argv, workdir, p string) {
		tree := &mapTree{files: goTree}
		got, err := Find([]card.Command{cmd(workdir, strings.Fields(argv)...)}, []string{p}, tree)
		if err != nil {
			t.Fatal(err)
		}
		for k, why := range got {
			if k != p || why == "" {
				t.Fatalf("Find found %q (%q) for %q", k, why, p)
			}
		}
	})
}
