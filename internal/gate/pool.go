package gate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/failpass/failpass/internal/gitx"
	"github.com/failpass/failpass/internal/worktree"
)

// Pool lends detached worktrees of one repository and takes them back for
// the next candidate, so a candidate costs what its changed files cost
// rather than a checkout of the whole repository. Every worktree lent out
// is an exact checkout of the asked commit: Get resets a returned one
// (tracked files restored, untracked and ignored files removed, git's
// per-worktree admin files put back as `git worktree add` made them) and
// replaces it with a fresh worktree when the reset cannot be proven
// clean. The pool belongs to one process; its worktrees carry this
// process as owner, so `failpass gc` removes them after a crash.
type Pool struct {
	repo *gitx.Repo
	max  int

	mu   sync.Mutex
	idle []*pooled
	all  map[*worktree.Worktree]*pooled

	created, reused, replaced atomic.Int64
}

type pooled struct {
	wt *worktree.Worktree
	// admin holds git's per-worktree admin files as `worktree add` wrote
	// them, before any command ran in the worktree.
	admin map[string][]byte
	used  bool
	// spoiled says a candidate's code ran in it: it is removed when
	// returned, never lent again (Spoil).
	spoiled bool
}

// adminKeep are the per-worktree admin entries git needs; anything else
// in the admin folder (config.worktree, hooks/, info/sparse-checkout,
// modules/, refs/) is what a command planted, and is removed.
var adminKeep = map[string]bool{"HEAD": true, "ORIG_HEAD": true, "index": true, "logs": true, "commondir": true, "gitdir": true}

// NewPool makes a pool of at most max idle worktrees (at least one).
func NewPool(repo *gitx.Repo, max int) *Pool {
	if max < 1 {
		max = 1
	}
	return &Pool{repo: repo, max: max, all: map[*worktree.Worktree]*pooled{}}
}

// Get lends a worktree that is a clean checkout of commit (a full id).
func (p *Pool) Get(ctx context.Context, commit string) (*worktree.Worktree, error) {
	p.mu.Lock()
	var pw *pooled
	if n := len(p.idle); n > 0 {
		pw = p.idle[n-1]
		p.idle = p.idle[:n-1]
	}
	p.mu.Unlock()
	if pw != nil {
		if err := p.reset(ctx, pw, commit); err == nil {
			p.reused.Add(1)
			return pw.wt, nil
		} else if ctx.Err() != nil {
			p.discard(ctx, pw)
			return nil, ctx.Err()
		}
		// A worktree that cannot be proven clean is never lent again.
		p.discard(ctx, pw)
		p.replaced.Add(1)
	}
	wt, err := worktree.Add(ctx, p.repo, commit)
	if err != nil {
		return nil, err
	}
	pw = &pooled{wt: wt, admin: map[string][]byte{}}
	for _, name := range []string{"commondir", "gitdir"} {
		b, err := os.ReadFile(filepath.Join(wt.GitDir(), name))
		if err != nil {
			wt.Remove(context.WithoutCancel(ctx))
			return nil, fmt.Errorf("pool: %w", err)
		}
		pw.admin[name] = b
	}
	p.mu.Lock()
	p.all[wt] = pw
	p.mu.Unlock()
	p.created.Add(1)
	return wt, nil
}

// Put returns a lent worktree. It is reset when next lent, not now: a
// batch's last worktrees are removed without a reset nobody needs.
func (p *Pool) Put(wt *worktree.Worktree) {
	p.mu.Lock()
	defer p.mu.Unlock()
	pw := p.all[wt]
	if pw == nil {
		return
	}
	pw.used = true
	if pw.spoiled || len(p.idle) >= p.max {
		delete(p.all, wt)
		p.mu.Unlock()
		wt.Remove(context.Background())
		p.mu.Lock()
		return
	}
	p.idle = append(p.idle, pw)
}

// Spoil marks a lent worktree as one a candidate's diff was applied to
// (and its code may have run in): Put removes it instead of keeping it
// for the next candidate. A reset puts back content and removes what was
// added, but not what a candidate can leave on the files and folders it
// was given (an extended attribute, a folder's mode, an access time):
// one candidate's tree must never be the next one's. The next Get makes
// a new worktree, in the slot this one leaves free (the same path, which
// go's build cache keys on).
func (p *Pool) Spoil(wt *worktree.Worktree) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if pw := p.all[wt]; pw != nil {
		pw.spoiled = true
	}
}

// Keep takes a lent worktree out of the pool for good and marks it kept
// (--keep-worktree): Close leaves it in place, and so does `failpass gc`.
func (p *Pool) Keep(wt *worktree.Worktree) error {
	p.mu.Lock()
	delete(p.all, wt)
	p.mu.Unlock()
	return wt.Keep()
}

// Close removes every worktree of the pool, lent or idle.
func (p *Pool) Close(ctx context.Context) error {
	p.mu.Lock()
	all := p.all
	p.all = map[*worktree.Worktree]*pooled{}
	p.idle = nil
	p.mu.Unlock()
	var errs []error
	for wt := range all {
		errs = append(errs, wt.Remove(ctx))
	}
	return errors.Join(errs...)
}

func (p *Pool) discard(ctx context.Context, pw *pooled) {
	p.mu.Lock()
	delete(p.all, pw.wt)
	p.mu.Unlock()
	pw.wt.Remove(context.WithoutCancel(ctx))
}

// reset makes pw an exact checkout of commit, or fails.
func (p *Pool) reset(ctx context.Context, pw *pooled, commit string) error {
	wt := pw.wt
	if err := p.sanitizeAdmin(pw); err != nil {
		return err
	}
	// Index flags survive `checkout -f`: a file marked assume-unchanged
	// or skip-worktree keeps whatever content a command wrote. Such an
	// index is dropped and rebuilt from the commit.
	out, err := wt.Git(ctx, "ls-files", "-v", "-z")
	if err != nil || flaggedIndex(out) {
		os.Remove(filepath.Join(wt.GitDir(), "index"))
		if _, err := wt.Git(ctx, "read-tree", "--reset", commit); err != nil {
			return err
		}
	}
	if err := wt.Reset(ctx, commit); err != nil {
		return err
	}
	// Proof of cleanliness: nothing modified, untracked or ignored.
	st, err := wt.Git(ctx, "status", "--porcelain", "-z", "--ignored", "--untracked-files=all", "--no-renames")
	if err != nil {
		return err
	}
	if len(st) > 0 {
		return fmt.Errorf("pool: worktree %s not clean after reset: %q", wt.Dir, firstLine(strings.ReplaceAll(string(st), "\x00", "\n")))
	}
	head, err := wt.Git(ctx, "rev-parse", "HEAD")
	if err != nil {
		return err
	}
	if strings.TrimSpace(string(head)) != commit {
		return fmt.Errorf("pool: worktree %s at %s after reset, want %s", wt.Dir, head, commit)
	}
	return nil
}

// sanitizeAdmin removes what a command may have planted in the worktree's
// git admin folder (reachable with --sandbox=off) and restores the files
// that tie it to the repository.
func (p *Pool) sanitizeAdmin(pw *pooled) error {
	dir := pw.wt.GitDir()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if adminKeep[e.Name()] {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	for name, want := range pw.admin {
		path := filepath.Join(dir, name)
		if got, err := os.ReadFile(path); err == nil && bytes.Equal(got, want) {
			if fi, err := os.Lstat(path); err == nil && fi.Mode().IsRegular() {
				continue
			}
		}
		os.RemoveAll(path)
		if err := os.WriteFile(path, want, 0o644); err != nil {
			return err
		}
	}
	// HEAD must be a regular file; a symlink planted in its place would
	// redirect the checkout's ref update.
	for _, name := range []string{"HEAD", "index", "ORIG_HEAD"} {
		if fi, err := os.Lstat(filepath.Join(dir, name)); err == nil && !fi.Mode().IsRegular() {
			os.RemoveAll(filepath.Join(dir, name))
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, "HEAD")); err != nil {
		return fmt.Errorf("pool: worktree %s lost its HEAD", pw.wt.Dir)
	}
	return nil
}

// flaggedIndex reports whether `git ls-files -v -z` output marks any file
// assume-unchanged (a lowercase tag) or skip-worktree ("S").
func flaggedIndex(out []byte) bool {
	for _, rec := range bytes.Split(out, []byte{0}) {
		if len(rec) < 2 {
			continue
		}
		t := rec[0]
		if (t >= 'a' && t <= 'z') || t == 'S' {
			return true
		}
	}
	return false
}
