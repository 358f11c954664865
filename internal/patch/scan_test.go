package patch

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// A diff --git line with a space before every "b/" must not make the
// name split quadratic.
func TestSplitGitLineLinear(t *testing.T) {
	line := "a/" + strings.Repeat("x b/", maxHeaderLine/4)
	start := time.Now()
	splits := splitGitLine(line)
	if d := time.Since(start); d > time.Second {
		t.Errorf("splitGitLine of %d bytes took %v", len(line), d)
	}
	if len(splits) == 0 {
		t.Errorf("splitGitLine(%q...) found no split", line[:20])
	}
}

func TestCheckPath(t *testing.T) {
	for _, tc := range []struct {
		path string
		ok   bool
	}{
		{"a/b.go", true}, {"café", true}, {".github/workflows/ci.yml", true}, {".gitignore", true},
		{"a/.gitx/y", true}, {"x..y", true},
		{"", false}, {"/etc/passwd", false}, {"../x", false}, {"a/../../x", false}, {"./x", false},
		{".git", false}, {".git/config", false}, {"a/.GIT/x", false}, {".git ./x", false}, {"GIT~1/x", false},
		{"tests/test_app\u200b.py", false}, {"x\u202etxt.exe", false}, {"a\u0085b", false},
		{strings.Repeat("a", MaxPathLen+1), false}, {strings.Repeat("a/", 100) + "b", true},
		{"a//b", false}, {"a/", false}, {"a\tb", false}, {"a\x7fb", false}, {`a\b`, false}, {"\xff", false},
	} {
		err := CheckPath(tc.path)
		if (err == nil) != tc.ok {
			t.Errorf("CheckPath(%q) = %v, want ok=%t", tc.path, err, tc.ok)
		}
	}
}

// okDiff is the smallest diff every reader accepts.
const okDiff = "diff --git a/x b/x\nindex 1234567..89abcde 100644\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n"

func TestScanHints(t *testing.T) {
	for _, tc := range []struct{ diff, hint string }{
		{"Sure! Here is the fix:\n\n```diff\n" + okDiff + "```\n", hintFence},
		{strings.ReplaceAll(okDiff, "\n", "\r\n"), hintCRLF},
		{"Here:\n" + okDiff, hintPure},
	} {
		_, err := ScanHeaders([]byte(tc.diff))
		var pe *Error
		if !errors.As(err, &pe) || len(pe.Hints()) != 1 || pe.Hints()[0] != tc.hint {
			t.Errorf("ScanHeaders(%q) = %v, want hint %q", clip(tc.diff), err, tc.hint)
		}
	}
}

// FuzzScan exercises the raw scan alone (no git, so it runs fast): no
// panic; an error returns no sections; accepted sections render. Package
// gitpatch's FuzzRead runs the whole reading, git included, seeded with
// every vector of its read tests.
func FuzzScan(f *testing.F) {
	for _, d := range []string{
		okDiff,
		"diff --git a/n b/n\nnew file mode 100755\nindex 0000000..89abcde\n--- /dev/null\n+++ b/n\n@@ -0,0 +1,2 @@\n+a\n+b\n",
		"diff --git a/old b/new\nsimilarity index 100%\nrename from old\nrename to new\n",
		"diff --git a/l b/l\nnew file mode 120000\nindex 0000000..1234567\n--- /dev/null\n+++ b/l\n@@ -0,0 +1 @@\n+../t\n\\ No newline at end of file\n",
		"diff --git a/b b/b\nnew file mode 100644\nindex 0000000000000000000000000000000000000000..f9e371ff2657e5d2bd4389e3b323fe0550e3a860\nGIT binary patch\nliteral 4\nLcmZR`ODzWg0*?Vp\n\nliteral 0\nHcmV?d00001\n\n",
		"--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n",
		"diff --git \"a/caf\\303\\251\" \"b/caf\\303\\251\"\nindex 1234567..89abcde 100644\n--- \"a/caf\\303\\251\"\n+++ \"b/caf\\303\\251\"\n@@ -1 +1 @@\n-a\n+b\n",
		"+++ b/../etc/passwd\n",
	} {
		f.Add([]byte(d))
	}
	f.Fuzz(func(t *testing.T, diff []byte) {
		secs, err := scan(diff)
		if err != nil {
			if secs != nil {
				t.Fatalf("scan(%q) returned sections with error %v", diff, err)
			}
			return
		}
		if len(secs) == 0 {
			t.Fatalf("scan(%q) accepted a diff without patches", diff)
		}
		_ = render(secs)
		_ = checkPaths(secs)
		_ = checkSections(secs)
	})
}

// TestLead checks a diff embedded in other text is read up to its end and
// no further, with the strict scan's errors where the patches are broken.
func TestLead(t *testing.T) {
	const p = "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b"
	tests := []struct {
		name  string
		text  string
		lines int
		files int
		err   string
	}{
		{name: "alone", text: p, lines: 5, files: 1},
		{name: "prose after", text: p + "\n\nThat fixes it.", lines: 5, files: 1},
		{name: "two patches", text: p + "\n" + strings.Replace(p, "x", "y", 2) + "\nDone.", lines: 10, files: 2},
		{name: "no patch", text: "Hello.", err: "does not start with a patch header"},
		{name: "broken hunk", text: "--- a/x\n+++ b/x\n@@ -1,2 +1 @@\n-a", err: "diff line 4: hunk at line 3 ends early"},
		{name: "denied path", text: strings.ReplaceAll(p, "x", ".git/hooks/pre-commit"), err: ".git"},
		{name: "same file twice", text: p + "\n" + p, err: "changed again"},
	}
	for _, tt := range tests {
		n, files, err := Lead(strings.Split(tt.text, "\n"))
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s: Lead = %d, %v, %v; want an error containing %q", tt.name, n, files, err, tt.err)
			}
			continue
		}
		if err != nil || n != tt.lines || len(files) != tt.files {
			t.Errorf("%s: Lead = %d, %d file(s), %v; want %d lines, %d file(s)", tt.name, n, len(files), err, tt.lines, tt.files)
		}
	}
}
