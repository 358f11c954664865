package stack

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

const pythonTrace = `Traceback (most recent call last):
  File "/home/runner/work/libparse/libparse/tests/test_header.py", line 14, in test_empty_header
    parse_header(b"")
  File "/home/runner/work/libparse/libparse/src/libparse/header.py", line 41, in parse_header
    return _split(data)
  File "/home/runner/work/libparse/libparse/src/libparse/header.py", line 77, in _split
    raise ValueError("empty")
  File "<frozen importlib._bootstrap>", line 1, in <module>
  File "/usr/lib/python3.11/site-packages/libparse/header.py", line 3, in x
ValueError: empty
`

const pytestTrace = `tests/test_header.py:14: in test_empty_header
    parse_header(b"")
src/libparse/header.py:77: ValueError
`

const goTrace = `panic: runtime error: index out of range [3] with length 3

goroutine 1 [running]:
example.com/libparse/internal/header.split(...)
	/home/u/libparse/internal/header/split.go:42
example.com/libparse/internal/header.Parse({0x0, 0x0})
	/home/u/libparse/internal/header/parse.go:17 +0x1d
main.main()
	/home/u/libparse/cmd/libparse/main.go:9 +0x25
runtime.main()
	/usr/local/go/src/runtime/proc.go:250 +0x207
`

const goTestTrace = `--- FAIL: TestParse (0.00s)
    parse_test.go:21: Parse("") = nil, want error
FAIL
`

const javaTrace = `Exception in thread "main" java.lang.IllegalStateException: empty header
	at com.example.libparse.Header.split(Header.java:77)
	at com.example.libparse.Header$Parser.parse(Header.java:41)
	at com.example.libparse.cli.Main.main(Main.java:9)
	at java.base/java.lang.Thread.run(Thread.java:829)
	at app//org.junit.Runner.run(Runner.java:12)
	at jdk.internal.reflect.NativeMethodAccessorImpl.invoke0(Native Method)
Caused by: java.io.EOFException
	at com.example.libparse.io.Reader.read(Reader.kt:5)
	... 3 more
`

const jsTrace = `TypeError: Cannot read properties of undefined (reading 'length')
    at splitHeader (/srv/app/src/header.js:77:18)
    at parseHeader (file:///srv/app/src/parse.mjs:41:10)
    at /srv/app/src/index.ts:9:3
    at Module._compile (node:internal/modules/cjs/loader:1105:14)
    at Object.<anonymous> (/srv/app/node_modules/libfoo/index.js:1:1)
    at async Promise.all (index 0)
split@http://localhost:3000/static/js/header.js?v=3:77:18
@webpack:///./src/lazy.jsx:5:1
`

const rustTrace = `thread 'main' panicked at src/header.rs:77:18:
index out of bounds: the len is 3 but the index is 3
stack backtrace:
   0: rust_begin_unwind
             at /rustc/90c541806f23a127002de5b4038be731ba1458ca/library/std/src/panicking.rs:578:5
   1: libparse::header::split
             at ./src/header.rs:77:18
   2: libparse::main
             at ./src/main.rs:9:5
   3: core::ops::function::FnOnce::call_once
             at /home/u/.cargo/registry/src/index.crates.io-6f17d22bba15001f/anyhow-1.0.0/src/lib.rs:1:1
`

const oldRustPanic = `thread 'main' panicked at 'called Option::unwrap() on a None value', src\lib.rs:3:5`

func paths(frames []Frame) string {
	var s []string
	for _, f := range frames {
		s = append(s, fmt.Sprintf("%s:%d:%s", f.Path, f.Line, f.Lang))
	}
	return strings.Join(s, " ")
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"python", pythonTrace, "/home/runner/work/libparse/libparse/tests/test_header.py:14:python " +
			"/home/runner/work/libparse/libparse/src/libparse/header.py:41:python " +
			"/home/runner/work/libparse/libparse/src/libparse/header.py:77:python " +
			"/usr/lib/python3.11/site-packages/libparse/header.py:3:python"},
		{"pytest", pytestTrace, "tests/test_header.py:14:python src/libparse/header.py:77:python"},
		{"go", goTrace, "/home/u/libparse/internal/header/split.go:42:go /home/u/libparse/internal/header/parse.go:17:go " +
			"/home/u/libparse/cmd/libparse/main.go:9:go /usr/local/go/src/runtime/proc.go:250:go"},
		{"go test", goTestTrace, "parse_test.go:21:go"},
		{"java", javaTrace, "com/example/libparse/Header.java:77:java com/example/libparse/Header.java:41:java " +
			"com/example/libparse/cli/Main.java:9:java java/lang/Thread.java:829:java org/junit/Runner.java:12:java " +
			"com/example/libparse/io/Reader.kt:5:java"},
		{"javascript", jsTrace, "/srv/app/src/header.js:77:javascript /srv/app/src/parse.mjs:41:javascript " +
			"/srv/app/src/index.ts:9:javascript /srv/app/node_modules/libfoo/index.js:1:javascript " +
			"static/js/header.js:77:javascript src/lazy.jsx:5:javascript"},
		{"rust", rustTrace, "src/header.rs:77:rust /rustc/90c541806f23a127002de5b4038be731ba1458ca/library/std/src/panicking.rs:578:rust " +
			"src/header.rs:77:rust src/main.rs:9:rust " +
			"/home/u/.cargo/registry/src/index.crates.io-6f17d22bba15001f/anyhow-1.0.0/src/lib.rs:1:rust"},
		{"old rust panic, windows path", oldRustPanic, "src/lib.rs:3:rust"},
		{"windows python", `  File "C:\proj\src\app.py", line 3, in f`, "/proj/src/app.py:3:python"},
		{"crlf", "  File \"a.py\", line 2, in f\r\n", "a.py:2:python"},
	} {
		got, err := Parse("trace", []byte(tc.in))
		if err != nil || paths(got) != tc.want {
			t.Errorf("Parse(%s) = %s, %v\nwant %s", tc.name, paths(got), err, tc.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []byte
	}{
		{"empty", nil},
		{"prose", []byte("it crashed somewhere in the header code\n")},
		{"line zero", []byte(`  File "a.py", line 0, in f`)},
		{"binary", []byte("  File \"a.py\", line 2\x00")},
		{"invalid utf-8", []byte("  File \"a.py\", line 2 \xff")},
		{"too large", []byte(strings.Repeat("  File \"a.py\", line 2, in f\n", MaxSize/28+1))},
		{"pseudo files only", []byte("  File \"<string>\", line 1, in <module>\n    at node:fs:12:3\n")},
	} {
		got, err := Parse("trace", tc.in)
		var se *Error
		if !errors.As(err, &se) || got != nil {
			t.Errorf("Parse(%s) = %v, %v; want *Error and no frames", tc.name, got, err)
		}
	}
}

func TestNormalize(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"./src/x.py", "src/x.py", true},
		{"src//a/../x.py", "src/x.py", true},
		{`C:\p\x.py`, "/p/x.py", true},
		{"/a/b.go", "/a/b.go", true},
		{"../../x.go", "../../x.go", true},
		{"<frozen os>", "", false},
		{"node:internal/x", "", false},
		{"", "", false},
		{".", "", false},
		{"a/..", "", false},
		{"/", "", false},
	} {
		got, ok := Normalize(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("Normalize(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestResolve(t *testing.T) {
	tracked := []string{
		"tests/test_header.py", "src/libparse/header.py", "src/libparse/__init__.py",
		"internal/header/split.go", "internal/header/parse.go", "internal/header/parse_test.go", "cmd/libparse/main.go",
		"src/main/java/com/example/libparse/Header.java", "src/main/java/com/example/libparse/cli/Main.java",
		"src/main/kotlin/com/example/libparse/io/Reader.kt",
		"src/header.js", "src/parse.mjs", "src/index.ts", "src/lazy.jsx",
		"src/header.rs", "src/main.rs", "src/lib.rs",
		"a/util.go", "b/util.go",
	}
	for _, tc := range []struct {
		name, trace, root string
		files             string // space-separated, in order
		outside, ambig    int
	}{
		{"python from CI", pythonTrace, "/elsewhere", "tests/test_header.py src/libparse/header.py", 1, 0},
		{"pytest relative", pytestTrace, "/x", "tests/test_header.py src/libparse/header.py", 0, 0},
		{"go under root", goTrace, "/home/u/libparse", "internal/header/split.go internal/header/parse.go cmd/libparse/main.go", 1, 0},
		{"go test tail", goTestTrace, "/x", "internal/header/parse_test.go", 0, 0},
		{"java package paths", javaTrace, "/x", "src/main/java/com/example/libparse/Header.java src/main/java/com/example/libparse/cli/Main.java src/main/kotlin/com/example/libparse/io/Reader.kt", 2, 0},
		{"javascript", jsTrace, "/srv/app", "src/header.js src/parse.mjs src/index.ts src/lazy.jsx", 2, 0},
		{"rust", rustTrace, "/x", "src/header.rs src/main.rs", 2, 0},
		{"ambiguous tail", "    util.go:3: boom\n", "/x", "", 0, 1},
		{"untracked under root", "  File \"/r/build/gen.py\", line 1, in f\n", "/r", "", 1, 0},
		{"installed copy never matches", "  File \"/venv/lib/site-packages/src/libparse/header.py\", line 1\n", "/r", "", 1, 0},
		{"relative dot-dot", "  File \"../../src/libparse/header.py\", line 1\n", "/r", "src/libparse/header.py", 0, 0},
	} {
		frames, err := Parse("trace", []byte(tc.trace))
		if err != nil {
			t.Fatalf("%s: Parse: %v", tc.name, err)
		}
		r := Resolve(frames, tc.root, tracked)
		var files []string
		for _, f := range r.Files {
			files = append(files, f.Path)
		}
		if strings.Join(files, " ") != tc.files || len(r.Outside) != tc.outside || len(r.Ambiguous) != tc.ambig {
			t.Errorf("%s: Resolve = files %q outside %d ambiguous %d; want %q %d %d",
				tc.name, files, len(r.Outside), len(r.Ambiguous), tc.files, tc.outside, tc.ambig)
		}
	}
}

// FuzzParse: an error returns no frames; every frame has a normalized path
// (Normalize is idempotent on it), a line >= 1, and a trace line in range.
func FuzzParse(f *testing.F) {
	for _, s := range []string{pythonTrace, pytestTrace, goTrace, goTestTrace, javaTrace, jsTrace, rustTrace, oldRustPanic, "x"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		frames, err := Parse("fuzz", data)
		if err != nil {
			if frames != nil {
				t.Fatalf("Parse(%q) returned frames with error %v", data, err)
			}
			return
		}
		lines := strings.Count(string(data), "\n") + 1
		for _, fr := range frames {
			if again, ok := Normalize(fr.Path); !ok || again != fr.Path {
				t.Fatalf("Parse(%q): frame path %q is not normalized (%q, %v)", data, fr.Path, again, ok)
			}
			if fr.Line < 1 || fr.TraceLine < 1 || fr.TraceLine > lines {
				t.Fatalf("Parse(%q): frame %+v out of range", data, fr)
			}
		}
		r := Resolve(frames, "/r", []string{"a.py", "src/a.py"})
		if n := len(r.Outside) + len(r.Ambiguous); n > len(frames) {
			t.Fatalf("Resolve lost count: %d > %d", n, len(frames))
		}
	})
}
