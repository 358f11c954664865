package testrunner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The logs under testdata/classify are real output (stdout and stderr
// interleaved, as a card command's log holds them) of go 1.26, pytest 7.2
// on Python 3.11 and unittest on Python 3.11 and 3.12, run on small
// broken projects.
func TestClassify(t *testing.T) {
	for _, tt := range []struct {
		log  string
		kind Kind
		exit int
		want string // a part of the cause; "" when the run is not the environment's fault
	}{
		{"go_build_failed", GoTest, 1, "could not build package example.org/calc/calc (calc/calc_test.go:6:5: undefined: Sum)"},
		{"go_build_failed_json", GoTest, 1, "could not build package example.org/calc/calc (calc/calc_test.go:6:5: undefined: Sum)"},
		{"go_vet_failed", GoTest, 1, "could not build package example.org/calc/calc (calc/calc_test.go:6:12: (*testing.common).Errorf format %d"},
		{"go_setup_gosum", GoTest, 1, "a module it needs is not in the module cache (calc/calc.go:3:8: missing go.sum entry"},
		{"go_setup_modcache", GoTest, 1, "could not set up package example.org/calc/calc: a module it needs is not in the module cache (calc/calc.go:3:8: module lookup disabled by GOPROXY=off); run `go mod download`"},
		{"go_no_package", GoTest, 1, "could not set up package ./nope (stat /tmp/cls/govet/nope: directory not found)"},
		{"go_no_module", GoTest, 1, "the go command failed before any test ran (go: go.mod file not found"},
		{"go_test_failed", GoTest, 1, ""},
		{"go_test_failed_v", GoTest, 1, ""},
		{"go_test_failed_json", GoTest, 1, ""},
		{"go_test_panic", GoTest, 1, ""},
		{"pytest_failed", Pytest, 1, ""},
		{"pytest_import_in_test", Pytest, 1, ""},
		{"pytest_collect_error", Pytest, 2, "pytest could not collect the tests (ModuleNotFoundError: No module named 'yaml_not_installed')"},
		{"pytest_missing_module", Pytest, 4, "pytest could not import the test module (ModuleNotFoundError: No module named 'yaml_not_installed')"},
		{"pytest_conftest", Pytest, 4, "could not load a conftest.py (ModuleNotFoundError: No module named 'yaml_not_installed')"},
		{"pytest_not_found", Pytest, 4, "found no test named by the command (ERROR: not found: /tmp/cls/py/tests/test_calc.py::test_nope)"},
		{"pytest_usage", Pytest, 4, "refused the command line (ERROR: usage:"},
		{"pytest_internal", Pytest, 3, "internal error (RuntimeError: boom)"},
		{"pytest_no_tests", Pytest, 5, "collected no tests"},
		{"pytest_sys_exit", Pytest, 4, "importing the test module raised SystemExit (SystemExit: 0), so code it imports calls sys.exit or exit"},
		{"pytest_not_installed", Pytest, 1, "the interpreter has no pytest (/root/.pyenv/versions/3.11.7/bin/python3: No module named pytest)"},
		// pytest's own start refused a file above the worktree (its
		// configuration search, with the repository outside /tmp and no
		// mount namespace): the file is named. A test of its own that
		// meets a PermissionError is a test's failure.
		{"pytest_denied_config", Pytest, 1, "pytest could not read /var/tmp/x/pyproject.toml before any test ran (permission denied)"},
		{"pytest_denied_in_test", Pytest, 1, ""},
		{"unittest_failed", Unittest, 1, ""},
		{"unittest_import_in_test", Unittest, 1, ""},
		{"unittest_import", Unittest, 1, "could not import the test module (ModuleNotFoundError: No module named 'yaml_not_installed')"},
		{"unittest_import_path", Unittest, 1, "could not import the test module (ModuleNotFoundError: No module named 'yaml_not_installed')"},
		{"unittest_import_312", Unittest, 1, "could not import the test module (ModuleNotFoundError: No module named 'yaml_not_installed')"},
		{"unittest_no_module", Unittest, 1, "could not import the test module (ModuleNotFoundError: No module named 'tests.nope')"},
		{"unittest_no_attr", Unittest, 1, "could not load the test the command names (AttributeError: type object 'T' has no attribute 'test_nope')"},
		{"unittest_no_tests_312", Unittest, 5, "ran no tests"},
		// A runner's output read as another's, or a passing run, is never
		// the environment's fault.
		{"go_build_failed", Pytest, 1, ""},
		{"pytest_collect_error", Unittest, 2, ""},
		{"go_build_failed", GoTest, 0, ""},
		{"unittest_import", Unknown, 1, ""},
	} {
		out, err := os.ReadFile(filepath.Join("testdata", "classify", tt.log+".txt"))
		if err != nil {
			t.Fatal(err)
		}
		got := Classify(tt.kind, tt.exit, out)
		switch {
		case tt.want == "" && got != "":
			t.Errorf("Classify(%s, %d, %s) = %q, want none", tt.kind, tt.exit, tt.log, got)
		case tt.want != "" && !strings.Contains(got, tt.want):
			t.Errorf("Classify(%s, %d, %s) = %q, want it to say %q", tt.kind, tt.exit, tt.log, got, tt.want)
		}
	}
}

func FuzzClassify(f *testing.F) {
	f.Add("go test", 1, "FAIL\tx [build failed]\n")
	f.Add("pytest", 2, "E   ModuleNotFoundError: No module named 'x'\n")
	f.Add("unittest", 1, "ERROR: x (unittest.loader._FailedTest.x)\nImportError: Failed to import test module: x\n")
	f.Fuzz(func(t *testing.T, kind string, exit int, out string) {
		got := Classify(Kind(kind), exit, []byte(out))
		if exit == 0 && got != "" {
			t.Errorf("Classify(%q, 0, %q) = %q: a passing run is never the environment's fault", kind, out, got)
		}
		if strings.ContainsAny(got, "\n\r") {
			t.Errorf("Classify(%q, %d, %q) = %q: not one line", kind, exit, out, got)
		}
	})
}

// TestMissingDependency checks the narrowing the loop reads a candidate's
// own runs with: a module or runner the machine lacks, never code that
// does not compile or a test that does not exist.
func TestMissingDependency(t *testing.T) {
	for _, tt := range []struct {
		log     string
		kind    Kind
		exit    int
		missing bool
	}{
		{"go_setup_gosum", GoTest, 1, true},
		{"go_setup_modcache", GoTest, 1, true},
		{"go_build_failed", GoTest, 1, false},
		{"go_vet_failed", GoTest, 1, false},
		{"go_no_package", GoTest, 1, false},
		{"go_test_failed", GoTest, 1, false},
		{"pytest_missing_module", Pytest, 4, true},
		{"pytest_collect_error", Pytest, 2, true},
		{"pytest_not_installed", Pytest, 1, true},
		{"pytest_not_found", Pytest, 4, false},
		{"pytest_failed", Pytest, 1, false},
		{"unittest_import", Unittest, 1, true},
		{"unittest_no_attr", Unittest, 1, false},
		{"unittest_failed", Unittest, 1, false},
	} {
		out, err := os.ReadFile(filepath.Join("testdata", "classify", tt.log+".txt"))
		if err != nil {
			t.Fatal(err)
		}
		got := MissingDependency(tt.kind, tt.exit, out)
		if (got != "") != tt.missing {
			t.Errorf("MissingDependency(%s) = %q, want a cause: %v", tt.log, got, tt.missing)
		}
		if got != "" && got != Classify(tt.kind, tt.exit, out) {
			t.Errorf("MissingDependency(%s) = %q, want Classify's cause", tt.log, got)
		}
	}
}
