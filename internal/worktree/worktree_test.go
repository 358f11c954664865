package worktree

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/failpass/failpass/internal/gittest"
	"github.com/failpass/failpass/internal/gitx"
	"github.com/failpass/failpass/internal/run"
)

const childEnv = "FAILPASS_WORKTREE_TEST_CHILD"

// TestMain isolates git from the machine's config, and lets the test
// binary double as a failpass run that gets killed with -9.
func TestMain(m *testing.M) {
	if dir := os.Getenv(childEnv); dir != "" {
		killedChild(dir)
		return
	}
	if dir := os.Getenv(signalEnv); dir != "" {
		os.Exit(signaledChild(dir))
	}
	gittest.Main(m, "worktree")
}

// killedChild is the child half of TestGCAfterKill: it makes a worktree,
// starts a command in it whose grandchild outlives it, says where, and
// waits to be killed.
func killedChild(repoDir string) {
	ctx := context.Background()
	repo, err := gitx.Open(ctx, repoDir)
	if err != nil {
		fmt.Println("error", err)
		os.Exit(3)
	}
	w, err := Add(ctx, repo, "HEAD")
	if err != nil {
		fmt.Println("error", err)
		os.Exit(3)
	}
	// The command says it has started its grandchild (the background
	// sleep, whose pid $! is known once it was forked) by renaming a
	// file into place; "ready" waits for exactly that.
	go run.Run(ctx, run.Spec{Argv: []string{"sh", "-c", "sleep 300 & echo $! > .started.tmp && mv .started.tmp started; sleep 300"}, Root: w.Dir})
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(w.Dir, "started")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			fmt.Println("error: the command never started")
			os.Exit(3)
		}
		time.Sleep(5 * time.Millisecond)
	}
	fmt.Println("ready", w.Dir)
	select {}
}

const signalEnv = "FAILPASS_WORKTREE_TEST_SIGNALED"

// signaledChild is the child half of TestRemoveOnSignal, shaped like a
// CLI command: a context canceled by SIGINT or SIGTERM, a long command in
// a worktree, and a deferred Remove.
func signaledChild(repoDir string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	repo, err := gitx.Open(ctx, repoDir)
	if err != nil {
		fmt.Println("error", err)
		return 3
	}
	w, err := Add(ctx, repo, "HEAD")
	if err != nil {
		fmt.Println("error", err)
		return 3
	}
	defer w.Remove(ctx)
	fmt.Println("ready", w.Dir)
	res, err := run.Run(ctx, run.Spec{Argv: []string{"sh", "-c", "sleep 300 & setsid sleep 300 & sleep 300"}, Root: w.Dir})
	if err != nil || !res.Canceled {
		fmt.Fprintln(os.Stderr, "run:", res, err)
		return 4
	}
	return 0
}

// The test repository's git and files, as every package drives them.
var (
	git   = gittest.Git
	write = gittest.Write
)

// newRepo makes a repository with two commits (base, then head) and a
// checkout that has every kind of local state failpass must not touch.
func newRepo(t *testing.T) (*gitx.Repo, string) {
	t.Helper()
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "main")
	write(t, dir, "a.txt", "base\n")
	write(t, dir, ".gitignore", "*.log\n")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "base")
	base := strings.TrimSpace(git(t, dir, "rev-parse", "HEAD"))
	write(t, dir, "a.txt", "head\n")
	write(t, dir, "b.txt", "b\n")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "head")
	write(t, dir, "a.txt", "stashed\n")
	git(t, dir, "stash", "-q")
	write(t, dir, "b.txt", "staged\n")
	git(t, dir, "add", "b.txt")
	write(t, dir, "a.txt", "modified\n")
	write(t, dir, "new.txt", "untracked\n")
	write(t, dir, "x.log", "ignored\n")
	repo, err := gitx.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return repo, base
}

// state is everything of the user's checkout failpass must leave as it was.
func state(t *testing.T, repo *gitx.Repo) string {
	t.Helper()
	var b strings.Builder
	for _, args := range [][]string{
		{"rev-parse", "HEAD"},
		{"symbolic-ref", "-q", "HEAD"},
		{"status", "--porcelain=v1", "--untracked-files=all", "--ignored"},
		{"ls-files", "-s"},
		{"for-each-ref", "--format=%(refname) %(objectname)"},
		{"stash", "list"},
		{"worktree", "list", "--porcelain"},
		{"diff", "--no-ext-diff"},
	} {
		b.WriteString(strings.Join(args, " ") + "\n" + git(t, repo.Dir, args...))
	}
	for _, f := range []string{"a.txt", "b.txt", "new.txt", "x.log"} {
		c, _ := os.ReadFile(filepath.Join(repo.Dir, f))
		fmt.Fprintf(&b, "%s: %q\n", f, c)
	}
	return b.String()
}

// clean fails the test when anything of failpass's worktrees is left.
func clean(t *testing.T, repo *gitx.Repo) {
	t.Helper()
	if n := strings.Count(git(t, repo.Dir, "worktree", "list", "--porcelain"), "worktree "); n != 1 {
		t.Errorf("git worktree list shows %d worktrees, want 1", n)
	}
	if e, _ := os.ReadDir(repo.StateDir("worktrees")); len(e) != 0 {
		t.Errorf("failpass/worktrees holds %d entries, want none", len(e))
	}
	if e, _ := os.ReadDir(filepath.Join(repo.CommonDir, "worktrees")); len(e) != 0 {
		t.Errorf("git's worktrees folder holds %d entries, want none", len(e))
	}
	if trees := treesOf(repo); trees != "" {
		if _, err := os.Stat(trees); err == nil {
			t.Errorf("the repository's folder of trees %s is left", trees)
		}
	}
}

func TestAddRemove(t *testing.T) {
	ctx := context.Background()
	repo, base := newRepo(t)
	before := state(t, repo)
	w, err := Add(ctx, repo, base)
	if err != nil {
		t.Fatal(err)
	}
	// The tree lives in the user's cache folder, outside the repository:
	// a runner looking upward from it never reaches the user's checkout.
	cache, _ := os.UserCacheDir()
	if want := filepath.Join(cache, "failpass", "trees", repoKey(repo), w.ID); w.Dir != want {
		t.Errorf("Add().Dir = %q, want %q", w.Dir, want)
	}
	if rel, err := filepath.Rel(repo.Dir, w.Dir); err == nil && !strings.HasPrefix(rel, "..") {
		t.Errorf("Add().Dir = %q lies in the repository %s", w.Dir, repo.Dir)
	}
	if o, err := readOwner(ownerPath(repo, w.ID)); err != nil || o.Tree != w.Dir {
		t.Errorf("owner file records tree %q (%v), want %q", o.Tree, err, w.Dir)
	}
	if got := strings.TrimSpace(git(t, w.Dir, "rev-parse", "HEAD")); got != base {
		t.Errorf("worktree HEAD = %s, want base %s", got, base)
	}
	if b, _ := os.ReadFile(filepath.Join(w.Dir, "a.txt")); string(b) != "base\n" {
		t.Errorf("worktree a.txt = %q, want the base's", b)
	}
	if _, err := os.Stat(filepath.Join(w.Dir, "b.txt")); err == nil {
		t.Errorf("worktree has b.txt, which the base does not")
	}
	if out := git(t, w.Dir, "status", "--porcelain", "--ignored", "--untracked-files=all"); out != "" {
		t.Errorf("fresh worktree status = %q, want clean", out)
	}
	if got := strings.TrimSpace(git(t, w.Dir, "rev-parse", "--path-format=absolute", "--git-common-dir")); got != repo.CommonDir {
		t.Errorf("worktree's common dir = %q, want %q", got, repo.CommonDir)
	}
	// The user never sees failpass's worktrees in their own list.
	if n := strings.Count(git(t, repo.Dir, "worktree", "list", "--porcelain"), "worktree "); n != 1 {
		t.Errorf("with a failpass worktree, git worktree list shows %d worktrees, want 1", n)
	}
	o, err := readOwner(ownerPath(repo, w.ID))
	if err != nil || o.PID != os.Getpid() || o.Start == 0 || o.Commit != base || !o.alive() {
		t.Errorf("owner = %+v, %v; want this live process", o, err)
	}
	ctx2, cancel := context.WithCancel(ctx)
	cancel() // removal must work after SIGINT canceled the CLI's context
	if err := w.Remove(ctx2); err != nil {
		t.Fatalf("Remove(canceled ctx) = %v", err)
	}
	clean(t, repo)
	if after := state(t, repo); after != before {
		t.Errorf("user checkout changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

func TestAddBadCommit(t *testing.T) {
	repo, _ := newRepo(t)
	for _, c := range []string{"no-such-ref", "--output=/tmp/x", "HEAD~99", strings.Repeat("f", 40)} {
		if w, err := Add(context.Background(), repo, c); err == nil || w != nil {
			t.Errorf("Add(%q) = %v, %v; want an error", c, w, err)
		}
	}
	clean(t, repo)
}

// A command in the worktree is hostile: it rewrites the .git file to
// point at the user's repository, leaves unreadable folders and a nested
// repository. Reset and Remove still touch nothing of the user's.
func TestHostileWorktree(t *testing.T) {
	ctx := context.Background()
	repo, base := newRepo(t)
	before := state(t, repo)
	w, err := Add(ctx, repo, base)
	if err != nil {
		t.Fatal(err)
	}
	withWorktree := state(t, repo)
	write(t, w.Dir, "a.txt", "changed by the command\n")
	write(t, w.Dir, "junk.log", "ignored junk\n")
	os.MkdirAll(filepath.Join(w.Dir, "nested", "deep"), 0o755)
	git(t, filepath.Join(w.Dir, "nested"), "init", "-q")
	os.Chmod(filepath.Join(w.Dir, "nested", "deep"), 0)
	os.Chmod(filepath.Join(w.Dir, "nested"), 0o500)
	os.Chmod(filepath.Join(w.Dir, "nested"), 0o755)
	os.Chmod(filepath.Join(w.Dir, "nested", "deep"), 0o755)
	write(t, w.Dir, ".git", "gitdir: "+repo.CommonDir+"\n")

	if err := w.Reset(ctx, base); err != nil {
		t.Fatalf("Reset = %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(w.Dir, "a.txt")); string(b) != "base\n" {
		t.Errorf("after Reset a.txt = %q, want the base's", b)
	}
	if got := strings.TrimSpace(git(t, w.Dir, "rev-parse", "--absolute-git-dir")); got != w.GitDir() {
		t.Errorf("after Reset plain git in the worktree uses %s, want %s", got, w.GitDir())
	}
	if out, err := w.GitInput(ctx, []byte("x\n"), "hash-object", "--stdin"); err != nil || strings.TrimSpace(string(out)) != "587be6b4c3f93f93c489c0111bba5596147a26cb" {
		t.Errorf("GitInput(hash-object) = %q, %v", out, err)
	}
	for _, f := range []string{"junk.log", "nested"} {
		if _, err := os.Stat(filepath.Join(w.Dir, f)); err == nil {
			t.Errorf("after Reset %s is still there", f)
		}
	}
	if after := state(t, repo); after != withWorktree {
		t.Fatalf("Reset changed the user checkout:\nbefore:\n%s\nafter:\n%s", withWorktree, after)
	}

	os.MkdirAll(filepath.Join(w.Dir, "locked", "in"), 0o755)
	write(t, filepath.Join(w.Dir, "locked"), "f", "x")
	os.Chmod(filepath.Join(w.Dir, "locked"), 0)
	write(t, w.Dir, ".git", "gitdir: "+repo.CommonDir+"\n")
	if err := w.Remove(ctx); err != nil {
		t.Fatalf("Remove = %v", err)
	}
	clean(t, repo)
	if after := state(t, repo); after != before {
		t.Errorf("Remove changed the user checkout:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

func TestGCLiveAndDead(t *testing.T) {
	ctx := context.Background()
	repo, base := newRepo(t)
	live, err := Add(ctx, repo, base)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Remove(ctx)
	tests := []struct {
		name   string
		tamper func(o *owner)
	}{
		{"pid reused by another process", func(o *owner) { o.Start++ }},
		{"other boot", func(o *owner) { o.Boot = "00000000-0000-0000-0000-000000000000" }},
		{"pid gone", func(o *owner) { o.PID = deadPID(t) }},
		{"owner file unreadable", nil},
	}
	// Make them all first: each Add sweeps what is already dead.
	var dead []string
	var wts []*Worktree
	for range tests {
		w, err := Add(ctx, repo, "HEAD")
		if err != nil {
			t.Fatal(err)
		}
		wts = append(wts, w)
		dead = append(dead, w.Dir)
	}
	for i, tc := range tests {
		p := ownerPath(repo, wts[i].ID)
		if tc.tamper == nil {
			write(t, filepath.Dir(p), filepath.Base(p), "{not json")
			continue
		}
		o, _ := readOwner(p)
		tc.tamper(&o)
		if err := writeOwner(p, o); err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(dead)
	removed, _, err := GC(ctx, repo)
	if err != nil {
		t.Fatalf("GC = %v", err)
	}
	if !slices.Equal(removed, dead) {
		t.Errorf("GC removed %q, want %q", removed, dead)
	}
	if _, err := os.Stat(filepath.Join(live.Dir, "a.txt")); err != nil {
		t.Errorf("GC touched the live worktree: %v", err)
	}
	if _, err := os.Stat(live.GitDir()); err != nil {
		t.Errorf("GC touched the live worktree's git directory: %v", err)
	}
	if removed, _, err := GC(ctx, repo); err != nil || len(removed) != 0 {
		t.Errorf("second GC = %q, %v; want nothing", removed, err)
	}
	live.Remove(ctx)
	clean(t, repo)
}

// deadPID returns the pid of a process that has exited and been reaped.
func deadPID(t *testing.T) int {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// GC must never touch worktrees that are not failpass's: the user's own,
// one of theirs whose folder is missing (prune would drop it), nor
// foreign names inside failpass's folder.
func TestGCLeavesOthersAlone(t *testing.T) {
	ctx := context.Background()
	repo, base := newRepo(t)
	other := filepath.Join(t.TempDir(), "other")
	gone := filepath.Join(t.TempDir(), "gone")
	git(t, repo.Dir, "worktree", "add", "-q", "--detach", other, base)
	git(t, repo.Dir, "worktree", "add", "-q", "--detach", gone, base)
	os.RemoveAll(gone)
	foreign := repo.StateDir("worktrees", "not-an-id")
	os.MkdirAll(foreign, 0o755)
	before := git(t, repo.Dir, "worktree", "list", "--porcelain")

	// A dead run's worktree whose folder someone deleted by hand: only
	// git's admin entry and the owner file are left.
	w, err := Add(ctx, repo, base)
	if err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(w.Dir)
	o, _ := readOwner(ownerPath(repo, w.ID))
	o.Start++
	writeOwner(ownerPath(repo, w.ID), o)

	removed, _, err := GC(ctx, repo)
	if err != nil || !slices.Equal(removed, []string{w.Dir}) {
		t.Errorf("GC = %q, %v; want %q", removed, err, w.Dir)
	}
	if after := git(t, repo.Dir, "worktree", "list", "--porcelain"); after != before {
		t.Errorf("GC changed the user's worktrees:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if _, err := os.Stat(foreign); err != nil {
		t.Errorf("GC removed a folder it does not own: %v", err)
	}
	if _, err := os.Stat(ownerPath(repo, w.ID)); err == nil {
		t.Errorf("GC left the dead owner file")
	}
}

func TestKeep(t *testing.T) {
	ctx := context.Background()
	repo, base := newRepo(t)
	w, err := Add(ctx, repo, base)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Keep(); err != nil {
		t.Fatal(err)
	}
	o, _ := readOwner(ownerPath(repo, w.ID))
	o.Start++ // the owner has exited
	writeOwner(ownerPath(repo, w.ID), o)
	if removed, _, err := GC(ctx, repo); err != nil || len(removed) != 0 {
		t.Errorf("GC with a kept worktree = %q, %v; want nothing removed", removed, err)
	}
	os.RemoveAll(w.Dir) // the user gives the kept worktree up
	if removed, _, err := GC(ctx, repo); err != nil || len(removed) != 1 {
		t.Errorf("GC after the user removed the kept worktree = %q, %v; want its owner file dropped", removed, err)
	}
	clean(t, repo)
}

func TestAddConcurrent(t *testing.T) {
	ctx := context.Background()
	repo, base := newRepo(t)
	var wg sync.WaitGroup
	wts := make([]*Worktree, 4)
	errs := make([]error, 4)
	for i := range wts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wts[i], errs[i] = Add(ctx, repo, base)
		}()
	}
	wg.Wait()
	seen := map[string]bool{}
	for i, w := range wts {
		if errs[i] != nil {
			t.Fatalf("Add %d = %v", i, errs[i])
		}
		if seen[w.Dir] {
			t.Errorf("two worktrees share %s", w.Dir)
		}
		seen[w.Dir] = true
	}
	for _, w := range wts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := w.Remove(ctx); err != nil {
				t.Errorf("Remove = %v", err)
			}
		}()
	}
	wg.Wait()
	clean(t, repo)
}

// Adds and removes interleaved from two goroutines (as two batches
// sharing a repository do): git's worktree remove deletes its worktrees
// folder when it empties it, which an add racing it must never see.
func TestAddRemoveInterleaved(t *testing.T) {
	ctx := context.Background()
	repo, base := newRepo(t)
	var wg sync.WaitGroup
	for g := 0; g < 2; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 10; i++ {
				w, err := Add(ctx, repo, base)
				if err != nil {
					t.Errorf("Add = %v", err)
					return
				}
				if err := w.Remove(ctx); err != nil {
					t.Errorf("Remove = %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	clean(t, repo)
}

// TestGCAfterKill kills a real failpass-like process with -9 while a
// command runs in its worktree; the next GC removes the worktree and the
// process the command left, and the user's checkout is as it was.
func TestGCAfterKill(t *testing.T) {
	ctx := context.Background()
	repo, _ := newRepo(t)
	before := state(t, repo)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), childEnv+"="+repo.Dir)
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	dir, ok := strings.CutPrefix(strings.TrimSpace(line), "ready ")
	if !ok {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("child said %q", line)
	}
	if inside := processesIn(dir); len(inside) == 0 {
		t.Fatalf("no command runs in the child's worktree")
	}
	// While the child lives, its worktree and its command are not gc's.
	if removed, _, err := GC(ctx, repo); err != nil || len(removed) != 0 {
		t.Errorf("GC with a live owner = %q, %v; want nothing removed", removed, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "a.txt")); err != nil || len(processesIn(dir)) == 0 {
		t.Errorf("GC touched a live run's worktree: %v", err)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("the killed run's worktree is already gone: %v", err)
	}

	removed, _, err := GC(ctx, repo)
	if err != nil || !slices.Equal(removed, []string{dir}) {
		t.Errorf("GC = %q, %v; want %q", removed, err, dir)
	}
	if inside := processesIn(dir); len(inside) != 0 {
		t.Errorf("processes still run in the removed worktree: %v", inside)
	}
	clean(t, repo)
	if after := state(t, repo); after != before {
		t.Errorf("user checkout changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

// TestRemoveOnSignal interrupts a run while its command runs in the
// worktree: the command is killed, the worktree removed, the user's
// checkout untouched.
func TestRemoveOnSignal(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			repo, _ := newRepo(t)
			before := state(t, repo)
			self, err := os.Executable()
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(self)
			cmd.Env = append(os.Environ(), signalEnv+"="+repo.Dir)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			line, _ := bufio.NewReader(out).ReadString('\n')
			dir, ok := strings.CutPrefix(strings.TrimSpace(line), "ready ")
			if !ok {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("child said %q", line)
			}
			deadline := time.Now().Add(5 * time.Second)
			for len(processesIn(dir)) < 3 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			start := time.Now()
			cmd.Process.Signal(sig)
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("child after %v: %v\n%s", sig, err, stderr.String())
				}
			case <-time.After(10 * time.Second):
				cmd.Process.Kill()
				t.Fatalf("child still running 10s after %v", sig)
			}
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("child took %v to stop after %v", took, sig)
			}
			if inside := processesIn(dir); len(inside) != 0 {
				t.Errorf("processes still run in the worktree: %v", inside)
			}
			clean(t, repo)
			if after := state(t, repo); after != before {
				t.Errorf("user checkout changed:\nbefore:\n%s\nafter:\n%s", before, after)
			}
		})
	}
}

func processesIn(dir string) []string {
	var out []string
	cwds, _ := filepath.Glob("/proc/[0-9]*/cwd")
	for _, c := range cwds {
		cwd, err := os.Readlink(c)
		cwd = strings.TrimSuffix(cwd, " (deleted)")
		if err == nil && (cwd == dir || strings.HasPrefix(cwd, dir+"/")) {
			out = append(out, c)
		}
	}
	return out
}

// FuzzReadOwner: an owner file is attacker-writable (a command can reach
// the common dir); a parse error returns no value, and what parses
// survives a write and read unchanged.
func FuzzReadOwner(f *testing.F) {
	f.Add([]byte(`{"pid":1,"start":2,"boot_id":"b","host":"h","created":"2026-01-01T00:00:00Z"}`))
	f.Add([]byte(`{"pid":"x"}`))
	f.Add([]byte(strings.Repeat(" ", maxOwnerSize+1)))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(dir, "o.owner")
		os.WriteFile(p, b, 0o644)
		o, err := readOwner(p)
		if err != nil {
			if o != (owner{}) {
				t.Fatalf("readOwner(%q) = %+v, %v; want no value", b, o, err)
			}
			return
		}
		if err := writeOwner(p, o); err != nil {
			t.Fatal(err)
		}
		o2, err := readOwner(p)
		if err != nil || !o2.Created.Equal(o.Created) {
			t.Fatalf("owner %+v did not survive a round trip: %+v, %v", o, o2, err)
		}
		o2.Created = o.Created
		if o2 != o {
			t.Fatalf("owner %+v did not survive a round trip: %+v", o, o2)
		}
	})
}

// Reset back to the commit Add checked out removes what a command left
// without git clean, through an os.Root: a tracked folder a command made
// a symlink to somewhere else is replaced, and nothing outside the
// worktree is touched. A tracked file rewritten in the same second with
// the same size and its mtime forged back is still restored.
func TestResetSweep(t *testing.T) {
	ctx := context.Background()
	repo, base := newRepo(t)
	write(t, repo.Dir, "keep.txt", "x")
	git(t, repo.Dir, "stash", "-q", "-u") // a clean checkout to add a folder to
	os.MkdirAll(filepath.Join(repo.Dir, "src"), 0o755)
	write(t, filepath.Join(repo.Dir, "src"), "lib.txt", "lib\n")
	git(t, repo.Dir, "add", "src/lib.txt")
	git(t, repo.Dir, "commit", "-q", "-m", "src")
	head := strings.TrimSpace(git(t, repo.Dir, "rev-parse", "HEAD"))
	_ = base
	w, err := Add(ctx, repo, head)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Remove(ctx)
	outside := t.TempDir()
	write(t, outside, "precious.txt", "mine\n")

	a := filepath.Join(w.Dir, "a.txt")
	fi, err := os.Stat(a)
	if err != nil {
		t.Fatal(err)
	}
	write(t, w.Dir, "a.txt", "HEAD\n") // same size as "head\n"
	os.Chtimes(a, fi.ModTime(), fi.ModTime())
	os.RemoveAll(filepath.Join(w.Dir, "src"))
	if err := os.Symlink(outside, filepath.Join(w.Dir, "src")); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(w.Dir, "build", "deep"), 0o755)
	write(t, filepath.Join(w.Dir, "build", "deep"), "out.o", "obj")
	write(t, w.Dir, "x.log", "ignored\n")

	if err := w.Reset(ctx, head); err != nil {
		t.Fatalf("Reset = %v", err)
	}
	if b, _ := os.ReadFile(a); string(b) != "head\n" {
		t.Errorf("after Reset a.txt = %q, want the commit's (a same-second, same-size rewrite went unseen)", b)
	}
	if fi, err := os.Lstat(filepath.Join(w.Dir, "src")); err != nil || !fi.IsDir() {
		t.Errorf("after Reset src is %v, %v; want the tracked folder", fi, err)
	}
	if b, _ := os.ReadFile(filepath.Join(w.Dir, "src", "lib.txt")); string(b) != "lib\n" {
		t.Errorf("after Reset src/lib.txt = %q", b)
	}
	if b, err := os.ReadFile(filepath.Join(outside, "precious.txt")); err != nil || string(b) != "mine\n" {
		t.Errorf("Reset reached outside the worktree: %q, %v", b, err)
	}
	for _, f := range []string{"build", "x.log"} {
		if _, err := os.Lstat(filepath.Join(w.Dir, f)); err == nil {
			t.Errorf("after Reset %s is still there", f)
		}
	}
	if st := git(t, w.Dir, "status", "--porcelain", "--ignored", "--untracked-files=all"); st != "" {
		t.Errorf("after Reset status = %q, want clean", st)
	}
}

// TestResetKeepsNoReflog checks a reset leaves no trace a run could count:
// a HEAD log in the worktree's git folder would grow with every reset that
// moves HEAD, telling a candidate's runs apart by what came before them.
func TestResetKeepsNoReflog(t *testing.T) {
	ctx := context.Background()
	repo, base := newRepo(t)
	write(t, repo.Dir, "next.txt", "next\n")
	git(t, repo.Dir, "add", "next.txt")
	git(t, repo.Dir, "commit", "-q", "-m", "b")
	next := strings.TrimSpace(git(t, repo.Dir, "rev-parse", "HEAD"))
	w, err := Add(ctx, repo, base)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Remove(ctx)
	for _, c := range []string{next, base, next} {
		if err := w.Reset(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(filepath.Join(w.GitDir(), "logs", "HEAD")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("after three resets, %s/logs/HEAD: %v; want none", w.GitDir(), err)
	}
}
