package model

import (
	"errors"
	"github.com/failpass/failpass/internal/patch"
	"strings"
	"testing"
)

const goodDiff = `diff --git a/src/header.py b/src/header.py
index 1111111..2222222 100644
--- a/src/header.py
+++ b/src/header.py
@@ -1,3 +1,4 @@
 def parse(h):
+    if not h: return {}
     k, v = h.split(":")
     return {k: v}
`

const plainDiff = `--- a/README
+++ b/README
@@ -1 +1 @@
-old
+new
`

func TestExtractDiff(t *testing.T) {
	fence := "```"
	tests := []struct {
		name   string
		reply  string
		diff   string // "" means refused
		prose  string
		reason string // substring of the refusal
	}{
		{name: "bare", reply: goodDiff, diff: goodDiff},
		{name: "bare without git header", reply: plainDiff, diff: plainDiff},
		{name: "fenced", reply: fence + "diff\n" + goodDiff + fence + "\n", diff: goodDiff},
		{name: "fenced no info", reply: fence + "\n" + goodDiff + fence, diff: goodDiff},
		{name: "tilde fence", reply: "~~~patch\n" + goodDiff + "~~~\n", diff: goodDiff},
		{name: "prose around fence", reply: "Here is the fix:\n\n" + fence + "diff\n" + goodDiff + fence + "\nIt handles the empty header.\n",
			diff: goodDiff, prose: "Here is the fix:\n\nIt handles the empty header."},
		{name: "prose around bare", reply: "The fix:\n" + goodDiff + "\nDone.\n", diff: goodDiff, prose: "The fix:\n\nDone."},
		{name: "crlf fence", reply: fence + "diff\r\n" + goodDiff + fence + "\r\n", diff: goodDiff},
		{name: "no newline at end", reply: strings.TrimSuffix(plainDiff, "\n"), diff: plainDiff},
		{name: "no newline marker", reply: "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+b\n\\ No newline at end of file\n",
			diff: "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+b\n\\ No newline at end of file\n"},
		{name: "removed sql comment line", reply: "--- a/q.sql\n+++ b/q.sql\n@@ -1,2 +1 @@\n--- comment\n select 1\n",
			diff: "--- a/q.sql\n+++ b/q.sql\n@@ -1,2 +1 @@\n--- comment\n select 1\n"},
		{name: "fence inside markdown diff", reply: fence + "diff\n--- a/d.md\n+++ b/d.md\n@@ -1 +1,2 @@\n " + fence + "\n+x\n" + fence + "\n",
			diff: "--- a/d.md\n+++ b/d.md\n@@ -1 +1,2 @@\n " + fence + "\n+x\n"},
		{name: "rename only", reply: "diff --git a/a.txt b/b.txt\nsimilarity index 100%\nrename from a.txt\nrename to b.txt\n",
			diff: "diff --git a/a.txt b/b.txt\nsimilarity index 100%\nrename from a.txt\nrename to b.txt\n"},
		{name: "empty", reply: "", reason: "no unified diff"},
		{name: "prose only", reply: "I could not find the bug.\n", reason: "no unified diff"},
		{name: "two fenced diffs", reply: fence + "diff\n" + goodDiff + fence + "\nor\n" + fence + "diff\n" + plainDiff + fence + "\n", reason: "2 fenced diffs"},
		{name: "fenced and bare", reply: fence + "diff\n" + goodDiff + fence + "\n" + plainDiff, reason: "more than one diff"},
		{name: "same file twice", reply: plainDiff + plainDiff, reason: `"README" is changed again`},
		{name: "diff after prose after diff", reply: goodDiff + "Alternatively:\n" + plainDiff, reason: "more than one diff"},
		{name: "unterminated fence", reply: fence + "diff\n" + goodDiff, reason: "never closed"},
		{name: "short hunk", reply: "--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n-a\n+b\n", reason: "hunk at line 3 ends early"},
		{name: "hunk over-long", reply: "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n+c\n", reason: "longer than its header"},
		{name: "hunk over-long with context", reply: "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n c\n", reason: "longer than its header"},
		{name: "bullets after a blank line", reply: plainDiff + "\n- fixed the README\n", diff: plainDiff, prose: "- fixed the README"},
		{name: "text inside the fence", reply: fence + "diff\n" + plainDiff + "that was the diff\n" + fence + "\n", reason: "text that is not part of the diff"},
		{name: "two hunks", reply: "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n@@ -5 +5 @@\n-c\n+d\n", diff: "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n@@ -5 +5 @@\n-c\n+d\n"},
		{name: "header only", reply: "--- a/x\n+++ b/x\n", reason: "expected a hunk"},
		{name: "index line only", reply: "diff --git a/x b/x\nindex 1111111..2222222 100644\n", reason: "changes nothing"},
		// The gate's own scanner reads the diff, so what it would refuse
		// is refused here, with its reason.
		{name: "path into .git", reply: "--- a/.git/config\n+++ b/.git/config\n@@ -1 +1 @@\n-a\n+b\n", reason: ".git"},
		{name: "absolute path", reply: "--- a/x\n+++ /etc/x\n@@ -1 +1 @@\n-a\n+b\n", reason: "absolute path"},
		{name: "crlf headers", reply: strings.ReplaceAll(plainDiff, "\n", "\r\n"), reason: "carriage return"},
		{name: "nul byte", reply: plainDiff + "\x00", reason: "not text"},
		{name: "too much prose", reply: strings.Repeat("words ", 500) + "\n" + plainDiff, reason: "prose"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := ExtractDiff([]byte(tt.reply))
			if tt.diff == "" {
				var re *RefusedError
				if !errors.As(err, &re) || r != nil {
					t.Fatalf("ExtractDiff(%q) = %v, %v; want a refusal", tt.reply, r, err)
				}
				if !strings.Contains(re.Reason, tt.reason) {
					t.Fatalf("ExtractDiff(%q) reason = %q, want it to contain %q", tt.reply, re.Reason, tt.reason)
				}
				return
			}
			if err != nil {
				t.Fatalf("ExtractDiff(%q) = %v, want a diff", tt.reply, err)
			}
			if got := string(r.Diff); got != tt.diff {
				t.Fatalf("ExtractDiff(%q).Diff = %q, want %q", tt.reply, got, tt.diff)
			}
			if r.Prose != tt.prose {
				t.Fatalf("ExtractDiff(%q).Prose = %q, want %q", tt.reply, r.Prose, tt.prose)
			}
		})
	}
}

func TestExtractDiffFiles(t *testing.T) {
	r, err := ExtractDiff([]byte(goodDiff + "diff --git a/old.py b/new.py\nsimilarity index 90%\nrename from old.py\nrename to new.py\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"src/header.py", "old.py", "new.py"}
	if strings.Join(r.Files, ",") != strings.Join(want, ",") {
		t.Fatalf("Files = %q, want %q", r.Files, want)
	}
}

// FuzzExtractDiff: a refusal returns no reply, an extracted diff is a
// fixed point (extracting it again gives the same diff and no prose), and
// the gate's strict header scan accepts it.
func FuzzExtractDiff(f *testing.F) {
	for _, s := range []string{goodDiff, plainDiff, "```diff\n" + goodDiff + "```\n", "prose\n" + plainDiff + "more", plainDiff + plainDiff, ""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, reply []byte) {
		r, err := ExtractDiff(reply)
		if err != nil {
			if r != nil {
				t.Fatalf("ExtractDiff(%q) returned a reply with error %v", reply, err)
			}
			return
		}
		if _, err := patch.ScanHeaders(r.Diff); err != nil {
			t.Fatalf("ExtractDiff(%q) = %q, which the gate's scan refuses: %v", reply, r.Diff, err)
		}
		again, err := ExtractDiff(r.Diff)
		if err != nil {
			t.Fatalf("ExtractDiff(%q) = %v on its own output %q", reply, err, r.Diff)
		}
		if string(again.Diff) != string(r.Diff) || again.Prose != "" {
			t.Fatalf("ExtractDiff not idempotent: %q -> %q (prose %q)", r.Diff, again.Diff, again.Prose)
		}
	})
}
