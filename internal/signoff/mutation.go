package signoff

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/failpass/failpass/internal/card"
	"github.com/failpass/failpass/internal/gate"
	"github.com/failpass/failpass/internal/run"
	"github.com/failpass/failpass/internal/sandbox"
	"github.com/failpass/failpass/internal/worktree"
)

// mutationRow checks the mutation canary on the reference fix: the pass
// command runs once more on the reference-patched tree with the oracle
// test's literal expectation changed (gate.MutationOf). It must fail at
// a test: then the gate may run that mutation as a candidate's canary,
// knowing an honest fix fails it, and the signoff records its digest.
// Otherwise it records card.MutationNone and why, and the gate runs the
// inserted assertion. It never refuses the card.
func mutationRow(ctx context.Context, o Options, policy *sandbox.Policy) (string, error) {
	c := o.Card
	wt, err := worktree.Add(ctx, o.Repo, o.Base)
	if err != nil {
		return "", err
	}
	defer wt.Remove(ctx)
	if _, err := wt.GitInput(ctx, o.Reference, "apply", "--whitespace=nowarn", "-"); err != nil {
		return "", err // it applied for the reference row
	}
	m, why, err := gate.MutationOf(wt.Dir, c)
	if err != nil {
		return "", err
	}
	if m == nil {
		fmt.Fprintf(o.Out, "reference mutation: not run: %s\n", why)
		return card.MutationNone + why, nil
	}
	if err := os.WriteFile(filepath.Join(wt.Dir, filepath.FromSlash(m.File)), m.Mutated, 0o644); err != nil {
		return "", err
	}
	logDir := o.logs
	side, err := gate.EnterCandidate(o.Repo, policy)
	if err != nil {
		return "", err
	}
	defer side.Close()
	sess := run.NewSession()
	defer sess.Close()
	if o.Progress != nil {
		o.Progress.Starting("reference mutation")
	}
	cmd := c.Pass
	log := filepath.Join(logDir, "reference-mutation.log")
	res, err := run.Run(ctx, run.Spec{Argv: cmd.Cmd, Root: wt.Dir, Workdir: cmd.Workdir,
		Env: side.Env(o.Env(cmd)), Timeout: cmd.Timeout, Sandbox: side.Policy, Session: sess, Log: log})
	if err != nil {
		return "", err
	}
	if ctx.Err() != nil {
		return "", errorf("interrupted while running the mutated oracle test with the reference fix; the card was left unchanged")
	}
	if o.Progress != nil {
		o.Progress.Ended("reference mutation", fmt.Sprintf("reference mutation: %s", res))
	}
	valid, why := DecideMutation(outcome(res, environment(cmd, res, log)))
	fmt.Fprintf(o.Out, "reference mutation: %s in %s line %d (%s became %s): %s in %s: %s\n", m.Test, m.File, m.Line, m.Before, m.After, res, ms(res.Duration), mutationNote(valid, why))
	if !valid {
		return card.MutationNone + why, nil
	}
	return m.Digest, nil
}

func mutationNote(valid bool, why string) string {
	if valid {
		return "the mutation canary is valid"
	}
	return "the mutation canary cannot run: " + why
}

// DecideMutation says whether a run of the mutated oracle test on the
// reference fix makes the mutation a valid canary: only a conclusive
// failure at a test does. Pure.
func DecideMutation(r Outcome) (bool, string) {
	switch {
	case r.Inconclusive:
		return false, "the mutated oracle test's run with the reference fix was inconclusive"
	case r.Environment != "":
		return false, "the mutated oracle test failed for its environment with the reference fix: " + r.Environment
	case r.Exit == 0:
		return false, "the mutated oracle test passed with the reference fix: the test does not hinge on its literal"
	}
	return true, ""
}
