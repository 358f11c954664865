package testrunner

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// Classify says why a run of a k runner that exited exit failed for its
// environment rather than at a test, reading the run's captured output:
// a package that did not build or could not be set up, a test module that
// could not be imported, an interpreter without the runner, a selection
// that names no test. It returns "" when nothing says so, always for exit
// 0 and for a runner it does not recognize.
//
// The cause names what went wrong and what to do about it. A caller may
// only use it to make a run inconclusive, never to let one satisfy a
// rule: exit codes stay the only oracle for passing, and output a test
// printed can at worst make a run prove nothing.
func Classify(k Kind, exit int, output []byte) string {
	if exit == 0 {
		return ""
	}
	output = StripANSI(output)
	switch k {
	case GoTest:
		return classifyGo(output)
	case Pytest:
		return classifyPytest(exit, output)
	case Unittest:
		return classifyUnittest(exit, output)
	}
	return ""
}

// MissingDependency is Classify narrowed to the causes that name a
// module or a test runner the machine lacks (a Python module not found, a
// Go module not in the module cache, no pytest): those a fix to the code
// cannot be expected to mend, unlike a test module that does not import
// for a syntax error or a package that does not compile. It returns the
// cause, or "".
func MissingDependency(k Kind, exit int, output []byte) string {
	cause := Classify(k, exit, output)
	if cause == "" {
		return ""
	}
	text := string(StripANSI(output))
	switch k {
	case GoTest:
		if !hasAny(text, goModuleWords) {
			return ""
		}
	case Pytest, Unittest:
		if !strings.Contains(text, "ModuleNotFoundError") && !strings.Contains(text, "No module named") {
			return ""
		}
	}
	return cause
}

// maxDetail bounds the error text a cause quotes.
const maxDetail = 200

var (
	goFailedRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?m)^FAIL\s+(\S+).*\[(setup|build) failed\]\s*$`)
	})
	// goRanRE matches what go test prints once a test binary ran.
	goRanRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?m)^(=== RUN|--- FAIL|--- PASS|ok  \t|FAIL\t\S+\t[0-9.]+s|panic: |testing: )`)
	})
	pyNoRunnerRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^\S*: No module named (pytest|unittest)\s*$`)
	})
	pyDeniedRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?m)^PermissionError: \[Errno 13\] Permission denied: '([^'\n]*)'\s*$`)
	})
	pyErrorRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(E\s+)?([A-Za-z_.]*(Error|Exception)): (.*)$`)
	})
)

// goModuleWords are what go says when a module it needs is not in the
// module cache and it may not fetch it.
var goModuleWords = []string{
	"module lookup disabled", "missing go.sum entry", "no required module provides package",
	"cannot find module providing package", "go: downloading", "dial tcp", "proxy.golang.org",
	"no such host", "verifying module", "reading https://", "go mod download",
	"could not create module cache",
}

const goModuleFix = "run `go mod download` where the module cache is filled, or give the card a prepare command that fetches it with the network, once per base: prepare: {cmd: [\"go\", \"mod\", \"download\"]}"

func classifyGo(out []byte) string {
	text := string(out)
	if strings.Contains(text, `"Action":`) {
		// go test -json: the same text, one JSON object per line.
		text = goJSONText(text)
	}
	if m := goFailedRE().FindStringSubmatch(text); m != nil {
		pkg, what := m[1], m[2]
		detail := goDetail(text)
		if hasAny(text, goModuleWords) {
			return fmt.Sprintf("go test could not %s package %s: a module it needs is not in the module cache (%s); %s",
				verbOf(what), pkg, detail, goModuleFix)
		}
		if what == "setup" {
			return fmt.Sprintf("go test could not set up package %s (%s); check the package path and the module's go.mod", pkg, detail)
		}
		return fmt.Sprintf("go test could not build package %s (%s); the tests must compile before they can prove anything", pkg, detail)
	}
	if goRanRE().MatchString(text) {
		return ""
	}
	// The go command itself stopped before building anything: no go.mod,
	// an inconsistent vendor folder, a go.mod that needs updates.
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "go: ") && !strings.HasPrefix(line, "go: downloading") &&
			!strings.HasPrefix(line, "go: finding") && !strings.HasPrefix(line, "go: extracting") {
			fix := "fix the module or the card's workdir"
			if hasAny(text, goModuleWords) {
				fix = goModuleFix
			}
			return fmt.Sprintf("the go command failed before any test ran (%s); %s", clip(line), fix)
		}
	}
	return ""
}

// goJSONText turns go test -json's events back into the text go test
// prints; lines that are not events stay as they are.
func goJSONText(text string) string {
	var b strings.Builder
	for _, line := range strings.Split(text, "\n") {
		var ev struct{ Action, Output string }
		if strings.HasPrefix(line, "{") && json.Unmarshal([]byte(line), &ev) == nil && ev.Action != "" {
			b.WriteString(ev.Output)
			continue
		}
		b.WriteString(line + "\n")
	}
	return b.String()
}

func verbOf(what string) string {
	if what == "setup" {
		return "set up"
	}
	return "build"
}

// goDetail is the first error line under a "# package" header.
func goDetail(text string) string {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, "# ") {
			continue
		}
		for _, next := range lines[i+1:] {
			next = strings.TrimSpace(next)
			if next == "" || strings.HasPrefix(next, "# ") {
				continue
			}
			return clip(next)
		}
	}
	return "no error line in the log"
}

func classifyPytest(exit int, out []byte) string {
	text := string(out)
	if denied := deniedBeforeTests(text); denied != "" {
		return fmt.Sprintf("pytest could not read %s before any test ran (permission denied): it looks for its configuration from the tests' folder upward, and the sandbox lets a command read nothing of the user's above the worktree; give the repository a pytest configuration (a [tool.pytest.ini_options] table, pytest.ini, or a [tool:pytest] section in setup.cfg or tox.ini), or run where the sandbox has a mount namespace", clip(denied))
	}
	if exit == 1 {
		if first := firstLine(text); pyNoRunnerRE().MatchString(first) {
			return fmt.Sprintf("the interpreter has no pytest (%s); install pytest for it, or name an interpreter that has it", clip(first))
		}
		return ""
	}
	const fixImport = "install what it needs into the interpreter the card names, or give the card a prepare command that fetches it (it alone has the network)"
	if (exit == 2 || exit == 4) && strings.Contains(text, "SystemExit") &&
		(strings.Contains(text, "ERROR collecting") || strings.Contains(text, "error during collection")) {
		// Not a missing module: code the test module imports ended the
		// interpreter (sys.exit) while pytest collected it.
		return fmt.Sprintf("pytest could not collect the tests: importing the test module raised SystemExit (%s), so code it imports calls sys.exit or exit", clip(strings.TrimPrefix(linePrefixed(text, "E   SystemExit"), "E   ")))
	}
	switch exit {
	case 2:
		if strings.Contains(text, "ERROR collecting") || strings.Contains(text, "error during collection") || strings.Contains(text, "errors during collection") {
			return fmt.Sprintf("pytest could not collect the tests (%s); %s", pyDetail(text), fixImport)
		}
		return "pytest was interrupted (exit 2) before the tests finished"
	case 3:
		return fmt.Sprintf("pytest stopped with an internal error (%s)", clip(lastPrefixed(text, "INTERNALERROR> ")))
	case 4:
		switch {
		case strings.Contains(text, "ImportError while loading conftest"):
			return fmt.Sprintf("pytest could not load a conftest.py (%s); %s", pyDetail(text), fixImport)
		case strings.Contains(text, "ERROR collecting") || strings.Contains(text, "ImportError while importing test module"):
			return fmt.Sprintf("pytest could not import the test module (%s); %s", pyDetail(text), fixImport)
		case strings.Contains(text, "ERROR: not found:"):
			return fmt.Sprintf("pytest found no test named by the command (%s); the test must exist here", clip(linePrefixed(text, "ERROR: not found:")))
		}
		return fmt.Sprintf("pytest refused the command line (%s); a plugin the arguments need may be missing", clip(firstNonEmpty(text)))
	case 5:
		return "pytest collected no tests (exit 5); the command must select the test it names"
	}
	return ""
}

func classifyUnittest(exit int, out []byte) string {
	text := string(out)
	if denied := deniedBeforeTests(text); denied != "" {
		return fmt.Sprintf("unittest could not read %s before any test ran (permission denied): the sandbox lets a command read nothing of the user's outside the worktree", clip(denied))
	}
	switch {
	case strings.Contains(text, "unittest.loader._FailedTest"):
		if strings.Contains(text, "Failed to import test module") {
			return fmt.Sprintf("unittest could not import the test module (%s); install what it needs into the interpreter the card names, or give the card a prepare command that fetches it (it alone has the network)", pyDetail(text))
		}
		return fmt.Sprintf("unittest could not load the test the command names (%s); the test must exist here", pyDetail(text))
	case exit == 5 && strings.Contains(text, "NO TESTS RAN"):
		return "unittest ran no tests (exit 5); the command must select the test it names"
	case exit == 1:
		if first := firstLine(text); pyNoRunnerRE().MatchString(first) {
			return fmt.Sprintf("the interpreter has no unittest (%s)", clip(first))
		}
	}
	return ""
}

// deniedBeforeTests is the file a Python runner was refused while it
// started, before any test ran: its output begins with the runner's own
// traceback (a test's failure is reported inside the runner's output,
// never as the process's first line) and the traceback ends in
// PermissionError. pytest reads pyproject.toml, setup.cfg and tox.ini
// from the tests' folder upward until one has a pytest section; a
// refused read there says where the worktree lies, nothing about the
// code. "" when the output says nothing of the kind.
func deniedBeforeTests(text string) string {
	if !strings.HasPrefix(firstNonEmpty(text), "Traceback (most recent call last):") {
		return ""
	}
	m := pyDeniedRE().FindAllStringSubmatch(text, -1)
	if m == nil {
		return ""
	}
	return m[len(m)-1][1]
}

// pyDetail is the last "SomethingError: message" line of a Python
// traceback in text (pytest prefixes it with "E   ").
func pyDetail(text string) string {
	detail := ""
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimRight(l, "\r ")
		if m := pyErrorRE().FindStringSubmatch(l); m != nil {
			detail = m[2] + ": " + m[4]
		}
	}
	if detail == "" {
		return "no error line in the log"
	}
	return clip(detail)
}

func firstLine(text string) string {
	line, _, _ := strings.Cut(strings.TrimLeft(text, "\n"), "\n")
	return strings.TrimRight(line, "\r")
}

func firstNonEmpty(text string) string {
	for _, l := range strings.Split(text, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return ""
}

func linePrefixed(text, prefix string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			return strings.TrimSpace(l)
		}
	}
	return ""
}

func lastPrefixed(text, prefix string) string {
	last := ""
	for _, l := range strings.Split(text, "\n") {
		if rest, ok := strings.CutPrefix(l, prefix); ok && strings.TrimSpace(rest) != "" {
			last = strings.TrimSpace(rest)
		}
	}
	return last
}

func hasAny(text string, words []string) bool {
	for _, w := range words {
		if strings.Contains(text, w) {
			return true
		}
	}
	return false
}

// clip bounds a quoted line and keeps it printable on one line.
func clip(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	if len(s) > maxDetail {
		s = strings.ToValidUTF8(s[:maxDetail], "") + "..."
	}
	return s
}
