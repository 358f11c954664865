package fromcommit

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/failpass/failpass/internal/gitx"
)

func git(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	out, err := gitx.CommandEnv(context.Background(), dir, nil, env, args...)
	if err != nil {
		t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out))
}

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

var who = []string{"GIT_AUTHOR_NAME=Ada", "GIT_AUTHOR_EMAIL=ada@example.org", "GIT_AUTHOR_DATE=1700000000 +0200",
	"GIT_COMMITTER_NAME=Bob", "GIT_COMMITTER_EMAIL=bob@example.org", "GIT_COMMITTER_DATE=1700000500 -0300"}

// fixRepo makes a repository whose HEAD is a fix: it changes lib.go,
// changes and adds test files, deletes one, and leaves the checkout with
// staged and unstaged changes of its own.
func fixRepo(t *testing.T) (*gitx.Repo, string) {
	t.Helper()
	dir := t.TempDir()
	git(t, dir, who, "init", "-q", "-b", "main")
	write(t, dir, "lib.go", "package lib\n\nfunc F() int { return 1 }\n")
	write(t, dir, "lib_test.go", "package lib\n")
	write(t, dir, "old_test.go", "package lib\n")
	write(t, dir, "testdata/in.txt", "old\n")
	git(t, dir, who, "add", "-A")
	git(t, dir, who, "commit", "-q", "-m", "base")
	write(t, dir, "lib.go", "package lib\n\nfunc F() int { return 2 }\n")
	write(t, dir, "lib_test.go", "package lib\n\nimport \"testing\"\n\nfunc TestF(t *testing.T) {}\n")
	write(t, dir, "testdata/in.txt", "new\n")
	write(t, dir, "testdata/more.txt", "more\n")
	write(t, dir, "CHANGES.md", "- F is 2\n")
	os.Remove(filepath.Join(dir, "old_test.go"))
	git(t, dir, who, "add", "-A")
	git(t, dir, who, "commit", "-q", "-m", "fix F")
	write(t, dir, "lib.go", "package lib // staged\n")
	git(t, dir, who, "add", "lib.go")
	write(t, dir, "lib_test.go", "package lib // unstaged\n")
	repo, err := gitx.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return repo, git(t, dir, nil, "rev-parse", "HEAD")
}

func makeBase(t *testing.T, repo *gitx.Repo, rev string) string {
	t.Helper()
	ctx := context.Background()
	parent := git(t, repo.Dir, nil, "rev-parse", rev+"^")
	all, err := changes(ctx, repo, parent, rev)
	if err != nil {
		t.Fatal(err)
	}
	var tests []Change
	for _, c := range all {
		if IsTestFile(Go, c.Path) {
			tests = append(tests, c)
		}
	}
	base, err := MakeBase(ctx, repo, parent, rev, tests)
	if err != nil {
		t.Fatal(err)
	}
	return base
}

func TestMakeBase(t *testing.T) {
	repo, rev := fixRepo(t)
	status := git(t, repo.Dir, nil, "status", "--porcelain")
	index := git(t, repo.Dir, nil, "ls-files", "-s")
	base := makeBase(t, repo, rev)

	// The tree: the parent's, with the fix's test changes and nothing else.
	files := strings.Split(git(t, repo.Dir, nil, "ls-tree", "-r", "--name-only", base), "\n")
	if want := []string{"lib.go", "lib_test.go", "testdata/in.txt", "testdata/more.txt"}; !slices.Equal(files, want) {
		t.Errorf("base tree = %v, want %v", files, want)
	}
	for path, want := range map[string]string{
		"lib.go":          "package lib\n\nfunc F() int { return 1 }",
		"lib_test.go":     "package lib\n\nimport \"testing\"\n\nfunc TestF(t *testing.T) {}",
		"testdata/in.txt": "new",
	} {
		if got := git(t, repo.Dir, nil, "show", base+":"+path); got != want {
			t.Errorf("base:%s = %q, want %q", path, got, want)
		}
	}
	if got, want := git(t, repo.Dir, nil, "rev-parse", base+"^"), git(t, repo.Dir, nil, "rev-parse", rev+"^"); got != want {
		t.Errorf("base parent = %s, want %s", got, want)
	}
	if got, want := git(t, repo.Dir, nil, "show", "-s", "--format=%an %ae %ad %cn %ce %cd", "--date=raw", base),
		"Ada ada@example.org 1700000000 +0200 Bob bob@example.org 1700000500 -0300"; got != want {
		t.Errorf("base identity = %q, want %q", got, want)
	}
	if got := git(t, repo.Dir, nil, "rev-parse", BasesRef+rev[:12]); got != base {
		t.Errorf("%s = %s, want %s", BasesRef+rev[:12], got, base)
	}
	// The user's checkout and index are as they were.
	if got := git(t, repo.Dir, nil, "status", "--porcelain"); got != status {
		t.Errorf("status after MakeBase = %q, want %q", got, status)
	}
	if got := git(t, repo.Dir, nil, "ls-files", "-s"); got != index {
		t.Errorf("index after MakeBase changed:\n%s\nwant\n%s", got, index)
	}

	// The same commit gives the same base: again, and in a clone that
	// never saw the first one (another object store, another time).
	if again := makeBase(t, repo, rev); again != base {
		t.Errorf("MakeBase again = %s, want %s", again, base)
	}
	clone := t.TempDir()
	git(t, clone, nil, "clone", "-q", "--no-local", repo.Dir, ".")
	crepo, err := gitx.Open(context.Background(), clone)
	if err != nil {
		t.Fatal(err)
	}
	if other := makeBase(t, crepo, rev); other != base {
		t.Errorf("MakeBase in a clone = %s, want %s", other, base)
	}
}

func TestReferenceDiff(t *testing.T) {
	repo, rev := fixRepo(t)
	git(t, repo.Dir, nil, "config", "diff.noprefix", "true")
	git(t, repo.Dir, nil, "config", "diff.mnemonicPrefix", "true")
	base := makeBase(t, repo, rev)
	ref, err := referenceDiff(context.Background(), repo, base, rev, []string{"CHANGES.md", "lib.go"})
	if err != nil {
		t.Fatal(err)
	}
	s := string(ref)
	for _, want := range []string{"diff --git a/CHANGES.md b/CHANGES.md\n", "diff --git a/lib.go b/lib.go\n", "-func F() int { return 1 }\n+func F() int { return 2 }\n"} {
		if !strings.Contains(s, want) {
			t.Errorf("reference diff lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "_test.go") || strings.Contains(s, "testdata") {
		t.Errorf("reference diff carries test files:\n%s", s)
	}
	// Base plus the reference is the fix's tree.
	wt := t.TempDir()
	git(t, repo.Dir, nil, "worktree", "add", "-q", "--detach", wt, base)
	defer git(t, repo.Dir, nil, "worktree", "remove", "--force", wt)
	if _, err := gitx.Command(context.Background(), wt, ref, "apply", "--index", "-"); err != nil {
		t.Fatal(err)
	}
	if got, want := git(t, wt, nil, "write-tree"), git(t, repo.Dir, nil, "rev-parse", rev+"^{tree}"); got != want {
		t.Errorf("base + reference = tree %s, want the fix's %s", got, want)
	}
}

func TestIsTestFile(t *testing.T) {
	for _, tc := range []struct {
		eco  Ecosystem
		path string
		want bool
	}{
		{Go, "a_test.go", true},
		{Go, "pkg/a_test.go", true},
		{Go, "pkg/testdata/x.json", true},
		{Go, "testdata/a/b", true},
		{Go, "pkg/a.go", false},
		{Go, "pkg/test.go", false},
		{Go, "tests/a.py", false},
		{Python, "tests/test_a.py", true},
		{Python, "pkg/a_test.py", true},
		{Python, "test_a.py", true},
		{Python, "conftest.py", true},
		{Python, "tests/data/in.json", true},
		{Python, "src/pkg/test/helpers.py", true},
		{Python, "src/pkg/core.py", false},
		{Python, "src/pkg/testing.py", false},
		{Python, "docs/test_plan.md", false},
	} {
		if got := IsTestFile(tc.eco, tc.path); got != tc.want {
			t.Errorf("IsTestFile(%s, %q) = %v, want %v", tc.eco, tc.path, got, tc.want)
		}
	}
}

func TestChangedGoTests(t *testing.T) {
	const old = `package p

import "testing"

func helper() int { return 1 }

func TestA(t *testing.T) { _ = helper() }

func TestB(t *testing.T) {}

func Testlower(t *testing.T) {}
`
	for _, tc := range []struct {
		name      string
		old, new  string
		tests     []string
		restDirty bool
	}{
		{"new file", "", old, []string{"TestA", "TestB"}, false},
		{"same", old, old, nil, false},
		{"comment only", old, strings.Replace(old, "func TestB", "// B.\nfunc TestB", 1), nil, false},
		{"body changed", old, strings.Replace(old, "func TestB(t *testing.T) {}", "func TestB(t *testing.T) { t.Log() }", 1), []string{"TestB"}, false},
		{"test added", old, old + "\nfunc TestC(t *testing.T) {}\n", []string{"TestC"}, false},
		{"helper changed", old, strings.Replace(old, "return 1", "return 2", 1), nil, true},
		{"not a test name", old, old + "\nfunc Testc(t *testing.T) {}\n", nil, true},
		{"does not parse", old, old + "\nfunc (", nil, true},
	} {
		var o []byte
		if tc.old != "" {
			o = []byte(tc.old)
		}
		tests, rest := changedGoTests(o, []byte(tc.new))
		if !slices.Equal(tests, tc.tests) || rest != tc.restDirty {
			t.Errorf("%s: changedGoTests = %v, %v, want %v, %v", tc.name, tests, rest, tc.tests, tc.restDirty)
		}
	}
}

func TestNameRegexp(t *testing.T) {
	if got, want := nameRegexp([]string{"TestA", "TestB_1"}), "^(TestA|TestB_1)$"; got != want {
		t.Errorf("nameRegexp = %q, want %q", got, want)
	}
}

func TestParseGoJSON(t *testing.T) {
	log := `{"Action":"start","Package":"m/p"}
{"Action":"run","Package":"m/p","Test":"TestA"}
{"Action":"fail","Package":"m/p","Test":"TestA/sub"}
{"Action":"fail","Package":"m/p","Test":"TestA"}
{"Action":"pass","Package":"m/p","Test":"TestB"}
{"Action":"fail","Package":"m/p"}
{"ImportPath":"m/q [m/q.test]","Action":"build-output","Output":"# m/q [m/q.test]\n"}
{"ImportPath":"m/q [m/q.test]","Action":"build-output","Output":"./q_test.go:9:5: undefined: Mul\n"}
{"ImportPath":"m/q [m/q.test]","Action":"build-fail"}
{"Action":"fail","Package":"m/q","FailedBuild":"m/q [m/q.test]"}
`
	r := parseGoJSON([]byte(log))
	if r.Tests["m/p"]["TestA"] != "fail" || r.Tests["m/p"]["TestB"] != "pass" || len(r.Tests["m/p"]) != 2 {
		t.Errorf("Tests = %v", r.Tests)
	}
	if !r.Broken["m/q"] || r.Broken["m/p"] {
		t.Errorf("Broken = %v, want m/q only", r.Broken)
	}
	if got, want := r.cause(), "./q_test.go:9:5: undefined: Mul"; got != want {
		t.Errorf("cause = %q, want %q", got, want)
	}
	// Older toolchains print build errors as plain lines.
	r = parseGoJSON([]byte("# m/q\n./q_test.go:3:2: undefined: X\nFAIL\tm/q [build failed]\n"))
	if got, want := r.cause(), "./q_test.go:3:2: undefined: X"; got != want {
		t.Errorf("plain cause = %q, want %q", got, want)
	}
}

func TestParsePytest(t *testing.T) {
	log := `============================= test session starts ==============================
platform linux -- Python 3.11.2, pytest-7.2.1, pluggy-1.0.0
rootdir: /tmp/w/sub, configfile: pyproject.toml
collected 4 items

tests/test_a.py .F.E                                                     [100%]

=========================== short test summary info ============================
PASSED tests/test_a.py::test_one
PASSED tests/test_a.py::test_p[a - b]
FAILED tests/test_a.py::test_two - assert 1 == 2
FAILED tests/test_a.py::test_three - assert [1] - [2] == []
FAILED tests/test_a.py::test_q[x - y] - assert 'a - b' == 'c'
ERROR tests/test_a.py::test_two - RuntimeError: teardown
ERROR tests/test_b.py - ImportError: cannot import name 'mul'
=================== 1 failed, 2 passed, 1 error in 0.12s ===================
`
	r := parsePytest([]byte(log))
	if r.Rootdir != "/tmp/w/sub" {
		t.Errorf("Rootdir = %q", r.Rootdir)
	}
	want := map[string]string{"tests/test_a.py::test_one": "PASSED", "tests/test_a.py::test_p[a - b]": "PASSED", "tests/test_a.py::test_q[x - y]": "FAILED", "tests/test_a.py::test_two": "FAILED", "tests/test_a.py::test_three": "FAILED"}
	for id, st := range want {
		if r.Status[id] != st {
			t.Errorf("Status[%s] = %q, want %q (all: %v)", id, r.Status[id], st, r.Status)
		}
	}
	if len(r.Collect) != 1 || !strings.Contains(r.Collect[0], "cannot import name 'mul'") {
		t.Errorf("Collect = %v", r.Collect)
	}
	if !strings.Contains(r.Last, "1 failed, 2 passed") {
		t.Errorf("Last = %q", r.Last)
	}
	// pytest 7.2 names a file that did not collect without the message.
	r = parsePytest([]byte("_ ERROR collecting tests/test_b.py _\nImportError while importing test module\nE   ImportError: cannot import name 'mul'\n=== short test summary info ===\nERROR tests/test_b.py\n"))
	if len(r.Collect) != 1 || r.Collect[0] != "tests/test_b.py - ImportError: cannot import name 'mul'" {
		t.Errorf("Collect (pytest 7.2) = %q", r.Collect)
	}
}

func TestParseUnittest(t *testing.T) {
	log := `test_add (tests.test_core.TestCore.test_add) ... FAIL
test_sub (tests.test_core.TestCore) ... ok
test_doc (tests.test_core.TestCore.test_doc)
A docstring. ... ERROR
test_noisy (tests.test_core.TestCore.test_noisy) ... printed by the test
ok
test_skip (tests.test_core.TestCore.test_skip) ... skipped 'no'

======================================================================
FAIL: test_add (tests.test_core.TestCore.test_add)
----------------------------------------------------------------------
AssertionError: 2 != 3
`
	r := parseUnittest([]byte(log))
	want := map[string]string{
		"tests.test_core.TestCore.test_add":   "FAIL",
		"tests.test_core.TestCore.test_sub":   "ok",
		"tests.test_core.TestCore.test_doc":   "ERROR",
		"tests.test_core.TestCore.test_noisy": "ok",
		"tests.test_core.TestCore.test_skip":  "skipped",
	}
	if len(r.Status) != len(want) {
		t.Errorf("Status = %v, want %v", r.Status, want)
	}
	for id, st := range want {
		if r.Status[id] != st {
			t.Errorf("Status[%s] = %q, want %q", id, r.Status[id], st)
		}
	}
	r = parseUnittest([]byte("test_core (unittest.loader._FailedTest.test_core) ... ERROR\n\nImportError: Failed to import test module: test_core\nTraceback:\nImportError: cannot import name 'mul'\n"))
	if len(r.Collect) != 1 || r.Collect[0] != "test_core - ImportError: cannot import name 'mul'" {
		t.Errorf("Collect = %q", r.Collect)
	}
}
