package testrunner

import "testing"

func TestLoadable(t *testing.T) {
	for p, want := range map[string]bool{
		"pkg/b/__init__.py":                      true,
		"pkg/__pycache__/b.cpython-311.pyc":      true,
		"pkg/_b.cpython-311-x86_64-linux-gnu.so": true,
		"b/zz_fix.go":                            true,
		"go.work":                                true,
		"sub/go.mod":                             true,
		"conftest.py":                            true,
		"tests/pytest.ini":                       true,
		"pyproject.toml":                         true,
		".cargo/config":                          true,
		"lib/index.mjs":                          true,
		"node_modules/left-pad/package.json":     true,
		"src/lib.rs":                             true,
		".pytest_cache/v/cache/nodeids":          false,
		"coverage.xml":                           false,
		"testdata/out.golden":                    false,
		"report.json":                            false,
		"build.log":                              false,
		"README":                                 false,
	} {
		if got := Loadable(p); got != want {
			t.Errorf("Loadable(%q) = %v, want %v", p, got, want)
		}
	}
}

func TestWrites(t *testing.T) {
	for _, tc := range []struct {
		k    Kind
		p    string
		dir  bool
		want bool
	}{
		{Cargo, "target", true, true},
		{Cargo, "crates/x/target", true, true},
		{Cargo, "Cargo.lock", false, true},
		{Cargo, "target", false, false},
		{Jest, "node_modules/.cache", true, true},
		{Vitest, "node_modules/.vite", true, true},
		{Jest, ".cache", true, false},
		{GoTest, "target", true, false},
		{Pytest, "Cargo.lock", false, false},
		{Unknown, "node_modules/.cache", true, false},
	} {
		if got := tc.k.Writes(tc.p, tc.dir); got != tc.want {
			t.Errorf("%q.Writes(%q, %v) = %v, want %v", tc.k, tc.p, tc.dir, got, tc.want)
		}
	}
}
