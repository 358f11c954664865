package instance

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/failpass/failpass/internal/run"
	"github.com/failpass/failpass/internal/runner"
)

// PythonError says no usable Python interpreter was found, or the one
// --python names cannot run.
type PythonError struct{ Msg string }

func (e *PythonError) Error() string { return e.Msg }

// UserFacing marks the error as the user's to fix.
func (e *PythonError) UserFacing() bool { return true }

// Hints says how to fix it.
func (e *PythonError) Hints() []string {
	return []string{"pass --python PATH: an absolute interpreter that can import pytest (e.g. a virtualenv's bin/python)"}
}

// FindPython picks the interpreter a Python card names, as an absolute
// path, and the runner it can import (pytest, else unittest). With
// override it is that interpreter; otherwise $VIRTUAL_ENV/bin/python,
// then each python3 and python on PATH in order, the first that can
// import pytest, else the first that can import unittest. A shim (pyenv,
// asdf) is resolved to the interpreter it runs: the one whose
// sys.executable it reports. A virtualenv's python is kept as it is (not
// resolved through its symlink), since that path is what makes it the
// virtualenv.
func FindPython(ctx context.Context, getenv func(string) string, override string) (string, runner.Kind, error) {
	if override != "" {
		p := override
		if !filepath.IsAbs(p) {
			if strings.Contains(p, "/") {
				abs, err := filepath.Abs(p)
				if err != nil {
					return "", "", &PythonError{Msg: fmt.Sprintf("--python %s: %v", override, err)}
				}
				p = abs
			} else if found := lookPath(getenv("PATH"), p); len(found) > 0 {
				p = found[0]
			} else {
				return "", "", &PythonError{Msg: fmt.Sprintf("--python %s: not found on PATH", override)}
			}
		}
		exe, kind := probePython(ctx, getenv, p)
		if kind == runner.Unknown {
			return "", "", &PythonError{Msg: fmt.Sprintf("--python %s does not run Python (it cannot import unittest)", override)}
		}
		return exe, kind, nil
	}
	var candidates []string
	if v := getenv("VIRTUAL_ENV"); v != "" && filepath.IsAbs(v) {
		candidates = append(candidates, filepath.Join(v, "bin", "python"))
	}
	for _, name := range []string{"python3", "python"} {
		candidates = append(candidates, lookPath(getenv("PATH"), name)...)
	}
	first, firstKind := "", runner.Unknown
	for _, c := range candidates {
		exe, kind := probePython(ctx, getenv, c)
		switch {
		case kind == runner.Pytest:
			return exe, kind, nil
		case kind == runner.Unittest && first == "":
			first, firstKind = exe, kind
		}
	}
	if first == "" {
		return "", "", &PythonError{Msg: "no Python interpreter found ($VIRTUAL_ENV, python3 or python on PATH)"}
	}
	return first, firstKind, nil
}

// lookPath lists every executable file named name in the PATH folders,
// in order.
func lookPath(pathEnv, name string) []string {
	var out []string
	for _, dir := range filepath.SplitList(pathEnv) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue // an empty or relative entry means the current folder: never trusted
		}
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			out = append(out, p)
		}
	}
	return out
}

// probeScript prints the interpreter's own path and whether pytest imports.
const probeScript = `import sys
try:
    import pytest
    r = "pytest"
except Exception:
    import unittest
    r = "unittest"
print(sys.executable)
print(r)
`

// probePython runs py once, outside the sandbox, in an empty folder (so
// no module of the repository shadows pytest), and returns the absolute
// interpreter it reports and the runner it can import; Unknown when it
// does not run.
func probePython(ctx context.Context, getenv func(string) string, py string) (string, runner.Kind) {
	dir, err := os.MkdirTemp("", "failpass-python-")
	if err != nil {
		return "", runner.Unknown
	}
	defer os.RemoveAll(dir)
	var env []string
	for _, k := range []string{"PATH", "HOME", "LANG", "VIRTUAL_ENV", "PYENV_VERSION", "PYENV_ROOT"} {
		if v := getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	out, res, err := run.Capture(ctx, run.Spec{Argv: []string{py, "-c", probeScript}, Root: dir, Env: env, Timeout: 30 * time.Second}, nil, 64<<10)
	if err != nil || res.Exit != 0 || res.Inconclusive() {
		return "", runner.Unknown
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 {
		return "", runner.Unknown
	}
	exe := strings.TrimSpace(lines[0])
	if !filepath.IsAbs(exe) {
		return "", runner.Unknown
	}
	// A virtualenv's python reports its own path; a shim reports the
	// interpreter it ran. Keep py itself when it is no shim.
	if !isShim(py) {
		exe = py
	}
	switch strings.TrimSpace(lines[1]) {
	case "pytest":
		return exe, runner.Pytest
	case "unittest":
		return exe, runner.Unittest
	}
	return "", runner.Unknown
}

// isShim says whether p is a version manager's shim: a script in a
// "shims" folder (pyenv, asdf, rbenv-style) that picks the interpreter by
// the current folder, so a card must not name it.
func isShim(p string) bool {
	return filepath.Base(filepath.Dir(p)) == "shims"
}
