package testrunner

import (
	"path"
	"strings"
)

// Loadable says whether a test runner, or the code its tests run, may
// load the file at p (slash-separated, relative to the tree) as code or
// configuration: a source, bytecode or native module of a language
// failpass knows a runner of, or a runner's, build's or package
// manager's configuration. A test run has no business adding one to the
// tree it tests, and one it adds can stand in for what the diff leaves
// broken: a package folder or bytecode file beside a Python module, a Go
// file in another package. It is generous on purpose; a run's honest
// outputs (reports, caches, logs, golden data) are none of these.
func Loadable(p string) bool {
	name := path.Base(p)
	if loadableNames[name] || strings.HasSuffix(p, ".cargo/config") {
		return true
	}
	ext := path.Ext(name)
	return ext != "" && loadableExts[ext]
}

var loadableExts = set(
	// Python: sources, bytecode (read from __pycache__ even with
	// PYTHONDONTWRITEBYTECODE), native modules, path hooks.
	".py", ".pyc", ".pyo", ".pyd", ".so", ".dylib", ".pth", ".egg-link",
	// Go: sources of every kind a package builds from, module files.
	".go", ".s", ".syso", ".c", ".h", ".cc", ".cpp", ".cxx", ".hh", ".m", ".mod", ".sum", ".work",
	// JavaScript and TypeScript, native addons.
	".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx", ".node",
	// Rust.
	".rs",
	// Configuration: pyproject.toml, Cargo.toml, .cargo/config.toml,
	// pytest.ini, tox.ini, setup.cfg.
	".toml", ".ini", ".cfg",
)

var loadableNames = set(
	"package.json", "tsconfig.json", "jsconfig.json", "jest.config.json", "babel.config.json",
	".babelrc", ".swcrc", ".npmrc", ".mocharc.json", ".mocharc.yml", ".mocharc.yaml",
	"Cargo.lock", "modules.txt",
)

func set(xs ...string) map[string]bool {
	m := make(map[string]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}

// Writes says whether runner k itself writes the path p (a folder,
// when dir) into the tree while it runs: cargo's target folder and the
// Cargo.lock of a crate that has none, the caches JavaScript runners keep
// under node_modules. A run may add code there; like everything a run
// adds, it is gone before the next run.
func (k Kind) Writes(p string, dir bool) bool {
	name := path.Base(p)
	switch k {
	case Cargo:
		return dir && name == "target" || !dir && name == "Cargo.lock"
	case NPM, Jest, Vitest, NodeTest:
		switch name {
		case ".cache", ".vite", ".vitest":
			return dir && path.Base(path.Dir(p)) == "node_modules"
		}
	}
	return false
}
