package gate

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/failpass/failpass/internal/card"
	"github.com/failpass/failpass/internal/run"
	"github.com/failpass/failpass/internal/sandbox"
	"github.com/failpass/failpass/internal/worktree"
)

// Warming a card's build cache for callers that run only candidate code.
//
// A card's build cache is written only by runs of its base (the gate's
// base side, card sign). The review-fix loop never runs the base: its
// validations run the fixer's commits, candidate code, which reads the
// cache through a private layer and never fills it. So on a card no gate
// or signing had warmed, every loop validation compiled everything from
// nothing, run after run, loop after loop. WarmCache runs what the gate's
// base side would have: the card's pass and invariant commands on the
// signed base, as the cache's writer, once per cache (a marker in it
// records that). Their exit codes decide nothing (on the base the pass
// command is meant to fail): they run only to compile.

// warmedMarker, in a build cache dir, says WarmCache ran there.
const warmedMarker = ".failpass-warmed"

// WarmCache fills o.Policy.CacheDir from runs of the card's commands on
// o.Base, unless that was done before. It reports whether it ran them.
// The prepare command (RunPrepare) must have run first, when the card
// has one. Nothing happens without a sandbox (the runs would write the
// user's own caches) or a base.
func WarmCache(ctx context.Context, o PrepareOptions) (bool, error) {
	if o.Policy == nil || o.Policy.CacheDir == "" || o.Base == "" {
		return false, nil
	}
	marker := filepath.Join(o.Policy.CacheDir, warmedMarker)
	if _, err := os.Lstat(marker); err == nil {
		return false, nil
	}
	unlock, err := sandbox.LockCache(o.Policy.CacheDir)
	if err != nil {
		return false, err
	}
	defer unlock()
	if _, err := os.Lstat(marker); !errors.Is(err, fs.ErrNotExist) {
		return false, nil // another writer did it while this one waited
	}
	wt, err := worktree.Add(ctx, o.Repo, o.Base)
	if err != nil {
		return false, err
	}
	defer wt.Remove(context.WithoutCancel(ctx))
	p := *o.Policy
	p.Candidate, p.PrepareCmd = nil, false // the base's runs: the cache's writer
	sess := run.NewSession()
	defer sess.Close()
	var done [][]string
	for _, role := range []card.Role{card.RolePass, card.RoleInvariant} {
		cmd := o.Card.Command(role)
		if slices.ContainsFunc(done, func(a []string) bool { return slices.Equal(a, cmd.Cmd) }) {
			continue
		}
		done = append(done, cmd.Cmd)
		var env []string
		if o.Env != nil {
			env = o.Env(cmd)
		}
		if o.Starting != nil {
			o.Starting("warm " + string(role))
		}
		res, err := run.Run(ctx, run.Spec{Argv: cmd.Cmd, Root: wt.Dir, Workdir: cmd.Workdir, Env: env, Timeout: cmd.Timeout,
			Log: filepath.Join(o.LogDir, "warm-"+string(role)+".log"), Sandbox: &p, Session: sess, Disk: run.CardDisk(o.Card.DiskCap())})
		if err != nil {
			return true, err
		}
		if o.Progress != nil {
			o.Progress(Step{Rule: "warm " + string(role), Status: StatusOK, Reason: res.String()})
		}
		if ctx.Err() != nil {
			return true, ctx.Err()
		}
	}
	return true, os.WriteFile(marker, nil, 0o444)
}
