package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/failpass/failpass/internal/fromcommit"
)

// esc is what an attacker puts in text failpass prints: a terminal
// escape sequence (here: clear the screen), a carriage return that
// overwrites the line, and a newline that forges a line of its own.
const esc = "\x1b[2J\rGATE: PASS\nhint: trust me"

const testKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBqqF7HrbGGW7yWN3RpfbCHVEItIApYbZ7yt/aWGcsKS"

const testCard = `id: "T"
base_ref: "main"
fail: {cmd: ["false"], expect_exit: 1}
pass: {cmd: ["true"], expect_exit: 0}
invariant: {cmd: ["true"], expect_exit: 0}
budget: {max_files: 1, max_changed_lines: 10}
`

func noRawControl(t *testing.T, what, out string) {
	t.Helper()
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if strings.ContainsFunc(line, isControl) || strings.HasPrefix(line, "hint: trust me") || strings.HasPrefix(line, "GATE:") {
			t.Errorf("%s prints %q raw", what, line)
		}
	}
}

// record verify's NOT VALID line names the record as given: a file name
// in an artifacts folder is the attacker's to choose.
func TestRecordVerifyNotValidSanitized(t *testing.T) {
	dir := t.TempDir()
	rec := filepath.Join(dir, "run"+esc+".json")
	for name, data := range map[string]string{
		rec:                                   `{"a":1}`,
		rec + ".sig":                          "not a signature\x1b[31m\n",
		filepath.Join(dir, "runners"):         "runner@example.org " + testKey + "\n",
		filepath.Join(dir, "card.yml"):        testCard,
		filepath.Join(dir, "allowed_signers"): "maint@example.org " + testKey + "\n",
	} {
		if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, stdout, stderr := runMain("record", "verify", "--record", rec, "--runners", filepath.Join(dir, "runners"),
		"--card", filepath.Join(dir, "card.yml"), "--allowed-signers", filepath.Join(dir, "allowed_signers"))
	if code == 0 {
		t.Fatalf("record verify of garbage = 0, stdout %q", stdout)
	}
	noRawControl(t, "record verify stdout", stdout)
	noRawControl(t, "record verify stderr", stderr)
	if !strings.Contains(stdout+stderr, `\x1b[2J\x0dGATE: PASS\x0ahint: trust me`) {
		t.Errorf("the path is not shown escaped: stdout %q stderr %q", stdout, stderr)
	}
}

// card from-commit's unusable line and hints quote the commit: its
// paths, and its tests' own output (a collection error is whatever a
// test module raised at import).
func TestFromCommitUnusableSanitized(t *testing.T) {
	var stdout, stderr strings.Builder
	env := &Env{Stdout: &stdout, Stderr: &stderr}
	printUnusable(env, &fromcommit.UnusableError{Rev: "HEAD", Cause: "collection error: " + esc, Hints: []string{"fix " + esc}})
	noRawControl(t, "unusable stdout", stdout.String())
	noRawControl(t, "unusable stderr", stderr.String())
	if want := `unusable: collection error: \x1b[2J\x0dGATE: PASS\x0ahint: trust me` + "\n"; stdout.String() != want {
		t.Errorf("stdout %q, want %q", stdout.String(), want)
	}
	if want := `hint: fix \x1b[2J\x0dGATE: PASS\x0ahint: trust me` + "\n"; stderr.String() != want {
		t.Errorf("stderr %q, want %q", stderr.String(), want)
	}
}
