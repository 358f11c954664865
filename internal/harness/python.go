package harness

import (
	"bytes"
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/failpass/failpass/internal/testrunner"
)

// Why a Python runner loads a file.
const (
	whyConftest     = "pytest loads conftest.py files on the test's path"
	whyPyTestdata   = "test data in the tests' own folder (a test reads it: expected output, fixtures)"
	whyPytestConfig = "pytest reads its configuration and rootdir from it (pytest.ini, .pytest.ini, tox.ini, setup.cfg and pyproject.toml from the test up to the root)"
	whyInit         = "Python imports the __init__.py files on the test's path"
	whyPackageForm  = "a package here would be imported instead of the test module the card names"
	whyTestModule   = "unittest imports the test module the card names by its dotted id from it"
	whyStartup      = "Python runs it at start-up (sitecustomize.py, usercustomize.py, .pth files)"
	whyPackaging    = "Python packaging metadata: an installed distribution's entry points register plugins pytest loads on its own (pytest11), and .egg-link and __editable__ files put code on sys.path"
	whyCollected    = "a test module in a folder the card's pytest command collects: its module-level code runs before the tests, in the same process"
)

// pytestConfigs are the files pytest looks for, from the tests' common
// folder up to the root, to find its rootdir and ini options.
var pytestConfigs = []string{"pytest.ini", ".pytest.ini", "tox.ini", "setup.cfg", "pyproject.toml"}

func pythonPlan(c testrunner.Command, env map[string]string) *plan {
	pl := &plan{}
	w := c.Workdir
	var files, folders []string // test modules; folders of tests
	var configs, conftests []string
	var addopts testrunner.Command
	located := true
	for _, t := range c.Targets {
		var cands []string
		if c.Kind == testrunner.Unittest {
			for _, m := range c.UnittestModule(t) {
				cands = append(cands, m.File)
			}
		} else if t.Path != "" {
			cands = []string{path.Clean(path.Join(w, t.Path))}
		}
		for _, p := range cands {
			switch {
			case !inRepo(p) || p == ".":
			case strings.HasSuffix(p, ".py"):
				files = append(files, p)
				if t.Path == "" {
					pl.file(p, whyTestModule)
				}
			default:
				folders = append(folders, p)
			}
		}
	}
	if len(files) == 0 && len(folders) == 0 {
		located = false
	}
	// A package beside a test module (tests/test_x/__init__.py) would be
	// imported instead of it; an __init__.py on some test's path says so
	// first.
	var testDirs []string
	onPath := map[string]bool{}
	for _, f := range files {
		testDirs = append(testDirs, path.Dir(f))
		for _, d := range testChain(path.Dir(f), w) {
			onPath[path.Join(d, "__init__.py")] = true
		}
	}
	for _, f := range files {
		if p := path.Join(strings.TrimSuffix(f, ".py"), "__init__.py"); !onPath[p] {
			pl.file(p, whyPackageForm)
		}
	}
	var dataDirs []string // the tests' own folders
	for _, f := range files {
		c := testChain(path.Dir(f), w)
		for _, d := range c {
			pl.file(path.Join(d, "__init__.py"), whyInit)
		}
		if top := c[len(c)-1]; testFolder(path.Base(top)) && !slices.Contains(dataDirs, top) {
			dataDirs = append(dataDirs, top)
		}
	}
	for _, f := range folders {
		testDirs = append(testDirs, f)
		for _, d := range testChain(f, w) {
			pl.file(path.Join(d, "__init__.py"), whyInit)
		}
		pl.add(f, true, func(rel string) string {
			if path.Base(rel) == "__init__.py" {
				return whyInit
			}
			return ""
		})
	}
	if len(files) > 0 {
		pl.lazy = append(pl.lazy, testHelpers(files, w))
		pl.reads = append(pl.reads, files...)
	}
	if d := c.Discover; c.Kind == testrunner.Unittest && d != nil {
		discoveryRules(pl, d, w)
	}
	if c.Kind == testrunner.Pytest {
		if !located {
			// pytest collects from the workdir (or the configuration's
			// testpaths): every conftest.py below it may load.
			folders = append(folders, w)
		}
		// In a folder pytest collects, every conftest.py loads, and every
		// test module runs its module-level code in the same process
		// before the tests do: a new or changed one can neuter the rest
		// (the Go rule's _test.go, for Python).
		for _, f := range folders {
			pl.add(f, true, func(rel string) string {
				switch b := path.Base(rel); {
				case b == "conftest.py":
					return whyConftest
				case strings.HasSuffix(b, ".py") && (strings.HasPrefix(b, "test_") || strings.HasSuffix(b, "_test.py")):
					return whyCollected
				}
				return ""
			})
		}
		seen := map[string]bool{}
		for _, d := range append(slices.Clone(testDirs), w) {
			for _, a := range ancestors(d) {
				if seen[a] {
					continue
				}
				seen[a] = true
				pl.file(path.Join(a, "conftest.py"), whyConftest)
				pl.names(a, whyPytestConfig, pytestConfigs...)
				conftests = append(conftests, path.Join(a, "conftest.py"))
				for _, n := range pytestConfigs {
					configs = append(configs, path.Join(a, n))
				}
			}
		}
		// PYTEST_ADDOPTS in the card's env is read as more argv.
		addopts = testrunner.Recognize(append([]string{"pytest"}, strings.Fields(env["PYTEST_ADDOPTS"])...), w)
		for _, cfg := range []string{c.Config, addopts.Config} {
			if p := path.Clean(path.Join(w, cfg)); cfg != "" && !path.IsAbs(cfg) && inRepo(p) {
				why := "pytest reads its configuration from it (the argv names it)"
				if p != "." {
					pl.file(p, why)
					configs = append(configs, p)
				}
				pl.names(p, why, pytestConfigs...)
				for _, n := range pytestConfigs {
					configs = append(configs, path.Join(p, n))
				}
			}
		}
	}

	// sys.path: the workdir (python -m puts it first) and the card's
	// PYTHONPATH entries, relative to the workdir.
	sysPath := []string{w}
	for _, e := range strings.Split(env["PYTHONPATH"], ":") {
		if e == "" || path.IsAbs(e) {
			continue
		}
		if p := path.Clean(path.Join(w, e)); inRepo(p) && !slices.Contains(sysPath, p) {
			sysPath = append(sysPath, p)
		}
	}
	for _, s := range sysPath {
		pl.add(s, true, func(rel string) string {
			if name, ok := shadows(rel); ok {
				return fmt.Sprintf("it shadows the module %q: the runner's working directory and PYTHONPATH come first on sys.path", name)
			}
			return ""
		})
	}
	if c.Kind == testrunner.Pytest {
		plugins := append(slices.Clone(c.Plugins), addopts.Plugins...)
		for _, m := range strings.Split(env["PYTEST_PLUGINS"], ",") {
			if m = strings.TrimSpace(m); m != "" {
				plugins = append(plugins, m)
			}
		}
		for _, m := range plugins {
			pl.module(m, sysPath, fmt.Sprintf("pytest loads the plugin %s from it", m))
		}
		// Plugins the base's configuration names (addopts = -p NAME,
		// pytest_plugins in a conftest.py), read only when an open path
		// is Python.
		pl.lazy = append(pl.lazy, configuredPlugins(configs, conftests, sysPath))
		pl.reads = append(pl.reads, configs...)
		pl.reads = append(pl.reads, conftests...)
		// pytest's default import mode puts each test module's basedir
		// (the first folder above it that is not a package) first on
		// sys.path: a module there shadows too. Which folder that is
		// depends on the base's __init__.py files, read only when a path
		// could be such a module.
		if len(files) > 0 {
			pl.lazy = append(pl.lazy, basedirShadows(files, sysPath))
			for _, f := range files {
				pl.lists = append(pl.lists, ancestors(path.Dir(f))...)
			}
		}
	}
	pl.add(".", true, func(rel string) string {
		switch b := path.Base(rel); {
		case b == "sitecustomize.py", b == "usercustomize.py", strings.HasSuffix(b, ".pth"):
			return whyStartup
		case packaging(rel):
			return whyPackaging
		}
		return ""
	})
	// Test data, last so a more telling reason wins: a file that is not
	// Python in the tests' own folder (tests/data/expected.json) is what a
	// test compares against, as testdata/ is for Go; changing it changes
	// the test. Python files there are the rules above and testHelpers'.
	for _, d := range dataDirs {
		pl.add(d, true, func(rel string) string {
			if strings.HasSuffix(rel, ".py") {
				return ""
			}
			return whyPyTestdata
		})
	}
	return pl
}

// Import statements, as far as a line shows them.
var (
	fromImportRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?m)^[ \t]*from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+\(?([^\n#]*)`)
	})
	importRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^[ \t]*import[ \t]+([^\n#]*)`) })
)

// testHelpers finds the open paths that are modules a test file imports
// from its own test folder (tests/helpers.py, tests/utils/): the tests'
// code, as a Go test-only helper is, which a diff could gut while leaving
// the test file alone. The test files are read only when an open path is
// Python inside a test folder.
func testHelpers(files []string, w string) func([]string, *memo) (map[string]string, error) {
	return func(open []string, t *memo) (map[string]string, error) {
		out := map[string]string{}
		top := map[string]string{} // test file -> its topmost test folder
		for _, f := range files {
			c := testChain(path.Dir(f), w)
			if d := c[len(c)-1]; testFolder(path.Base(d)) {
				top[f] = d
			}
		}
		maybe := slices.ContainsFunc(open, func(p string) bool {
			if !strings.HasSuffix(p, ".py") {
				return false
			}
			for _, d := range top {
				if isAncestor(d, p) {
					return true
				}
			}
			return false
		})
		if !maybe {
			return out, nil
		}
		src, err := t.Read(slices.Sorted(maps.Keys(top)))
		if err != nil {
			return nil, err
		}
		sub := &plan{}
		for _, f := range slices.Sorted(maps.Keys(src)) {
			d := top[f]
			why := fmt.Sprintf("a module %s imports from its test folder %s (a test helper)", f, d)
			// Where an imported name may live: relative to the test's
			// folder, and absolute from every folder above it (the
			// workdir, pytest's basedir, the root).
			var mods []string // slash paths without .py
			for _, m := range fromImportRe().FindAllStringSubmatch(string(src[f]), -1) {
				dots, mod := len(m[1]), strings.ReplaceAll(m[2], ".", "/")
				var bases []string
				if dots > 0 {
					b := path.Dir(f)
					for i := 1; i < dots; i++ {
						b = path.Dir(b)
					}
					bases = []string{b}
				} else {
					bases = ancestors(path.Dir(f))
				}
				for _, b := range bases {
					p := path.Join(b, mod)
					mods = append(mods, p)
					for _, n := range strings.Split(m[3], ",") {
						if n = strings.Fields(strings.Trim(n, " \t()") + " x")[0]; isIdentifier(n) {
							mods = append(mods, path.Join(p, n))
						}
					}
				}
			}
			for _, m := range importRe().FindAllStringSubmatch(string(src[f]), -1) {
				for _, n := range strings.Split(m[1], ",") {
					n = strings.Fields(n + " x")[0]
					for _, b := range ancestors(path.Dir(f)) {
						mods = append(mods, path.Join(b, strings.ReplaceAll(n, ".", "/")))
					}
				}
			}
			for _, m := range mods {
				if isAncestor(d, m) && m != strings.TrimSuffix(f, ".py") {
					sub.file(m+".py", why)
					sub.below(m, why)
				}
			}
		}
		for _, p := range open {
			if why := sub.match(p); why != "" {
				out[p] = why
			}
		}
		return out, nil
	}
}

// discoveryRules: unittest discovery imports every module matching its
// pattern below the start folder, running its module-level code before
// any test; the packages it descends into at or below a test folder
// (tests/, lib/pkg/tests/) are the tests' own too.
func discoveryRules(pl *plan, d *testrunner.Discovery, w string) {
	start, pattern := d.Start, d.Pattern
	if start == "" {
		start = "."
	}
	if pattern == "" {
		pattern = "test*.py"
	}
	s := path.Clean(path.Join(w, start))
	if path.IsAbs(start) || !inRepo(s) {
		return
	}
	tests := testFolder(path.Base(s))
	pl.add(s, true, func(rel string) string {
		b := path.Base(rel)
		if ok, _ := path.Match(pattern, b); ok && strings.HasSuffix(b, ".py") {
			return fmt.Sprintf("a test module unittest discovery imports (%s below %s): its module-level code runs before the tests, in the same process", pattern, s)
		}
		if b == "__init__.py" && (tests || slices.ContainsFunc(strings.Split(path.Dir(rel), "/"), testFolder)) {
			return whyInit
		}
		return ""
	})
	if tests {
		for _, dir := range testChain(s, w) {
			pl.file(path.Join(dir, "__init__.py"), whyInit)
		}
	}
}

// testChain is the part of a test's path whose __init__.py files are the
// tests' own: the test's folder, and the folders above it up to the
// topmost test folder (tests, test, testing, test_*, *_tests) below the
// workdir. Above that, as in lib/matplotlib/tests, the packages are the
// library's: their __init__.py is library code, which a fix may need to
// change and the canary guards.
func testChain(dir, w string) []string {
	c := chain(dir, w)
	top := 0
	for i, d := range c {
		if testFolder(path.Base(d)) {
			top = i
		}
	}
	return c[:top+1]
}

func testFolder(name string) bool {
	switch {
	case name == "tests", name == "test", name == "testing",
		strings.HasPrefix(name, "test_"), strings.HasPrefix(name, "tests_"),
		strings.HasSuffix(name, "_test"), strings.HasSuffix(name, "_tests"):
		return true
	}
	return false
}

// module adds the files of the dotted module m as found from each folder
// of sysPath: its module file or package, and the __init__.py of the
// packages above it (which run first). A module not spelled as one adds
// nothing.
func (pl *plan) module(m string, sysPath []string, why string) {
	parts := strings.Split(m, ".")
	for _, p := range parts {
		if !isIdentifier(p) {
			return
		}
	}
	for _, s := range sysPath {
		p := path.Join(s, path.Join(parts...))
		pl.file(p+".py", why)
		pl.below(p, why)
		for i := 1; i < len(parts); i++ {
			pl.file(path.Join(s, path.Join(parts[:i]...), "__init__.py"), why)
		}
	}
}

func isIdentifier(s string) bool {
	for i, r := range s {
		if !(r == '_' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || i > 0 && '0' <= r && r <= '9') {
			return false
		}
	}
	return s != ""
}

// Plugins a configuration file or conftest.py names.
var (
	iniPluginRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?:^|[\s"'\[,])-p(?:\s+|["']\s*,\s*["']|)([A-Za-z_][\w.:]*)`)
	})
	conftestPluginsRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?m)^pytest_plugins\s*=\s*([\[(][^\])]*[\])]|"[^"\n]*"|'[^'\n]*')`)
	})
	quotedModuleNameRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`["']([A-Za-z_][\w.]*)["']`) })
	iniPythonpathRe    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^[ \t]*pythonpath[ \t]*=[ \t]*(.*)$`) })
	quotedRe           = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`["']([^"'\n]*)["']`) })
)

// configuredPlugins finds the open paths that are modules of a plugin the
// base's pytest configuration (addopts = -p NAME) or a conftest.py on the
// tests' path (pytest_plugins = [...]) names, or that shadow a module from
// a folder the configuration's pythonpath option puts on sys.path.
func configuredPlugins(configs, conftests, sysPath []string) func([]string, *memo) (map[string]string, error) {
	return func(open []string, t *memo) (map[string]string, error) {
		out := map[string]string{}
		if !slices.ContainsFunc(open, func(p string) bool { return strings.HasSuffix(p, ".py") }) {
			return out, nil
		}
		files, err := t.Read(append(slices.Clone(configs), conftests...))
		if err != nil {
			return nil, err
		}
		sub := &plan{}
		names := slices.Sorted(maps.Keys(files))
		for _, name := range names {
			b := files[name]
			var mods []string
			if path.Base(name) == "conftest.py" {
				for _, m := range conftestPluginsRe().FindAllSubmatch(b, -1) {
					for _, q := range quotedModuleNameRe().FindAllSubmatch(m[1], -1) {
						mods = append(mods, string(q[1]))
					}
				}
			} else {
				for _, m := range iniPluginRe().FindAllSubmatch(b, -1) {
					if !bytes.Contains(m[1], []byte(":")) { // -p no:NAME disables one
						mods = append(mods, string(m[1]))
					}
				}
				// pythonpath = src puts src on sys.path before the tests
				// import anything: a module there shadows too.
				for _, m := range iniPythonpathRe().FindAllSubmatch(b, -1) {
					v := string(bytes.TrimSpace(m[1]))
					var dirs []string
					if strings.HasPrefix(v, "[") {
						for _, q := range quotedRe().FindAllStringSubmatch(v, -1) {
							dirs = append(dirs, q[1])
						}
					} else {
						dirs = strings.Fields(v)
					}
					for _, d := range dirs {
						if dir := path.Clean(path.Join(path.Dir(name), d)); !path.IsAbs(d) && inRepo(dir) {
							why := fmt.Sprintf("it shadows the module %%q: %s puts %s on sys.path (pythonpath)", name, dir)
							sub.add(dir, true, func(rel string) string {
								if mod, ok := shadows(rel); ok {
									return fmt.Sprintf(why, mod)
								}
								return ""
							})
						}
					}
				}
			}
			for _, m := range mods {
				sub.module(m, sysPath, fmt.Sprintf("pytest loads the plugin %s, which %s names", m, name))
			}
		}
		for _, p := range open {
			if why := sub.match(p); why != "" {
				out[p] = why
			}
		}
		return out, nil
	}
}

// shadows says whether rel, relative to a folder on sys.path, is a module
// that shadows one the runner imports: name.py, or a package's
// name/__init__.py. (A folder without __init__.py is a namespace package,
// which never wins over a module found later on sys.path.)
func shadows(rel string) (string, bool) {
	name, rest, isPkg := strings.Cut(rel, "/")
	switch {
	case !isPkg && strings.HasSuffix(name, ".py"):
		name = strings.TrimSuffix(name, ".py")
	case isPkg && rest == "__init__.py":
	default:
		return "", false
	}
	return name, shadowNames()[name]
}

// basedirShadows finds the open paths that shadow a module from the
// folder pytest inserts on sys.path for one of the test files.
func basedirShadows(files, sysPath []string) func([]string, *memo) (map[string]string, error) {
	return func(open []string, t *memo) (map[string]string, error) {
		// Only a shadowing name in a folder on some test's path can be one.
		var maybe []string
		for _, p := range open {
			d, name := shadowAt(p)
			if name == "" {
				continue
			}
			for _, f := range files {
				if d == path.Dir(f) || isAncestor(d, path.Dir(f)) {
					maybe = append(maybe, p)
					break
				}
			}
		}
		out := map[string]string{}
		if len(maybe) == 0 {
			return out, nil
		}
		var dirs []string
		for _, f := range files {
			dirs = append(dirs, ancestors(path.Dir(f))...)
		}
		lists, err := t.List(dirs)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			base := path.Dir(f)
			for base != "." && slices.Contains(lists[base], "__init__.py") {
				base = path.Dir(base)
			}
			for _, p := range maybe {
				if d, name := shadowAt(p); d == base {
					out[p] = fmt.Sprintf("it shadows the module %q: pytest puts %s first on sys.path to import %s", name, base, f)
				}
			}
		}
		return out, nil
	}
}

// shadowAt splits a path that may shadow a module into the folder it
// shadows from and the module's name.
func shadowAt(p string) (dir, name string) {
	d, b := path.Dir(p), path.Base(p)
	if b == "__init__.py" {
		d, b = path.Dir(d), path.Base(d)+".py"
	}
	if n, ok := shadows(b); ok {
		return d, n
	}
	return "", ""
}

func isAncestor(a, d string) bool {
	_, ok := relTo(d, a)
	return ok
}

// shadowNames are the modules a shadowing file could replace: Python's
// standard library (sys.stdlib_module_names, 3.11 to 3.14) and what the
// test runners themselves import.
var shadowNames = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, n := range strings.Fields(stdlibNames + " " + runnerNames) {
		m[n] = true
	}
	return m
})

// runnerNames are the modules outside the standard library that pytest
// imports when it starts (pytest 7 and 8), and the start-up hooks. Kept
// short on purpose: a project that is itself one of these names has its
// own __init__.py refused, and a longer list (pygments, coverage, ...)
// would refuse honest fixes to those projects for little gain.
const runnerNames = `pytest _pytest py pluggy iniconfig packaging exceptiongroup tomli
	attr conftest sitecustomize usercustomize`

// stdlibNames is sys.stdlib_module_names of CPython 3.11, plus the names
// 3.12 to 3.14 added.
const stdlibNames = `
	__future__ _abc _aix_support _android_support _apple_support _ast _asyncio
	_bisect _blake2 _bootsubprocess _bz2 _codecs _codecs_cn _codecs_hk
	_codecs_iso2022 _codecs_jp _codecs_kr _codecs_tw _collections
	_collections_abc _colorize _compat_pickle _compression _contextvars _crypt
	_csv _ctypes _curses _curses_panel _datetime _dbm _decimal _elementtree
	_frozen_importlib _frozen_importlib_external _functools _gdbm _hashlib
	_heapq _hmac _imp _interpchannels _interpqueues _interpreters _io
	_ios_support _json _locale _lsprof _lzma _markupbase _md5 _msi
	_multibytecodec _multiprocessing _opcode _opcode_metadata _operator
	_osx_support _overlapped _pickle _posixshmem _posixsubprocess _py_abc
	_pydatetime _pydecimal _pyio _pylong _pyrepl _queue _random
	_remote_debugging _scproxy _sha1 _sha256 _sha3 _sha512 _signal
	_sitebuiltins _socket _sqlite3 _sre _ssl _stat _statistics _string
	_strptime _struct _suggestions _symtable _sysconfig _thread
	_threading_local _tkinter _tokenize _tracemalloc _types _typing _uuid
	_warnings _weakref _weakrefset _winapi _wmi _zoneinfo _zstd abc aifc
	annotationlib antigravity argparse array ast asynchat asyncio asyncore
	atexit audioop base64 bdb binascii bisect builtins bz2 cProfile calendar
	cgi cgitb chunk cmath cmd code codecs codeop collections colorsys
	compileall compression concurrent configparser contextlib contextvars copy
	copyreg crypt csv ctypes curses dataclasses datetime dbm decimal difflib
	dis distutils doctest email encodings ensurepip enum errno faulthandler
	fcntl filecmp fileinput fnmatch fractions ftplib functools gc genericpath
	getopt getpass gettext glob graphlib grp gzip hashlib heapq hmac html http
	idlelib imaplib imghdr imp importlib inspect io ipaddress itertools json
	keyword lib2to3 linecache locale logging lzma mailbox mailcap marshal math
	mimetypes mmap modulefinder msilib msvcrt multiprocessing netrc nis
	nntplib nt ntpath nturl2path numbers opcode operator optparse os
	ossaudiodev pathlib pdb pickle pickletools pipes pkgutil platform plistlib
	poplib posix posixpath pprint profile pstats pty pwd py_compile pyclbr
	pydoc pydoc_data pyexpat queue quopri random re readline reprlib resource
	rlcompleter runpy sched secrets select selectors shelve shlex shutil
	signal site smtpd smtplib sndhdr socket socketserver spwd sqlite3
	sre_compile sre_constants sre_parse ssl stat statistics string stringprep
	struct subprocess sunau symtable sys sysconfig syslog tabnanny tarfile
	telnetlib tempfile termios textwrap this threading time timeit tkinter
	token tokenize tomllib trace traceback tracemalloc tty turtle turtledemo
	types typing unicodedata unittest urllib uu uuid venv warnings wave
	weakref webbrowser winreg winsound wsgiref xdrlib xml xmlrpc zipapp
	zipfile zipimport zlib zoneinfo
`

// packaging says whether rel (slash-separated) is Python packaging
// metadata an interpreter started below it may act on: anything in a
// *.dist-info or *.egg-info folder (entry_points.txt registers a pytest
// plugin, which pytest loads whatever the card's argv says, when the
// folder lies on sys.path, as the workdir does under python -m), an
// *.egg-link, or an __editable__* finder or .pth file.
func packaging(rel string) bool {
	parts := strings.Split(rel, "/")
	for _, d := range parts[:len(parts)-1] {
		if strings.HasSuffix(d, ".dist-info") || strings.HasSuffix(d, ".egg-info") {
			return true
		}
	}
	b := parts[len(parts)-1]
	return strings.HasSuffix(b, ".egg-link") || strings.HasPrefix(b, "__editable__") ||
		strings.HasSuffix(b, ".dist-info") || strings.HasSuffix(b, ".egg-info")
}
