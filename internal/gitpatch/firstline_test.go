package gitpatch

import (
	"context"
	"testing"
)

// FirstLine points at the first added or deleted line, counted in the
// new version of the file, so a CI annotation lands where the change is.
func TestFirstLine(t *testing.T) {
	diffs := map[string]string{}
	for _, tc := range readOK {
		diffs[tc.name] = tc.diff
	}
	for _, tc := range []struct {
		diff, path string
		want       int
	}{
		{diffs["modify"], "x.go", 2},              // " a" then "-b": line 2
		{diffs["create"], "n", 1},                 // a new file starts at 1
		{diffs["create empty"], "e", 0},           // no line changed
		{diffs["delete"], "d", 0},                 // no new version
		{diffs["pure rename"], "new", 0},          // content unchanged
		{diffs["rename with edit"], "src/b.c", 2}, // new side of a rename
		{diffs["rename with edit"], "src/a.c", 0}, // the old side has no new version
		{diffs["mode only"], "run.sh", 0},         // no hunk
		{diffs["binary literal"], "b", 0},         // no lines in a binary patch
		{diffs["two hunks"], "x", 1},              // the first hunk wins
		{diffs["empty context line"], "x", 3},     // an empty line is context
		{diffs["traditional create"], "n", 1},     // a traditional patch too
		{diffs["type change"], "t", 1},            // the added side of a type change
		{diffs["modify"], "elsewhere.go", 0},      // not in the change set
		{"diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -7,4 +7,3 @@ f\n a\n b\n-c\n d\n", "x", 9}, // a deletion: the line now after it
		{"diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -3,2 +3,3 @@\n a\n b\n+c\n", "x", 5},       // appended at the end
		{"diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,3 +0,0 @@\n-a\n-b\n-c\n", "x", 1},       // emptied
	} {
		cs, err := Read(context.Background(), []byte(tc.diff))
		if err != nil {
			t.Fatalf("Read(%q): %v", tc.diff, err)
		}
		if got := cs.FirstLine(tc.path); got != tc.want {
			t.Errorf("Read(%q).FirstLine(%q) = %d, want %d", tc.diff, tc.path, got, tc.want)
		}
	}
}
