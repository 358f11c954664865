package patch

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// Hand-written diffs git accepts, with the change set failpass must read.
var readOK = []struct {
	name string
	diff string
	want []File
}{
	{"modify", "diff --git a/x.go b/x.go\nindex 1234567..89abcde 100644\n--- a/x.go\n+++ b/x.go\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n",
		[]File{{OldPath: "x.go", NewPath: "x.go", Status: Modified, Added: 1, Deleted: 1, OldMode: "100644", NewMode: "100644"}}},
	{"create", "diff --git a/n b/n\nnew file mode 100755\nindex 0000000..89abcde\n--- /dev/null\n+++ b/n\n@@ -0,0 +1,2 @@\n+a\n+b\n",
		[]File{{NewPath: "n", Status: Added, Added: 2, NewMode: "100755"}}},
	{"create empty", "diff --git a/e b/e\nnew file mode 100644\nindex 0000000..e69de29\n",
		[]File{{NewPath: "e", Status: Added, NewMode: "100644"}}},
	{"delete", "diff --git a/d b/d\ndeleted file mode 100644\nindex 89abcde..0000000\n--- a/d\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n",
		[]File{{OldPath: "d", Status: Deleted, Deleted: 1, OldMode: "100644"}}},
	{"pure rename", "diff --git a/old b/new\nsimilarity index 100%\nrename from old\nrename to new\n",
		[]File{{OldPath: "old", NewPath: "new", Status: Renamed}}},
	{"rename with edit", "diff --git a/src/a.c b/src/b.c\nsimilarity index 80%\nrename from src/a.c\nrename to src/b.c\nindex 1234567..89abcde 100644\n--- a/src/a.c\n+++ b/src/b.c\n@@ -1 +1,2 @@\n a\n+b\n",
		[]File{{OldPath: "src/a.c", NewPath: "src/b.c", Status: Renamed, Added: 1, OldMode: "100644", NewMode: "100644"}}},
	{"copy", "diff --git a/a b/c\nsimilarity index 100%\ncopy from a\ncopy to c\n",
		[]File{{OldPath: "a", NewPath: "c", Status: Copied}}},
	{"mode only", "diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n",
		[]File{{OldPath: "run.sh", NewPath: "run.sh", Status: Modified, OldMode: "100644", NewMode: "100755"}}},
	{"new symlink", "diff --git a/l b/l\nnew file mode 120000\nindex 0000000..1234567\n--- /dev/null\n+++ b/l\n@@ -0,0 +1 @@\n+../t\n\\ No newline at end of file\n",
		[]File{{NewPath: "l", Status: Added, Added: 1, NewMode: "120000", Symlink: true, SymlinkTarget: "../t"}}},
	{"changed symlink", "diff --git a/l b/l\nindex 1234567..89abcde 120000\n--- a/l\n+++ b/l\n@@ -1 +1 @@\n-t\n\\ No newline at end of file\n+/etc/passwd\n\\ No newline at end of file\n",
		[]File{{OldPath: "l", NewPath: "l", Status: Modified, Added: 1, Deleted: 1, OldMode: "120000", NewMode: "120000", Symlink: true, SymlinkTarget: "/etc/passwd"}}},
	{"deleted symlink", "diff --git a/l b/l\ndeleted file mode 120000\nindex 1234567..0000000\n--- a/l\n+++ /dev/null\n@@ -1 +0,0 @@\n-t\n\\ No newline at end of file\n",
		[]File{{OldPath: "l", Status: Deleted, Deleted: 1, OldMode: "120000", Symlink: true}}},
	{"binary without data", "diff --git a/b.png b/b.png\nindex 1234567..89abcde 100644\nBinary files a/b.png and b/b.png differ\n",
		[]File{{OldPath: "b.png", NewPath: "b.png", Status: Modified, Binary: true, OldMode: "100644", NewMode: "100644"}}},
	{"binary literal", "diff --git a/b b/b\nnew file mode 100644\nindex 0000000000000000000000000000000000000000..f9e371ff2657e5d2bd4389e3b323fe0550e3a860\nGIT binary patch\nliteral 4\nLcmZR`ODzWg0*?Vp\n\nliteral 0\nHcmV?d00001\n\n",
		[]File{{NewPath: "b", Status: Added, Binary: true, NewMode: "100644"}}},
	{"submodule", "diff --git a/sub b/sub\nindex 1234567..89abcde 160000\n--- a/sub\n+++ b/sub\n@@ -1 +1 @@\n-Subproject commit 1234567890123456789012345678901234567890\n+Subproject commit 89abcde890123456789012345678901234567890\n",
		[]File{{OldPath: "sub", NewPath: "sub", Status: Modified, Added: 1, Deleted: 1, OldMode: "160000", NewMode: "160000", Submodule: true}}},
	{"quoted utf-8 name", "diff --git \"a/caf\\303\\251\" \"b/caf\\303\\251\"\nindex 1234567..89abcde 100644\n--- \"a/caf\\303\\251\"\n+++ \"b/caf\\303\\251\"\n@@ -1 +1 @@\n-a\n+b\n",
		[]File{{OldPath: "café", NewPath: "café", Status: Modified, Added: 1, Deleted: 1, OldMode: "100644", NewMode: "100644"}}},
	{"name with spaces", "diff --git a/my file b/my file\nindex 1234567..89abcde 100644\n--- a/my file\t\n+++ b/my file\t\n@@ -1 +1 @@\n-a\n+b\n",
		[]File{{OldPath: "my file", NewPath: "my file", Status: Modified, Added: 1, Deleted: 1, OldMode: "100644", NewMode: "100644"}}},
	{"mode only with spaces", "diff --git a/a b/c b/a b/c\nold mode 100644\nnew mode 100755\n",
		[]File{{OldPath: "a b/c", NewPath: "a b/c", Status: Modified, OldMode: "100644", NewMode: "100755"}}},
	{"rename with spaces", "diff --git a/x b/y b/z w\nsimilarity index 100%\nrename from x b/y\nrename to z w\n",
		[]File{{OldPath: "x b/y", NewPath: "z w", Status: Renamed}}},
	{"traditional", "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n",
		[]File{{OldPath: "x", NewPath: "x", Status: Modified, Added: 1, Deleted: 1}}},
	{"traditional create", "--- /dev/null\n+++ b/n\n@@ -0,0 +1 @@\n+a\n",
		[]File{{NewPath: "n", Status: Added, Added: 1}}},
	{"crlf content", "diff --git a/w.txt b/w.txt\nindex 1234567..89abcde 100644\n--- a/w.txt\n+++ b/w.txt\n@@ -1,2 +1,2 @@\n a\r\n-b\r\n+c\r\n",
		[]File{{OldPath: "w.txt", NewPath: "w.txt", Status: Modified, Added: 1, Deleted: 1, OldMode: "100644", NewMode: "100644"}}},
	{"empty context line", "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n\n-b\n+c\n",
		[]File{{OldPath: "x", NewPath: "x", Status: Modified, Added: 1, Deleted: 1}}},
	{"two hunks", "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n@@ -10,2 +10,3 @@ func f() {\n c\n+d\n e\n",
		[]File{{OldPath: "x", NewPath: "x", Status: Modified, Added: 2, Deleted: 1}}},
	{"type change", "diff --git a/t b/t\ndeleted file mode 100644\nindex 1234567..0000000\n--- a/t\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\ndiff --git a/t b/t\nnew file mode 120000\nindex 0000000..89abcde\n--- /dev/null\n+++ b/t\n@@ -0,0 +1 @@\n+u\n\\ No newline at end of file\n",
		[]File{{OldPath: "t", Status: Deleted, Deleted: 1, OldMode: "100644"}, {NewPath: "t", Status: Added, Added: 1, NewMode: "120000", Symlink: true, SymlinkTarget: "u"}}},
	{"nul in a text hunk is binary", "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\x00c\n",
		[]File{{OldPath: "x", NewPath: "x", Status: Modified, Added: 1, Deleted: 1, Binary: true}}},
	{"rewrite", "diff --git a/x b/x\ndissimilarity index 90%\nindex 1234567..89abcde 100644\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n",
		[]File{{OldPath: "x", NewPath: "x", Status: Modified, Added: 1, Deleted: 1, OldMode: "100644", NewMode: "100644"}}},
	{"copy and modify the source", "diff --git a/a b/a\n--- a/a\n+++ b/a\n@@ -1 +1 @@\n-a\n+b\ndiff --git a/a b/c\nsimilarity index 100%\ncopy from a\ncopy to c\n",
		[]File{{OldPath: "a", NewPath: "a", Status: Modified, Added: 1, Deleted: 1}, {OldPath: "a", NewPath: "c", Status: Copied}}},
}

func TestReadOK(t *testing.T) {
	for _, tc := range readOK {
		t.Run(tc.name, func(t *testing.T) {
			cs, err := Read(context.Background(), []byte(tc.diff))
			if err != nil {
				t.Fatalf("Read(%q) error %v, want %+v", tc.diff, err, tc.want)
			}
			if !reflect.DeepEqual(cs.Files, tc.want) {
				t.Errorf("Read(%q) =\n %+v\nwant\n %+v", tc.diff, cs.Files, tc.want)
			}
		})
	}
}

// Stated: only a patch that states every mode (and every symlink's
// target) may be judged before the base is read.
func TestStated(t *testing.T) {
	want := map[string]bool{"modify": true, "create": true, "create empty": true, "delete": true,
		"pure rename": false, "rename with edit": true, "copy": false}
	for _, tc := range readOK {
		w, ok := want[tc.name]
		if !ok {
			continue
		}
		cs, err := Read(context.Background(), []byte(tc.diff))
		if err != nil {
			t.Fatalf("Read(%q): %v", tc.name, err)
		}
		if got := cs.Stated(); got != w {
			t.Errorf("%s: Stated() = %v, want %v", tc.name, got, w)
		}
	}
	noIndex := "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n"
	cs, err := Read(context.Background(), []byte(noIndex))
	if err != nil {
		t.Fatal(err)
	}
	if cs.Stated() {
		t.Error("a modification without an index line: Stated() = true, want false (its mode is the base's)")
	}
}

const okDiff = "diff --git a/x b/x\nindex 1234567..89abcde 100644\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n"

// Diffs failpass refuses, with the rule and a fragment of the message.
var readBad = []struct {
	name, diff, rule, msg string
}{
	{"empty", "", RuleParse, "empty"},
	{"blank", "\n\n  \n", RuleParse, "empty"},
	{"prose before", "Here is the fix:\n" + okDiff, RuleParse, "does not start with a patch header"},
	{"prose after", okDiff + "Hope this helps!\n", RuleParse, "not part of a patch"},
	{"blank line after", okDiff + "\n", RuleParse, "not part of a patch: an empty line"},
	{"markdown fence", "```diff\n" + okDiff + "```\n", RuleParse, "does not start"},
	{"crlf headers", strings.ReplaceAll(okDiff, "\n", "\r\n"), RuleParse, "carriage return"},
	{"no final newline", strings.TrimSuffix(okDiff, "\n"), RuleParse, "newline"},
	{"mail", "From 1234 Mon Sep 17 00:00:00 2001\nSubject: [PATCH] x\n---\n" + okDiff + "-- \n2.39.5\n", RuleParse, "does not start"},
	{"header names disagree", "diff --git a/x b/x\n--- a/y\n+++ b/y\n@@ -1 +1 @@\n-a\n+b\n", RuleParse, "disagrees"},
	{"--- and +++ disagree", "diff --git a/x b/x\n--- a/x\n+++ b/y\n@@ -1 +1 @@\n-a\n+b\n", RuleParse, "differ without a rename"},
	{"traditional rename", "--- a/x\n+++ b/y\n@@ -1 +1 @@\n-a\n+b\n", RuleParse, "cannot rename"},
	{"git line differs without rename", "diff --git a/x b/y\nold mode 100644\nnew mode 100755\n", RuleParse, "cannot read one file name"},
	{"absolute +++", "--- a/etc/x\n+++ /etc/x\n@@ -1 +1 @@\n-a\n+b\n", RulePath, "absolute"},
	{"absolute in git header", "diff --git a/x b/x\n--- a/x\n+++ /x\n@@ -1 +1 @@\n-a\n+b\n", RulePath, "absolute"},
	{"absolute after prefix", "diff --git a//etc/x b//etc/x\n--- a//etc/x\n+++ b//etc/x\n@@ -1 +1 @@\n-a\n+b\n", RulePath, "absolute"},
	{"dotdot", "diff --git a/../x b/../x\n--- a/../x\n+++ b/../x\n@@ -1 +1 @@\n-a\n+b\n", RulePath, `".." segment`},
	{"inner dotdot", "--- a/src/../../x\n+++ b/src/../../x\n@@ -1 +1 @@\n-a\n+b\n", RulePath, `".." segment`},
	{"dot git", "diff --git a/.git/config b/.git/config\n--- a/.git/config\n+++ b/.git/config\n@@ -1 +1 @@\n-a\n+b\n", RulePath, ".git"},
	{"dot git any case", "diff --git a/sub/.GiT/hooks/pre-commit b/sub/.GiT/hooks/pre-commit\nnew file mode 100755\n--- /dev/null\n+++ b/sub/.GiT/hooks/pre-commit\n@@ -0,0 +1 @@\n+x\n", RulePath, ".git"},
	{"dot git ntfs", "--- /dev/null\n+++ b/.git./config\n@@ -0,0 +1 @@\n+x\n", RulePath, ".git"},
	{"rename into dot git", "diff --git a/x b/.git/x\nsimilarity index 100%\nrename from x\nrename to .git/x\n", RulePath, ".git"},
	{"control character", "diff --git \"a/x\\ty\" \"b/x\\ty\"\n--- \"a/x\\ty\"\n+++ \"b/x\\ty\"\n@@ -1 +1 @@\n-a\n+b\n", RulePath, "control"},
	{"newline in name", "diff --git \"a/x\\ny\" \"b/x\\ny\"\nnew file mode 100644\n--- /dev/null\n+++ \"b/x\\ny\"\n@@ -0,0 +1 @@\n+b\n", RulePath, "control"},
	{"empty segment", "--- a/x//y\n+++ b/x//y\n@@ -1 +1 @@\n-a\n+b\n", RulePath, "empty segment"},
	{"create twice", "diff --git a/n b/n\nnew file mode 100644\n--- /dev/null\n+++ b/n\n@@ -0,0 +1 @@\n+a\ndiff --git a/n b/n\nnew file mode 100644\n--- /dev/null\n+++ b/n\n@@ -0,0 +1 @@\n+b\n", RuleParse, "written twice"},
	{"one file in two sections", okDiff + "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -5 +5 @@\n-c\n+d\n", RuleParse, "again"},
	{"create then modify", "--- /dev/null\n+++ b/n\n@@ -0,0 +1 @@\n+a\n--- a/n\n+++ b/n\n@@ -1 +1,2 @@\n a\n+b\n", RuleParse, "after the diff created it"},
	{"index mode overrides mode lines", "diff --git a/x b/x\nold mode 100644\nnew mode 100755\nindex 1234567..89abcde 100755\n", RuleParse, "conflicts"},
	{"mode to itself", "diff --git a/x b/x\nold mode 100644\nnew mode 100644\n", RuleParse, "to itself"},
	{"unknown mode", "diff --git a/x b/x\nold mode 100644\nnew mode 104755\n", RuleParse, "unknown file mode"},
	{"lone old mode", "diff --git a/x b/x\nold mode 100644\n", RuleParse, "together"},
	{"header twice", "diff --git a/x b/y\nrename from x\nrename from x\nrename to y\n", RuleParse, "twice"},
	{"dev null without new file mode", "diff --git a/x b/x\n--- /dev/null\n+++ b/x\n@@ -0,0 +1 @@\n+a\n", RuleParse, "new file mode"},
	{"deleted file keeps content", "diff --git a/x b/x\ndeleted file mode 100644\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n", RuleParse, "deleted file mode"},
	{"short hunk", "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n-b\n+c\n", RuleParse, "ends early"},
	{"long hunk", "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n+c\n", RuleParse, "not part of a patch"},
	{"hunk without change", "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n a\n", RuleParse, "changes nothing"},
	{"bad hunk line", "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-a\n+b\n*c\n", RuleParse, "does not start with"},
	{"no-op section", "diff --git a/x b/x\nindex 1234567..89abcde 100644\n", RuleParse, "changes nothing"},
	{"unknown header", "diff --git a/x b/x\nsomething else\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n", RuleParse, "unknown line"},
	{"no prefixes", "diff --git x x\n--- x\n+++ x\n@@ -1 +1 @@\n-a\n+b\n", RuleParse, "prefix"},
	{"ambiguous traditional create", "--- a/x\n+++ b/x\n@@ -0,0 +1 @@\n+a\n", RuleParse, "create or delete"},
	{"ambiguous traditional delete", "--- a/x\n+++ b/x\n@@ -1 +0,0 @@\n-a\n", RuleParse, "create or delete"},
	{"symlink target with newline", "diff --git a/l b/l\nnew file mode 120000\n--- /dev/null\n+++ b/l\n@@ -0,0 +1 @@\n+t\n", RuleParse, "newline"},
	{"symlink target on two lines", "diff --git a/l b/l\nnew file mode 120000\n--- /dev/null\n+++ b/l\n@@ -0,0 +1,2 @@\n+t\n+u\n\\ No newline at end of file\n", RuleParse, "only new line"},
	{"file becomes symlink without target", "diff --git a/l b/l\nold mode 100644\nnew mode 120000\n", RuleParse, "does not give its target"},
	{"broken quoting", "diff --git \"a/x\\q\" \"b/x\\q\"\n--- \"a/x\\q\"\n+++ \"b/x\\q\"\n@@ -1 +1 @@\n-a\n+b\n", RuleParse, "escape"},
	{"binary without blank line", "diff --git a/b b/b\nnew file mode 100644\nGIT binary patch\nliteral 4\nLcmZR`ODzWg0*?Vp\n", RuleParse, "empty line"},
	{"epoch timestamp", "--- a/x\t1970-01-01 00:00:00.000000000 +0000\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n", RuleParse, "git apply cannot read"},
	{"git strips a timestamp", "--- a/x 2020-01-01 10:00:00.000000000 +0000\n+++ b/x 2020-01-01 10:00:00.000000000 +0000\n@@ -1 +1 @@\n-a\n+b\n", RuleParse, "git reads this patch as \"1\\t1\\tx\""},
	{"half-quoted rename", "diff --git \"a/x\\ty\" b/z\nsimilarity index 100%\nrename from \"x\\ty\"\nrename to z\n", RulePath, "control"},
	{"huge header line", "diff --git a/" + strings.Repeat("x", maxHeaderLine) + " b/x\n", RuleParse, "limit"},
	{"oversize", okDiff + "#" + strings.Repeat("x", MaxSize), RuleParse, "limit"},
}

func TestReadRefuses(t *testing.T) {
	for _, tc := range readBad {
		t.Run(tc.name, func(t *testing.T) {
			cs, err := Read(context.Background(), []byte(tc.diff))
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("Read(%q) = %+v, %v; want *Error %s", clip(tc.diff), cs, err, tc.rule)
			}
			if cs != nil {
				t.Errorf("Read(%q) returned a change set with an error", clip(tc.diff))
			}
			if pe.Rule != tc.rule || !strings.Contains(pe.Msg, tc.msg) {
				t.Errorf("Read(%q) error = %s %q, want %s containing %q", clip(tc.diff), pe.Rule, pe.Msg, tc.rule, tc.msg)
			}
			if len(pe.Hints()) == 0 {
				t.Errorf("Read(%q) error %q has no hint", clip(tc.diff), pe.Msg)
			}
		})
	}
}

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

func TestReadHints(t *testing.T) {
	for _, tc := range []struct{ diff, hint string }{
		{"Sure! Here is the fix:\n\n```diff\n" + okDiff + "```\n", hintFence},
		{strings.ReplaceAll(okDiff, "\n", "\r\n"), hintCRLF},
		{"Here:\n" + okDiff, hintPure},
	} {
		_, err := Read(context.Background(), []byte(tc.diff))
		var pe *Error
		if !errors.As(err, &pe) || len(pe.Hints()) != 1 || pe.Hints()[0] != tc.hint {
			t.Errorf("Read(%q) = %v, want hint %q", clip(tc.diff), err, tc.hint)
		}
	}
}
