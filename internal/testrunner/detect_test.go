package testrunner

import (
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

func TestDetect(t *testing.T) {
	file := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }
	for _, tc := range []struct {
		name  string
		files fstest.MapFS
		want  []Kind
	}{
		{"empty", fstest.MapFS{}, nil},
		{"go", fstest.MapFS{"go.mod": file("module x\n")}, []Kind{GoTest}},
		{"cargo and npm", fstest.MapFS{"package.json": file("{}"), "Cargo.toml": file("")}, []Kind{Cargo, NPM}},
		{"pytest.ini", fstest.MapFS{"pytest.ini": file("")}, []Kind{Pytest}},
		{"conftest in tests", fstest.MapFS{"tests/conftest.py": file("")}, []Kind{Pytest}},
		{"pyproject with pytest", fstest.MapFS{"pyproject.toml": file("[tool.pytest.ini_options]\n")}, []Kind{Pytest}},
		{"pyproject without", fstest.MapFS{"pyproject.toml": file("[project]\n")}, []Kind{Unittest}},
		{"setup.cfg with pytest", fstest.MapFS{"setup.cfg": file("[tool:pytest]\n")}, []Kind{Pytest}},
		{"tox.ini with pytest", fstest.MapFS{"tox.ini": file("[pytest]\n"), "x.py": file("")}, []Kind{Pytest}},
		{"loose module", fstest.MapFS{"x.py": file("")}, []Kind{Unittest}},
		{"test folder", fstest.MapFS{"tests/test_x.py": file("")}, []Kind{Unittest}},
		{"deeper python is not a project", fstest.MapFS{"src/a/x.py": file("")}, nil},
		{"mark past the bound", fstest.MapFS{"pyproject.toml": file(strings.Repeat(" ", maxProjectFile) + "[tool.pytest]")}, []Kind{Unittest}},
		{"all", fstest.MapFS{"go.mod": file(""), "Cargo.toml": file(""), "package.json": file(""), "conftest.py": file("")}, []Kind{GoTest, Cargo, Pytest, NPM}},
	} {
		if got := Detect(tc.files); !slices.Equal(got, tc.want) {
			t.Errorf("%s: Detect() = %q, want %q", tc.name, got, tc.want)
		}
	}
}
