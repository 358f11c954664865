package budget

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/failpass/failpass/internal/card"
	"github.com/failpass/failpass/internal/patch"
)

func mod(p string, a, d int) patch.File {
	return patch.File{OldPath: p, NewPath: p, Status: patch.Modified, Added: a, Deleted: d, OldMode: "100644", NewMode: "100644"}
}
func add(p string, a int) patch.File {
	return patch.File{NewPath: p, Status: patch.Added, Added: a, NewMode: "100644"}
}
func del(p string, d int) patch.File {
	return patch.File{OldPath: p, Status: patch.Deleted, Deleted: d, OldMode: "100644"}
}
func ren(from, to string, a, d int) patch.File {
	return patch.File{OldPath: from, NewPath: to, Status: patch.Renamed, Added: a, Deleted: d, OldMode: "100644", NewMode: "100644"}
}
func chmod(p string) patch.File {
	return patch.File{OldPath: p, NewPath: p, Status: patch.Modified, OldMode: "100644", NewMode: "100755"}
}
func link(p, target string) patch.File {
	return patch.File{NewPath: p, Status: patch.Added, Added: 1, NewMode: "120000", Symlink: true, SymlinkTarget: target}
}
func bin(f patch.File) patch.File { f.Binary = true; return f }

func cs(files ...patch.File) *patch.ChangeSet { return &patch.ChangeSet{Files: files} }

var demoBudget = card.Budget{MaxFiles: 3, MaxChangedLines: 20, DenyGlobs: []string{"pyproject.toml", ".github/**", "vendor/"}}
var demoOracle = []string{"card.yml", "tests/test_app.py"}

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name string
		cs   *patch.ChangeSet
		rule string // "" when within budget
		path string
	}{
		// honest
		{"one small edit", cs(mod("src/app.py", 1, 1)), "", ""},
		{"at the limits", cs(mod("a", 5, 5), mod("b", 5, 0), add("c", 5)), "", ""},
		{"rename counts once", cs(ren("src/a.py", "src/b.py", 0, 0), mod("x", 1, 0), mod("y", 1, 0)), "", ""},
		{"symlink inside the tree", cs(link("docs/latest", "../src")), "", ""},
		{"symlink to itself folder", cs(link("docs/here", ".")), "", ""},
		{"deleted symlink to anywhere", cs(patch.File{OldPath: "l", Status: patch.Deleted, Deleted: 1, OldMode: "120000", Symlink: true}), "", ""},
		{"empty change set", cs(), "", ""},
		{"name that only looks denied", cs(mod("src/pyproject.toml.md", 1, 0)), "", ""},
		{"new file next to a denied one", cs(add("github/ci.yml", 1)), "", ""},

		// budget.binary
		{"new binary file", cs(bin(add("img.png", 0))), RuleBinary, "img.png"},
		{"binary edit among text", cs(mod("a", 1, 0), bin(mod("b.bin", 0, 0))), RuleBinary, "b.bin"},
		{"binary beats everything", cs(mod("pyproject.toml", 99, 99), bin(add("x", 0))), RuleBinary, "x"},

		// budget.symlink
		{"symlink out of the tree", cs(link("l", "../../etc/passwd")), RuleSymlink, "l"},
		{"symlink just above the root", cs(link("a/l", "../..")), RuleSymlink, "a/l"},
		{"absolute symlink", cs(link("l", "/etc/passwd")), RuleSymlink, "l"},
		{"symlink into .git", cs(link("l", ".git/hooks")), RuleSymlink, "l"},
		{"symlink into .GIT", cs(link("d/l", "../.GIT/config")), RuleSymlink, "d/l"},
		{"retargeted symlink", cs(patch.File{OldPath: "l", NewPath: "l", Status: patch.Modified, Added: 1, Deleted: 1, OldMode: "120000", NewMode: "120000", Symlink: true, SymlinkTarget: "../../x"}), RuleSymlink, "l"},
		{"renamed symlink now escapes", cs(patch.File{OldPath: "a/l", NewPath: "l", Status: patch.Renamed, OldMode: "120000", NewMode: "120000", Symlink: true, SymlinkTarget: "../x"}), RuleSymlink, "l"},
		{"symlink with unknown target", cs(patch.File{OldPath: "l", NewPath: "m", Status: patch.Renamed, NewMode: "120000", Symlink: true}), RuleSymlink, "m"},
		{"symlink beats deny", cs(mod(".github/x", 1, 0), link("l", "/")), RuleSymlink, "l"},

		// budget.deny
		{"new file under a denied folder", cs(add(".github/workflows/evil.yml", 3)), RuleDeny, ".github/workflows/evil.yml"},
		{"edit of a denied file", cs(mod("pyproject.toml", 1, 0)), RuleDeny, "pyproject.toml"},
		{"denied file at depth", cs(mod("pkg/sub/pyproject.toml", 1, 0)), RuleDeny, "pkg/sub/pyproject.toml"},
		{"rename into a denied folder", cs(ren("ci.yml", ".github/workflows/ci.yml", 0, 0)), RuleDeny, ".github/workflows/ci.yml"},
		{"rename out of a denied folder", cs(ren(".github/workflows/ci.yml", "ci.yml", 0, 0)), RuleDeny, ".github/workflows/ci.yml"},
		{"copy out of a denied folder", cs(patch.File{OldPath: "vendor/lib.py", NewPath: "lib.py", Status: patch.Copied}), RuleDeny, "vendor/lib.py"},
		{"mode change on a denied file", cs(chmod("pyproject.toml")), RuleDeny, "pyproject.toml"},
		{"deleted denied file", cs(del("pyproject.toml", 10)), RuleDeny, "pyproject.toml"},
		{"denied folder replaced by a file", cs(add(".github", 1)), RuleDeny, ".github"},
		{"symlink into a denied path", cs(link("conf", "pyproject.toml")), RuleDeny, "conf"},
		{"symlink into a denied folder", cs(link("a/wf", "../.github/workflows")), RuleDeny, "a/wf"},
		{"deny beats oracle", cs(mod("tests/test_app.py", 1, 0), mod("pyproject.toml", 1, 0)), RuleDeny, "pyproject.toml"},

		// budget.oracle
		{"gut the test", cs(mod("tests/test_app.py", 0, 12)), RuleOracle, "tests/test_app.py"},
		{"delete the test", cs(del("tests/test_app.py", 4)), RuleOracle, "tests/test_app.py"},
		{"rename the test away", cs(ren("tests/test_app.py", "tests/old.py", 0, 0)), RuleOracle, "tests/test_app.py"},
		{"edit the card", cs(mod("card.yml", 1, 1)), RuleOracle, "card.yml"},
		{"oracle beats files", cs(mod("a", 1, 0), mod("b", 1, 0), mod("c", 1, 0), mod("tests/test_app.py", 1, 0)), RuleOracle, "tests/test_app.py"},

		// budget.files
		{"too many new files", cs(add("a", 1), add("b", 1), add("c", 1), add("d", 1)), RuleFiles, ""},
		{"mode-only changes count", cs(chmod("a"), chmod("b"), chmod("c"), chmod("d")), RuleFiles, ""},
		{"rename onto a re-created path counts twice", cs(ren("a", "b", 0, 0), add("a", 1), mod("c", 1, 0), mod("d", 1, 0)), RuleFiles, ""},
		{"files beats lines", cs(add("a", 50), add("b", 1), add("c", 1), add("d", 1)), RuleFiles, ""},

		// budget.lines
		{"too many lines", cs(mod("a", 15, 6)), RuleLines, ""},
		{"deleted lines count", cs(del("old.py", 21)), RuleLines, ""},
		{"lines over several files", cs(mod("a", 7, 0), mod("b", 7, 0), add("c", 7)), RuleLines, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := check(tc.cs, demoBudget, demoOracle)
			switch {
			case tc.rule == "" && got != nil:
				t.Errorf("check(%+v) = %+v, want nil", tc.cs.Files, *got)
			case tc.rule != "" && got == nil:
				t.Errorf("check(%+v) = nil, want %s", tc.cs.Files, tc.rule)
			case got != nil && (got.Rule != tc.rule || got.Path != tc.path || got.Reason == ""):
				t.Errorf("check(%+v) = %+v, want rule %s path %q", tc.cs.Files, *got, tc.rule, tc.path)
			}
		})
	}
}

func TestCheckReasons(t *testing.T) {
	for _, tc := range []struct {
		cs   *patch.ChangeSet
		want string
	}{
		{cs(add("a", 1), add("b", 1), add("c", 1), add("d", 1)), "files changed: 4 > 3"},
		{cs(mod("a", 15, 6)), "lines changed: 21 > 20"},
		{cs(mod("pyproject.toml", 1, 0)), `pyproject.toml matches deny glob "pyproject.toml"`},
		{cs(link("l", "../x")), "symlink l -> ../x leaves the repository"},
	} {
		got := check(tc.cs, demoBudget, demoOracle)
		if got == nil || got.Reason != tc.want {
			t.Errorf("check(%+v) = %+v, want reason %q", tc.cs.Files, got, tc.want)
		}
	}
}

func TestCheckHarness(t *testing.T) {
	inputs := map[string]string{"tests/conftest.py": "pytest loads it", "unittest.py": "it shadows unittest", "old_test.go": "a test file"}
	b := demoBudget
	b.AllowHarness = []string{"tests/conftest.py", "!bad"}
	for _, tc := range []struct {
		name  string
		cs    *patch.ChangeSet
		allow bool
		rule  string
		path  string
	}{
		{"new conftest", cs(add("tests/conftest.py", 3)), false, RuleHarness, "tests/conftest.py"},
		{"allowed conftest", cs(add("tests/conftest.py", 3)), true, "", ""},
		{"shadow even when conftest is allowed", cs(add("tests/conftest.py", 1), add("unittest.py", 1)), true, RuleHarness, "unittest.py"},
		{"renamed away", cs(ren("old_test.go", "keep.go", 0, 0)), true, RuleHarness, "old_test.go"},
		{"library code", cs(mod("src/app.py", 1, 1)), false, "", ""},
		{"oracle first", cs(mod("tests/test_app.py", 1, 0), add("tests/conftest.py", 1)), false, RuleOracle, "tests/test_app.py"},
		{"deny first", cs(add("tests/conftest.py", 1), mod("pyproject.toml", 1, 0)), false, RuleDeny, "pyproject.toml"},
		{"harness before the counts", cs(add("a", 50), add("b", 1), add("c", 1), add("unittest.py", 1)), false, RuleHarness, "unittest.py"},
	} {
		bb := demoBudget
		if tc.allow {
			bb = b
		}
		got := CheckScope(tc.cs, bb, Scope{Oracle: demoOracle, Harness: inputs})
		switch {
		case tc.rule == "" && got != nil:
			t.Errorf("%s: CheckScope = %+v, want nil", tc.name, *got)
		case tc.rule != "" && (got == nil || got.Rule != tc.rule || got.Path != tc.path):
			t.Errorf("%s: CheckScope = %+v, want rule %s path %q", tc.name, got, tc.rule, tc.path)
		}
	}
	got := CheckScope(cs(add("tests/conftest.py", 1)), demoBudget, Scope{Harness: inputs})
	if want := "tests/conftest.py: pytest loads it; a diff may not change the test runner's inputs (a card allows a path with budget.allow_harness)"; got == nil || got.Reason != want {
		t.Errorf("CheckScope reason = %+v, want %q", got, want)
	}
}

func TestCheckBadGlobDenies(t *testing.T) {
	b := card.Budget{MaxFiles: 9, MaxChangedLines: 99, DenyGlobs: []string{"!x"}}
	if got := check(cs(mod("a", 1, 0)), b, nil); got == nil || got.Rule != RuleDeny {
		t.Errorf("Check with deny glob %q = %+v, want %s", "!x", got, RuleDeny)
	}
}

func TestOracleFiles(t *testing.T) {
	base := map[string]bool{
		"tests/test_app.py": true, "tests/conftest.py": true, "run_tests.sh": true,
		"pkg/testdata/in.txt": true, "setup.cfg": true, "pkg/x_test.go": true,
	}
	isFile := func(p string) bool { return base[p] }
	for _, tc := range []struct {
		name     string
		cmds     []card.Command
		cardPath string
		want     []string
	}{
		{"pytest selector", []card.Command{{Workdir: ".", Cmd: []string{"python", "-m", "pytest", "tests/test_app.py::test_f[1-2]"}}}, "", []string{"tests/test_app.py"}},
		{"workdir", []card.Command{{Workdir: "tests", Cmd: []string{"pytest", "test_app.py", "-q"}}}, "", []string{"tests/test_app.py"}},
		{"empty workdir is the root", []card.Command{{Cmd: []string{"./run_tests.sh"}}}, "", []string{"run_tests.sh"}},
		{"program in the repo", []card.Command{{Workdir: "pkg", Cmd: []string{"../run_tests.sh", "testdata/in.txt"}}}, "", []string{"pkg/testdata/in.txt", "run_tests.sh"}},
		{"directories are not oracle files", []card.Command{{Workdir: ".", Cmd: []string{"go", "test", "./pkg", "tests"}}}, "", nil},
		{"flag value", []card.Command{{Workdir: ".", Cmd: []string{"pytest", "--config=setup.cfg", "-c", "tests/conftest.py"}}}, "", []string{"setup.cfg", "tests/conftest.py"}},
		{"shell script words", []card.Command{{Workdir: ".", Cmd: []string{"sh", "-c", "pytest tests/test_app.py && ./run_tests.sh"}}}, "", []string{"run_tests.sh", "tests/test_app.py"}},
		{"outside the repo", []card.Command{{Workdir: "tests", Cmd: []string{"pytest", "../../etc/passwd", "/abs/tests/test_app.py"}}}, "", nil},
		{"card in the repo", []card.Command{{Workdir: ".", Cmd: []string{"true"}}}, "contracts/./card.yml", []string{"contracts/card.yml"}},
		{"several commands, deduplicated", []card.Command{
			{Workdir: ".", Cmd: []string{"pytest", "tests/test_app.py"}},
			{Workdir: "tests", Cmd: []string{"pytest", "test_app.py::test_g"}},
		}, "card.yml", []string{"card.yml", "tests/test_app.py"}},
		{"unclean tokens", []card.Command{{Workdir: ".", Cmd: []string{"cat", "tests//./test_app.py"}}}, "", []string{"tests/test_app.py"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := OracleFiles(tc.cmds, tc.cardPath, isFile)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("OracleFiles(%+v, %q) = %q, want %q", tc.cmds, tc.cardPath, got, tc.want)
			}
		})
	}
}

// FuzzCheck: Check never panics, reports only known rules, and agrees
// with the counts it is given: nil means the counts fit.
func FuzzCheck(f *testing.F) {
	f.Add("src/app.py", "", 1, 1, false, "", 3, 20, "pyproject.toml")
	f.Add(".github/x", "", 1, 0, false, "", 3, 20, ".github/**")
	f.Add("l", "", 1, 0, true, "../../x", 3, 20, "x")
	f.Add("a", "b", 0, 0, false, "", 1, 0, "[")
	f.Add("tests/test_app.py", "", 0, 5, false, "", 3, 20, "")
	f.Fuzz(func(t *testing.T, p1, p2 string, a, d int, symlink bool, target string, maxFiles, maxLines int, glob string) {
		file := patch.File{OldPath: p1, NewPath: p1, Status: patch.Modified, Added: a, Deleted: d, Symlink: symlink, SymlinkTarget: target}
		if p2 != "" {
			file.NewPath, file.Status = p2, patch.Renamed
		}
		c := cs(file)
		b := card.Budget{MaxFiles: maxFiles, MaxChangedLines: maxLines, DenyGlobs: strings.Split(glob, ",")}
		got := check(c, b, demoOracle)
		if got == nil {
			if c.ChangedFiles() > maxFiles || c.ChangedLines() > maxLines {
				t.Fatalf("check(%+v, %+v) = nil over budget", file, b)
			}
			return
		}
		known := false
		for _, r := range Rules {
			known = known || r == got.Rule
		}
		if !known || got.Reason == "" {
			t.Fatalf("check(%+v, %+v) = %+v", file, b, *got)
		}
		_ = fmt.Sprint(got)
	})
}

// check is CheckScope with the oracle files alone, as most cases need.
func check(cs *patch.ChangeSet, b card.Budget, oracle []string) *Finding {
	return CheckScope(cs, b, Scope{Oracle: oracle})
}
