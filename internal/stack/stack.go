// Package stack owns reading stack traces: the source files a Python, Go, Java, JavaScript or Rust trace names, and which of them are repository files.
package stack

// Design note. Parsing and resolving are pure: Parse takes the trace's
// bytes, Resolve takes the frames and the repository's tracked paths.
// Nothing here reads the file system or runs git, so both are table-tested
// and fuzzed.

import (
	"bytes"
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// MaxSize bounds a stack trace. A real trace, even a Java one with a dozen
// "Caused by" sections, is far smaller; a larger input is a log, not a trace.
const MaxSize = 4 << 20

// Lang is the format a frame was read in.
type Lang string

// The trace formats Parse reads.
const (
	Python     Lang = "python"
	Go         Lang = "go"
	Java       Lang = "java"
	JavaScript Lang = "javascript"
	Rust       Lang = "rust"
)

// Frame is one source location a trace names.
type Frame struct {
	// Path is the file as the trace names it, normalized: forward
	// slashes, URL schemes and query strings removed, cleaned. For Java it
	// is the package path plus the file name (com/example/Foo.java),
	// since Java traces never carry a folder.
	Path      string
	Line      int  // line in the source file, >= 1
	Lang      Lang //
	TraceLine int  // line of the trace the frame was read from, from 1
}

// Error is a trace failpass cannot read: too large, binary, or naming no
// source location at all.
type Error struct {
	File string
	Msg  string
	Hint string
}

func (e *Error) Error() string { return fmt.Sprintf("%s: %s", e.File, e.Msg) }

// Hints says how to fix the input.
func (e *Error) Hints() []string {
	if e.Hint == "" {
		return nil
	}
	return []string{e.Hint}
}

// framePatterns are the frame shapes of each language's traces.
type framePatterns struct {
	pyFrame      *regexp.Regexp
	pytestFrame  *regexp.Regexp
	goFrame      *regexp.Regexp
	goTestFrame  *regexp.Regexp
	javaFrame    *regexp.Regexp
	jsV8Frame    *regexp.Regexp
	jsGeckoFrame *regexp.Regexp
	rustFrame    *regexp.Regexp
	rustPanic    *regexp.Regexp
}

// patterns compiles them on first use: most failpass runs read no
// trace, and every run would pay for the compiling at start-up.
var patterns = sync.OnceValue(func() *framePatterns {
	return &framePatterns{
		// File "/app/src/x.py", line 12, in handler
		pyFrame: regexp.MustCompile(`^\s*File "([^"]+)", line (\d+)`),
		// pytest: tests/test_x.py:14: in test_empty   /   src/x.py:5: ValueError
		pytestFrame: regexp.MustCompile(`^(\S+\.py):(\d+):(?:\s|$)`),
		// goroutine frames: \t/home/u/p/x.go:42 +0x1d ; testing: "    x_test.go:12: got 1"
		goFrame:     regexp.MustCompile(`^\s*(\S+\.go):(\d+)(?:\s+\+0x[0-9a-fA-F]+)?\s*$`),
		goTestFrame: regexp.MustCompile(`^\s+(\S+\.go):(\d+): `),
		// at com.example.Foo.bar(Foo.java:42) ; at java.base/java.lang.Thread.run(Thread.java:829)
		javaFrame: regexp.MustCompile(`^\s*at\s+([\w$.<>/\-]+)\(([\w$\-]+\.(?:java|kt|kts|scala|groovy)):(\d+)\)`),
		// V8: at fn (/app/x.js:10:5), at /app/x.js:10:5 ; Firefox/Safari: fn@http://h/x.js:10:5
		jsV8Frame:    regexp.MustCompile(`^\s*at\s+(?:.*?\()?([^()\s]+):(\d+):\d+\)?\s*$`),
		jsGeckoFrame: regexp.MustCompile(`^[^@\s]*@(\S+):(\d+):\d+\s*$`),
		// at ./src/main.rs:10:5 ; thread 'main' panicked at src/main.rs:10:5: ; panicked at 'msg', src/main.rs:10:5
		rustFrame: regexp.MustCompile(`^\s*at\s+(\S+\.rs):(\d+)(?::\d+)?\s*$`),
		rustPanic: regexp.MustCompile(`panicked at (?:'.*', )?(\S+\.rs):(\d+):\d+`),
	}
})

var jsExt = map[string]bool{
	".js": true, ".mjs": true, ".cjs": true, ".jsx": true, ".ts": true, ".tsx": true,
	".mts": true, ".cts": true, ".vue": true, ".svelte": true, ".coffee": true,
}

// Parse reads every frame of a stack trace, in trace order. It accepts
// traces of several languages mixed (a Python test driving a Rust
// extension). A trace without a single frame is an *Error.
func Parse(file string, data []byte) ([]Frame, error) {
	if len(data) > MaxSize {
		return nil, &Error{File: file, Msg: fmt.Sprintf("larger than %d bytes", MaxSize),
			Hint: "pass the stack trace itself, not a whole log"}
	}
	if bytes.IndexByte(data, 0) >= 0 || !utf8.Valid(data) {
		return nil, &Error{File: file, Msg: "not a text file", Hint: "pass the stack trace as plain text"}
	}
	var frames []Frame
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimRight(line, "\r")
		if f, ok := parseLine(line); ok {
			f.TraceLine = i + 1
			frames = append(frames, f)
		}
	}
	if len(frames) == 0 {
		return nil, &Error{File: file, Msg: "no stack frame found",
			Hint: "pass a Python, Go, Java, JavaScript or Rust stack trace (the lines naming file:line)"}
	}
	return frames, nil
}

func parseLine(line string) (Frame, bool) {
	p := patterns()
	if m := p.pyFrame.FindStringSubmatch(line); m != nil {
		return frame(Python, m[1], m[2])
	}
	if m := p.javaFrame.FindStringSubmatch(line); m != nil {
		return javaPath(m[1], m[2], m[3])
	}
	if m := p.rustFrame.FindStringSubmatch(line); m != nil {
		return frame(Rust, m[1], m[2])
	}
	if m := p.rustPanic.FindStringSubmatch(line); m != nil {
		return frame(Rust, m[1], m[2])
	}
	if m := p.goFrame.FindStringSubmatch(line); m != nil {
		return frame(Go, m[1], m[2])
	}
	if m := p.goTestFrame.FindStringSubmatch(line); m != nil {
		return frame(Go, m[1], m[2])
	}
	if m := p.pytestFrame.FindStringSubmatch(line); m != nil {
		return frame(Python, m[1], m[2])
	}
	for _, re := range []*regexp.Regexp{p.jsV8Frame, p.jsGeckoFrame} {
		if m := re.FindStringSubmatch(line); m != nil {
			f := stripURL(m[1])
			if jsExt[path.Ext(f)] {
				return frame(JavaScript, f, m[2])
			}
		}
	}
	return Frame{}, false
}

// frame builds a Frame from a raw path and line number, refusing what is
// not a source file: <frozen ...>, <anonymous>, node: builtins, line 0.
func frame(lang Lang, raw, line string) (Frame, bool) {
	n, err := strconv.Atoi(line)
	if err != nil || n < 1 {
		return Frame{}, false
	}
	p, ok := Normalize(raw)
	if !ok {
		return Frame{}, false
	}
	return Frame{Path: p, Line: n, Lang: lang}, true
}

// javaPath turns a qualified method (com.example.Foo$Inner.bar, perhaps
// behind a module or class-loader prefix "java.base/" or "app//") and a
// file name into com/example/Foo.java.
func javaPath(qual, file, line string) (Frame, bool) {
	if i := strings.LastIndex(qual, "/"); i >= 0 {
		qual = qual[i+1:]
	}
	parts := strings.Split(qual, ".")
	var dirs []string
	if len(parts) > 2 {
		dirs = parts[:len(parts)-2]
	}
	for _, d := range dirs {
		if d == "" || strings.ContainsAny(d, "$<>") {
			return Frame{}, false
		}
	}
	return frame(Java, strings.Join(append(dirs, file), "/"), line)
}

// stripURL turns file:///app/x.js into /app/x.js, webpack:///./src/x.js
// into src/x.js and http://host/static/x.js?v=1 into static/x.js.
func stripURL(s string) string {
	if i := strings.IndexAny(s, "?#"); i >= 0 {
		s = s[:i]
	}
	switch {
	case strings.HasPrefix(s, "file://"):
		return strings.TrimPrefix(s, "file://")
	case strings.HasPrefix(s, "webpack://"):
		s = strings.TrimPrefix(s, "webpack://")
		s = strings.TrimLeft(s, "/")
		// webpack:///./src/x.js and webpack://app/./src/x.js
		if i := strings.Index(s, "./"); i >= 0 {
			s = s[i+2:]
		}
		return s
	case strings.HasPrefix(s, "http://"), strings.HasPrefix(s, "https://"):
		rest := s[strings.Index(s, "://")+3:]
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			return rest[i+1:]
		}
		return ""
	}
	return s
}

// Normalize cleans a path as a trace names it: backslashes become slashes,
// a Windows drive letter makes it absolute, "./" and "a/../" collapse.
// Pseudo-files (<frozen x>, <anonymous>, node:fs) are not paths. Normalize
// is idempotent on the paths it accepts.
func Normalize(raw string) (string, bool) {
	p := strings.ReplaceAll(raw, `\`, "/")
	if len(p) >= 2 && p[1] == ':' && (p[0] >= 'A' && p[0] <= 'Z' || p[0] >= 'a' && p[0] <= 'z') {
		p = "/" + p[2:]
	}
	if p == "" || strings.ContainsAny(p, "<>\x00") || strings.HasPrefix(p, "node:") {
		return "", false
	}
	p = path.Clean(p)
	if p == "." || p == "/" || strings.HasSuffix(p, "/..") || p == ".." {
		return "", false
	}
	return p, true
}
