package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A --repo that is no folder is the command line's fault: a usage error,
// exit 2, naming the path as given (it was an internal error).
func TestGateRepoNotAFolder(t *testing.T) {
	dir := t.TempDir()
	card := filepath.Join(dir, "card.yml")
	diff := filepath.Join(dir, "fix.diff")
	if err := os.WriteFile(card, []byte(testCard), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(diff, []byte("diff --git a/a b/a\n--- a/a\n+++ b/a\n@@ -1 +1 @@\n-a\n+b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "nonexistent")
	for _, tt := range []struct{ repo, want string }{
		{missing, "failpass: usage error: --repo " + missing + ": no such folder\n"},
		{card, "failpass: usage error: --repo " + card + ": not a folder\n"},
	} {
		code, stdout, stderr := runMain("gate", "--allow-unsigned", "--card", card, "--diff", diff, "--repo", tt.repo)
		if code != ExitTrouble || !strings.HasPrefix(stderr, tt.want) || !strings.Contains(stderr, "\nhint: ") {
			t.Errorf("gate --repo %s = %d, stdout %q, stderr %q; want %d, %q and a hint", tt.repo, code, stdout, stderr, ExitTrouble, tt.want)
		}
		// --json says it in the error object, path included.
		code, stdout, _ = runMain("gate", "--allow-unsigned", "--card", card, "--diff", diff, "--repo", tt.repo, "--json")
		if code != ExitTrouble || !strings.Contains(stdout, `"verdict":"error"`) || !strings.Contains(stdout, tt.repo) {
			t.Errorf("gate --json --repo %s = %d, stdout %q; want %d and an error naming the path", tt.repo, code, stdout, ExitTrouble)
		}
	}
}
