package fromcommit

import (
	"strings"
	"testing"

	"github.com/failpass/failpass/internal/testrunner"
)

// FuzzParsePytest: any output parses, and every test the report names
// appears in the output as it was read.
func FuzzParsePytest(f *testing.F) {
	f.Add([]byte("rootdir: /w, configfile: x\nPASSED t.py::a\nFAILED t.py::b[x - y] - assert 1\nERROR t.py\n"))
	f.Add([]byte("E   ImportError: no\nERROR t.py\nXFAIL t.py::c - why\n"))
	f.Add([]byte("\x1b[32mPASSED\x1b[0m t.py::a0\x1b[m0\n")) // --color=yes
	f.Fuzz(func(t *testing.T, log []byte) {
		r := parsePytest(log)
		read := string(testrunner.StripANSI(log)) // what parsePytest reads
		for id := range r.Status {
			if !strings.Contains(read, id) {
				t.Errorf("parsePytest named %q, which is not in the output", id)
			}
		}
	})
}

// FuzzParseGoJSON: any output parses, and a test the report names is in
// the output.
func FuzzParseGoJSON(f *testing.F) {
	f.Add([]byte(`{"Action":"fail","Package":"m/p","Test":"TestA"}` + "\n" + `{"ImportPath":"m/q","Action":"build-fail"}` + "\n# m/q\n./q.go:1:1: x\n"))
	f.Add([]byte(`{"Action":"pass","Package":"m","Test":"TestB/sub"}` + "\n{not json\n"))
	f.Fuzz(func(t *testing.T, log []byte) {
		r := parseGoJSON(log)
		for _, tests := range r.Tests {
			for name := range tests {
				if strings.Contains(name, "/") {
					t.Errorf("parseGoJSON kept subtest %q", name)
				}
			}
		}
		_ = r.cause()
	})
}

// FuzzChangedGoTests: any pair of sources compares without panicking, and
// a file compared with itself has no changed test.
func FuzzChangedGoTests(f *testing.F) {
	f.Add([]byte("package p\nfunc TestA(t *testing.T) {}\n"), []byte("package p\nfunc TestA(t *testing.T) { t.Log() }\n"))
	f.Fuzz(func(t *testing.T, old, new []byte) {
		changedGoTests(old, new)
		if tests, rest := changedGoTests(new, new); len(tests) > 0 || (rest && goParses(new)) {
			t.Errorf("changedGoTests(x, x) = %v, %v", tests, rest)
		}
	})
}

func goParses(src []byte) bool { _, _, ok := goTestFuncs(src); return ok }
