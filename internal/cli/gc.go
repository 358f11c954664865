package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/failpass/failpass/internal/gitx"
	"github.com/failpass/failpass/internal/sandbox"
	"github.com/failpass/failpass/internal/worktree"
)

const gcUsage = `failpass gc [--repo DIR] [--json]`

// runGC is `failpass gc`: remove the worktrees, git admin entries and
// owner files that dead failpass runs (kill -9, a crash, a reboot) left in
// a repository. Every failpass run does the same sweep when it starts;
// this does it on demand. Worktrees of live runs and kept ones stay.
//
// Output: each removed path on a line, or "nothing to remove"; with
// --json, {"removed": [paths]}. Exit 0, or 2 when something could not be
// removed (what was removed is still printed).
func runGC(ctx context.Context, env *Env, args []string) error {
	fs := newFlags(env, "gc", gcUsage)
	repoDir := fs.String("repo", ".", "the repository `DIR` (default: the one containing the current folder)")
	asJSON := fs.Bool("json", false, `print {"removed": [paths]} as JSON`)
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return &UsageError{Msg: fmt.Sprintf("unexpected argument %q", pos[0]), Hint: "run 'failpass gc -h' for usage"}
	}
	repo, err := gitx.Open(ctx, *repoDir)
	if err != nil {
		return repoError(*repoDir, err)
	}
	removed, gcErr := worktree.GC(ctx, repo)
	if removed == nil {
		removed = []string{}
	}
	// Cgroups of sandboxed commands whose failpass was killed: not paths in
	// the repository, so counted rather than listed.
	cgroups, cgErr := sandbox.RemoveStaleCgroups()
	if gcErr == nil {
		gcErr = cgErr
	}
	if *asJSON {
		b, _ := json.Marshal(struct {
			Removed []string `json:"removed"`
			Cgroups int      `json:"cgroups_removed"`
		}{removed, cgroups})
		fmt.Fprintf(env.Stdout, "%s\n", b)
	} else {
		for _, p := range removed {
			fmt.Fprintln(env.Stdout, p)
		}
		if cgroups > 0 {
			fmt.Fprintf(env.Stdout, "%d stale sandbox cgroup(s)\n", cgroups)
		}
		if len(removed) == 0 && cgroups == 0 && gcErr == nil {
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
func repoError(dir string, err error) error {
	var nr *gitx.NotRepoError
	switch {
	case errors.As(err, &nr):
		return (&Error{Msg: err.Error(), Err: err}).Hint("run failpass inside a git repository, or pass --repo DIR")
	case errors.Is(err, gitx.ErrNoGit):
		return (&Error{Msg: err.Error(), Err: err}).Hint("install git and make sure it is on PATH")
	case errors.Is(err, os.ErrNotExist):
		return Errorf("--repo %s: no such folder", dir).Hint("pass the folder of a git repository")
	}
	return err
}
