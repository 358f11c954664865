package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/failpass/failpass/internal/gc"
	"github.com/failpass/failpass/internal/gitx"
	"github.com/failpass/failpass/internal/prune"
	"github.com/failpass/failpass/internal/shellquote"
)

const gcUsage = `failpass gc [--repo DIR] [--json] [--max-age DUR] [--max-size SIZE]`

// runGC is `failpass gc`: remove the worktrees, their git directories,
// owner files and candidate cache folders that dead failpass runs (kill
// -9, a crash, a reboot) left in a repository, and the build and verdict
// caches of older formats, which no failpass reads again. Every failpass
// run does the same sweep when it starts; this does it on demand. Worktrees of live runs and kept ones stay.
//
// It also prunes caches and logs (package prune): every log folder and
// cache last used --max-age ago or more, then the oldest until the rest
// fit in --max-size. Refs are never touched (refs/failpass/bases/ keeps
// the bases cards are signed against).
//
// Output: each removed path on a line, then what was freed, or "nothing
// to remove"; with --json, {"removed": [paths], "cgroups_removed": n,
// "freed_bytes": n, "kept_bytes": n, "pruned": [{"path", "kind", "bytes",
// "last_used"}], "cgroups_skipped": n, "skipped": [paths]}. Exit 0, or 2
// when something could not be removed (what was removed is still
// printed). Without root, what another user's runs left (root's killed
// gate, seen by a user's gc: stale cgroups, worktrees, caches, logs) is
// skipped and said so on stderr, not an error.
func runGC(ctx context.Context, env *Env, args []string) error {
	fs := newFlags(env, "gc", gcUsage)
	repoDir := fs.String("repo", ".", "the repository `DIR` (default: the one containing the current folder)")
	asJSON := fs.Bool("json", false, `print {"removed": [paths], "freed_bytes": n, ...} as JSON`)
	maxAgeFlag := fs.String("max-age", "30d", "remove caches and logs unused for `DUR` (30d, 12h)")
	maxSizeFlag := fs.String("max-size", "5GiB", "then remove the oldest until caches and logs total at most `SIZE` (2GiB, 500MB)")
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return &UsageError{Msg: fmt.Sprintf("unexpected argument %q", pos[0]), Hint: "run 'failpass gc -h' for usage"}
	}
	maxAge, err := prune.ParseAge(*maxAgeFlag)
	if err != nil {
		return &UsageError{Msg: "--max-age: " + err.Error()}
	}
	maxSize, err := prune.ParseSize(*maxSizeFlag)
	if err != nil {
		return &UsageError{Msg: "--max-size: " + err.Error()}
	}
	repo, err := gitx.Open(ctx, *repoDir)
	if err != nil {
		return repoError(err)
	}
	r, gcErr := gc.Run(ctx, repo, maxAge, maxSize)
	if len(r.CgroupsSkipped) > 0 {
		fmt.Fprintf(env.Stderr, "failpass gc: skipped %d stale sandbox cgroup(s) of another user, which only that user (or root) can remove: %s\n",
			len(r.CgroupsSkipped), Sanitize(strings.Join(r.CgroupsSkipped, ", ")))
	}
	if len(r.Skipped) > 0 {
		fmt.Fprintf(env.Stderr, "failpass gc: skipped %d leftover(s) of another user's runs, which only that user (or root) can remove: %s\n",
			len(r.Skipped), Sanitize(strings.Join(r.Skipped, ", ")))
	}
	if *asJSON {
		writeJSON(env, r, false)
	} else {
		for _, p := range r.Removed {
			fmt.Fprintln(env.Stdout, Sanitize(p))
		}
		if r.Cgroups > 0 {
			fmt.Fprintf(env.Stdout, "%d stale sandbox cgroup(s)\n", r.Cgroups)
		}
		if len(r.Pruned) > 0 {
			caches, logs := 0, 0
			for _, u := range r.Pruned {
				if u.Kind == "logs" {
					logs++
				} else {
					caches++
				}
			}
			fmt.Fprintf(env.Stdout, "freed %s: %d cache(s), %d log folder(s); caches and logs now take %s\n",
				prune.FormatSize(r.Freed), caches, logs, prune.FormatSize(r.Kept))
		}
		if len(r.Removed) == 0 && r.Cgroups == 0 && gcErr == nil {
			fmt.Fprintln(env.Stdout, "nothing to remove")
		}
	}
	if gcErr != nil {
		return &Error{Msg: fmt.Sprintf("could not remove everything: %v", gcErr), Err: gcErr,
			Hints: []string{"fix the permissions named above and run 'failpass gc' again"}}
	}
	return nil
}

// repoError turns a failure to open --repo into a user error with a fix.
// A --repo that is no folder at all (gitx.NotFolderError) is left to
// exitCode, which says so as a usage error for every command.
func repoError(err error) error {
	var nr *gitx.NotRepoError
	switch {
	case errors.As(err, &nr) && nr.Dubious:
		return (&Error{Msg: err.Error(), Err: err}).Hint("run failpass as the repository's owner, or trust it as git says: git config --global --add safe.directory %s", shellquote.Quote(nr.Top))
	case errors.As(err, &nr):
		return (&Error{Msg: err.Error(), Err: err}).Hint("run failpass inside a git repository, or pass --repo DIR")
	case errors.Is(err, gitx.ErrNoGit):
		return (&Error{Msg: err.Error(), Err: err}).Hint("install git and make sure it is on PATH")
	}
	return err
}
