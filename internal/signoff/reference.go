package signoff

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/failpass/failpass/internal/card"
	"github.com/failpass/failpass/internal/gate"
	"github.com/failpass/failpass/internal/gitx"
	"github.com/failpass/failpass/internal/run"
	"github.com/failpass/failpass/internal/sandbox"
	"github.com/failpass/failpass/internal/sign"
	"github.com/failpass/failpass/internal/worktree"
)

// referenceRow is the reference row of the decision table (`card sign
// --reference DIFF`): the fix must pass the card's static rules exactly as
// a gate judges them, apply to the base, and then make the pass and the
// invariant command exit as expected, each on a fresh checkout of the base
// with the fix applied. It runs only when every earlier row let the card
// through, and returns the runs as signoff evidence.
func referenceRow(ctx context.Context, o Options, policy *sandbox.Policy, v sign.Verdict) ([]card.Run, sign.Verdict, error) {
	if v.Decision != sign.DecisionSign {
		return nil, v, nil
	}
	c, diff := o.Card, o.Reference
	_, rule, reason, err := gate.Static(ctx, o.Repo, c, o.CardPath, o.Base, diff)
	if err != nil {
		return nil, v, err
	}
	if rule != "" {
		fmt.Fprintf(o.Out, "reference: refused by %s: %s\n", rule, reason)
		return nil, sign.Reference(v, sign.ReferenceCheck{Refused: fmt.Sprintf("breaks %s: %s", rule, reason)}, c.Pass.ExpectExit, c.Invariant.ExpectExit), nil
	}
	wt, err := worktree.Add(ctx, o.Repo, o.Base)
	if err != nil {
		return nil, v, err
	}
	defer wt.Remove(ctx)
	logDir, err := logDir(o.Repo)
	if err != nil {
		return nil, v, err
	}
	fmt.Fprintf(o.Notes, "reference logs: %s\n", logDir)
	// The reference is a diff like any candidate's: its runs see the
	// card's build cache through a private layer and never write it.
	side, err := gate.EnterCandidate(o.Repo, policy)
	if err != nil {
		return nil, v, err
	}
	defer side.Close()
	sess := run.NewSession()
	defer sess.Close()

	var check sign.ReferenceCheck
	var runs []card.Run
	for i, role := range []card.Role{card.RolePass, card.RoleInvariant} {
		step := "reference " + string(role)
		if o.Progress != nil {
			o.Progress.Starting(step)
		}
		if i > 0 {
			if err := wt.Reset(ctx, o.Base); err != nil {
				return nil, v, err
			}
		}
		if _, err := wt.GitInput(ctx, diff, "apply", "--whitespace=nowarn", "-"); err != nil {
			var ge *gitx.Error
			if errors.As(err, &ge) {
				fmt.Fprintf(o.Out, "reference: does not apply: %s\n", ge.Reason())
				check.Refused = "does not apply to the base: " + ge.Reason()
				return nil, sign.Reference(v, check, c.Pass.ExpectExit, c.Invariant.ExpectExit), nil
			}
			return nil, v, err
		}
		cmd := c.Command(role)
		log := filepath.Join(logDir, fmt.Sprintf("reference-%s.log", role))
		res, err := run.Run(ctx, run.Spec{Argv: cmd.Cmd, Root: wt.Dir, Workdir: cmd.Workdir,
			Env: side.Env(o.Env(cmd)), Timeout: cmd.Timeout, Sandbox: side.Policy, Session: sess, Log: log})
		if err != nil {
			return nil, v, err
		}
		if ctx.Err() != nil {
			return nil, v, errorf("interrupted while running the %s command with the reference fix; the card was left unchanged", role)
		}
		if o.Progress != nil {
			o.Progress.Ended(step, fmt.Sprintf("%s: %s", step, res))
		}
		cause := gate.EnvironmentOf(cmd, res, log)
		fmt.Fprintf(o.Out, "reference %s: %s in %s (expect %d)%s\n", role, res, ms(res.Duration), cmd.ExpectExit, causeNote(cause))
		if role == card.RolePass {
			check.Pass = outcome(res, cause)
		} else {
			check.Invariant = outcome(res, cause)
		}
		runs = append(runs, evidence(role, res))
	}
	return runs, sign.Reference(v, check, c.Pass.ExpectExit, c.Invariant.ExpectExit), nil
}
