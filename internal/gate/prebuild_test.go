package gate

import (
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
