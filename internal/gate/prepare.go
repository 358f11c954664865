package gate

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/failpass/failpass/internal/run"
	"github.com/failpass/failpass/internal/sandbox"
	"github.com/failpass/failpass/internal/worktree"
)

// The card's prepare command.
//
// A card's commands run without network, so what they need beyond the
// repository (Go modules, Python packages) must already be on disk. The
// prepare command fetches it: once per build cache key (the base, the
// commands, their environment and the prepare command itself), on a
// fresh worktree of the base, before any base run, contained but with
// the network, and with the card's dependency folder (sandbox.DepsDir)
// writable; it holds the build cache's writer lock meanwhile. A marker
// in the folder records success, so later gates and signings skip it.
// Every other run, base or candidate, sees the folder read-only and has
// no network. A prepare command that fails is trouble (exit 2), not a
// verdict about any candidate.
//
// With the sandbox off, the prepare command runs uncontained in the
// user's own environment (its fetches land in the user's caches, as
// they would by hand), once per gate or signing: there is no folder of
// the card's to mark.

// PrepareOptions is what RunPrepare needs.
type PrepareOptions struct {
	// The card bound to the repository, its base resolved.
	*Bound
	// Policy is the base side's sandbox, with the card's build cache as
	// CacheDir (and Deps, see DepsDir); nil runs the command uncontained
	// (--sandbox=off).
	Policy *sandbox.Policy
	// LogDir receives prepare.log.
	LogDir string
	// Starting and Progress, when set, hear that the command starts and
	// how it ended (a Step of rule "prepare", which is no gate rule and
	// never part of a verdict), as a gate's rules do: a terminal shows
	// them. Neither is called when the command does not run.
	Starting func(rule string)
	Progress func(Step)
}

// RulePrepare names the prepare command's run in progress lines. It is
// not a gate rule (Rules): the prepare command decides nothing.
const RulePrepare = "prepare"

// PrepareResult says what RunPrepare did.
type PrepareResult struct {
	Ran      bool   // the command ran (false: the card has none, or an earlier run of this key succeeded)
	Log      string // its log, when it ran
	Duration time.Duration
}

// PrepareError is a prepare command that did not succeed: trouble, with
// the log to read.
type PrepareError struct {
	Argv   []string
	Result string // how it ended, as run.Result.String says
	Log    string
}

func (e *PrepareError) Error() string {
	return fmt.Sprintf("the card's prepare command %q failed (%s); log: %s", e.Argv, e.Result, e.Log)
}

// Hints says what to do.
func (e *PrepareError) Hints() []string {
	return []string{
		"read the log: the prepare command runs on a fresh checkout of the base, with the network, and must exit 0",
		"fix the card's prepare command (then re-sign it), or the network or proxy it needs, and run again",
	}
}

// RunPrepare runs the card's prepare command unless the card has none or
// an earlier run for the same build cache key succeeded. Its failure is
// a *PrepareError.
func RunPrepare(ctx context.Context, o PrepareOptions) (PrepareResult, error) {
	c := o.Card
	if c.Prepare == nil {
		return PrepareResult{}, nil
	}
	var p *sandbox.Policy
	if o.Policy != nil {
		if o.Policy.CacheDir == "" {
			return PrepareResult{}, errors.New("gate: the prepare command's sandbox has no build cache to key its dependency folder by")
		}
		deps := sandbox.DepsDir(o.Policy.CacheDir)
		if sandbox.DepsReady(deps) {
			sandbox.DepsUsed(deps)      // for gc: the runs only read it
			return PrepareResult{}, nil // the common case costs no lock: the marker only goes away under it
		}
		unlock, err := sandbox.LockCache(o.Policy.CacheDir)
		if err != nil {
			return PrepareResult{}, err
		}
		defer unlock()
		if sandbox.DepsReady(deps) {
			return PrepareResult{}, nil // another run did it while this one waited
		}
		if err := sandbox.UnmarkPrepared(deps); err != nil {
			return PrepareResult{}, err
		}
		q := *o.Policy
		q.Deps, q.PrepareCmd, q.Candidate = deps, true, nil
		p = &q
	}
	wt, err := worktree.Add(ctx, o.Repo, o.Base)
	if err != nil {
		return PrepareResult{}, err
	}
	defer wt.Remove(context.WithoutCancel(ctx))
	cmd := c.Prepare.Command()
	var env []string
	if o.Env != nil {
		env = o.Env(cmd)
	}
	log := filepath.Join(o.LogDir, "prepare.log")
	if o.Starting != nil {
		o.Starting(RulePrepare)
	}
	res, err := run.Run(ctx, run.Spec{Argv: cmd.Cmd, Root: wt.Dir, Workdir: cmd.Workdir, Env: env,
		Timeout: cmd.Timeout, Log: log, Sandbox: p, Disk: run.CardDisk(o.Card.DiskCap())})
	if err != nil {
		return PrepareResult{}, err
	}
	if ctx.Err() != nil {
		return PrepareResult{}, ctx.Err()
	}
	out := PrepareResult{Ran: true, Log: log, Duration: res.Duration}
	if o.Progress != nil {
		st := Step{Rule: RulePrepare, Status: StatusOK, Exit: intp(res.Exit), Expected: intp(0), DurationMS: res.Duration.Milliseconds(), Log: &log}
		if res.Inconclusive() || res.Exit != 0 {
			st.Status, st.Reason = StatusFail, res.String()
		}
		o.Progress(st)
	}
	if res.Inconclusive() || res.Exit != 0 {
		return out, &PrepareError{Argv: cmd.Cmd, Result: res.String(), Log: log}
	}
	if p != nil {
		if err := sandbox.MarkPrepared(p.Deps, filepath.Base(p.CacheDir)); err != nil {
			return out, err
		}
	}
	return out, nil
}
