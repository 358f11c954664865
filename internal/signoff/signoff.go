// Package signoff owns a card's sign-off: the decision table run on the
// card's base (the fail runs, the invariant, the held-out tests, a
// reference fix), each on a fresh checkout in a disposable worktree, the
// signoff block it produces, and the trust roots a gate checks a signed
// card against.
package signoff

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/failpass/failpass/internal/card"
	"github.com/failpass/failpass/internal/gate"
	"github.com/failpass/failpass/internal/heldout"
	"github.com/failpass/failpass/internal/run"
	"github.com/failpass/failpass/internal/sandbox"
	"github.com/failpass/failpass/internal/testrunner"
	"github.com/failpass/failpass/internal/version"
	"github.com/failpass/failpass/internal/worktree"
)

// Options is one sign-off of a card on its base.
type Options struct {
	// The card bound to the repository: the table runs on its base,
	// which must hold (see Base), with its environment, which also keys
	// the build cache.
	*gate.Bound
	Repeat int // how many times the fail command runs; all must agree

	// Sandbox says whether the card's commands are contained. Contained
	// base runs fill the card's build cache, keyed as the gate keys it
	// (so the first gate after signing is warm), holding its lock; the
	// reference's runs see it read-only, as a candidate's do.
	Sandbox gate.SandboxMode

	// HeldOut, when set, adds the held-out row: the card's held-out
	// command, run on the base with the folder copied in, must fail.
	HeldOut *heldout.Folder
	// Reference, when set, adds the reference row: the fix must pass the
	// card's static rules and make pass and invariant exit as expected.
	Reference []byte

	// Out gets one line per run and per refused row (failpass prints it
	// on stdout); Notes gets where the command logs are (stderr).
	Out, Notes io.Writer
	// Progress hears of each run as it starts and ends; nil hears
	// nothing.
	Progress Progress

	// logs is the one log folder of the sign-off, made by Run.
	logs string
}

// Progress hears of the runs of a sign-off as they happen.
type Progress interface {
	Starting(step string)
	Ended(step, line string)
}

// Result is the decision table's outcome: the runs as signoff evidence
// (the fail runs in order, the invariant, the held-out run, the
// reference's pass and invariant runs; a row that did not run has none)
// and the verdict.
type Result struct {
	Runs    []card.Run
	Verdict Verdict
	// Reference is the reference fix's digest (ReferenceDigest), "" when
	// none was given.
	Reference string
	// Mutation is the signoff's mutation canary (card.Signoff.Mutation),
	// "" without a reference.
	Mutation string
	// HeldOut is the held-out folder the card is signed with: Options'
	// folder, or, when the table wrote held_out.expect_stdout's file
	// from the reference fix's run, that folder with it (Wrote set).
	HeldOut *heldout.Folder
	// Wrote is the expected output the table wrote (nil when the folder
	// had it already, or the card has no held_out.expect_stdout).
	Wrote []byte

	// baseHeld is the held-out run on the base of a card with
	// expect_stdout, which the reference row compares with its own.
	baseHeld *heldRun
}

// heldRun is a held-out run judged on its output.
type heldRun struct {
	res    run.Result
	cause  string
	stdout []byte
}

// Signoff is the card's signoff block for a table that said sign, made
// at the time at.
func (r *Result) Signoff(at time.Time) *card.Signoff {
	return &card.Signoff{
		At:        at.UTC().Format(time.RFC3339),
		Tool:      version.String(),
		Decision:  string(r.Verdict.Decision),
		Runs:      r.Runs,
		Reference: r.Reference,
		Mutation:  r.Mutation,
	}
}

// Error is a sign-off that cannot go on for a reason the user can act
// on: a base that is not a commit, an interrupt, held-out files that do
// not fit the tree. The card is left unchanged.
type Error struct {
	Msg  string
	Hint []string
}

func (e *Error) Error() string { return e.Msg }

// Hints are the lines that say how to fix it.
func (e *Error) Hints() []string { return e.Hint }

func errorf(format string, args ...any) *Error {
	return &Error{Msg: fmt.Sprintf(format, args...)}
}

func (e *Error) hint(format string, args ...any) *Error {
	e.Hint = append(e.Hint, fmt.Sprintf(format, args...))
	return e
}

// Base is the commit the table runs on: base_sha when the card pins one,
// else base_ref as Bind resolved it (a first signing writes it as
// base_sha). One that does not hold is an *Error that says what to do.
func Base(b *gate.Bound) (string, error) {
	if b.BaseErr == nil {
		return b.Base, nil
	}
	if b.Card.BaseSHA != "" {
		return "", errorf("%s", b.BaseErr).hint("fetch it, or remove base_sha to sign at base_ref (then re-sign with --force)")
	}
	return "", errorf("%s", b.BaseErr).hint("or set base_ref to a branch, tag or commit that exists")
}

// Run runs the decision table: the fail command Repeat times and the
// invariant once, then the held-out row and the reference row, each only
// when every earlier row let the card through.
func Run(ctx context.Context, o Options) (*Result, error) {
	if _, err := Base(o.Bound); err != nil {
		return nil, err
	}
	var policy *sandbox.Policy
	if o.Sandbox == gate.SandboxOn {
		policy = o.Policy()
	}
	var err error
	if o.logs, err = o.NewLogDir("sign"); err != nil {
		return nil, err
	}
	fmt.Fprintf(o.Notes, "logs: %s\n", o.logs)
	if err := prepare(ctx, o, policy); err != nil {
		return nil, err
	}
	r := &Result{HeldOut: o.HeldOut}
	runs, v, err := baseRows(ctx, o, policy, r)
	if err != nil {
		return nil, err
	}
	r.Runs, r.Verdict = runs, v
	if o.Reference != nil {
		refRuns, v, err := referenceRow(ctx, o, policy, r.Verdict)
		if err != nil {
			return nil, err
		}
		r.Runs, r.Verdict = append(r.Runs, refRuns...), v
		r.Reference = ReferenceDigest(o.Reference)
		if r.Verdict.Decision == DecisionSign {
			if r.Mutation, err = mutationRow(ctx, o, policy); err != nil {
				return nil, err
			}
		}
		if r.Verdict.Decision == DecisionSign && o.HeldOut != nil && o.Card.HeldOut.ExpectStdout != "" {
			if r.Verdict, err = probeRow(ctx, o, policy, r); err != nil {
				return nil, err
			}
		}
	}
	return r, nil
}

// baseRows runs the fail command n times and the invariant once, each on
// a fresh checkout of the base in one disposable worktree, then the
// held-out command, prints every run, and applies the decision table.
func baseRows(ctx context.Context, o Options, policy *sandbox.Policy, r *Result) ([]card.Run, Verdict, error) {
	c, n := o.Card, o.Repeat
	wt, err := worktree.Add(ctx, o.Repo, o.Base)
	if err != nil {
		return nil, Verdict{}, err
	}
	defer wt.Remove(ctx)
	logDir := o.logs
	if policy != nil {
		// Writers of the build cache hold its lock (see sandbox.LockCache).
		unlock, err := sandbox.LockCache(policy.CacheDir)
		if err != nil {
			return nil, Verdict{}, err
		}
		defer unlock()
	}
	sess := run.NewSession() // every run of the table shares one sandbox helper
	defer sess.Close()

	logOf := func(role card.Role, i int) string {
		return filepath.Join(logDir, fmt.Sprintf("%s-%d.log", role, i+1))
	}
	one := func(role card.Role, i int) (run.Result, error) {
		step := fmt.Sprintf("%s run %d", role, i+1)
		if role == card.RoleFail {
			step = fmt.Sprintf("fail run %d/%d", i+1, n)
		}
		if o.Progress != nil {
			o.Progress.Starting(step)
		}
		if i > 0 || role == card.RoleInvariant {
			// Every run starts from the clean base: a run that leaves a
			// cache or a marker file behind must not steer the next.
			if err := wt.Reset(ctx, o.Base); err != nil {
				return run.Result{}, err
			}
		}
		cmd := c.Command(role)
		res, err := run.Run(ctx, run.Spec{Argv: cmd.Cmd, Root: wt.Dir, Workdir: cmd.Workdir,
			Env: o.Env(cmd), Timeout: cmd.Timeout, Log: logOf(role, i), Sandbox: policy, Session: sess, Disk: run.CardDisk(c.DiskCap())})
		if err != nil {
			return res, err
		}
		if ctx.Err() != nil {
			return res, errorf("interrupted while running the %s command; the card was left unchanged", role)
		}
		if o.Progress != nil {
			o.Progress.Ended(step, fmt.Sprintf("%s: %s", step, res))
		}
		return res, nil
	}
	var fails []Outcome
	var runs []card.Run
	for i := 0; i < n; i++ {
		res, err := one(card.RoleFail, i)
		if err != nil {
			return nil, Verdict{}, err
		}
		cause := environment(c.Fail, res, logOf(card.RoleFail, i))
		fmt.Fprintf(o.Out, "fail run %d/%d: %s in %s (expect %d)%s\n", i+1, n, res, ms(res.Duration), c.Fail.ExpectExit, causeNote(cause))
		fails = append(fails, outcome(res, cause))
		runs = append(runs, evidence(card.RoleFail, res))
	}
	res, err := one(card.RoleInvariant, 0)
	if err != nil {
		return nil, Verdict{}, err
	}
	cause := environment(c.Invariant, res, logOf(card.RoleInvariant, 0))
	fmt.Fprintf(o.Out, "invariant: %s in %s (expect %d)%s\n", res, ms(res.Duration), c.Invariant.ExpectExit, causeNote(cause))
	runs = append(runs, evidence(card.RoleInvariant, res))
	v := Decide(fails, c.Fail.ExpectExit, outcome(res, cause), c.Invariant.ExpectExit)
	if o.HeldOut == nil || v.Decision != DecisionSign {
		// The held-out row comes last: an earlier row decides alone.
		return runs, v, nil
	}
	hr, err := heldOutRun(ctx, o, wt, logDir, policy, sess, "held-out-1.log")
	if err != nil {
		return nil, Verdict{}, err
	}
	res, cause = hr.res, hr.cause
	runs = append(runs, evidence(card.RoleHeldOut, res))
	if c.HeldOut.ExpectStdout != "" {
		r.baseHeld = hr
		return runs, decideBaseProbe(v, hr, c.HeldOut.ExpectExit, expectedOf(o)), nil
	}
	return runs, DecideHeldOut(v, outcome(res, cause), c.HeldOut.ExpectExit), nil
}

// expectedOf is the expected output the held-out folder holds, nil when
// it has none yet (card sign --reference writes it).
func expectedOf(o Options) []byte {
	_, want, err := o.HeldOut.Split(o.Card.HeldOut.ExpectStdout)
	if err != nil {
		return nil
	}
	return want
}

// testsOf is what of the held-out folder is copied into a tree: all of
// it but the expected output.
func testsOf(o Options) *heldout.Folder {
	if o.Card.HeldOut.ExpectStdout == "" {
		return o.HeldOut
	}
	if tests, _, err := o.HeldOut.Split(o.Card.HeldOut.ExpectStdout); err == nil {
		return tests
	}
	return o.HeldOut // the file is not there yet
}

// decideBaseProbe is the held-out row of a card with expect_stdout: on
// the base the probe must run conclusively and differ from what a fix
// gives, in its exit or its output. Without the expected output yet,
// only the first is known here; probeRow compares the output.
func decideBaseProbe(v Verdict, hr *heldRun, expectExit int, want []byte) Verdict {
	switch {
	case v.Decision != DecisionSign:
		return v
	case hr.cause != "":
		return Verdict{Decision: DecisionEnvironment, Reason: "the held-out probe failed for its environment on the base, not at its output: " + hr.cause}
	case hr.res.Inconclusive():
		return Verdict{Decision: DecisionMismatch, Reason: "the held-out probe was inconclusive on the base (timeout, signal, or exit 125/126/127): it proves nothing"}
	case want != nil && hr.res.Exit == expectExit && !hr.res.StdoutTruncated && bytes.Equal(hr.stdout, want):
		return Verdict{Decision: DecisionMismatch, Reason: "the held-out probe exits as expected and prints the expected output on the base: the probe does not show the bug"}
	}
	return v
}

// heldOutRun runs the held-out command on a clean base with the held-out
// files copied in, as the gate runs it on the patched tree. With
// held_out.expect_stdout its standard output is kept apart, never
// logged, and dest must be a folder the base lacks.
func heldOutRun(ctx context.Context, o Options, wt *worktree.Worktree, logDir string, policy *sandbox.Policy, sess *run.Session, logName string) (*heldRun, error) {
	if err := wt.Reset(ctx, o.Base); err != nil {
		return nil, err
	}
	return heldOutIn(ctx, o, wt, filepath.Join(logDir, logName), policy, sess, o.Env, "must not exit %d on the base")
}

// heldOutIn copies the held-out tests into wt as it is and runs the
// held-out command there; note says what the run must do.
func heldOutIn(ctx context.Context, o Options, wt *worktree.Worktree, log string, policy *sandbox.Policy, sess *run.Session, env func(card.Command) []string, note string) (*heldRun, error) {
	h := o.Card.HeldOut
	if h.ExpectStdout != "" {
		if _, err := os.Lstat(filepath.Join(wt.Dir, filepath.FromSlash(h.Dest))); !errors.Is(err, os.ErrNotExist) {
			return nil, errorf("held_out.dest %q exists in the tree: with held_out.expect_stdout it must name a folder the base does not have", h.Dest).
				hint("name a new folder, such as \"probe\"")
		}
	}
	copied, err := testsOf(o).CopyInto(wt.Dir, h.Dest)
	if err != nil {
		return nil, errorf("cannot copy the held-out tests into the tree: %v", err).
			hint("held_out.dest names a folder of the tree (or one to create), with no symlink on its way")
	}
	paths, err := heldout.RelPaths(h.Workdir, copied)
	if err != nil {
		return nil, err
	}
	cmd := h.Command(paths)
	spec := run.Spec{Argv: cmd.Cmd, Root: wt.Dir, Workdir: cmd.Workdir,
		Env: env(cmd), Timeout: cmd.Timeout, Log: log, Sandbox: policy, Session: sess, Disk: run.CardDisk(o.Card.DiskCap())}
	if h.ExpectStdout != "" {
		spec.Stdout = card.MaxExpectStdout
	}
	res, err := run.Run(ctx, spec)
	if err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		return nil, errorf("interrupted while running the held-out command; the card was left unchanged")
	}
	// Held-out tests that cannot even start on the base (a missing
	// module, a build failure) would "fail there" without testing the bug.
	cause := environment(cmd, res, log)
	fmt.Fprintf(o.Out, "held-out: %s in %s (%d file(s); "+note+")%s\n", res, ms(res.Duration), len(copied), h.ExpectExit, causeNote(cause))
	return &heldRun{res: res, cause: cause, stdout: res.Stdout}, nil
}

// outcome is a run as the decision table sees it: a run that failed for
// its environment proves nothing.
func outcome(res run.Result, cause string) Outcome {
	return Outcome{Exit: res.Exit, Inconclusive: res.Inconclusive() || cause != "", Environment: cause}
}

// evidence is a run as the signoff records it.
func evidence(role card.Role, res run.Result) card.Run {
	return card.Run{Role: string(role), Exit: exitCode(res), DurationMS: res.Duration.Milliseconds()}
}

// causeNote is what a run line adds when the run failed for its
// environment.
func causeNote(cause string) string {
	if cause == "" {
		return ""
	}
	return ": failed for its environment, not at a test"
}

// exitCode is the exit code as the signoff records it (0..255). Only
// conclusive runs reach a signoff, so the clamp never hides anything.
func exitCode(r run.Result) int {
	if r.Exit < 0 || r.Exit > 255 {
		return 255
	}
	return r.Exit
}

func ms(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) + "ms" }

// logDir makes a fresh folder for this signing's command logs.

// ReferenceDigest is how signoff.reference names a reference fix: the
// SHA-256 of its bytes as given, like a gate's diff_digest.
func ReferenceDigest(diff []byte) string {
	sum := sha256.Sum256(diff)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// prepare runs the card's prepare command before the decision table's
// runs, as the gate does before its base runs (gate.RunPrepare: once per
// build cache key, so the first gate after signing finds the
// dependencies fetched). policy is the signing runs' sandbox; nil runs
// it uncontained.
func prepare(ctx context.Context, o Options, policy *sandbox.Policy) error {
	if o.Card.Prepare == nil {
		return nil
	}
	res, err := gate.RunPrepare(ctx, gate.PrepareOptions{Bound: o.Bound, Policy: policy, LogDir: o.logs})
	if err != nil {
		if ctx.Err() != nil {
			return errorf("interrupted while running the prepare command; the card was left unchanged")
		}
		return err
	}
	if res.Ran {
		fmt.Fprintf(o.Out, "prepare: exit 0 in %s\n", ms(res.Duration))
	} else {
		fmt.Fprintln(o.Out, "prepare: done before for this base and these commands")
	}
	return nil
}

// environment says why a finished run of cmd failed for its environment
// rather than at a test, or "" (run.Result.Environment): the table reads
// base runs as the gate's base rules do.
func environment(cmd card.Command, res run.Result, log string) string {
	return res.Environment(testrunner.Recognize(cmd.Cmd, cmd.Workdir).Kind, log)
}
