package gate

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestPrebuildable: only go test as the card's own argv is prebuilt,
// never with an -exec or -toolexec that would run another program on
// the candidate's code; what follows -args is the test binary's.
func TestPrebuildable(t *testing.T) {
	for _, c := range []struct {
		argv []string
		want bool
	}{
		{[]string{"go", "test", "./..."}, true},
		{[]string{"go", "test", "-run", "^TestX$", "-count=1", "."}, true},
		{[]string{"go", "test", "-exec", "sudo", "./..."}, false},
		{[]string{"go", "test", "--exec=./run.sh", "./..."}, false},
		{[]string{"go", "test", "-toolexec=./wrap", "./..."}, false},
		{[]string{"go", "test", ".", "-args", "-exec"}, true},
		{[]string{"go", "vet", "./..."}, false},
		{[]string{"/usr/local/go/bin/go", "test", "."}, false},
		{[]string{"sh", "-c", "go test ./..."}, false},
		{[]string{"go"}, false},
	} {
		if got := prebuildable(c.argv); got != c.want {
			t.Errorf("prebuildable(%q) = %v, want %v", c.argv, got, c.want)
		}
	}
}

// TestPrebuildableEnv: nor with an -exec or -toolexec in GOFLAGS, or
// a C toolchain of the tree's.
func TestPrebuildableEnv(t *testing.T) {
	for _, c := range []struct {
		env  []string
		want bool
	}{
		{[]string{"PATH=/usr/bin", "GOFLAGS=-mod=mod -count=1"}, true},
		{[]string{"GOFLAGS=-toolexec=./wrap"}, false},
		{[]string{"GOFLAGS=-mod=mod -exec=sudo"}, false},
		{[]string{"CC=gcc", "CXX=/usr/bin/g++ -O2"}, true},
		{[]string{"CC=./tools/cc"}, false},
		{[]string{"PKG_CONFIG=bin/pkg-config --static"}, false},
	} {
		if got := prebuildableEnv(c.env); got != c.want {
			t.Errorf("prebuildableEnv(%q) = %v, want %v", c.env, got, c.want)
		}
	}
}

// TestBuildArgs: commands that differ only in what the test binary
// reads build the same; a flag that changes the build keeps them apart.
func TestBuildArgs(t *testing.T) {
	pass := []string{"go", "test", "-count=1", "-run", "^(TestA)$", "."}
	inv := []string{"go", "test", "-count=1", "-skip", "^(TestA)$", "-v", "."}
	if a, b := buildArgs(pass), buildArgs(inv); !slices.Equal(a, b) {
		t.Errorf("buildArgs: %q and %q differ", a, b)
	}
	for _, other := range [][]string{
		{"go", "test", "-race", "-run", "X", "."},
		{"go", "test", "-cover", "."},
		{"go", "test", "./..."},
		{"go", "test", ".", "-args", "-run", "X"},
	} {
		if slices.Equal(buildArgs(pass), buildArgs(other)) {
			t.Errorf("buildArgs(%q) = buildArgs(%q): they build differently", other, pass)
		}
	}
}

// TestMergeBuilds: commands with the same build flags are one build of
// all their packages; where a flag's value could read as a package, or
// the flags differ, they stay two.
func TestMergeBuilds(t *testing.T) {
	for _, c := range []struct {
		a, b []string
		want []string // nil: not merged
	}{
		{[]string{"go", "test", "-count=1", "-run", "^TestA$", "./calc"}, []string{"go", "test", "-count=1", "-skip", "^TestA$", "./..."},
			[]string{"go", "test", "./calc", "./..."}},
		{[]string{"go", "test", "-race", "."}, []string{"go", "test", "-race", "./sub"}, []string{"go", "test", "-race", ".", "./sub"}},
		{[]string{"go", "test", "-tags=x", "-run", "A"}, []string{"go", "test", "-tags=x", "./..."}, []string{"go", "test", "-tags=x", ".", "./..."}},
		{[]string{"go", "test", "."}, []string{"go", "test", "-race", "."}, nil},
		{[]string{"go", "test", "-tags", "x", "."}, []string{"go", "test", "-tags", "x", "./..."}, nil},
		{[]string{"go", "test", ".", "-args", "-x"}, []string{"go", "test", "./..."}, nil},
	} {
		if got := mergeBuilds(c.a, c.b); !slices.Equal(got, c.want) {
			t.Errorf("mergeBuilds(%q, %q) = %q, want %q", c.a, c.b, got, c.want)
		}
	}
}

// TestGoSourceAtLeast: a module's own Go source is counted from the
// workdir's go.mod, without nested modules, vendor or testdata.
func TestGoSourceAtLeast(t *testing.T) {
	root := t.TempDir()
	write := func(p string, n int) {
		p = filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, make([]byte, n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", 10)
	write("a.go", 600)
	write("pkg/b_test.go", 300)
	write("pkg/notes.txt", 5000)
	write("vendor/v/v.go", 5000)
	write("pkg/testdata/t.go", 5000)
	write(".git/x.go", 5000)
	write("nested/go.mod", 10)
	write("nested/n.go", 5000)
	for _, c := range []struct {
		workdir string
		n       int64
		want    bool
	}{
		{".", 900, true},
		{".", 901, false},
		{"pkg", 900, true}, // the module's root is above the workdir
		{"nested", 5000, true},
		{"nested", 5001, false},
	} {
		if got := goSourceAtLeast(root, c.workdir, c.n); got != c.want {
			t.Errorf("goSourceAtLeast(%q, %d) = %v, want %v", c.workdir, c.n, got, c.want)
		}
	}
}
