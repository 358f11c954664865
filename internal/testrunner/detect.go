package testrunner

import (
	"io"
	"io/fs"
	"strings"
)

// maxProjectFile bounds what Detect reads of one project file.
const maxProjectFile = 1 << 20

// Detect lists the runners a project's own files point at, most specific
// first (GoTest, Cargo, Pytest, Unittest, NPM): go.mod, Cargo.toml,
// package.json, pytest's configuration or a conftest.py, and, for
// Unittest, a Python project without pytest's marks. fsys is the
// project's folder; it reads at most 1 MiB of a file.
func Detect(fsys fs.FS) []Kind {
	has := func(name string) bool {
		_, err := fs.Stat(fsys, name)
		return err == nil
	}
	contains := func(name, text string) bool {
		b, err := readSmall(fsys, name)
		return err == nil && strings.Contains(string(b), text)
	}
	pytest := has("pytest.ini") || has("conftest.py") || has("tests/conftest.py") || has("test/conftest.py") ||
		contains("pyproject.toml", "[tool.pytest") || contains("setup.cfg", "[tool:pytest]") || contains("tox.ini", "[pytest]")
	python := has("pyproject.toml") || has("setup.py") || has("setup.cfg")
	if !python {
		py, _ := fs.Glob(fsys, "*.py")
		tests, _ := fs.Glob(fsys, "test*/test*.py")
		python = len(py)+len(tests) > 0
	}
	found := map[Kind]bool{
		GoTest: has("go.mod"), Cargo: has("Cargo.toml"), NPM: has("package.json"),
		Pytest: pytest, Unittest: python && !pytest,
	}
	var out []Kind
	for _, k := range []Kind{GoTest, Cargo, Pytest, Unittest, NPM} {
		if found[k] {
			out = append(out, k)
		}
	}
	return out
}

func readSmall(fsys fs.FS, name string) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxProjectFile))
}
