package testrunner

import (
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

const tok = "qk3m9xz0a2b1"

func canaryTree() fstest.MapFS {
	f := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }
	return fstest.MapFS{
		"tests/test_header.py": f("\"\"\"Header tests.\"\"\"\nfrom __future__ import annotations\nimport sys\nsys.path.insert(0, 'src')\nfrom lib import (\n    parse,\n)\n\nX = 1\n\n\ndef test_empty():\n    assert parse('') == ''\n"),
		"tests/__init__.py":    f(""),
		"tests/test_p.py":      f("import lib\n\n\nclass TestP:\n    def test_x(self):\n        assert lib.parse('') == ''\n"),
		"tests/test_u.py":      f("import unittest\nfrom lib import parse\n\n\nclass T(unittest.TestCase):\n    def test_x(self):\n        self.assertEqual(parse(''), '')\n\n\nclass U(unittest.TestCase):\n    def setUp(me):\n        pass\n\n    def test_b(me, /):\n        \"\"\"A docstring\n        over lines.\"\"\"\n        me.assertTrue(True)\n"),
		"sub/t/test_check.py":  f("from lib import parse\n\ndef check_it():\n    assert parse('') == ''\n"),
		"go.mod":               f("module example.org/m\n"),
		"calc/calc.go":         f("package calc\n"),
		"calc/a_test.go":       f("package calc\n\nimport \"testing\"\n\nfunc helper(t *testing.T) {}\n\nfunc Testing(t *testing.T) {}\n\nfunc TestA(got *testing.T) {}\n"),
		"calc/b_test.go":       f("// Package calc_test.\npackage calc_test\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {}\n\nfunc FuzzF(f *testing.F) {\n\tf.Fuzz(func(t *testing.T, s string) {})\n}\n\nfunc TestNoT(*testing.T) {}\n\nfunc ExampleAdd() {}\n"),
		"calc/c_linux_test.go": f("//go:build ignore\n\npackage calc\n\nimport \"testing\"\n\nfunc TestLinux(t *testing.T) {}\n"),
		"tests/test_many.py":   f(testMany),
		"tests/test_mod.py":    f("import unittest\n\n\ndef test_stray():\n    pass\n\n\ndef test():\n    pass\n\n\nclass Base(unittest.TestCase):\n    def helper(self):\n        pass\n\n\nclass Real(Base, unittest.TestCase):\n    def test_r(self):\n        pass\n"),
		"other/x_test.go":      f("package other\n\nfunc TestOther(t *testing.T) {}\n"),
		"nested/go.mod":        f("module example.org/n\n"),
		"nested/y_test.go":     f("package nested\n\nfunc TestAdd(t *testing.T) {}\n"),
		"notests/n.go":         f("package notests\n"),
	}
}

const decoyTok = "dd7rw2kkq5mz"

func TestPlanCanary(t *testing.T) {
	for _, tt := range []struct {
		name    string
		argv    []string
		workdir string
		file    string
		test    string
		// canary is the line of the oracle file the canary puts its
		// assertion on, whole, as it reads with the canary in.
		canary string
	}{
		{"pytest node id", []string{"/usr/bin/python3", "-B", "-m", "pytest", "-q", "tests/test_header.py::test_empty", "-p", "no:cacheprovider"}, ".",
			"tests/test_header.py", "test_empty", "    assert \"qk3m9x\" == \"z0a2b1\"\n"},
		{"pytest file, workdir, other prefix", []string{"pytest", "t/test_check.py::check_it"}, "sub",
			"sub/t/test_check.py", "check_it", "    assert \"qk3m9x\" == \"z0a2b1\"\n"},
		{"pytest running a unittest.TestCase", []string{"pytest", "tests/test_u.py::T::test_x"}, ".",
			"tests/test_u.py", "T.test_x", "        self.assertEqual(\"qk3m9x\", \"z0a2b1\")\n"},
		{"pytest class that is no TestCase, parametrized", []string{"pytest", "tests/test_p.py::TestP::test_x[1-2]"}, ".",
			"tests/test_p.py", "TestP.test_x", "        assert \"qk3m9x\" == \"z0a2b1\"\n"},
		{"pytest class", []string{"pytest", "tests/test_p.py::TestP"}, ".",
			"tests/test_p.py", "TestP.test_x", "        assert \"qk3m9x\" == \"z0a2b1\"\n"},
		{"pytest file: the first test function", []string{"pytest", "tests/test_many.py"}, ".",
			"tests/test_many.py", "test_one_line", ""},
		{"pytest: signature over lines, comments", []string{"pytest", "tests/test_many.py::test_second"}, ".",
			"tests/test_many.py", "test_second", "\tassert \"qk3m9x\" == \"z0a2b1\"\r\n"},
		{"pytest: async, after the docstring", []string{"pytest", "tests/test_many.py::test_async"}, ".",
			"tests/test_many.py", "test_async", "\tassert \"qk3m9x\" == \"z0a2b1\"\r\n"},
		{"unittest dotted", []string{"python3", "-m", "unittest", "-v", "tests.test_u.T.test_x"}, ".",
			"tests/test_u.py", "T.test_x", "        self.assertEqual(\"qk3m9x\", \"z0a2b1\")\n"},
		{"unittest module", []string{"python3", "-m", "unittest", "tests.test_u"}, ".",
			"tests/test_u.py", "T.test_x", "        self.assertEqual(\"qk3m9x\", \"z0a2b1\")\n"},
		{"unittest path", []string{"python3", "-m", "unittest", "tests/test_u.py"}, ".",
			"tests/test_u.py", "T.test_x", "        self.assertEqual(\"qk3m9x\", \"z0a2b1\")\n"},
		{"unittest module: unittest runs no function, nor a class without a test", []string{"python3", "-m", "unittest", "tests.test_mod"}, ".",
			"tests/test_mod.py", "Real.test_r", "        self.assertEqual(\"qk3m9x\", \"z0a2b1\")\n"},
		{"pytest: a test named test, not the first test*", []string{"pytest", "tests/test_mod.py::test"}, ".",
			"tests/test_mod.py", "test", "    assert \"qk3m9x\" == \"z0a2b1\"\n"},
		{"unittest class, its own self, after a docstring", []string{"python3", "-m", "unittest", "tests.test_u.U"}, ".",
			"tests/test_u.py", "U.test_b", "        me.assertEqual(\"qk3m9x\", \"z0a2b1\")\n"},
		{"go test one package, external test", []string{"go", "test", "-count=1", "-run", "^TestAdd$", "-skip", "TestQ", "./calc"}, ".",
			"calc/b_test.go", "TestAdd", "func TestAdd(t *testing.T) { if got, want := \"qk3m9x\", \"z0a2b1\"; got != want { t.Errorf(\"got %q, want %q\", got, want) };}\n"},
		{"go test without -run: first test file", []string{"go", "test", "./calc", "-v"}, ".",
			"calc/a_test.go", "TestA", "func TestA(got *testing.T) { if have, expected := \"qk3m9x\", \"z0a2b1\"; have != expected { got.Errorf(\"got %q, want %q\", have, expected) };}\n"},
		{"go test ./... finds the package", []string{"go", "test", "-run=TestAdd", "./...", "-args", "-x"}, ".",
			"calc/b_test.go", "TestAdd", "func TestAdd(t *testing.T) { if got, want := \"qk3m9x\", \"z0a2b1\"; got != want { t.Errorf(\"got %q, want %q\", got, want) };}\n"},
		{"go test -run as card from-commit writes it", []string{"go", "test", "-count=1", "-run", "^(ExampleAdd|TestLinux|TestAdd)$", "."}, "calc",
			"calc/b_test.go", "TestAdd", "func TestAdd(t *testing.T) { if got, want := \"qk3m9x\", \"z0a2b1\"; got != want { t.Errorf(\"got %q, want %q\", got, want) };}\n"},
		{"go test in the package folder, a fuzz test", []string{"go", "test", "-run", "FuzzF"}, "calc",
			"calc/b_test.go", "FuzzF", "func FuzzF(f *testing.F) { if got, want := \"qk3m9x\", \"z0a2b1\"; got != want { f.Errorf(\"got %q, want %q\", got, want) };\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fsys := canaryTree()
			c, err := PlanCanary(fsys, tt.argv, tt.workdir, tok, decoyTok)
			if tt.canary == "" {
				var nr *NotRecognizedError
				if !errors.As(err, &nr) {
					t.Fatalf("PlanCanary(%q) = %v, want not recognized", tt.argv, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("PlanCanary(%q) = %v", tt.argv, err)
			}
			if c.File != tt.file || c.Test != tt.test || !reflect.DeepEqual(c.Argv, tt.argv) {
				t.Errorf("PlanCanary(%q) = %s %s %q, want %s %s and the argv as it is", tt.argv, c.File, c.Test, c.Argv, tt.file, tt.test)
			}
			if string(c.Original) != string(fsys[tt.file].Data) {
				t.Errorf("Original is not the file")
			}
			added, at := inserted(t, c.Original, c.Canary)
			if line := lineAt(c.Canary, at); line != tt.canary {
				t.Errorf("the canary's line is\n%q\nwant\n%q", line, tt.canary)
			}
			decoyAdded, decoyAt := inserted(t, c.Original, c.Decoy)
			if decoyAt != at || len(decoyAdded) != len(added) || !strings.Contains(decoyAdded, `"dd7rw2", "dd7rw2"`) && !strings.Contains(decoyAdded, `"dd7rw2" == "dd7rw2"`) {
				t.Errorf("the decoy adds %q at %d, the canary %q at %d", decoyAdded, decoyAt, added, at)
			}
			if strings.Contains(added, "canary") || strings.Contains(added, "failpass") {
				t.Errorf("the canary marks itself as one: %q", added)
			}
			if strings.HasSuffix(c.File, ".go") {
				for _, src := range [][]byte{c.Canary, c.Decoy} {
					if _, err := parser.ParseFile(token.NewFileSet(), c.File, src, 0); err != nil {
						t.Errorf("%s does not parse with the assertion in: %v", c.File, err)
					}
				}
				if strings.Count(string(c.Canary), "\n") != strings.Count(string(c.Original), "\n") {
					t.Errorf("the Go assertion moved lines")
				}
			}
		})
	}
}

// inserted is what b adds to a, and where: b must be a with one run of
// bytes put in.
func inserted(t *testing.T, a, b []byte) (string, int) {
	t.Helper()
	i := 0
	for i < len(a) && a[i] == b[i] {
		i++
	}
	n := len(b) - len(a)
	if n <= 0 || string(b[i+n:]) != string(a[i:]) {
		t.Fatalf("%q is not %q with one insertion", b, a)
	}
	return string(b[i : i+n]), i
}

// lineAt is the whole line of src holding offset at.
func lineAt(src []byte, at int) string {
	s := strings.LastIndexByte(string(src[:at]), '\n') + 1
	e := strings.IndexByte(string(src[at:]), '\n')
	return string(src[s : at+e+1])
}

// TestPlanCanaryPython runs each Python oracle with the canary, the
// decoy and neither: the file still compiles, the canary's test fails
// and the others pass.
func TestPlanCanaryPython(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	dir := t.TempDir()
	for _, argv := range [][]string{
		{"pytest", "tests/test_many.py::test_async"},
		{"pytest", "tests/test_many.py::test_second"},
		{"pytest", "tests/test_many.py::test_doc_only"},
		{"pytest", "tests/test_many.py::TestK::test_k"},
		{"pytest", "tests/test_many.py::test_nested_def"},
	} {
		c, err := PlanCanary(canaryTree(), argv, ".", tok, decoyTok)
		if err != nil {
			t.Fatalf("PlanCanary(%q) = %v", argv, err)
		}
		call := c.Test + "()"
		if class, m, ok := strings.Cut(c.Test, "."); ok {
			call = class + "()." + m + "()"
		}
		if strings.HasPrefix(c.Test, "test_async") {
			call = "asyncio.run(" + call + ")"
		}
		// One interpreter runs the three: each source in a namespace of
		// its own, printing whether its test failed.
		var prog strings.Builder
		prog.WriteString("import asyncio, sys, types\nsys.modules['pytest'] = types.SimpleNamespace(mark=types.SimpleNamespace(xfail=lambda **k: (lambda f: f), skip=lambda f: f, parametrize=lambda *a: (lambda f: f)))\n")
		for _, src := range [][]byte{c.Canary, c.Decoy, c.Original} {
			fmt.Fprintf(&prog, "ns = {}\nexec(compile(%q, 'm.py', 'exec'), ns)\ntry:\n    exec(%q, ns)\n    print('passed')\nexcept AssertionError:\n    print('failed')\n", src, "import asyncio\n"+call)
		}
		f := filepath.Join(dir, "m.py")
		if err := os.WriteFile(f, []byte(prog.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(py, "-B", f).CombinedOutput()
		if got := strings.Fields(string(out)); err != nil || !slices.Equal(got, []string{"failed", "passed", "passed"}) {
			t.Errorf("%s of %q with the canary, the decoy, neither: %v (%v), want failed passed passed:\n%s", c.Test, argv, got, err, out)
		}
	}
}

func TestGoBuilt(t *testing.T) {
	other := "windows"
	if runtime.GOOS == "windows" {
		other = "linux"
	}
	for _, tt := range []struct {
		name, src string
		want      bool
	}{
		{"a_test.go", "package a", true},
		{"a_" + runtime.GOOS + "_test.go", "package a", true},
		{"a_" + other + "_test.go", "package a", false},
		{"a_" + runtime.GOOS + "_" + runtime.GOARCH + "_test.go", "package a", true},
		{"a_" + runtime.GOOS + "_sparc64_test.go", "package a", runtime.GOARCH == "sparc64"},
		{"linux_test.go", "package a", true}, // a name that is only a GOOS is no suffix
		{"a_test.go", "//go:build " + runtime.GOOS + " || " + other + "\n\npackage a", true},
		{"a_test.go", "// Copyright\n\n//go:build integration\n\npackage a", false},
		{"a_test.go", "//go:build go1.20 && !cgo\n\npackage a", true},
		{"a_test.go", "//go:build cgo\n\npackage a", false},
		{"a_test.go", "// +build ignore\n\npackage a", false},
		{"a_test.go", "package a\n\n//go:build ignore\n", true}, // after the clause: a comment
		{"a_test.go", "//go:build (\n\npackage a", false},
	} {
		if got := goBuilt(tt.name, []byte(tt.src)); got != tt.want {
			t.Errorf("goBuilt(%s, %q) = %v, want %v", tt.name, tt.src, got, tt.want)
		}
	}
}

func TestPlanCanaryNotRecognized(t *testing.T) {
	for _, tt := range []struct {
		argv    []string
		workdir string
		why     string
	}{
		{[]string{"sh", "tests/check.sh"}, ".", "no test runner"},
		{[]string{"npm", "test"}, ".", "configuration files"},
		{[]string{"pytest", "-k", "empty", "tests/test_header.py"}, ".", "pytest -k empty"},
		{[]string{"pytest", "tests"}, ".", "not a test file"},
		{[]string{"pytest", "-q"}, ".", "names no test"},
		{[]string{"pytest", "tests/test_gone.py::t"}, ".", "does not exist"},
		{[]string{"pytest", "tests/test_header.py::test_gone"}, ".", "declares no test test_gone"},
		{[]string{"pytest", "tests/test_many.py::test_one_line"}, ".", "not a def with a body of its own lines"},
		{[]string{"pytest", "tests/test_many.py::test_skipped"}, ".", "marked to be skipped or to fail"},
		{[]string{"pytest", "tests/test_many.py::TestSkipped::test_s"}, ".", "marked to be skipped or to fail"},
		{[]string{"pytest", "tests/test_many.py::A::B::test_x"}, ".", "nested in more than one class"},
		{[]string{"python3", "-m", "unittest", "discover", "-s", "tests"}, ".", "unittest discover"},
		{[]string{"python3", "-m", "unittest", "-k", "x", "tests.test_u"}, ".", "unittest -k"},
		{[]string{"python3", "-m", "unittest", "site.pkg.test_z"}, ".", "no module file"},
		{[]string{"go", "test", "./..."}, ".", "-run names no test"},
		{[]string{"go", "test", "-run", "TestA.*", "./calc"}, ".", "-run names no test by name"},
		{[]string{"go", "test", "-run", "^(TestA|TestB", "./calc"}, ".", "-run names no test by name"},
		{[]string{"go", "test", "-run", "TestNone", "./..."}, ".", "no single package"},
		{[]string{"go", "test", "-run", "TestNone", "./calc"}, ".", "declares TestNone"},
		{[]string{"go", "test", "-run", "TestAdd", "-skip", "Add", "./calc"}, ".", "-skip may skip TestAdd"},
		{[]string{"go", "test", "-run", "ExampleAdd", "./calc"}, ".", "an example"},
		{[]string{"go", "test", "-run", "TestLinux", "./calc"}, ".", "not built here"},
		{[]string{"go", "test", "-run", "TestNoT", "./calc"}, ".", "no named *testing.T"},
		{[]string{"go", "test", "example.org/m/calc"}, ".", "not a package folder"},
		{[]string{"go", "test", "./notests"}, ".", "no test file"},
		{[]string{"go", "test", "./gone"}, ".", "does not exist"},
		{[]string{"go", "test", "../x"}, ".", "outside the repository"},
	} {
		_, err := PlanCanary(canaryTree(), tt.argv, tt.workdir, tok, decoyTok)
		var nr *NotRecognizedError
		if !errors.As(err, &nr) || !strings.Contains(nr.Why, tt.why) {
			t.Errorf("PlanCanary(%q) = %v, want not recognized: %s", tt.argv, err, tt.why)
		}
	}
	for _, bad := range [][2]string{{"Bad", decoyTok}, {tok, "bad"}, {"abcdefabcdef", decoyTok}} {
		if _, err := PlanCanary(canaryTree(), []string{"pytest", "tests/test_header.py"}, ".", bad[0], bad[1]); err == nil {
			t.Errorf("PlanCanary with tokens %q = nil error", bad)
		}
	}
}

const testMany = "import asyncio\r\nimport pytest\r\n\r\ndef helper():\r\n\tpass\r\n\r\ndef test_one_line(): pass\r\n\r\n" +
	"@pytest.mark.xfail(strict=True)\r\ndef test_skipped():\r\n\tassert 1 == 2\r\n\r\n" +
	"def test_second(x=\"):#\", *,\r\n\t\ty: dict = {1: 2}) -> None:  # a comment: (\r\n\t# first a comment\r\n\r\n\tif x:\r\n\t\treturn\r\n\r\n" +
	"@pytest.mark.parametrize('a', [1])\r\nasync def test_async(a=1):\r\n\t'''Docstring.\r\n\tdef test_not_here():\r\n\t'''\r\n\tawait asyncio.sleep(0)\r\n\r\n" +
	"def test_doc_only():\r\n\t\"Only a docstring.\"\r\n\r\n" +
	"def test_nested_def():\r\n\tdef inner():\r\n\t\treturn 1\r\n\tassert inner() == 1\r\n\r\n" +
	"@pytest.mark.skip\r\nclass TestSkipped:\r\n\tdef test_s(self):\r\n\t\tpass\r\n\r\n" +
	"class TestK:\r\n\tdef helper(self):\r\n\t\tpass\r\n\r\n\tasync def nothing(self): pass\r\n\tdef test_k(self):\r\n\t\tx = [\r\n1]\r\n"

func FuzzPythonLines(f *testing.F) {
	f.Add("import os\nx = (1,\n2)\n'''a\nb'''\n")
	f.Add("\"\\\n")
	f.Add(testMany)
	f.Fuzz(func(t *testing.T, src string) {
		lines := pythonLines([]byte(src))
		at := 0
		for _, l := range lines {
			if l.start != at || l.end <= l.start {
				t.Fatalf("pythonLines(%q): line %+v does not follow %d", src, l, at)
			}
			at = l.end
		}
		if at != len(src) {
			t.Fatalf("pythonLines(%q) covers %d of %d bytes", src, at, len(src))
		}
		if o, err := pythonOracle("f.py", []byte(src), Pytest, "", ""); err == nil {
			if b := o.insert([2]string{"abcdef", "ghijkl"}); !strings.HasPrefix(string(b), src[:o.at]) || !strings.HasSuffix(string(b), src[o.at:]) {
				t.Fatalf("pythonOracle(%q) inserts at %d into %q", src, o.at, b)
			}
		}
	})
}
