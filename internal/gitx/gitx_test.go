package gitx

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestWithoutDrivers(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []string
		want []string
	}{
		{"diff", []string{"diff", "HEAD"}, []string{"diff", "--no-ext-diff", "--no-textconv", "HEAD"}},
		{"global options first", []string{"--git-dir=/x", "--work-tree=/y", "show", "HEAD"},
			[]string{"--git-dir=/x", "--work-tree=/y", "show", "--no-ext-diff", "--no-textconv", "HEAD"}},
		{"plumbing untouched", []string{"apply", "--numstat"}, []string{"apply", "--numstat"}},
		{"empty", nil, nil},
	} {
		if got := withoutDrivers(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: withoutDrivers(%q) = %q, want %q", tc.name, tc.in, got, tc.want)
		}
	}
}

// TestPlantedDriversDoNotRun plants the programs a repository config can
// make git run on status, diff, log, show and checkout, and checks that
// failpass's git calls run none. Clean/smudge filters have no generic off
// switch in git 2.39; they are caught by the config snapshot the gate takes
// around every untrusted command (sandbox.SnapshotGit).
func TestPlantedDriversDoNotRun(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	evil := filepath.Join(dir, "evil.sh")
	os.WriteFile(evil, []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o755)
	repo := filepath.Join(dir, "repo")
	os.Mkdir(repo, 0o755)
	sh := func(args ...string) {
		gitIn(t, repo, args...)
	}
	sh("init", "-q")
	os.WriteFile(filepath.Join(repo, "a.txt"), []byte("a\n"), 0o644)
	os.WriteFile(filepath.Join(repo, ".gitattributes"), []byte("*.txt diff=evil\n"), 0o644)
	sh("add", "-A")
	sh("commit", "-qm", "base")
	for _, kv := range [][2]string{
		{"core.fsmonitor", evil}, {"diff.external", evil}, {"diff.evil.textconv", evil},
		{"diff.evil.command", evil},
		{"core.hooksPath", dir}, {"core.pager", evil},
	} {
		sh("config", kv[0], kv[1])
	}
	os.WriteFile(filepath.Join(dir, "post-checkout"), []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o755)
	os.WriteFile(filepath.Join(repo, "a.txt"), []byte("b\n"), 0o644)
	ctx := context.Background()
	for _, args := range [][]string{
		{"status", "--porcelain"},
		{"diff"},
		{"diff", "HEAD"},
		{"log", "-p", "-1"},
		{"show", "HEAD"},
		{"checkout", "-q", "HEAD", "--", "a.txt"},
	} {
		if _, err := Command(ctx, repo, nil, args...); err != nil {
			t.Fatalf("git %s: %v", strings.Join(args, " "), err)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("git %s ran a planted program", strings.Join(args, " "))
		}
	}
}

// An error names git's reason, not the progress it printed first.
func TestErrorReason(t *testing.T) {
	for _, tc := range []struct{ stderr, want string }{
		{"Preparing worktree (detached HEAD 7a18418)\nfatal: could not lock config file\n", "fatal: could not lock config file"},
		{"error: patch failed: a.txt:1\nerror: a.txt: patch does not apply\n", "error: patch failed: a.txt:1"},
		{"something odd\nand more\n", "something odd"},
		{"", ""},
	} {
		if got := (&Error{Stderr: tc.stderr}).Reason(); got != tc.want {
			t.Errorf("Reason(%q) = %q, want %q", tc.stderr, got, tc.want)
		}
	}
}

// TestRepoQueries reads the index, a commit's subject and a config key
// from a real repository, opened from a subfolder: paths are the
// repository's, an unset key is "" and no error, a missing commit is an
// *Error.
func TestRepoQueries(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "a b.txt"), []byte("a\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "sub", "c.py"), []byte("c\n"), 0o644)
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"}, {"add", "-A"},
		{"commit", "-q", "-m", "  fix: the subject  \n\nthe body"},
		{"config", "failpass.test", " v w "},
		{"config", "failpass.path", "~/signers"}, {"config", "failpass.rel", "rel/signers"},
		{"remote", "add", "up", "https://example.invalid/up.git"},
	} {
		gitIn(t, dir, args...)
	}
	ctx := context.Background()
	repo, err := Open(ctx, filepath.Join(dir, "sub"))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := repo.Tracked(ctx); err != nil || !reflect.DeepEqual(got, []string{"a b.txt", "sub/c.py"}) {
		t.Errorf("Tracked() = %q, %v; want [a b.txt sub/c.py]", got, err)
	}
	if got, err := repo.Subject(ctx, "HEAD"); err != nil || got != "fix: the subject" {
		t.Errorf("Subject(HEAD) = %q, %v; want %q", got, err, "fix: the subject")
	}
	var ge *Error
	if got, err := repo.Subject(ctx, "nope"); !errors.As(err, &ge) {
		t.Errorf("Subject(nope) = %q, %v; want an *Error", got, err)
	}
	for _, tc := range []struct{ key, want string }{{"failpass.test", "v w"}, {"failpass.unset", ""}} {
		if got, err := repo.Config(ctx, tc.key); err != nil || got != tc.want {
			t.Errorf("Config(%q) = %q, %v; want %q", tc.key, got, err, tc.want)
		}
	}
	home, _ := os.UserHomeDir()
	for _, tc := range []struct{ key, want string }{
		{"failpass.path", filepath.Join(home, "signers")}, // as git reads a path
		{"failpass.rel", filepath.Join(repo.Dir, "rel/signers")},
		{"failpass.unset", ""},
	} {
		if got, err := repo.ConfigPath(ctx, tc.key); err != nil || got != tc.want {
			t.Errorf("ConfigPath(%q) = %q, %v; want %q", tc.key, got, err, tc.want)
		}
	}
	if got, err := repo.Files(ctx, "HEAD"); err != nil || !reflect.DeepEqual(got, []string{"a b.txt", "sub/c.py"}) {
		t.Errorf("Files(HEAD) = %q, %v; want [a b.txt sub/c.py]", got, err)
	}
	head, err := repo.Commit(ctx, "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	tree, err := repo.Tree(ctx, "HEAD")
	if want := strings.TrimSpace(gitOut(t, dir, "rev-parse", head+"^{tree}")); err != nil || tree != want || tree == head {
		t.Errorf("Tree(HEAD) = %q, %v; want %q", tree, err, want)
	}
	if got, err := repo.RemoteURL(ctx, "up"); err != nil || got != "https://example.invalid/up.git" {
		t.Errorf("RemoteURL(up) = %q, %v", got, err)
	}
	if _, err := repo.RemoteURL(ctx, "nope"); !errors.As(err, &ge) {
		t.Errorf("RemoteURL(nope) = %v; want an *Error", err)
	}
	// UpdateRef with an old value moves the ref only from it; RemoteHead
	// reads a remote's ref (here the repository itself, as a path).
	if err := repo.UpdateRef(ctx, "test", "refs/heads/x", head); err != nil {
		t.Fatal(err)
	}
	if err := repo.UpdateRef(ctx, "test", "refs/heads/x", head, tree); err == nil {
		t.Errorf("UpdateRef(x, old %s) moved x, which pointed at %s", tree, head)
	}
	if got, err := repo.RemoteHead(ctx, repo.Dir, "refs/heads/x"); err != nil || got != head {
		t.Errorf("RemoteHead(x) = %q, %v; want %s", got, err, head)
	}
	if got, err := repo.RemoteHead(ctx, repo.Dir, "refs/heads/nope"); err == nil {
		t.Errorf("RemoteHead(nope) = %q; want an error", got)
	}
	if _, err := repo.Tree(ctx, "nope"); !errors.As(err, &ge) {
		t.Errorf("Tree(nope) = %v; want an *Error", err)
	}
}

// gitOut is git's output in dir, failing the test on error.
func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return string(out)
}

// gitIn runs git in dir as the test's committer, failing the test on error.
func gitIn(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@e", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@e")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// A repository another user owns is not "no repository": git refuses it
// for its owner, and the error says so and names the folder git wants
// listed in safe.directory (the top, also when failpass is given a
// subfolder).
func TestOpenDubiousOwnership(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to give the repository to another user")
	}
	dir := t.TempDir()
	run := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run("init", "-q")
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{dir, filepath.Join(dir, ".git"), sub} {
		if err := os.Chown(p, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	}
	_, err := Open(context.Background(), sub)
	var nr *NotRepoError
	if !errors.As(err, &nr) || !nr.Dubious {
		t.Fatalf("Open of a repository another user owns: %v, want a NotRepoError with Dubious", err)
	}
	if nr.Top != dir {
		t.Errorf("Top = %q, want the repository's top %q", nr.Top, dir)
	}
	if !strings.Contains(err.Error(), "another user owns") {
		t.Errorf("error %q does not say another user owns the repository", err)
	}
}
