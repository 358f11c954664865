package cli

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/failpass/failpass/internal/gittest"
	"github.com/failpass/failpass/internal/gitx"
	"github.com/failpass/failpass/internal/worktree"
)

// gcChildEnv makes TestGCAsChild run gc on the repository it names.
const gcChildEnv = "FAILPASS_TEST_GC_REPO"

// TestGCAsChild is TestGCSkipsAnotherUsers's other user: the test binary
// run again as that user, printing gc's exit code and streams.
func TestGCAsChild(t *testing.T) {
	repo := os.Getenv(gcChildEnv)
	if repo == "" {
		t.Skip("run by TestGCSkipsAnotherUsers")
	}
	code, stdout, stderr := runMain("gc", "--json", "--repo", repo)
	json.NewEncoder(os.Stdout).Encode(map[string]any{"code": code, "stdout": stdout, "stderr": stderr})
}

// A gc without root, in a repository where a root gate was killed
// mid-run, leaves root's worktree, caches and logs, says so, and exits
// 0: they are not its to remove (CI runs root's suite, then a user's, on
// one machine).
func TestGCSkipsAnotherUsers(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to leave files of another user")
	}
	if testing.Short() {
		t.Skip("copies the test binary")
	}
	// A folder the other user can reach: t.TempDir's parents are root's 0700.
	top, err := os.MkdirTemp("", "failpass-gc-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(top) })
	if err := os.Chmod(top, 0o755); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(top, "repo")
	gittest.Write(t, dir, "a.txt", "a\n")
	gittest.Git(t, dir, "init", "-q")
	gittest.Git(t, dir, "add", "a.txt")
	gittest.Git(t, dir, "commit", "-q", "-m", "init")
	head := strings.TrimSpace(gittest.Git(t, dir, "rev-parse", "HEAD"))
	ctx := context.Background()
	repo, err := gitx.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	// What a root gate killed mid-run leaves: its worktree, a build
	// cache only root may read, a log folder.
	wt, err := worktree.Add(ctx, repo, head)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { wt.Remove(ctx) })
	for p, mode := range map[string]os.FileMode{repo.StateDir("cache", "build-v2", "x"): 0o700, repo.StateDir("logs", "gate-1"): 0o755} {
		if err := os.MkdirAll(p, mode); err != nil {
			t.Fatal(err)
		}
		os.Chmod(filepath.Dir(p), mode)
	}
	before := listTree(t, repo.StateDir())

	// The other user: this test binary, copied where they can run it.
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	child := filepath.Join(top, "cli.test")
	copyFile(t, exe, child)
	home := filepath.Join(top, "home")
	os.MkdirAll(home, 0o755)
	// git refuses a repository another user owns unless told to trust it.
	os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[safe]\n\tdirectory = *\n"), 0o644)
	os.Chown(home, 65534, 65534)
	cmd := exec.Command(child, "-test.run=^TestGCAsChild$")
	cmd.Env = []string{gcChildEnv + "=" + dir, "HOME=" + home, "PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("gc as another user: %v\n%s", err, out)
	}
	var got struct {
		Code           int
		Stdout, Stderr string
	}
	if err := json.NewDecoder(strings.NewReader(string(out))).Decode(&got); err != nil {
		t.Fatalf("child's output %q: %v", out, err)
	}
	if got.Code != 0 {
		t.Fatalf("gc without root exited %d, want 0\nstdout: %s\nstderr: %s", got.Code, got.Stdout, got.Stderr)
	}
	if !strings.Contains(got.Stderr, "of another user's runs, which only that user (or root) can remove") {
		t.Errorf("gc did not say what it skipped: stderr %q", got.Stderr)
	}
	var js struct {
		Removed, Skipped []string
	}
	if err := json.Unmarshal([]byte(got.Stdout), &js); err != nil {
		t.Fatalf("gc --json: %v: %q", err, got.Stdout)
	}
	if len(js.Removed) != 0 || len(js.Skipped) == 0 {
		t.Errorf("gc --json removed %q and skipped %q; want nothing removed, root's leftovers skipped", js.Removed, js.Skipped)
	}
	if after := listTree(t, repo.StateDir()); !slices.Equal(before, after) {
		t.Errorf("gc without root changed root's failpass folder:\nbefore %q\nafter  %q", before, after)
	}
}

func listTree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		out = append(out, p)
		return nil
	})
	return out
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}
