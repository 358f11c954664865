package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
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

// referenceDigest is how signoff.reference names a reference fix: the
// SHA-256 of its bytes as given, like a gate's diff_digest.
func referenceDigest(diff []byte) string {
	sum := sha256.Sum256(diff)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// signReference is the reference row of the decision table (`card sign
// --reference DIFF`): the fix must pass the card's static rules exactly as
// a gate judges them, apply to the base, and then make the pass and the
// invariant command exit as expected, each on a fresh checkout of the base
// with the fix applied. It runs only when every earlier row let the card
// through, and returns the runs as signoff evidence.
func signReference(ctx context.Context, env *Env, repo *gitx.Repo, c *card.Card, cardPath, base string, diff []byte, policy *sandbox.Policy, v sign.Verdict) ([]card.Run, sign.Verdict, error) {
	if v.Decision != sign.DecisionSign {
		return nil, v, nil
	}
	_, rule, reason, err := gate.Static(ctx, repo, c, cardPath, base, diff)
	if err != nil {
		return nil, v, err
	}
	if rule != "" {
		fmt.Fprintf(env.Stdout, "reference: refused by %s: %s\n", rule, reason)
		return nil, sign.Reference(v, sign.ReferenceCheck{Refused: fmt.Sprintf("breaks %s: %s", rule, reason)}, c.Pass.ExpectExit, c.Invariant.ExpectExit), nil
	}
	wt, err := worktree.Add(ctx, repo, base)
	if err != nil {
		return nil, v, err
	}
	defer wt.Remove(ctx)
	logDir, err := signLogDir(repo)
	if err != nil {
		return nil, v, err
	}
	fmt.Fprintf(env.Stderr, "reference logs: %s\n", logDir)
	// The reference is a diff like any candidate's: its runs see the
	// card's build cache through a private layer and never write it.
	side, err := gate.EnterCandidate(repo, policy)
	if err != nil {
		return nil, v, err
	}
	defer side.Close()
	sess := run.NewSession()
	defer sess.Close()

	prog := newStepProgress(env) // nil unless stderr is a terminal
	var check sign.ReferenceCheck
	var runs []card.Run
	for i, role := range []card.Role{card.RolePass, card.RoleInvariant} {
		step := "reference " + string(role)
		if prog != nil {
			prog.starting(step)
		}
		if i > 0 {
			if err := wt.Reset(ctx, base); err != nil {
				return nil, v, err
			}
		}
		if _, err := wt.GitInput(ctx, diff, "apply", "--whitespace=nowarn", "-"); err != nil {
			var ge *gitx.Error
			if errors.As(err, &ge) {
				fmt.Fprintf(env.Stdout, "reference: does not apply: %s\n", ge.Reason())
				check.Refused = "does not apply to the base: " + ge.Reason()
				return nil, sign.Reference(v, check, c.Pass.ExpectExit, c.Invariant.ExpectExit), nil
			}
			return nil, v, err
		}
		cmd := c.Command(role)
		log := filepath.Join(logDir, fmt.Sprintf("reference-%s.log", role))
		res, err := run.Run(ctx, run.Spec{Argv: cmd.Cmd, Root: wt.Dir, Workdir: cmd.Workdir,
			Env: side.Env(signEnv(env.Getenv, cmd)), Timeout: cmd.Timeout, Sandbox: side.Policy, Session: sess, Log: log})
		if err != nil {
			return nil, v, err
		}
		if ctx.Err() != nil {
			return nil, v, Errorf("interrupted while running the %s command with the reference fix; the card was left unchanged", role)
		}
		if prog != nil {
			prog.ended(step, fmt.Sprintf("%s: %s", step, res))
		}
		cause := gate.EnvironmentOf(cmd, res, log)
		fmt.Fprintf(env.Stdout, "reference %s: %s in %s (expect %d)%s\n", role, res, signMS(res.Duration), cmd.ExpectExit, signCause(cause))
		o := sign.Outcome{Exit: res.Exit, Inconclusive: res.Inconclusive() || cause != "", Environment: cause}
		if role == card.RolePass {
			check.Pass = o
		} else {
			check.Invariant = o
		}
		runs = append(runs, card.Run{Role: string(role), Exit: signExit(res), DurationMS: res.Duration.Milliseconds()})
	}
	return runs, sign.Reference(v, check, c.Pass.ExpectExit, c.Invariant.ExpectExit), nil
}
