package gitpatch

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/failpass/failpass/internal/gitx"
)

func TestMain(m *testing.M) {
	// Tests build their own repositories; nobody's git config may change
	// what git prints or how it commits.
	os.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
	os.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	os.Setenv("GIT_AUTHOR_NAME", "Test")
	os.Setenv("GIT_AUTHOR_EMAIL", "test@example.org")
	os.Setenv("GIT_COMMITTER_NAME", "Test")
	os.Setenv("GIT_COMMITTER_EMAIL", "test@example.org")
	os.Exit(m.Run())
}

// testRepo is a real repository in a temp folder.
type testRepo struct {
	t    *testing.T
	repo *gitx.Repo
	base string
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := gitx.Command(context.Background(), dir, nil, args...)
	if err != nil {
		t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return string(out)
}

// newRepo commits files (name -> content; a content starting with "->"
// is a symlink to the rest; mode 0755 when the name ends in "*") and
// returns the repository with base set to that commit.
func newRepo(t *testing.T, files map[string]string) *testRepo {
	t.Helper()
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "main")
	writeFiles(t, dir, files)
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "--allow-empty", "-m", "base")
	repo, err := gitx.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return &testRepo{t: t, repo: repo, base: strings.TrimSpace(git(t, dir, "rev-parse", "HEAD"))}
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		mode := os.FileMode(0o644)
		if strings.HasSuffix(name, "*") {
			name, mode = strings.TrimSuffix(name, "*"), 0o755
		}
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		os.Remove(p)
		if target, ok := strings.CutPrefix(content, "->"); ok {
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
	}
}

// change edits the working tree (files as in newRepo; "" deletes), then
// returns `git diff --binary -M` of everything (new files included)
// against the base, and leaves the working tree as it was at the base.
func (r *testRepo) change(files map[string]string, extra ...string) []byte {
	t := r.t
	t.Helper()
	dir := r.repo.Dir
	for name, content := range files {
		if content == "" {
			if err := os.RemoveAll(filepath.Join(dir, filepath.FromSlash(strings.TrimSuffix(name, "*")))); err != nil {
				t.Fatal(err)
			}
			delete(files, name)
		}
	}
	writeFiles(t, dir, files)
	git(t, dir, "add", "-A")
	args := append([]string{"diff", "--no-ext-diff", "--cached", "--binary", "-M"}, extra...)
	diff := git(t, dir, append(args, r.base)...)
	git(t, dir, "reset", "-q", "--hard", r.base)
	git(t, dir, "clean", "-qfdx")
	return []byte(diff)
}

// applied makes a detached worktree of the base, applies diff there the
// way the gate does (git apply, no --index), and returns its folder.
func (r *testRepo) applied(diff []byte) string {
	t := r.t
	t.Helper()
	wt := filepath.Join(t.TempDir(), "wt")
	git(t, r.repo.Dir, "worktree", "add", "-q", "--detach", wt, r.base)
	t.Cleanup(func() {
		gitx.Command(context.Background(), r.repo.Dir, nil, "worktree", "remove", "--force", wt)
	})
	if _, err := gitx.Command(context.Background(), wt, diff, "apply", "-"); err != nil {
		t.Fatalf("git apply: %v", err)
	}
	return wt
}

// clip shortens a diff for a failure message.
func clip(l string) string {
	if len(l) > 60 {
		return l[:60] + "..."
	}
	return l
}
