package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/failpass/failpass/internal/card"
)

const lintTestCard = `id: "X-1"
base_ref: "main"
fail: {cmd: ["go", "test", "-run", "TestBug"], expect_exit: 1}
pass: {cmd: ["go", "test", "-run", "TestBug"], expect_exit: 0}
invariant: {cmd: ["go", "test"], expect_exit: 0}
budget: {max_files: 3, max_changed_lines: 80, deny_globs: ["docs/**"]}
`

func runMain(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := Main(args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// TestCardLintExitCodes pins the exit codes README.md promises: 0 for a
// valid card, 2 for a malformed or unreadable one and for usage errors.
func TestCardLintExitCodes(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yml")
	bad := filepath.Join(dir, "bad.yml")
	os.WriteFile(good, []byte(lintTestCard), 0o644)
	os.WriteFile(bad, []byte(strings.Replace(lintTestCard, "expect_exit: 1}", "expect_exit: 1.0}", 1)), 0o644)
	tests := []struct {
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{[]string{"card", "lint", "--card", good}, 0, "card " + good + ": ok\n", ""},
		{[]string{"card", "lint", "--card", bad}, 2, "", "failpass: error: " + bad + ":3:61: fail.expect_exit: expected an integer, got the number 1.0\nhint: "},
		{[]string{"card", "lint", "--card", filepath.Join(dir, "none.yml")}, 2, "", "failpass: error: cannot read card"},
		{[]string{"card", "lint"}, 2, "", "failpass: usage error: --card is required"},
		{[]string{"card", "lint", "--card", good, "extra"}, 2, "", "failpass: usage error: unexpected argument \"extra\"\nhint: failpass card lint takes one --card FILE"},
		{[]string{"card", "canonical", "--card", bad}, 2, "", "failpass: error: " + bad + ":3:61"},
		{[]string{"card", "canonical", "--card", good}, 0, `{"base_ref":"main","budget":`, ""},
	}
	for _, tt := range tests {
		code, stdout, stderr := runMain(tt.args...)
		if code != tt.code || !strings.HasPrefix(stdout, tt.stdout) || !strings.Contains(stderr, tt.stderr) || (tt.stdout == "" && stdout != "" && code != 0) {
			t.Errorf("Main(%q) = %d, stdout %q, stderr %q; want %d, %q..., %q...", tt.args, code, stdout, stderr, tt.code, tt.stdout, tt.stderr)
		}
	}
}

func TestCardLintJSON(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yml")
	os.WriteFile(good, []byte(lintTestCard), 0o644)
	code, stdout, _ := runMain("card", "lint", "--card", good, "--json")
	var got lintJSON
	if err := json.Unmarshal([]byte(stdout), &got); err != nil || code != 0 {
		t.Fatalf("card lint --json = %d, %q (%v)", code, stdout, err)
	}
	if !got.Valid || got.ID != "X-1" || !strings.HasPrefix(got.CardDigest, "sha256:") || got.Budget == nil || got.Budget.MaxFiles != 3 || got.Warnings == nil {
		t.Errorf("card lint --json = %+v", got)
	}
	bad := filepath.Join(dir, "bad.yml")
	os.WriteFile(bad, []byte("id: x\nid: y\n"), 0o644)
	code, stdout, _ = runMain("card", "lint", "--card", bad, "--json")
	got = lintJSON{}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil || code != 2 {
		t.Fatalf("card lint --json (bad) = %d, %q (%v)", code, stdout, err)
	}
	if got.Valid || got.Error == nil || got.Error.Line != 2 || got.Error.Col != 1 || got.Error.Field != "id" || got.Error.Hint == "" {
		t.Errorf("card lint --json (bad) error = %+v", got.Error)
	}
}

// TestCardInitTemplateLints: every runner's template is a valid card
// that lints with exit 1 (placeholders) and no warning, and with every
// placeholder replaced lints clean.
func TestCardInitTemplateLints(t *testing.T) {
	for _, runner := range []string{"go", "cargo", "npm"} {
		t.Run(runner, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "card.yml")
			if code, _, stderr := runMain("card", "init", "--runner", runner, "--card", path, "--id", "ISSUE-9"); code != 0 {
				t.Fatalf("card init = %d: %s", code, stderr)
			}
			code, stdout, stderr := runMain("card", "lint", "--card", path)
			if code != 1 || strings.Contains(stderr, "warning") || !strings.Contains(stdout, "template placeholders left: fail.cmd[") {
				t.Errorf("card lint of the template = %d, %q, stderr %q; want 1 naming the placeholders, no warnings", code, stdout, stderr)
			}
			data, _ := os.ReadFile(path)
			os.WriteFile(path, []byte(strings.ReplaceAll(string(data), card.Placeholder, "x")), 0o644)
			if code, _, stderr := runMain("card", "lint", "--card", path); code != 0 || stderr != "" {
				t.Errorf("card lint of the filled template = %d, stderr %q; want 0 and no warnings", code, stderr)
			}
			if code, _, _ := runMain("card", "init", "--runner", runner, "--card", path); code != 2 {
				t.Errorf("card init over an existing file = %d, want 2", code)
			}
		})
	}
}
