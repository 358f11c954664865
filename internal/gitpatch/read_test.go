package gitpatch

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/failpass/failpass/internal/patch"
)

// Hand-written diffs git accepts, with the change set failpass must read.
var readOK = []struct {
	name string
	diff string
	want []patch.File
}{
	{"modify", "diff --git a/x.go b/x.go\nindex 1234567..89abcde 100644\n--- a/x.go\n+++ b/x.go\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n",
		[]patch.File{{OldPath: "x.go", NewPath: "x.go", Status: patch.Modified, Added: 1, Deleted: 1, OldMode: "100644", NewMode: "100644"}}},
	{"create", "diff --git a/n b/n\nnew file mode 100755\nindex 0000000..89abcde\n--- /dev/null\n+++ b/n\n@@ -0,0 +1,2 @@\n+a\n+b\n",
		[]patch.File{{NewPath: "n", Status: patch.Added, Added: 2, NewMode: "100755"}}},
	{"create empty", "diff --git a/e b/e\nnew file mode 100644\nindex 0000000..e69de29\n",
		[]patch.File{{NewPath: "e", Status: patch.Added, NewMode: "100644"}}},
	{"delete", "diff --git a/d b/d\ndeleted file mode 100644\nindex 89abcde..0000000\n--- a/d\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n",
		[]patch.File{{OldPath: "d", Status: patch.Deleted, Deleted: 1, OldMode: "100644"}}},
	{"pure rename", "diff --git a/old b/new\nsimilarity index 100%\nrename from old\nrename to new\n",
		[]patch.File{{OldPath: "old", NewPath: "new", Status: patch.Renamed}}},
	{"rename with edit", "diff --git a/src/a.c b/src/b.c\nsimilarity index 80%\nrename from src/a.c\nrename to src/b.c\nindex 1234567..89abcde 100644\n--- a/src/a.c\n+++ b/src/b.c\n@@ -1 +1,2 @@\n a\n+b\n",
		[]patch.File{{OldPath: "src/a.c", NewPath: "src/b.c", Status: patch.Renamed, Added: 1, OldMode: "100644", NewMode: "100644"}}},
	{"copy", "diff --git a/a b/c\nsimilarity index 100%\ncopy from a\ncopy to c\n",
		[]patch.File{{OldPath: "a", NewPath: "c", Status: patch.Copied}}},
	{"mode only", "diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n",
		[]patch.File{{OldPath: "run.sh", NewPath: "run.sh", Status: patch.Modified, OldMode: "100644", NewMode: "100755"}}},
	{"new symlink", "diff --git a/l b/l\nnew file mode 120000\nindex 0000000..1234567\n--- /dev/null\n+++ b/l\n@@ -0,0 +1 @@\n+../t\n\\ No newline at end of file\n",
		[]patch.File{{NewPath: "l", Status: patch.Added, Added: 1, NewMode: "120000", Symlink: true, SymlinkTarget: "../t"}}},
	{"changed symlink", "diff --git a/l b/l\nindex 1234567..89abcde 120000\n--- a/l\n+++ b/l\n@@ -1 +1 @@\n-t\n\\ No newline at end of file\n+/etc/passwd\n\\ No newline at end of file\n",
		[]patch.File{{OldPath: "l", NewPath: "l", Status: patch.Modified, Added: 1, Deleted: 1, OldMode: "120000", NewMode: "120000", Symlink: true, SymlinkTarget: "/etc/passwd"}}},
	{"deleted symlink", "diff --git a/l b/l\ndeleted file mode 120000\nindex 1234567..0000000\n--- a/l\n+++ /dev/null\n@@ -1 +0,0 @@\n-t\n\\ No newline at end of file\n",
		[]patch.File{{OldPath: "l", Status: patch.Deleted, Deleted: 1, OldMode: "120000", Symlink: true}}},
	{"binary without data", "diff --git a/b.png b/b.png\nindex 1234567..89abcde 100644\nBinary files a/b.png and b/b.png differ\n",
		[]patch.File{{OldPath: "b.png", NewPath: "b.png", Status: patch.Modified, Binary: true, OldMode: "100644", NewMode: "100644"}}},
	{"binary literal", "diff --git a/b b/b\nnew file mode 100644\nindex 0000000000000000000000000000000000000000..f9e371ff2657e5d2bd4389e3b323fe0550e3a860\nGIT binary patch\nliteral 4\nLcmZR`ODzWg0*?Vp\n\nliteral 0\nHcmV?d00001\n\n",
		[]patch.File{{NewPath: "b", Status: patch.Added, Binary: true, NewMode: "100644"}}},
	{"submodule", "diff --git a/sub b/sub\nindex 1234567..89abcde 160000\n--- a/sub\n+++ b/sub\n@@ -1 +1 @@\n-Subproject commit 1234567890123456789012345678901234567890\n+Subproject commit 89abcde890123456789012345678901234567890\n",
		[]patch.File{{OldPath: "sub", NewPath: "sub", Status: patch.Modified, Added: 1, Deleted: 1, OldMode: "160000", NewMode: "160000", Submodule: true}}},
	{"quoted utf-8 name", "diff --git \"a/caf\\303\\251\" \"b/caf\\303\\251\"\nindex 1234567..89abcde 100644\n--- \"a/caf\\303\\251\"\n+++ \"b/caf\\303\\251\"\n@@ -1 +1 @@\n-a\n+b\n",
		[]patch.File{{OldPath: "café", NewPath: "café", Status: patch.Modified, Added: 1, Deleted: 1, OldMode: "100644", NewMode: "100644"}}},
	{"name with spaces", "diff --git a/my file b/my file\nindex 1234567..89abcde 100644\n--- a/my file\t\n+++ b/my file\t\n@@ -1 +1 @@\n-a\n+b\n",
		[]patch.File{{OldPath: "my file", NewPath: "my file", Status: patch.Modified, Added: 1, Deleted: 1, OldMode: "100644", NewMode: "100644"}}},
	{"mode only with spaces", "diff --git a/a b/c b/a b/c\nold mode 100644\nnew mode 100755\n",
		[]patch.File{{OldPath: "a b/c", NewPath: "a b/c", Status: patch.Modified, OldMode: "100644", NewMode: "100755"}}},
	{"rename with spaces", "diff --git a/x b/y b/z w\nsimilarity index 100%\nrename from x b/y\nrename to z w\n",
		[]patch.File{{OldPath: "x b/y", NewPath: "z w", Status: patch.Renamed}}},
	{"traditional", "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n",
		[]patch.File{{OldPath: "x", NewPath: "x", Status: patch.Modified, Added: 1, Deleted: 1}}},
	{"traditional create", "--- /dev/null\n+++ b/n\n@@ -0,0 +1 @@\n+a\n",
		[]patch.File{{NewPath: "n", Status: patch.Added, Added: 1}}},
	{"crlf content", "diff --git a/w.txt b/w.txt\nindex 1234567..89abcde 100644\n--- a/w.txt\n+++ b/w.txt\n@@ -1,2 +1,2 @@\n a\r\n-b\r\n+c\r\n",
		[]patch.File{{OldPath: "w.txt", NewPath: "w.txt", Status: patch.Modified, Added: 1, Deleted: 1, OldMode: "100644", NewMode: "100644"}}},
	{"empty context line", "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n\n-b\n+c\n",
		[]patch.File{{OldPath: "x", NewPath: "x", Status: patch.Modified, Added: 1, Deleted: 1}}},
	{"two hunks", "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n@@ -10,2 +10,3 @@ func f() {\n c\n+d\n e\n",
		[]patch.File{{OldPath: "x", NewPath: "x", Status: patch.Modified, Added: 2, Deleted: 1}}},
	{"type change", "diff --git a/t b/t\ndeleted file mode 100644\nindex 1234567..0000000\n--- a/t\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\ndiff --git a/t b/t\nnew file mode 120000\nindex 0000000..89abcde\n--- /dev/null\n+++ b/t\n@@ -0,0 +1 @@\n+u\n\\ No newline at end of file\n",
		[]patch.File{{OldPath: "t", Status: patch.Deleted, Deleted: 1, OldMode: "100644"}, {NewPath: "t", Status: patch.Added, Added: 1, NewMode: "120000", Symlink: true, SymlinkTarget: "u"}}},
	{"nul in a text hunk is binary", "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\x00c\n",
		[]patch.File{{OldPath: "x", NewPath: "x", Status: patch.Modified, Added: 1, Deleted: 1, Binary: true}}},
	{"rewrite", "diff --git a/x b/x\ndissimilarity index 90%\nindex 1234567..89abcde 100644\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n",
		[]patch.File{{OldPath: "x", NewPath: "x", Status: patch.Modified, Added: 1, Deleted: 1, OldMode: "100644", NewMode: "100644"}}},
	{"copy and modify the source", "diff --git a/a b/a\n--- a/a\n+++ b/a\n@@ -1 +1 @@\n-a\n+b\ndiff --git a/a b/c\nsimilarity index 100%\ncopy from a\ncopy to c\n",
		[]patch.File{{OldPath: "a", NewPath: "a", Status: patch.Modified, Added: 1, Deleted: 1}, {OldPath: "a", NewPath: "c", Status: patch.Copied}}},
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
	{"empty", "", patch.RuleParse, "empty"},
	{"blank", "\n\n  \n", patch.RuleParse, "empty"},
	{"prose before", "Here is the fix:\n" + okDiff, patch.RuleParse, "does not start with a patch header"},
	{"prose after", okDiff + "Hope this helps!\n", patch.RuleParse, "not part of a patch"},
	{"blank line after", okDiff + "\n", patch.RuleParse, "not part of a patch: an empty line"},
	{"markdown fence", "```diff\n" + okDiff + "```\n", patch.RuleParse, "does not start"},
	{"crlf headers", strings.ReplaceAll(okDiff, "\n", "\r\n"), patch.RuleParse, "carriage return"},
	{"no final newline", strings.TrimSuffix(okDiff, "\n"), patch.RuleParse, "newline"},
	{"mail", "From 1234 Mon Sep 17 00:00:00 2001\nSubject: [PATCH] x\n---\n" + okDiff + "-- \n2.39.5\n", patch.RuleParse, "does not start"},
	{"header names disagree", "diff --git a/x b/x\n--- a/y\n+++ b/y\n@@ -1 +1 @@\n-a\n+b\n", patch.RuleParse, "disagrees"},
	{"--- and +++ disagree", "diff --git a/x b/x\n--- a/x\n+++ b/y\n@@ -1 +1 @@\n-a\n+b\n", patch.RuleParse, "differ without a rename"},
	{"traditional rename", "--- a/x\n+++ b/y\n@@ -1 +1 @@\n-a\n+b\n", patch.RuleParse, "cannot rename"},
	{"git line differs without rename", "diff --git a/x b/y\nold mode 100644\nnew mode 100755\n", patch.RuleParse, "cannot read one file name"},
	{"absolute +++", "--- a/etc/x\n+++ /etc/x\n@@ -1 +1 @@\n-a\n+b\n", patch.RulePath, "absolute"},
	{"absolute in git header", "diff --git a/x b/x\n--- a/x\n+++ /x\n@@ -1 +1 @@\n-a\n+b\n", patch.RulePath, "absolute"},
	{"absolute after prefix", "diff --git a//etc/x b//etc/x\n--- a//etc/x\n+++ b//etc/x\n@@ -1 +1 @@\n-a\n+b\n", patch.RulePath, "absolute"},
	{"dotdot", "diff --git a/../x b/../x\n--- a/../x\n+++ b/../x\n@@ -1 +1 @@\n-a\n+b\n", patch.RulePath, `".." segment`},
	{"inner dotdot", "--- a/src/../../x\n+++ b/src/../../x\n@@ -1 +1 @@\n-a\n+b\n", patch.RulePath, `".." segment`},
	{"dot git", "diff --git a/.git/config b/.git/config\n--- a/.git/config\n+++ b/.git/config\n@@ -1 +1 @@\n-a\n+b\n", patch.RulePath, ".git"},
	{"dot git any case", "diff --git a/sub/.GiT/hooks/pre-commit b/sub/.GiT/hooks/pre-commit\nnew file mode 100755\n--- /dev/null\n+++ b/sub/.GiT/hooks/pre-commit\n@@ -0,0 +1 @@\n+x\n", patch.RulePath, ".git"},
	{"dot git ntfs", "--- /dev/null\n+++ b/.git./config\n@@ -0,0 +1 @@\n+x\n", patch.RulePath, ".git"},
	{"rename into dot git", "diff --git a/x b/.git/x\nsimilarity index 100%\nrename from x\nrename to .git/x\n", patch.RulePath, ".git"},
	{"control character", "diff --git \"a/x\\ty\" \"b/x\\ty\"\n--- \"a/x\\ty\"\n+++ \"b/x\\ty\"\n@@ -1 +1 @@\n-a\n+b\n", patch.RulePath, "control"},
	{"newline in name", "diff --git \"a/x\\ny\" \"b/x\\ny\"\nnew file mode 100644\n--- /dev/null\n+++ \"b/x\\ny\"\n@@ -0,0 +1 @@\n+b\n", patch.RulePath, "control"},
	{"empty segment", "--- a/x//y\n+++ b/x//y\n@@ -1 +1 @@\n-a\n+b\n", patch.RulePath, "empty segment"},
	{"create twice", "diff --git a/n b/n\nnew file mode 100644\n--- /dev/null\n+++ b/n\n@@ -0,0 +1 @@\n+a\ndiff --git a/n b/n\nnew file mode 100644\n--- /dev/null\n+++ b/n\n@@ -0,0 +1 @@\n+b\n", patch.RuleParse, "written twice"},
	{"one file in two sections", okDiff + "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -5 +5 @@\n-c\n+d\n", patch.RuleParse, "again"},
	{"create then modify", "--- /dev/null\n+++ b/n\n@@ -0,0 +1 @@\n+a\n--- a/n\n+++ b/n\n@@ -1 +1,2 @@\n a\n+b\n", patch.RuleParse, "after the diff created it"},
	{"index mode overrides mode lines", "diff --git a/x b/x\nold mode 100644\nnew mode 100755\nindex 1234567..89abcde 100755\n", patch.RuleParse, "conflicts"},
	{"mode to itself", "diff --git a/x b/x\nold mode 100644\nnew mode 100644\n", patch.RuleParse, "to itself"},
	{"unknown mode", "diff --git a/x b/x\nold mode 100644\nnew mode 104755\n", patch.RuleParse, "unknown file mode"},
	{"lone old mode", "diff --git a/x b/x\nold mode 100644\n", patch.RuleParse, "together"},
	{"header twice", "diff --git a/x b/y\nrename from x\nrename from x\nrename to y\n", patch.RuleParse, "twice"},
	{"dev null without new file mode", "diff --git a/x b/x\n--- /dev/null\n+++ b/x\n@@ -0,0 +1 @@\n+a\n", patch.RuleParse, "new file mode"},
	{"deleted file keeps content", "diff --git a/x b/x\ndeleted file mode 100644\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n", patch.RuleParse, "deleted file mode"},
	{"short hunk", "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n-b\n+c\n", patch.RuleParse, "ends early"},
	{"long hunk", "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n+c\n", patch.RuleParse, "not part of a patch"},
	{"hunk without change", "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n a\n", patch.RuleParse, "changes nothing"},
	{"bad hunk line", "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-a\n+b\n*c\n", patch.RuleParse, "does not start with"},
	{"no-op section", "diff --git a/x b/x\nindex 1234567..89abcde 100644\n", patch.RuleParse, "changes nothing"},
	{"unknown header", "diff --git a/x b/x\nsomething else\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n", patch.RuleParse, "unknown line"},
	{"no prefixes", "diff --git x x\n--- x\n+++ x\n@@ -1 +1 @@\n-a\n+b\n", patch.RuleParse, "prefix"},
	{"ambiguous traditional create", "--- a/x\n+++ b/x\n@@ -0,0 +1 @@\n+a\n", patch.RuleParse, "create or delete"},
	{"ambiguous traditional delete", "--- a/x\n+++ b/x\n@@ -1 +0,0 @@\n-a\n", patch.RuleParse, "create or delete"},
	{"symlink target with newline", "diff --git a/l b/l\nnew file mode 120000\n--- /dev/null\n+++ b/l\n@@ -0,0 +1 @@\n+t\n", patch.RuleParse, "newline"},
	{"symlink target on two lines", "diff --git a/l b/l\nnew file mode 120000\n--- /dev/null\n+++ b/l\n@@ -0,0 +1,2 @@\n+t\n+u\n\\ No newline at end of file\n", patch.RuleParse, "only new line"},
	{"file becomes symlink without target", "diff --git a/l b/l\nold mode 100644\nnew mode 120000\n", patch.RuleParse, "does not give its target"},
	{"broken quoting", "diff --git \"a/x\\q\" \"b/x\\q\"\n--- \"a/x\\q\"\n+++ \"b/x\\q\"\n@@ -1 +1 @@\n-a\n+b\n", patch.RuleParse, "escape"},
	{"binary without blank line", "diff --git a/b b/b\nnew file mode 100644\nGIT binary patch\nliteral 4\nLcmZR`ODzWg0*?Vp\n", patch.RuleParse, "empty line"},
	{"epoch timestamp", "--- a/x\t1970-01-01 00:00:00.000000000 +0000\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n", patch.RuleParse, "git apply cannot read"},
	{"git strips a timestamp", "--- a/x 2020-01-01 10:00:00.000000000 +0000\n+++ b/x 2020-01-01 10:00:00.000000000 +0000\n@@ -1 +1 @@\n-a\n+b\n", patch.RuleParse, "git reads this patch as \"1\\t1\\tx\""},
	{"half-quoted rename", "diff --git \"a/x\\ty\" b/z\nsimilarity index 100%\nrename from \"x\\ty\"\nrename to z\n", patch.RulePath, "control"},
	{"huge header line", "diff --git a/" + strings.Repeat("x", (8*patch.MaxPathLen+64)) + " b/x\n", patch.RuleParse, "limit"},
	{"oversize", okDiff + "#" + strings.Repeat("x", patch.MaxSize), patch.RuleParse, "limit"},
}

func TestReadRefuses(t *testing.T) {
	for _, tc := range readBad {
		t.Run(tc.name, func(t *testing.T) {
			cs, err := Read(context.Background(), []byte(tc.diff))
			var pe *patch.Error
			if !errors.As(err, &pe) {
				t.Fatalf("Read(%q) = %+v, %v; want *patch.Error %s", clip(tc.diff), cs, err, tc.rule)
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
