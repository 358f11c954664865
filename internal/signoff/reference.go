package signoff

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/failpass/failpass/internal/card"
	"github.com/failpass/failpass/internal/gate"
	"github.com/failpass/failpass/internal/gitx"
	"github.com/failpass/failpass/internal/run"
	"github.com/failpass/failpass/internal/sandbox"
	"github.com/failpass/failpass/internal/worktree"
)

// referenceRow is the reference row of the decision table (`card sign
// --reference DIFF`): the fix must pass the card's static rules exactly as
// a gate judges them, apply to the base, and then make the pass and the
// invariant command exit as expected, each on a fresh checkout of the base
// with the fix applied. It runs only when every earlier row let the card
// through, and returns the runs as signoff evidence.
func referenceRow(ctx context.Context, o Options, policy *sandbox.Policy, v Verdict) ([]card.Run, Verdict, error) {
	if v.Decision != DecisionSign {
		return nil, v, nil
	}
	c, diff := o.Card, o.Reference
	_, rule, reason, err := gate.Static(ctx, o.Bound, diff)
	if err != nil {
		return nil, v, err
	}
	if rule != "" {
		fmt.Fprintf(o.Out, "reference: refused by %s: %s\n", rule, reason)
		return nil, Reference(v, ReferenceCheck{Refused: fmt.Sprintf("breaks %s: %s", rule, reason)}, c.Pass.ExpectExit, c.Invariant.ExpectExit), nil
	}
	wt, err := worktree.Add(ctx, o.Repo, o.Base)
	if err != nil {
		return nil, v, err
	}
	defer wt.Remove(ctx)
	logDir := o.logs
	// The reference is a diff like any candidate's: its runs see the
	// card's build cache through a private layer and never write it.
	side, err := gate.EnterCandidate(o.Repo, policy)
	if err != nil {
		return nil, v, err
	}
	defer side.Close()
	sess := run.NewSession()
	defer sess.Close()

	var check ReferenceCheck
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
				return nil, Reference(v, check, c.Pass.ExpectExit, c.Invariant.ExpectExit), nil
			}
			return nil, v, err
		}
		cmd := c.Command(role)
		log := filepath.Join(logDir, fmt.Sprintf("reference-%s.log", role))
		res, err := run.Run(ctx, run.Spec{Argv: cmd.Cmd, Root: wt.Dir, Workdir: cmd.Workdir,
			Env: side.Env(o.Env(cmd)), Timeout: cmd.Timeout, Sandbox: side.Policy, Session: sess, Log: log,
			Disk: refDisk(c, side)})
		if err != nil {
			return nil, v, err
		}
		if ctx.Err() != nil {
			return nil, v, errorf("interrupted while running the %s command with the reference fix; the card was left unchanged", role)
		}
		if o.Progress != nil {
			o.Progress.Ended(step, fmt.Sprintf("%s: %s", step, res))
		}
		cause := environment(cmd, res, log)
		fmt.Fprintf(o.Out, "reference %s: %s in %s (expect %d)%s\n", role, res, ms(res.Duration), cmd.ExpectExit, causeNote(cause))
		if role == card.RolePass {
			check.Pass = outcome(res, cause)
		} else {
			check.Invariant = outcome(res, cause)
		}
		runs = append(runs, evidence(role, res))
	}
	return runs, Reference(v, check, c.Pass.ExpectExit, c.Invariant.ExpectExit), nil
}

// probeRow is the held-out row of a card with held_out.expect_stdout and
// a reference fix: the probe runs twice on the reference-patched tree
// (each on a fresh checkout, side and session). Both runs must exit
// expect_exit with byte-identical output, or the probe is flaky; that
// output must be the folder's expected output when it has one, and
// becomes it when it has none (r.Wrote, r.HeldOut); and the base's run
// must differ from it in exit or output, or the probe does not show the
// bug. The output is never printed.
func probeRow(ctx context.Context, o Options, policy *sandbox.Policy, r *Result) (Verdict, error) {
	h := o.Card.HeldOut
	wt, err := worktree.Add(ctx, o.Repo, o.Base)
	if err != nil {
		return r.Verdict, err
	}
	defer wt.Remove(ctx)
	logDir := o.logs
	var outs [][]byte
	for i := 0; i < 2; i++ {
		if err := wt.Reset(ctx, o.Base); err != nil {
			return r.Verdict, err
		}
		if _, err := wt.GitInput(ctx, o.Reference, "apply", "--whitespace=nowarn", "-"); err != nil {
			return r.Verdict, err // it applied for the reference row
		}
		side, err := gate.EnterCandidate(o.Repo, policy)
		if err != nil {
			return r.Verdict, err
		}
		sess := run.NewSession()
		hr, err := heldOutIn(ctx, o, wt, filepath.Join(logDir, fmt.Sprintf("reference-held-out-%d.log", i+1)), side.Policy, sess,
			func(c card.Command) []string { return side.Env(o.Env(c)) }, "must exit %d with the reference fix")
		sess.Close()
		side.Close()
		if err != nil {
			return r.Verdict, err
		}
		switch {
		case hr.cause != "":
			return Verdict{Decision: DecisionEnvironment, Reason: "the held-out probe failed for its environment with the reference fix: " + hr.cause}, nil
		case hr.res.Inconclusive() || hr.res.Exit != h.ExpectExit:
			return Verdict{Decision: DecisionMismatch, Reason: fmt.Sprintf("the held-out probe does not pass with the reference fix (%s, expected exit %d)", hr.res, h.ExpectExit)}, nil
		case hr.res.StdoutTruncated:
			return Verdict{Decision: DecisionMismatch, Reason: fmt.Sprintf("the held-out probe prints more than %d bytes with the reference fix: keep its output under 1 MiB", card.MaxExpectStdout)}, nil
		}
		outs = append(outs, hr.stdout)
	}
	if !bytes.Equal(outs[0], outs[1]) {
		return Verdict{Decision: DecisionNondeterministic, Reason: "the held-out probe printed different output in two runs with the reference fix: it is flaky (print nothing that varies: times, addresses, map order)"}, nil
	}
	got := outs[0]
	want := expectedOf(o)
	switch {
	case want != nil && !bytes.Equal(got, want):
		return Verdict{Decision: DecisionMismatch, Reason: "the held-out probe's output with the reference fix differs from held_out.expect_stdout: the file is not what the fix prints (remove it to let card sign write it)"}, nil
	case r.baseHeld == nil:
		return r.Verdict, errors.New("signoff: the held-out probe did not run on the base")
	case r.baseHeld.res.Exit == h.ExpectExit && !r.baseHeld.res.StdoutTruncated && bytes.Equal(r.baseHeld.stdout, got):
		return Verdict{Decision: DecisionMismatch, Reason: "the held-out probe exits and prints the same on the base as with the reference fix: the probe does not show the bug"}, nil
	}
	if want == nil {
		r.Wrote = got
		r.HeldOut = o.HeldOut.With(h.ExpectStdout, got)
		fmt.Fprintf(o.Out, "held-out: the reference fix's output (%d bytes) becomes %s\n", len(got), h.ExpectStdout)
	}
	v := r.Verdict
	v.Reason += "; the held-out probe's output with the reference fix is reproducible and differs on the base"
	return v, nil
}

// refDisk is the disk cap of a run of the reference fix: the card's, and
// the candidate side's private folders counted too.
func refDisk(c *card.Card, side *gate.Candidate) run.DiskCap {
	d := run.CardDisk(c.DiskCap())
	d.Areas = side.DiskAreas()
	return d
}
