package patch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/failpass/failpass/internal/gitx"
)

// Actual returns what a worktree really changed against base: every
// tracked, untracked and ignored file (git apply without --index leaves new
// files untracked, and a plain git diff would miss them), staged into a
// throwaway index so neither the worktree's index nor the user's is
// touched, then diffed with rename detection (-M, git's default
// similarity). Compare it with the static change set with Equal (rule
// diff.actual).
//
// A submodule's commit is not visible in a worktree whose submodules are
// not checked out, so a patch that moves a gitlink shows up as a
// difference.
func Actual(ctx context.Context, repo *gitx.Repo, worktreeDir, base string) (*ChangeSet, error) {
	return actual(ctx, repo, "", worktreeDir, base, true)
}

// ActualIn is Actual for a linked worktree whose git directory is given
// explicitly, so no git discovery follows a `.git` file a command may have
// rewritten. It starts the throwaway index from a copy of the worktree's
// own index: `add --all` makes it match the files whatever it held, and a
// fresh index's stat data saves the read-tree call and rehashing every file.
func ActualIn(ctx context.Context, repo *gitx.Repo, gitDir, worktreeDir, base string) (*ChangeSet, error) {
	return actual(ctx, repo, gitDir, worktreeDir, base, true)
}

// ActualCommittable is Actual without ignored files: the change a commit
// of everything (`git add --all`) would record. It suits a worktree where
// commands have run and left ignored build output (__pycache__, target/)
// that is no part of the candidate; right after git apply, use Actual,
// since a patch that writes under an ignored path still changes the tree.
func ActualCommittable(ctx context.Context, repo *gitx.Repo, worktreeDir, base string) (*ChangeSet, error) {
	return actual(ctx, repo, "", worktreeDir, base, false)
}

func actual(ctx context.Context, repo *gitx.Repo, gitDir, worktreeDir, base string, ignored bool) (*ChangeSet, error) {
	tmp, err := os.MkdirTemp("", "failpass-index-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	index := filepath.Join(tmp, "index")
	env := []string{"GIT_INDEX_FILE=" + index}
	var global []string
	if gitDir != "" {
		global = []string{"--git-dir=" + gitDir, "--work-tree=" + worktreeDir}
	}
	git := func(args ...string) ([]byte, error) {
		return gitx.CommandEnv(ctx, worktreeDir, nil, env, append(global, args...)...)
	}
	if gitDir == "" || copyFile(filepath.Join(gitDir, "index"), index) != nil {
		if _, err := git("read-tree", base); err != nil {
			return nil, err
		}
	}
	add := []string{"add", "--all"}
	if ignored {
		add = append(add, "--force") // a file written under an ignored path is a change
	}
	if _, err := git(add...); err != nil {
		return nil, err
	}
	out, err := git("diff", "--cached", "--raw", "--numstat", "-z", "-M",
		"--no-ext-diff", "--no-textconv", "--ignore-submodules=none", base, "--")
	if err != nil {
		return nil, err
	}
	cs, err := parseRawNumstat(out)
	if err != nil {
		return nil, err
	}
	for i := range cs.Files {
		f := &cs.Files[i]
		if f.Status == Deleted || f.NewMode != ModeSymlink || f.SymlinkTarget == "" {
			continue
		}
		// parseRawNumstat leaves the new object id in SymlinkTarget.
		target, err := gitx.Command(ctx, repo.Dir, nil, "cat-file", "blob", f.SymlinkTarget)
		if err != nil {
			return nil, err
		}
		f.SymlinkTarget = string(target)
	}
	return cs, nil
}

// parseRawNumstat reads `git diff --raw --numstat -z`: every raw record
// (":oldmode newmode oldoid newoid STATUS\0path\0[path2\0]"), then one
// numstat record per raw record, in the same order
// ("added\tdeleted\tpath\0" or "added\tdeleted\t\0old\0new\0").
// For symlinks it leaves the new object id in SymlinkTarget.
func parseRawNumstat(out []byte) (*ChangeSet, error) {
	fields := strings.Split(string(out), "\x00")
	if len(fields) > 0 && fields[len(fields)-1] == "" {
		fields = fields[:len(fields)-1]
	}
	bad := func(what string) error {
		return fmt.Errorf("git diff --raw --numstat: unexpected output near %q", what)
	}
	next := func() (string, bool) {
		if len(fields) == 0 {
			return "", false
		}
		f := fields[0]
		fields = fields[1:]
		return f, true
	}
	cs := &ChangeSet{}
	var sameContent []bool
	for len(fields) > 0 && strings.HasPrefix(fields[0], ":") {
		meta, _ := next()
		m := strings.Fields(meta[1:])
		if len(m) != 5 {
			return nil, bad(meta)
		}
		var f File
		f.OldMode, f.NewMode = rawMode(m[0]), rawMode(m[1])
		p1, ok := next()
		if !ok {
			return nil, bad(meta)
		}
		switch m[4][0] {
		case 'A':
			f.Status, f.NewPath = Added, p1
		case 'D':
			f.Status, f.OldPath = Deleted, p1
		case 'M', 'T':
			f.Status, f.OldPath, f.NewPath = Modified, p1, p1
		case 'R', 'C':
			p2, ok := next()
			if !ok {
				return nil, bad(meta)
			}
			f.Status, f.OldPath, f.NewPath = Renamed, p1, p2
			if m[4][0] == 'C' {
				f.Status = Copied
			}
		default:
			return nil, bad(meta)
		}
		switch {
		case f.Status == Deleted:
			f.Symlink = f.OldMode == ModeSymlink
		case f.NewMode == ModeSymlink:
			f.Symlink, f.SymlinkTarget = true, m[3]
		}
		f.Submodule = f.OldMode == ModeGitlink || f.NewMode == ModeGitlink
		cs.Files = append(cs.Files, f)
		sameContent = append(sameContent, m[2] == m[3])
	}
	for i := range cs.Files {
		rec, ok := next()
		if !ok {
			return nil, bad("end of output")
		}
		parts := strings.SplitN(rec, "\t", 3)
		if len(parts) != 3 {
			return nil, bad(rec)
		}
		f := &cs.Files[i]
		if parts[2] == "" { // a rename or copy: both names follow
			if _, ok := next(); !ok {
				return nil, bad(rec)
			}
			if _, ok := next(); !ok {
				return nil, bad(rec)
			}
		}
		if parts[0] == "-" && parts[1] == "-" {
			// A pure rename or mode change of a binary file changes no
			// content; only a content change is a binary change.
			f.Binary = !sameContent[i]
			continue
		}
		a, err1 := strconv.Atoi(parts[0])
		d, err2 := strconv.Atoi(parts[1])
		if err1 != nil || err2 != nil {
			return nil, bad(rec)
		}
		f.Added, f.Deleted = a, d
	}
	if len(fields) != 0 {
		return nil, bad(fields[0])
	}
	return cs, nil
}

func rawMode(m string) string {
	if strings.Trim(m, "0") == "" {
		return ""
	}
	return m
}

// copyFile copies a git index and keeps its modification time. Git trusts
// an entry whose file stat matches unless the file is not older than the
// index itself ("racy git"); a copy with a fresh mtime would make a file
// that git apply rewrote in the same clock tick, at the same size, look
// unchanged.
func copyFile(from, to string) error {
	fi, err := os.Lstat(from)
	if err != nil || !fi.Mode().IsRegular() {
		return fmt.Errorf("patch: %s is not a regular file", from)
	}
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		return err
	}
	return os.Chtimes(to, fi.ModTime(), fi.ModTime())
}
