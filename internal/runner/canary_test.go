package runner

import (
	"errors"
	"reflect"
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
		"tests/test_u.py":      f("import unittest\nfrom lib import parse\n\n\nclass T(unittest.TestCase):\n    def test_x(self):\n        self.assertEqual(parse(''), '')\n"),
		"sub/t/test_check.py":  f("from lib import parse\n\ndef check_it():\n    assert parse('') == ''\n"),
		"go.mod":               f("module example.org/m\n"),
		"calc/calc.go":         f("package calc\n"),
		"calc/a_test.go":       f("package calc\n\nimport \"testing\"\n\nfunc TestA(t *testing.T) {}\n"),
		"calc/b_test.go":       f("// Package calc_test.\npackage calc_test\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {}\n"),
		"other/x_test.go":      f("package other\n\nfunc TestOther(t *testing.T) {}\n"),
		"nested/go.mod":        f("module example.org/n\n"),
		"nested/y_test.go":     f("package nested\n\nfunc TestAdd(t *testing.T) {}\n"),
		"notests/n.go":         f("package notests\n"),
	}
}

func TestPlanCanary(t *testing.T) {
	for _, tt := range []struct {
		name     string
		argv     []string
		workdir  string
		file     string
		argvWant []string
		source   []string // parts of the source, in order
	}{
		{"pytest node id", []string{"/usr/bin/python3", "-B", "-m", "pytest", "-q", "tests/test_header.py::test_empty", "-p", "no:cacheprovider"}, ".",
			"tests/test_qk3m9xz0a2b1.py",
			[]string{"/usr/bin/python3", "-B", "-m", "pytest", "-q", "tests/test_qk3m9xz0a2b1.py::test_qk3m9xz0a2b1", "-p", "no:cacheprovider"},
			[]string{"\"\"\"Header tests.\"\"\"\nfrom __future__ import annotations\nimport sys\nsys.path.insert(0, 'src')\nfrom lib import (\n    parse,\n)\n", "def test_qk3m9xz0a2b1():\n    got, want = \"qk3m9\", \"xz0a2b1\"\n    assert got == want\n"}},
		{"pytest file, workdir, other prefix", []string{"pytest", "t/test_check.py::check_it"}, "sub",
			"sub/t/test_qk3m9xz0a2b1.py",
			[]string{"pytest", "t/test_qk3m9xz0a2b1.py::check_qk3m9xz0a2b1"},
			[]string{"from lib import parse\n", "def check_qk3m9xz0a2b1():"}},
		{"pytest running a unittest.TestCase", []string{"pytest", "tests/test_u.py::T::test_x"}, ".",
			"tests/test_qk3m9xz0a2b1.py",
			[]string{"pytest", "tests/test_qk3m9xz0a2b1.py::TestQk3m9xz0a2b1::test_qk3m9xz0a2b1"},
			[]string{"import unittest\nfrom lib import parse\n", "class TestQk3m9xz0a2b1(unittest.TestCase):\n    def test_qk3m9xz0a2b1(self):\n        self.assertEqual(\"qk3m9\", \"xz0a2b1\")\n"}},
		{"pytest class that is no TestCase", []string{"pytest", "tests/test_p.py::TestP::test_x"}, ".",
			"tests/test_qk3m9xz0a2b1.py",
			[]string{"pytest", "tests/test_qk3m9xz0a2b1.py::test_qk3m9xz0a2b1"},
			[]string{"assert got == want\n"}},
		{"unittest dotted", []string{"python3", "-m", "unittest", "-v", "tests.test_u.T.test_x"}, ".",
			"tests/test_qk3m9xz0a2b1.py",
			[]string{"python3", "-m", "unittest", "-v", "tests.test_qk3m9xz0a2b1"},
			[]string{"import unittest\nfrom lib import parse\n", "import unittest\n\n\nclass TestQk3m9xz0a2b1(unittest.TestCase):\n    def test_qk3m9xz0a2b1(self):\n        self.assertEqual(\"qk3m9\", \"xz0a2b1\")\n"}},
		{"unittest path", []string{"python3", "-m", "unittest", "tests/test_u.py"}, ".",
			"tests/test_qk3m9xz0a2b1.py",
			[]string{"python3", "-m", "unittest", "tests/test_qk3m9xz0a2b1.py"},
			[]string{"import unittest\nfrom lib import parse\n", "(unittest.TestCase)"}},
		{"go test one package, external test", []string{"go", "test", "-count=1", "-run", "^TestAdd$", "-skip", "TestQ", "./calc"}, ".",
			"calc/qk3m9xz0a2b1_test.go",
			[]string{"go", "test", "-count=1", "-vet=off", "-run=^TestQk3m9xz0a2b1$", "./calc"},
			[]string{"package calc_test\n\nimport \"testing\"\n\nfunc TestQk3m9xz0a2b1(t *testing.T) {\n\tgot, want := \"qk3m9\", \"xz0a2b1\"\n\tif got != want {\n\t\tt.Errorf(\"got %q, want %q\", got, want)\n\t}\n}\n"}},
		{"go test without -run: first test file", []string{"go", "test", "./calc", "-v"}, ".",
			"calc/qk3m9xz0a2b1_test.go",
			[]string{"go", "test", "-vet=off", "-run=^TestQk3m9xz0a2b1$", "./calc", "-v"},
			[]string{"package calc\n"}},
		{"go test ./... finds the package", []string{"go", "test", "-run=TestAdd", "./...", "-args", "-x"}, ".",
			"calc/qk3m9xz0a2b1_test.go",
			[]string{"go", "test", "-vet=off", "-run=^TestQk3m9xz0a2b1$", "./calc", "-args", "-x"},
			[]string{"package calc_test\n"}},
		{"go test in the package folder", []string{"go", "test", "-run", "TestA"}, "calc",
			"calc/qk3m9xz0a2b1_test.go",
			[]string{"go", "test", "-vet=off", "-run=^TestQk3m9xz0a2b1$", "."},
			[]string{"package calc\n"}},
		{"go test that sets -vet keeps it", []string{"go", "test", "-vet=all", "-run", "TestA"}, "calc",
			"calc/qk3m9xz0a2b1_test.go",
			[]string{"go", "test", "-vet=all", "-run=^TestQk3m9xz0a2b1$", "."},
			[]string{"package calc\n"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := PlanCanary(canaryTree(), tt.argv, tt.workdir, tok)
			if err != nil {
				t.Fatalf("PlanCanary(%q) = %v", tt.argv, err)
			}
			if c.File != tt.file || !reflect.DeepEqual(c.Argv, tt.argvWant) {
				t.Errorf("PlanCanary(%q) = %s %q, want %s %q", tt.argv, c.File, c.Argv, tt.file, tt.argvWant)
			}
			src := string(c.Source)
			for _, part := range tt.source {
				i := strings.Index(src, part)
				if i < 0 {
					t.Fatalf("PlanCanary(%q) source lacks %q:\n%s", tt.argv, part, src)
				}
				src = src[i+len(part):]
			}
			if strings.Contains(string(c.Source), "canary") || strings.Contains(string(c.Source), "failpass") {
				t.Errorf("the canary marks itself as one:\n%s", c.Source)
			}
		})
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
		{[]string{"python3", "-m", "unittest", "discover", "-s", "tests"}, ".", "unittest discover"},
		{[]string{"python3", "-m", "unittest", "-k", "x", "tests.test_u"}, ".", "unittest -k"},
		{[]string{"python3", "-m", "unittest", "site.pkg.test_z"}, ".", "no module file"},
		{[]string{"go", "test", "./..."}, ".", "names no single test"},
		{[]string{"go", "test", "-run", "TestA|TestB", "./..."}, ".", "names no single test"},
		{[]string{"go", "test", "-run", "TestNone", "./..."}, ".", "no single package"},
		{[]string{"go", "test", "example.org/m/calc"}, ".", "not a package folder"},
		{[]string{"go", "test", "./notests"}, ".", "no test file"},
		{[]string{"go", "test", "./gone"}, ".", "does not exist"},
		{[]string{"go", "test", "../x"}, ".", "outside the repository"},
	} {
		_, err := PlanCanary(canaryTree(), tt.argv, tt.workdir, tok)
		var nr *NotRecognizedError
		if !errors.As(err, &nr) || !strings.Contains(nr.Why, tt.why) {
			t.Errorf("PlanCanary(%q) = %v, want not recognized: %s", tt.argv, err, tt.why)
		}
	}
	if _, err := PlanCanary(canaryTree(), []string{"pytest", "tests/test_header.py"}, ".", "Bad"); err == nil {
		t.Errorf("PlanCanary with token %q = nil error", "Bad")
	}
}

func TestPythonImports(t *testing.T) {
	for _, tt := range []struct{ name, src, want string }{
		{"none", "def test_x():\n    assert 1 == 2\n", ""},
		{"docstring with import-looking text",
			"'''\nimport nothing\n'''\nimport os  # comment (\nx = [\n  1,\n]\nfrom a import b\n\n@decorator\ndef t(): pass\n",
			"'''\nimport nothing\n'''\nimport os  # comment (\nx = [\n  1,\n]\nfrom a import b\n"},
		{"pytestmark after the imports is not copied",
			"import pytest\npytestmark = pytest.mark.skip\n\nclass TestA:\n    pass\n",
			"import pytest\n"},
		{"try import before defs, nested and later imports",
			"try:\n    import numpy\nexcept ImportError:\n    numpy = None\n\ndef t():\n    from lib import (\n        f,\n    )\n    import lib\n    import lib\n\nimport late\n",
			"try:\n    import numpy\nexcept ImportError:\n    numpy = None\ntry:\n    import late\nexcept Exception:\n    pass\ntry:\n    from lib import (\n            f,\n        )\nexcept Exception:\n    pass\ntry:\n    import lib\nexcept Exception:\n    pass\n"},
		{"backslash and strings with quotes", "import a, \\\n    b\ns = \"it's # not a comment\"\nimport c\n", "import a, \\\n    b\ns = \"it's # not a comment\"\nimport c\n"},
		{"no final newline", "import os", "import os\n"},
	} {
		if got := string(pythonImports([]byte(tt.src))); got != tt.want {
			t.Errorf("%s: pythonImports(%q) =\n%s\nwant\n%s", tt.name, tt.src, got, tt.want)
		}
	}
}

func FuzzPythonLines(f *testing.F) {
	f.Add("import os\nx = (1,\n2)\n'''a\nb'''\n")
	f.Add("\"\\\n")
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
		_ = pythonImports([]byte(src))
	})
}
