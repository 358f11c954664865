package python

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// env is a getenv over a fixed map.
func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// shim writes an executable script at dir/name that runs python with
// the arguments it gets, as pyenv's shims do.
func shim(t *testing.T, dir, name, python string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\nexec "+python+" \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func realPython(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	exe, err := exec.Command(p, "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		t.Skip("python3 does not run")
	}
	return strings.TrimSpace(string(exe))
}

// A shim on PATH resolves to the interpreter it runs; one that cannot
// import the module is passed over for the next.
func TestFindOnPath(t *testing.T) {
	py := realPython(t)
	ctx := context.Background()
	broken, good := t.TempDir(), t.TempDir()
	shim(t, broken, "python3", "/bin/false")
	shim(t, good, "python3", py)
	got, err := Find(ctx, env(map[string]string{"PATH": broken + ":" + good}), "", "json")
	if err != nil {
		t.Fatal(err)
	}
	if got != py {
		t.Errorf("Find = %q, want the interpreter the shim runs, %q", got, py)
	}
}

// Nothing that imports the module: the error names what was tried and
// says how to fix it.
func TestFindNone(t *testing.T) {
	realPython(t)
	dir := t.TempDir()
	p := shim(t, dir, "python3", "/bin/false")
	_, err := Find(context.Background(), env(map[string]string{"PATH": dir}), "", "json")
	var pe *Error
	if !errors.As(err, &pe) || !strings.Contains(pe.Msg, p) || len(pe.Hints()) == 0 {
		t.Fatalf("Find = %v, want an *Error naming %s with hints", err, p)
	}
	// --python that cannot import the module.
	py := realPython(t)
	_, err = Find(context.Background(), env(map[string]string{"PATH": dir}), py, "no_such_module_here")
	if !errors.As(err, &pe) || !strings.Contains(pe.Msg, "cannot import no_such_module_here") {
		t.Fatalf("Find(--python) = %v, want it to say the module cannot be imported", err)
	}
}

// $VIRTUAL_ENV's interpreter comes first, without a probe.
func TestFindVirtualenv(t *testing.T) {
	venv := t.TempDir()
	os.MkdirAll(filepath.Join(venv, "bin"), 0o755)
	p := shim(t, filepath.Join(venv, "bin"), "python", "/bin/false")
	got, err := Find(context.Background(), env(map[string]string{"VIRTUAL_ENV": venv}), "", "json")
	if err != nil || got != p {
		t.Errorf("Find = %q, %v; want %q", got, err, p)
	}
}
