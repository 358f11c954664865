package loop

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/failpass/failpass/internal/gitx"
	"github.com/failpass/failpass/internal/scratch"
	"github.com/failpass/failpass/internal/worktree"
)

// What a role sees of the repository's history. A role's checkout is
// not a worktree of the user's repository: its `.git` file names a
// private repository of its own (roleGit), whose objects are those of a
// history repository the loop keeps (history) and which holds the
// candidate's commits and their ancestors alone, copied once per loop
// (and the commits each attempt adds, as they come). No other branch,
// tag or ref, no unreachable object (a "future fix" kept on another
// branch, what `card from-commit` leaves in history), no loop document
// and no attempt ref reaches a role: the user's repository is simply not
// among what its sandbox can read. An alternates file to the user's
// object store would show every object; a copy shows only what is
// reachable.

// history is the loop's repository of the candidate's history.
type history struct {
	dir    *scratch.Dir
	copied []string // heads whose history is in it
}

// objects is the history's object folder.
func (h *history) objects() string { return filepath.Join(h.dir.Path, "objects") }

// close removes the history.
func (h *history) close() {
	if h != nil {
		h.dir.Remove()
	}
}

// historyWith returns the loop's history repository, holding head and
// its ancestors: the first call copies them, later ones add what the
// heads copied so far do not reach.
func (e *engine) historyWith(ctx context.Context, head string) (*history, error) {
	h := e.hist
	if h == nil {
		d, err := scratch.New("history")
		if err != nil {
			return nil, err
		}
		h = &history{dir: d}
		if err := initGitDir(ctx, e, d.Path, head, ""); err != nil {
			d.Remove()
			return nil, err
		}
		e.hist = h
	}
	for _, c := range h.copied {
		if c == head {
			return h, nil
		}
	}
	revs := head + "\n"
	for _, c := range h.copied {
		revs += "^" + c + "\n"
	}
	// pack-objects writes the pack and its index straight into the
	// history's pack folder: reachable objects only.
	base := filepath.Join(h.objects(), "pack", "pack")
	if _, err := gitx.Command(ctx, e.repo.Dir, []byte(revs), "pack-objects", "--revs", "-q", base); err != nil {
		return nil, fmt.Errorf("copying the candidate's history: %w", err)
	}
	h.copied = append(h.copied, head)
	return h, nil
}

// initGitDir writes a git directory at dir by hand: HEAD at head, the
// repository's object format, and alternates (objects of another
// repository) when given.
func initGitDir(ctx context.Context, e *engine, dir, head, alternates string) error {
	format, err := e.repo.Git(ctx, "rev-parse", "--show-object-format")
	if err != nil {
		return err
	}
	conf := "[core]\n\trepositoryformatversion = 0\n\tbare = false\n"
	if strings.TrimSpace(string(format)) == "sha256" {
		conf = "[core]\n\trepositoryformatversion = 1\n\tbare = false\n[extensions]\n\tobjectformat = sha256\n"
	}
	for _, d := range []string{"objects/pack", "objects/info", "refs/heads", "refs/tags"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return err
		}
	}
	files := map[string]string{"HEAD": head + "\n", "config": conf}
	if alternates != "" {
		files["objects/info/alternates"] = alternates + "\n"
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// roleGit gives w (a checkout of head failpass made, before any role
// ran in it) a private git repository: its `.git` file is rewritten to
// name a folder of its own whose objects are the loop's history and
// whose index is the checkout's. The role may do what it likes there
// (a fixer may commit); failpass never reads it. It returns the folder
// and its removal.
func (e *engine) roleGit(w *worktree.Worktree, head string) (string, func(), error) {
	h, err := e.historyWith(e.ctx, head)
	if err != nil {
		return "", nil, err
	}
	d, err := scratch.New("role-git")
	if err != nil {
		return "", nil, err
	}
	if err := initGitDir(e.ctx, e, d.Path, head, h.objects()); err != nil {
		d.Remove()
		return "", nil, err
	}
	if err := copyRegular(filepath.Join(w.GitDir(), "index"), filepath.Join(d.Path, "index")); err != nil {
		d.Remove()
		return "", nil, err
	}
	if err := os.WriteFile(filepath.Join(w.Dir, ".git"), []byte("gitdir: "+d.Path+"\n"), 0o644); err != nil {
		d.Remove()
		return "", nil, err
	}
	return d.Path, func() { d.Remove() }, nil
}

// copyRegular copies a regular file failpass wrote (the checkout's
// index), keeping its times: git trusts an entry's stat only when the
// file is older than the index.
func copyRegular(from, to string) error {
	fi, err := os.Lstat(from)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return errors.New(from + " is not a regular file")
	}
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Chtimes(to, fi.ModTime(), fi.ModTime())
}
