package testrunner

import (
	"reflect"
	"testing"
)

func TestRecognize(t *testing.T) {
	tests := []struct {
		name    string
		argv    []string
		workdir string
		want    Command
	}{
		{"python -m pytest node id", []string{"python", "-m", "pytest", "tests/test_header.py::test_empty_header", "-q"}, ".",
			Command{Kind: Pytest, Workdir: ".", Interpreter: "python", Targets: []Target{{Path: "tests/test_header.py", ID: "test_empty_header"}}}},
		{"absolute interpreter, class node id", []string{"/usr/bin/python3.11", "-B", "-m", "pytest", "-q", "t/test_a.py::TestA::test_b[1]"}, "sub",
			Command{Kind: Pytest, Workdir: "sub", Interpreter: "/usr/bin/python3.11", Targets: []Target{{Path: "t/test_a.py", ID: "TestA::test_b[1]"}}}},
		{"pytest script, -k narrows", []string{"pytest", "-k", "empty", "tests"}, "",
			Command{Kind: Pytest, Workdir: ".", Targets: []Target{{Path: "tests"}}, Narrowed: "pytest -k empty"}},
		{"pytest -c config", []string{"pytest", "-c", "ci/pytest.ini", "--rootdir=.", "t.py"}, ".",
			Command{Kind: Pytest, Workdir: ".", Targets: []Target{{Path: "t.py"}}, Config: "."}},
		{"pytest -p plugins", []string{"pytest", "-p", "myplug", "-pother.mod", "-p", "no:cacheprovider", "t.py"}, ".",
			Command{Kind: Pytest, Workdir: ".", Targets: []Target{{Path: "t.py"}}, Plugins: []string{"myplug", "other.mod"}}},
		{"unittest dotted", []string{"python3", "-m", "unittest", "-v", "tests.test_x.TestX.test_y"}, ".",
			Command{Kind: Unittest, Workdir: ".", Interpreter: "python3", Targets: []Target{{ID: "tests.test_x.TestX.test_y"}}}},
		{"unittest path", []string{"python3", "-m", "unittest", "tests/test_x.py"}, ".",
			Command{Kind: Unittest, Workdir: ".", Interpreter: "python3", Targets: []Target{{Path: "tests/test_x.py"}}}},
		{"unittest discover", []string{"python3", "-m", "unittest", "discover", "-s", "tests"}, ".",
			Command{Kind: Unittest, Workdir: ".", Interpreter: "python3", Narrowed: "unittest discover", Discover: &Discovery{Start: "tests"}}},
		{"unittest discover positional", []string{"python3", "-m", "unittest", "discover", "-v", "src", "check_*.py", "."}, ".",
			Command{Kind: Unittest, Workdir: ".", Interpreter: "python3", Narrowed: "unittest discover", Discover: &Discovery{Start: "src", Pattern: "check_*.py", Top: "."}}},
		{"unittest discover options", []string{"python3", "-m", "unittest", "discover", "--pattern=t_*.py", "-t", "..", "-k", "x"}, "sub",
			Command{Kind: Unittest, Workdir: "sub", Interpreter: "python3", Narrowed: "unittest discover", Discover: &Discovery{Pattern: "t_*.py", Top: ".."}}},
		{"unittest with nothing named discovers", []string{"python3", "-m", "unittest", "-v"}, ".",
			Command{Kind: Unittest, Workdir: ".", Interpreter: "python3", Narrowed: "unittest with no test named (discovery)", Discover: &Discovery{}}},
		{"python script is not a runner", []string{"python3", "tests/run.py"}, ".", Command{Workdir: "."}},
		{"python -c is not a runner", []string{"python3", "-c", "import unittest"}, ".", Command{Workdir: "."}},
		{"go test -run", []string{"go", "test", "-count=1", "-run", "^TestEmpty$", "./header"}, ".",
			Command{Kind: GoTest, Workdir: ".", Run: "^TestEmpty$", Targets: []Target{{Path: "./header"}}}},
		{"go test no package", []string{"go", "test", "-v"}, "pkg",
			Command{Kind: GoTest, Workdir: "pkg", Targets: []Target{{Path: "."}}}},
		{"go test -args stops", []string{"go", "test", "./...", "-args", "-run", "x"}, ".",
			Command{Kind: GoTest, Workdir: ".", Targets: []Target{{Path: "./..."}}}},
		{"go test -C", []string{"go", "test", "-C", "mod", "./a", "./b", "-run=X"}, ".",
			Command{Kind: GoTest, Workdir: "mod", Run: "X", Targets: []Target{{Path: "./a"}, {Path: "./b"}}, Narrowed: "go test -run over several packages"}},
		{"go build is not a runner", []string{"go", "build", "./..."}, ".", Command{Workdir: "."}},
		{"env and timeout wrappers", []string{"env", "A=1", "timeout", "-k", "5", "60", "go", "test", "."}, ".",
			Command{Kind: GoTest, Workdir: ".", Targets: []Target{{Path: "."}}}},
		{"npm test", []string{"npm", "test"}, ".", Command{Kind: NPM, Workdir: "."}},
		{"npm run test", []string{"npm", "run", "test"}, ".", Command{Kind: NPM, Workdir: "."}},
		{"npx vitest", []string{"npx", "vitest", "run"}, ".", Command{Kind: Vitest, Workdir: "."}},
		{"npx jest", []string{"npx", "jest"}, ".", Command{Kind: Jest, Workdir: "."}},
		{"node --test", []string{"node", "--test", "test/"}, ".", Command{Kind: NodeTest, Workdir: "."}},
		{"cargo test", []string{"cargo", "+nightly", "test", "--lib"}, ".", Command{Kind: Cargo, Workdir: "."}},
		{"cargo build", []string{"cargo", "build"}, ".", Command{Workdir: "."}},
		{"empty", nil, ".", Command{Workdir: "."}},
		{"sh -c", []string{"sh", "-c", "go test ./..."}, ".", Command{Workdir: "."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Recognize(tt.argv, tt.workdir)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Recognize(%q, %q) = %+v, want %+v", tt.argv, tt.workdir, got, tt.want)
			}
		})
	}
}

func TestDir(t *testing.T) {
	c := Command{Workdir: "mod"}
	for _, tt := range []struct{ path, want string }{
		{".", "mod"}, {"./...", "mod"}, {"./a/...", "mod/a"}, {"../x", "x"}, {"...", "mod"},
	} {
		if got := c.Dir(Target{Path: tt.path}); got != tt.want {
			t.Errorf("Dir(%q) = %q, want %q", tt.path, got, tt.want)
		}
	}
}

func TestUnittestModule(t *testing.T) {
	c := Command{Workdir: "src"}
	got := c.UnittestModule(Target{ID: "pkg.test_x.TestX"})
	want := []Candidate{
		{File: "src/pkg/test_x/TestX.py", Module: "pkg.test_x.TestX"},
		{File: "src/pkg/test_x.py", Module: "pkg.test_x", Rest: "TestX"},
		{File: "src/pkg.py", Module: "pkg", Rest: "test_x.TestX"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("UnittestModule = %+v, want %+v", got, want)
	}
	if got := c.UnittestModule(Target{Path: "t/test_a.py"}); !reflect.DeepEqual(got, []Candidate{{File: "src/t/test_a.py"}}) {
		t.Errorf("UnittestModule(path) = %+v", got)
	}
}

func FuzzRecognize(f *testing.F) {
	f.Add("python -m pytest tests/test_a.py::t -q", ".")
	f.Add("go test -run ^T$ ./...", "x")
	f.Add("env A=1 timeout 5", "")
	f.Fuzz(func(t *testing.T, s, wd string) {
		c := Recognize(splitWords(s), wd)
		if !c.Recognized() && (len(c.Targets) > 0 || c.Run != "" || c.Interpreter != "") {
			t.Errorf("unrecognized command carries a selection: %+v", c)
		}
		for _, tg := range c.Targets {
			_ = c.Dir(tg)
		}
	})
}

func splitWords(s string) []string {
	var out []string
	word := ""
	for _, r := range s {
		if r == ' ' {
			if word != "" {
				out = append(out, word)
			}
			word = ""
			continue
		}
		word += string(r)
	}
	if word != "" {
		out = append(out, word)
	}
	return out
}
