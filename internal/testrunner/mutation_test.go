package testrunner

import (
	"bytes"
	"errors"
	"go/parser"
	"go/token"
	"strings"
	"testing"
	"testing/fstest"
)

// mutationOfSrc plans the canary of argv on a tree with file src and
// returns its mutation.
func mutationOfSrc(t testing.TB, file, src string, argv []string) (*Mutation, error) {
	t.Helper()
	fsys := fstest.MapFS{file: {Data: []byte(src)}, "go.mod": {Data: []byte("module m\n")}}
	c, err := PlanCanary(fsys, argv, ".", tok, decoyTok)
	if err != nil {
		t.Fatalf("PlanCanary: %v", err)
	}
	return c.Mutate()
}

func TestMutatePython(t *testing.T) {
	pytest := []string{"python", "-m", "pytest", "test_m.py::test_x"}
	unit := []string{"python", "-m", "unittest", "test_m.T.test_x"}
	tests := []struct {
		name, src string
		argv      []string
		was, now  string // "" when there is no mutation
		line      int
	}{
		{"int", "def test_x():\n    assert f() == 3\n", pytest, "3", "2", 2},
		{"int left", "def test_x():\n    assert 10 == f()\n", pytest, "10", "11", 2},
		{"negative", "def test_x():\n    assert f() == -4\n", pytest, "4", "5", 2},
		{"string", "def test_x():\n    x = f()\n    assert x == 'ab', 'msg'\n", pytest, "", "x", 3},
		{"tuple", "def test_x():\n    assert f() == (1, 'a')\n", pytest, "1", "0", 2},
		{"list", "def test_x():\n    assert f() == [\n        'a',\n        2,\n    ]\n", pytest, "", "x", 3},
		{"dict last value", "def test_x():\n    assert f() == {'a': 1, 'a': 5}\n", pytest, "5", "4", 2},
		{"empty list", "def test_x():\n    assert f() == []\n", pytest, "", "None", 2},
		{"docstring first", "def test_x():\n    \"\"\"Doc == 1.\"\"\"\n    assert f() == 1\n", pytest, "1", "0", 3},
		{"nested skipped", "def test_x():\n    if y:\n        assert f() == 1\n    assert g() == 7\n", pytest, "7", "6", 4},
		{"unittest", "import unittest\nclass T(unittest.TestCase):\n    def test_x(self):\n        self.assertEqual(f(), 'q')\n", unit, "", "x", 4},
		{"unittest msg", "import unittest\nclass T(unittest.TestCase):\n    def test_x(self):\n        self.assertEqual(12, f(), 'm')\n", unit, "12", "13", 4},
		// No mutation: both sides computed, both literal, not one equality, a set, a float.
		{"both computed", "def test_x():\n    assert f() == g()\n", pytest, "", "", 0},
		{"both literal", "def test_x():\n    assert 1 == 1\n", pytest, "", "", 0},
		{"chain", "def test_x():\n    assert 1 == f() == 1\n", pytest, "", "", 0},
		{"not equal", "def test_x():\n    assert f() != 1\n", pytest, "", "", 0},
		{"set", "def test_x():\n    assert f() == {1, 0}\n", pytest, "", "", 0},
		{"float", "def test_x():\n    assert f() == 1.5\n", pytest, "", "", 0},
		{"f-string", "def test_x():\n    assert f() == f'{x}'\n", pytest, "", "", 0},
		{"comment", "def test_x():\n    assert f() == 1  # one\n", pytest, "1", "0", 2},
		{"none", "def test_x():\n    assert f() == None\n    assert g() is True\n", pytest, "", "", 0},
		{"two statements", "def test_x():\n    assert f() == 1; g()\n", pytest, "", "", 0},
		{"other test", "def test_y():\n    assert f() == 1\ndef test_x():\n    assert f() == g\n", pytest, "", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := mutationOfSrc(t, "test_m.py", tt.src, tt.argv)
			checkMutation(t, tt.src, m, err, tt.was, tt.now, tt.line)
		})
	}
}

func TestMutateGo(t *testing.T) {
	argv := []string{"go", "test", "-run", "^TestX$", "."}
	head := "package m\n\nimport (\n\t\"reflect\"\n\t\"testing\"\n)\n\nvar _ = reflect.DeepEqual\n\n"
	tests := []struct {
		name, body string
		was, now   string
		line       int
	}{
		{"want var", "\tgot := F()\n\twant := 41\n\tif got != want {\n\t\tt.Fatal(got)\n\t}\n", "41", "40", 12},
		{"literal", "\tif got := F(); got != \"ab\" {\n\t\tt.Fatal(got)\n\t}\n", "", "x", 11},
		{"deepequal", "\twant := []string{\"a\", \"b\"}\n\tif !reflect.DeepEqual(F(), want) {\n\t\tt.Fatal()\n\t}\n", "", "x", 11},
		{"cmp diff", "\tif d := cmp.Diff(map[string]int{\"a\": 0x10}, F()); d != \"\" {\n\t\tt.Fatal(d)\n\t}\n", "0x10", "17", 11},
		{"cmp equal", "\tif !cmp.Equal(F(), -3) {\n\t\tt.Fatal()\n\t}\n", "3", "2", 11},
		{"equal method", "\twant := P{X: 5}\n\tif got := F(); !got.Equal(want) {\n\t\tt.Fatal()\n\t}\n", "5", "4", 11},
		{"testify", "\tassert.Equal(t, 7, F())\n", "7", "6", 11},
		{"require", "\twant := struct{ A int }{A: 1}\n\trequire.Equal(t, want, F())\n", "1", "0", 11},
		// No mutation.
		{"both computed", "\tif F() != G() {\n\t\tt.Fatal()\n\t}\n", "", "", 0},
		{"rebound", "\twant := 1\n\twant := G()\n\tif F() != want {\n\t\tt.Fatal()\n\t}\n", "", "", 0},
		{"nested", "\tfor range 1 {\n\t\tif F() != 1 {\n\t\t\tt.Fatal()\n\t\t}\n\t}\n", "", "", 0},
		{"float", "\tif F() != 1.5 {\n\t\tt.Fatal()\n\t}\n", "", "", 0},
		{"empty composite", "\tif !reflect.DeepEqual(F(), []int{}) {\n\t\tt.Fatal()\n\t}\n", "", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := head + "func TestX(t *testing.T) {\n" + tt.body + "}\n"
			m, err := mutationOfSrc(t, "m_test.go", src, argv)
			checkMutation(t, src, m, err, tt.was, tt.now, tt.line)
			if m != nil {
				if _, err := parser.ParseFile(token.NewFileSet(), "m_test.go", m.Mutated, 0); err != nil {
					t.Errorf("the mutated file does not parse: %v\n%s", err, m.Mutated)
				}
			}
		})
	}
}

func checkMutation(t *testing.T, src string, m *Mutation, err error, was, now string, line int) {
	t.Helper()
	if line == 0 {
		var nm *NoMutationError
		if !errors.As(err, &nm) {
			t.Fatalf("Mutate = %+v, %v; want no mutation", m, err)
		}
		return
	}
	if err != nil {
		t.Fatalf("Mutate: %v", err)
	}
	if m.Was != was || m.Now != now || m.Line != line {
		t.Errorf("Mutate changed %q to %q on line %d, want %q to %q on line %d\n%s", m.Was, m.Now, m.Line, was, now, line, m.Mutated)
	}
	if bytes.Equal(m.Mutated, []byte(src)) || !strings.HasPrefix(m.Digest, "sha256:") {
		t.Errorf("Mutate left the file alone or has no digest: %s", m.Digest)
	}
}

// FuzzMutate feeds hostile oracle files to the finder: it must not
// panic, and a mutation changes exactly one place of the file.
func FuzzMutate(f *testing.F) {
	f.Add("def test_x():\n    assert f() == (1, [2, {'a': 'b'}])\n", true)
	f.Add("import unittest\nclass T(unittest.TestCase):\n    def test_x(self):\n        self.assertEqual(f(), ('a' 'b', -1,))\n", true)
	f.Add("package m\n\nimport \"testing\"\n\nfunc TestX(t *testing.T) {\n\twant := map[string][]int{\"a\": {1}}\n\tif !reflect.DeepEqual(F(), want) {\n\t\tt.Fatal()\n\t}\n}\n", false)
	f.Fuzz(func(t *testing.T, src string, py bool) {
		file, argv := "m_test.go", []string{"go", "test", "-run", "^TestX$", "."}
		if py {
			file, argv = "test_m.py", []string{"python", "-m", "pytest", "test_m.py::test_x"}
			if strings.Contains(src, "unittest") {
				argv = []string{"python", "-m", "unittest", "test_m.T.test_x"}
			}
		}
		fsys := fstest.MapFS{file: {Data: []byte(src)}}
		c, err := PlanCanary(fsys, argv, ".", tok, decoyTok)
		if err != nil {
			return
		}
		m, err := c.Mutate()
		if err != nil {
			return
		}
		if len(m.Mutated) != len(src)-len(m.Was)+len(m.Now) || m.Was == m.Now {
			t.Fatalf("mutation %q -> %q changed more than one place", m.Was, m.Now)
		}
		if !py {
			if _, err := parser.ParseFile(token.NewFileSet(), file, m.Mutated, 0); err != nil {
				t.Fatalf("the mutated Go file does not parse: %v", err)
			}
		}
	})
}
