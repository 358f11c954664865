// Package gittest is what tests of packages that drive real git
// repositories share: a git isolated from the machine's configuration,
// and a committer identity. Tests only.
package gittest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/failpass/failpass/internal/gitx"
)

// Main runs m with HOME in a fresh temporary folder and the system git
// configuration ignored, so no user's or machine's git settings reach a
// test, and exits with m's code. Call it from TestMain.
func Main(m *testing.M, name string) {
	home, _ := os.MkdirTemp("", name+"-test-home")
	os.Setenv("HOME", home)
	os.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	code := m.Run()
	os.RemoveAll(home)
	os.Exit(code)
}

// Git runs git in dir as the test committer and returns its output; a
// failure fails t.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	full := append([]string{"-c", "user.name=T", "-c", "user.email=t@example.org"}, args...)
	out, err := gitx.Command(context.Background(), dir, nil, full...)
	if err != nil {
		t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return string(out)
}

// Write writes content to name under dir, making its folders.
func Write(t testing.TB, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Diff writes files in the checkout dir, returns their change as git diff
// --cached prints it, and restores the checkout.
func Diff(t testing.TB, dir string, files map[string]string) []byte {
	t.Helper()
	for name, content := range files {
		Write(t, dir, name, content)
	}
	Git(t, dir, "add", "-A")
	d := Git(t, dir, "diff", "--cached")
	Git(t, dir, "reset", "-q", "--hard")
	return []byte(d)
}
