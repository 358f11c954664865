package gate

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/failpass/failpass/internal/card"
	"github.com/failpass/failpass/internal/testrunner"
	"github.com/failpass/failpass/internal/verdict"
)

// canaryRule is patch.canary. Once the patched runs held, it puts one
// assertion that must fail first in the pass command's oracle test (the
// runner's own assertion; testrunner.PlanCanary) and runs the pass command as
// signed, once, in the patched runs' worktree reset to the patched tree,
// on a fresh candidate side and in a sandbox session of its own. It must
// exit non-zero and be conclusive: a test framework neutered from library
// code (TestCase.run replaced, pytest's runtest patched, a Go init that
// exits 0 under testing) passes every test, this one too, and a canary
// that did not build or import proves nothing.
//
// Every other patched run had the decoy in the same place (plantDecoy):
// the same assertion, made to hold. So this run has the argv, the files
// and the selected test of the runs it guards, and a tree cannot neuter
// them and spare it by looking for a new file, a new test or another
// selection: it would have to read the assertion's two strings.
// canaryNotRun decides patch.canary without a run: the card turned it
// off or its runner is not recognized (a step saying so), or it could
// not be planned (broken).
func (g *gateRun) canaryNotRun() error {
	if g.canary.err != nil {
		return g.fail(RulePatchCanary, "the canary could not be planned: "+g.canary.err.Error())
	}
	g.add(Step{Rule: RulePatchCanary, Status: StatusNotRun, Reason: g.canary.notRun, Detail: g.canary.why})
	return nil
}

// canaryRun runs the canary on the tree patchedRules readied: afresh
// (unless it drew the first place), the canary written into the oracle
// test just before it, as every other patched run finds the decoy. A
// tree that neuters the runner only while a marker it plants is missing
// (in an ignored folder, beside its own source, in its build cache)
// would otherwise neuter the pass run and not this one.
func (g *gateRun) canaryRun(ctx context.Context) error {
	c := g.o.Card
	plan := g.canary.plan
	logPath := filepath.Join(g.o.LogDir, "patch-canary.log")
	res, err := g.runCmd(ctx, c.Pass, plan.Argv, logPath)
	if err != nil {
		return g.runError(RulePatchCanary, err)
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if why, err := g.treeAltered(c.Pass); err != nil {
		return err
	} else if why != "" {
		return g.fail(RulePatchCanary, why)
	}
	kind := testrunner.Recognize(c.Pass.Cmd, c.Pass.Workdir).Kind
	env := res.Environment(kind, logPath)
	step := Step{
		Rule: RulePatchCanary, Mutation: g.mutationStatus(), Exit: intp(res.Exit), DurationMS: res.Duration.Milliseconds(), Log: &logPath,
		Runs: []RunResult{{Argv: plan.Argv, Exit: res.Exit, Signal: res.Signal, TimedOut: res.TimedOut,
			DurationMS: res.Duration.Milliseconds(), Environment: env}},
	}
	switch {
	case res.Inconclusive():
		g.inconclusive = true
		step.Reason = fmt.Sprintf("the canary run was inconclusive (%s): a test that must fail proved nothing", res)
	case env != "":
		g.inconclusive = true
		step.Reason = "the canary's test did not run: " + env
	case res.Exit == 0 && g.canary.mutation != nil:
		m := g.canary.mutation
		step.Reason = fmt.Sprintf("%s in %s, with the expectation on line %d changed (%s became %s), still passed under the pass command (exit 0): a mutated expectation still passed, so the patched tree's result compares equal to anything, or its test runner reports no failure", plan.Test, plan.File, m.Line, m.Before, m.After)
	case res.Exit == 0:
		step.Reason = fmt.Sprintf("%s in %s, with an assertion that must fail put first in it, passed under the pass command (exit 0): the patched tree stops its test runner from reporting failures", plan.Test, plan.File)
	default:
		step.Status = StatusOK
		g.add(step)
		return nil
	}
	step.Status = StatusFail
	g.add(step)
	return g.broken(RulePatchCanary, step.Reason)
}

// mutationStatus is patch.canary's Mutation: MutationRan, or
// MutationNotRun and why.
func (g *gateRun) mutationStatus() string {
	if g.canary.mutation != nil {
		return MutationRan
	}
	return MutationNotRun + g.canary.mutationWhy
}

// Values of Step.Mutation for a patch.canary that ran.
const (
	MutationRan    = verdict.MutationRan
	MutationNotRun = verdict.MutationNotRun
)

// canaryPlan is what planCanary decided: a plan, a reason not to run, or
// an error reading the tree.
type canaryPlan struct {
	plan   *testrunner.Canary
	notRun string
	why    string // with notRun CanaryNotRecognized: runner's reason
	err    error
	// mutation, when set, is what the canary runs instead of the
	// inserted assertion (plan.Canary is its file, plan.Decoy the
	// original); else mutationWhy says why not.
	mutation    *testrunner.Mutation
	mutationWhy string
}

// planCanary plans patch.canary from the patched tree before any patched
// run: a run cannot then hide the oracle test from it (and turn the
// canary into "not run") by changing the tree. Its tokens are g.tokens
// (findKept, where a failure to read randomness is trouble).
func (g *gateRun) planCanary() error {
	c := g.o.Card
	if c.Canary == card.CanaryOff {
		g.canary = canaryPlan{notRun: CanaryOffReason}
		return nil
	}
	root, err := os.OpenRoot(g.wt.Dir)
	if err != nil {
		return fmt.Errorf("canary: %w", err)
	}
	defer root.Close()
	plan, err := testrunner.PlanCanary(root.FS(), c.Pass.Cmd, c.Pass.Workdir, g.tokens[0], g.tokens[1])
	var nr *testrunner.NotRecognizedError
	switch {
	case errors.As(err, &nr):
		g.canary = canaryPlan{notRun: CanaryNotRecognized, why: nr.Why}
	case err != nil:
		g.canary = canaryPlan{err: err}
	default:
		g.canary = canaryPlan{plan: plan}
		g.canary.mutation, g.canary.mutationWhy = useMutation(c, plan)
		if m := g.canary.mutation; m != nil {
			// The other runs get the oracle file as it is, written at
			// the same step as the canary's.
			plan.Canary, plan.Decoy = m.Mutated, plan.Original
		}
	}
	return nil
}

// The reasons the mutation canary did not run, after "the mutation
// canary did not run: ".
const (
	MutationUnsigned    = "the card was signed before failpass knew of it, or without --reference"
	MutationNoLiteral   = "no literal expectation found"
	MutationNotShown    = "not shown failing on the reference fix at sign-off"
	MutationOracleMoved = "the oracle test differs from the one the card's sign-off mutated"
)

// useMutation decides whether the canary runs the oracle test's
// mutation (testrunner.Canary.Mutate): only where the card's signed
// sign-off saw that very mutation (the same digest) fail on the
// reference fix. Anywhere else an honest fix might pass it (a test that
// does not hinge on its literal), so the inserted assertion runs, and
// the reason says why.
func useMutation(c *card.Card, plan *testrunner.Canary) (*testrunner.Mutation, string) {
	signed := ""
	if c.Signoff != nil {
		signed = c.Signoff.Mutation
	}
	if why, ok := strings.CutPrefix(signed, card.MutationNone); ok {
		return nil, why
	}
	if signed == "" {
		return nil, MutationUnsigned
	}
	m, err := plan.Mutate()
	if err != nil {
		return nil, MutationNoLiteral + ": " + err.Error()
	}
	if m.Digest != signed {
		return nil, MutationOracleMoved
	}
	return m, ""
}

// MutationOf is the mutation of the card's oracle test in the tree at
// dir, or why there is none: what `card sign --reference` runs on the
// reference-patched tree.
func MutationOf(dir string, c *card.Card) (*testrunner.Mutation, string, error) {
	if c.Canary == card.CanaryOff {
		return nil, CanaryOffReason, nil
	}
	tok, err := canaryToken()
	if err != nil {
		return nil, "", err
	}
	decoy, err := canaryToken()
	if err != nil {
		return nil, "", err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, "", fmt.Errorf("canary: %w", err)
	}
	defer root.Close()
	plan, err := testrunner.PlanCanary(root.FS(), c.Pass.Cmd, c.Pass.Workdir, tok, decoy)
	var nr *testrunner.NotRecognizedError
	switch {
	case errors.As(err, &nr):
		return nil, "the canary does not follow the pass command: " + nr.Why, nil
	case err != nil:
		return nil, "", err
	}
	m, err := plan.Mutate()
	var nm *testrunner.NoMutationError
	switch {
	case errors.As(err, &nm):
		return nil, MutationNoLiteral + ": " + nm.Why, nil
	case err != nil:
		return nil, "", err
	}
	return m, "", nil
}

// plantDecoy puts the canary's decoy in the oracle test, where every
// patched run but the canary's finds it; the patched tree (g.patched) is
// the tree with it. Without it, the oracle test file as the base has it
// would tell every run from the canary's.
func (g *gateRun) plantDecoy() error {
	if g.canary.plan == nil {
		return nil
	}
	if err := g.writeOracle(g.canary.plan.Decoy); err != nil {
		return fmt.Errorf("canary: the decoy could not be put in %s: %w", g.canary.plan.File, err)
	}
	return nil
}

// unplantDecoy puts the oracle test file back as the base has it, so
// that a worktree kept for a look shows the tree the diff made.
func (g *gateRun) unplantDecoy() {
	if g.canary.plan != nil {
		g.writeOracle(g.canary.plan.Original)
	}
}

// runsTests says whether cmd is a test runner the decoy is written for,
// whose tests it cannot break.
func runsTests(cmd card.Command) bool {
	switch testrunner.Recognize(cmd.Cmd, cmd.Workdir).Kind {
	case testrunner.Pytest, testrunner.Unittest, testrunner.GoTest:
		return true
	}
	return false
}

// writeOracle replaces the oracle test file's content, inside the
// worktree.
func (g *gateRun) writeOracle(content []byte) error {
	root, err := os.OpenRoot(g.wt.Dir)
	if err != nil {
		return err
	}
	defer root.Close()
	return root.WriteFile(filepath.FromSlash(g.canary.plan.File), content, 0o644)
}

// validToken says whether t could be a canaryToken (a kept prebuild's
// note is read back).
func validToken(t string) bool {
	if len(t) != testrunner.TokenLen || t[0] < 'a' || t[0] > 'z' {
		return false
	}
	for _, r := range t {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') {
			return false
		}
	}
	h := len(t) / 2
	return t[:h] != t[h:]
}

// canaryToken is a fresh random token (testrunner.TokenLen lowercase letters
// and digits, the first a letter) whose halves differ.
func canaryToken() (string, error) {
	const letters = "abcdefghijklmnopqrstuvwxyz"
	const alnum = letters + "0123456789"
	b := make([]byte, testrunner.TokenLen)
	for {
		if _, err := rand.Read(b); err != nil {
			return "", fmt.Errorf("canary: %w", err)
		}
		b[0] = letters[int(b[0])%len(letters)]
		for i := 1; i < len(b); i++ {
			b[i] = alnum[int(b[i])%len(alnum)]
		}
		if h := len(b) / 2; string(b[:h]) != string(b[h:]) {
			return string(b), nil
		}
	}
}
