package worktree

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/failpass/failpass/internal/gitx"
)

// Restore puts back, without git, a worktree whose runs only added
// files, and says false (leaving the reset to git) when anything the
// snapshot recorded changed: a tracked file's content, mode or
// existence, its kind, the .git file, or the git directory.
func TestRestore(t *testing.T) {
	ctx := context.Background()
	repo, base := newRepo(t)
	gitDir := func(w *Worktree) string { return w.GitDir() }
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, w *Worktree)
		same bool
	}{
		{"nothing", func(*testing.T, *Worktree) {}, true},
		{"extras", func(t *testing.T, w *Worktree) {
			write(t, w.Dir, "new.txt", "untracked\n")
			write(t, w.Dir, "junk.log", "ignored\n")
			os.MkdirAll(filepath.Join(w.Dir, "cache", "deep"), 0o755)
			write(t, filepath.Join(w.Dir, "cache", "deep"), "x", "x")
			git(t, filepath.Join(w.Dir, "cache"), "init", "-q")
			os.Symlink("/etc", filepath.Join(w.Dir, "out"))
		}, true},
		{"rewritten at the same size, mtime put back", func(t *testing.T, w *Worktree) {
			p := filepath.Join(w.Dir, "a.txt")
			fi, _ := os.Stat(p)
			write(t, w.Dir, "a.txt", "BASE\n")
			os.Chtimes(p, fi.ModTime(), fi.ModTime())
		}, false},
		{"chmod", func(t *testing.T, w *Worktree) { os.Chmod(filepath.Join(w.Dir, "a.txt"), 0o755) }, false},
		{"deleted", func(t *testing.T, w *Worktree) { os.Remove(filepath.Join(w.Dir, "a.txt")) }, false},
		{"file made a folder", func(t *testing.T, w *Worktree) {
			os.Remove(filepath.Join(w.Dir, "a.txt"))
			os.Mkdir(filepath.Join(w.Dir, "a.txt"), 0o755)
		}, false},
		{".git file pointed elsewhere", func(t *testing.T, w *Worktree) {
			write(t, w.Dir, ".git", "gitdir: "+repo.CommonDir+"\n")
		}, false},
		{"HEAD rewritten", func(t *testing.T, w *Worktree) {
			b, _ := os.ReadFile(filepath.Join(gitDir(w), "HEAD"))
			write(t, gitDir(w), "HEAD", string(b))
		}, false},
		{"config planted in the git directory", func(t *testing.T, w *Worktree) {
			write(t, gitDir(w), "config.worktree", "[core]\n\tsparseCheckout = true\n")
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := checkout(t, repo, base)
			tc.run(t, w)
			same, err := w.Restore(w.checkout)
			if err != nil {
				t.Fatal(err)
			}
			if same != tc.same {
				t.Fatalf("Restore = %t, want %t", same, tc.same)
			}
			for _, extra := range []string{"new.txt", "junk.log", "cache", "out"} {
				if _, err := os.Lstat(filepath.Join(w.Dir, extra)); err == nil {
					t.Errorf("%s is still there after Restore", extra)
				}
			}
			if _, err := os.Stat("/etc/passwd"); err != nil {
				t.Errorf("Restore followed a planted symlink out of the worktree: %v", err)
			}
			// Whatever Restore said, Reset ends at an exact checkout.
			if err := w.Reset(ctx, base); err != nil {
				t.Fatal(err)
			}
			if st := git(t, w.Dir, "--git-dir="+w.GitDir(), "--work-tree="+w.Dir, "status", "--porcelain", "--ignored", "--untracked-files=all"); st != "" {
				t.Errorf("after Reset: git status %q", st)
			}
			if b, _ := os.ReadFile(filepath.Join(w.Dir, "a.txt")); string(b) != "base\n" {
				t.Errorf("after Reset a.txt = %q", b)
			}
		})
	}
}

// A file changed within the clock tick its recorded write fell in keeps
// its stat; the snapshot holds the content of such recent files, and
// Restore compares it. The tick is simulated: the recorded stat is made
// the file's new one, as if the change had left it as it was.
func TestRestoreComparesRecentContent(t *testing.T) {
	repo, base := newRepo(t)
	narrow := widenRacyWindow(t) // a loaded machine takes more than a tick to get here
	w := checkout(t, repo, base)
	s, err := w.Snapshot() // right after the checkout: every file is recent
	if err != nil {
		t.Fatal(err)
	}
	e := s.paths["a.txt"]
	if e.digest == nil {
		t.Fatal("a file written just before the snapshot has no recorded content")
	}
	write(t, w.Dir, "a.txt", "BASE\n")
	fi, err := os.Lstat(filepath.Join(w.Dir, "a.txt"))
	if err != nil {
		t.Fatal(err)
	}
	e.st, _ = stampOf(fi)
	s.paths["a.txt"] = e
	if same, err := w.Restore(s); err != nil || same {
		t.Fatalf("Restore = %t, %v; want false: the content changed", same, err)
	}
	// Older files are judged by their stat alone.
	narrow()
	time.Sleep(racyWindow + 10*time.Millisecond)
	s, err = w.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if s.paths["a.txt"].digest != nil {
		t.Error("a file older than the racy window had its content recorded")
	}
	if same, err := w.Restore(s); err != nil || !same {
		t.Fatalf("Restore of an untouched tree = %t, %v; want true", same, err)
	}
	// There, a rewrite at the same size with the mtime put back shows
	// in the change time.
	p := filepath.Join(w.Dir, "a.txt")
	fi, err = os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	write(t, w.Dir, "a.txt", "BASE\n")
	os.Chtimes(p, fi.ModTime(), fi.ModTime())
	if same, err := w.Restore(s); err != nil || same {
		t.Fatalf("Restore after a same-size rewrite = %t, %v; want false", same, err)
	}
}

// Changed lists every path where the tree differs from the checkout Add
// made, whatever made the change, and nothing else: the gate's reading
// of what a diff changed (diff.actual) reads these paths alone.
func TestChanged(t *testing.T) {
	ctx := context.Background()
	repo, base := newRepo(t)
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, w *Worktree)
		want []string
	}{
		{"nothing", func(*testing.T, *Worktree) {}, nil},
		{"untracked and ignored files", func(t *testing.T, w *Worktree) {
			os.MkdirAll(filepath.Join(w.Dir, "d", "e"), 0o755)
			write(t, filepath.Join(w.Dir, "d", "e"), "new.txt", "x\n")
			write(t, w.Dir, "junk.log", "ignored\n")
			os.Symlink("/etc", filepath.Join(w.Dir, "out"))
		}, []string{"d/e/new.txt", "junk.log", "out"}},
		{"rewritten at the same size, mtime put back", func(t *testing.T, w *Worktree) {
			p := filepath.Join(w.Dir, "a.txt")
			fi, _ := os.Stat(p)
			write(t, w.Dir, "a.txt", "BASE\n")
			os.Chtimes(p, fi.ModTime(), fi.ModTime())
		}, []string{"a.txt"}},
		{"chmod", func(t *testing.T, w *Worktree) { os.Chmod(filepath.Join(w.Dir, "a.txt"), 0o755) }, []string{"a.txt"}},
		{"deleted", func(t *testing.T, w *Worktree) { os.Remove(filepath.Join(w.Dir, ".gitignore")) }, []string{".gitignore"}},
		{"file made a folder", func(t *testing.T, w *Worktree) {
			os.Remove(filepath.Join(w.Dir, "a.txt"))
			os.Mkdir(filepath.Join(w.Dir, "a.txt"), 0o755)
			write(t, filepath.Join(w.Dir, "a.txt"), "in", "x\n")
		}, []string{"a.txt", "a.txt/in"}},
		{"reset by git in between", func(t *testing.T, w *Worktree) {
			write(t, w.Dir, "a.txt", "changed\n")
			if err := w.Reset(ctx, base); err != nil {
				t.Fatal(err)
			}
		}, []string{"a.txt"}}, // rewritten by git: listed, and read again
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := checkout(t, repo, base)
			tc.run(t, w)
			now, err := w.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			got, ok, err := w.Changed(base, now)
			if err != nil || !ok {
				t.Fatalf("Changed = %v, %t, %v; want the paths", got, ok, err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("Changed = %q, want %q", got, tc.want)
			}
		})
	}
}

// A change in the clock tick the checkout's snapshot recorded leaves the
// stat as it was: Changed compares content there, and knows nothing of
// a worktree reset to another commit.
func TestChangedComparesRecentContent(t *testing.T) {
	ctx := context.Background()
	repo, base := newRepo(t)
	widenRacyWindow(t)
	w := checkout(t, repo, base)
	if w.checkout.paths["a.txt"].digest == nil {
		t.Fatal("a file the checkout just wrote has no recorded content")
	}
	write(t, w.Dir, "a.txt", "BASE\n")
	now, err := w.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	// The same-tick write: the stat the checkout recorded, new content.
	e := now.paths["a.txt"]
	e.st, e.digest = w.checkout.paths["a.txt"].st, nil
	now.paths["a.txt"] = e
	if got, ok, err := w.Changed(base, now); err != nil || !ok || !slices.Equal(got, []string{"a.txt"}) {
		t.Errorf("Changed = %q, %t, %v; want a.txt: its content differs", got, ok, err)
	}
	head := strings.TrimSpace(git(t, repo.Dir, "rev-parse", "HEAD"))
	if err := w.Reset(ctx, head); err != nil {
		t.Fatal(err)
	}
	if now, err = w.Snapshot(); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := w.Changed(head, now); err != nil || ok {
		t.Errorf("Changed after a reset to another commit = %q, %t, %v; want not known", got, ok, err)
	}
}

// A folder replaced by a symlink (or a file) is listed as that path
// alone: what the folder held goes with it when git adds the path, and
// git refuses a path beyond a symlink.
func TestChangedFolderMadeSymlink(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "main")
	os.MkdirAll(filepath.Join(dir, "d", "e"), 0o755)
	write(t, filepath.Join(dir, "d"), "x", "x\n")
	write(t, filepath.Join(dir, "d", "e"), "y", "y\n")
	write(t, dir, "keep.txt", "k\n")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "base")
	base := strings.TrimSpace(git(t, dir, "rev-parse", "HEAD"))
	repo, err := gitx.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	w := checkout(t, repo, base)
	if err := os.RemoveAll(filepath.Join(w.Dir, "d")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("keep.txt", filepath.Join(w.Dir, "d")); err != nil {
		t.Fatal(err)
	}
	now, err := w.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	got, ok, err := w.Changed(base, now)
	if err != nil || !ok || !slices.Equal(got, []string{"d"}) {
		t.Errorf("Changed = %q, %t, %v; want [d]", got, ok, err)
	}
}

// widenRacyWindow makes every file count as recent until the returned
// function (or the test's end) puts the window back: a test that needs
// a file's content recorded must not depend on how fast the machine
// gets from the write to the snapshot.
func widenRacyWindow(t *testing.T) (narrow func()) {
	old := racyWindow
	racyWindow = time.Hour
	narrow = func() { racyWindow = old }
	t.Cleanup(narrow)
	return narrow
}

// Altered names the first recorded path that is no longer as recorded;
// files added since do not count.
// checkout is a worktree of base for t, removed when t ends.
func checkout(t *testing.T, repo *gitx.Repo, base string) *Worktree {
	t.Helper()
	w, err := Add(context.Background(), repo, base)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Remove(context.Background()) })
	return w
}

// hidden is what Altered reports of a module added in a folder made
// unreadable: the folder itself, which hides what it holds, or, for root,
// whom no mode keeps out, the module.
func hidden() Change {
	if os.Geteuid() == 0 {
		return Change{Path: "hid/x.py", Added: true}
	}
	return Change{Path: "hid", Added: true}
}

func TestAltered(t *testing.T) {
	repo, base := newRepo(t)
	// Added Python files count, and folders are entered, but for skip/.
	notice := func(p string, d fs.DirEntry) bool {
		if d.IsDir() {
			return p != "skip"
		}
		return strings.HasSuffix(p, ".py")
	}
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, w *Worktree)
		want Change // zero: nothing counts
	}{
		{"nothing", func(*testing.T, *Worktree) {}, Change{}},
		{"files added", func(t *testing.T, w *Worktree) {
			write(t, w.Dir, "new.txt", "x\n")
			write(t, w.Dir, "junk.log", "ignored\n")
			write(t, w.Dir, "skip/x.py", "ignored\n")
		}, Change{}},
		{"module added in a new folder", func(t *testing.T, w *Worktree) {
			write(t, w.Dir, "new.txt", "x\n")
			write(t, w.Dir, "pkg/b/__init__.py", "fixed = True\n")
		}, Change{Path: "pkg/b/__init__.py", Added: true}},
		{"added, then removed", func(t *testing.T, w *Worktree) {
			write(t, w.Dir, "b.py", "x\n")
			os.Remove(filepath.Join(w.Dir, "b.py"))
		}, Change{}},
		{"rewritten at the same size, mtime put back", func(t *testing.T, w *Worktree) {
			p := filepath.Join(w.Dir, "a.txt")
			fi, _ := os.Stat(p)
			write(t, w.Dir, "a.txt", "BASE\n")
			os.Chtimes(p, fi.ModTime(), fi.ModTime())
		}, Change{Path: "a.txt"}},
		{"chmod", func(t *testing.T, w *Worktree) { os.Chmod(filepath.Join(w.Dir, ".gitignore"), 0o755) }, Change{Path: ".gitignore"}},
		{"deleted", func(t *testing.T, w *Worktree) { os.Remove(filepath.Join(w.Dir, "a.txt")) }, Change{Path: "a.txt"}},
		{"module added in a folder made unreadable", func(t *testing.T, w *Worktree) {
			write(t, w.Dir, "hid/x.py", "x\n")
			os.Chmod(filepath.Join(w.Dir, "hid"), 0)
			t.Cleanup(func() { os.Chmod(filepath.Join(w.Dir, "hid"), 0o755) })
		}, hidden()},
		{"file made a folder", func(t *testing.T, w *Worktree) {
			os.Remove(filepath.Join(w.Dir, "a.txt"))
			write(t, w.Dir, "a.txt/x", "x\n")
		}, Change{Path: "a.txt"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := checkout(t, repo, base)
			tc.run(t, w)
			got, ok, err := w.Altered(w.checkout, notice)
			if err != nil || got != tc.want || ok != (tc.want != Change{}) {
				t.Errorf("Altered = %+v, %v, %v; want %+v", got, ok, err, tc.want)
			}
		})
	}
}
