// Package gate checks candidate diffs against a contract card: the
// ordered rules of README.md (Rules), stopping at the first broken one, with
// the base and patched commands run in a disposable worktree. A Batch
// gates many candidates, a given number at a time, with a shared base
// side, pooled worktrees and a content-addressed cache; a single gate
// (Run) is a batch of one, so both take one path.
package gate

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/failpass/failpass/internal/budget"
	"github.com/failpass/failpass/internal/card"
	"github.com/failpass/failpass/internal/gitpatch"
	"github.com/failpass/failpass/internal/gitx"
	"github.com/failpass/failpass/internal/heldout"
	"github.com/failpass/failpass/internal/patch"
	"github.com/failpass/failpass/internal/run"
	"github.com/failpass/failpass/internal/sandbox"
	"github.com/failpass/failpass/internal/sign"
	"github.com/failpass/failpass/internal/testrunner"
	"github.com/failpass/failpass/internal/worktree"
)

// Options is everything one gate run needs. The CLI fills it from flags.
type Options struct {
	// The card, bound to the repository (Bind): its base, digest and
	// environment, resolved once for every candidate of the card.
	*Bound
	Diff     []byte
	DiffName string // as given on the command line

	// Trust decides card.signature. It returns the principals that signed.
	// When nil the card is treated as unsigned: the rule fails unless
	// AllowUnsigned.
	Trust         sign.Trust
	AllowUnsigned bool

	// Sandbox says whether card commands are contained. The zero value
	// contains them; SandboxOff is the user's explicit choice
	// (--sandbox=off), and the verdict says so.
	Sandbox SandboxMode
	// Policy adjusts the sandbox (limits, readable folders); nil is the
	// default. Its CacheDir and Candidate are the gate's own to set: the
	// card's build cache is BuildCacheDir, written only by base runs, and
	// every patched run sees it through its candidate's private layer.
	Policy *sandbox.Policy

	// HeldOut is the card's held-out folder (--held-out DIR), loaded
	// and checked against held_out.digest by the caller; nil when not
	// given. SkipHeldOut (--skip-held-out) passes patch.held_out without
	// it, loudly. Neither, for a card with held-out tests, breaks the rule.
	HeldOut     *heldout.Folder
	SkipHeldOut bool

	// CanaryPlace pins the canary's place among the patched runs:
	// place n (0-based) as n+1, CanaryPlaceLast last. The zero value,
	// CanaryPlaceRandom, draws it for each gate.
	CanaryPlace int

	// PatchedTree makes the verdict carry the patched tree (Verdict.Tree)
	// for a record: three git processes more once diff.apply holds, so
	// only a caller that records asks for it.
	PatchedTree bool

	Repeat int // runs of every card command (default 1)
	// Cache, for a single gate (Run), keeps the base side's results and
	// the candidate's prebuild (prebuild.go) for the next gate; nil
	// (--no-cache) runs both afresh and keeps neither. A single gate's
	// verdict is never cached. A batch has its own (BatchConfig.Cache).
	Cache *Cache
	// LogDir is where command logs go; when empty the gate makes a fresh
	// folder under the repository's state only once a command runs, so a
	// statically refused diff leaves nothing behind.
	LogDir       string
	KeepWorktree bool // leave the worktree for inspection
	Now          func() time.Time
	// Progress, when set, hears about each finished step.
	Progress func(Step)
	// Starting, when set, hears that a rule's command is about to run
	// (the rules that take time: base.*, patch.*).
	Starting func(rule string)
}

// bound refuses options whose card Bind did not bind: a verdict names the
// card by the digest Bind computed.
func (o *Options) bound() error {
	if o.Bound == nil || o.Digest == "" {
		return errors.New("gate: the candidate's card was not bound to the repository (gate.Bind)")
	}
	return nil
}

// SandboxMode says whether the gate contains card commands.
type SandboxMode int

const (
	// SandboxOn is the zero value: every card command runs in the
	// sandbox, with the default policy unless Options.Policy says more.
	SandboxOn SandboxMode = iota
	// SandboxOff runs card commands uncontained (--sandbox=off). Patched
	// runs still get build and bytecode caches of their own, never the
	// user's (see Candidate.Env).
	SandboxOff
)

// runGate checks one candidate as a candidate of b: Run's batch of one,
// or a Batch's.
func runGate(ctx context.Context, o Options, b *Batch) (*Verdict, error) {
	if err := o.bound(); err != nil {
		return nil, err
	}
	start := time.Now()
	g := &gateRun{o: o, v: &Verdict{Candidate: o.DiffName}, batch: b}
	switch {
	case o.Sandbox == SandboxOff:
		g.v.Sandbox = sandbox.OffReport()
		g.probed = true
	case b.lone:
		// Probed when a rule first needs it (sandboxReport): a candidate a
		// static rule refuses runs nothing, and a probe costs a process.
		g.v.Sandbox = sandbox.Report{Applied: []string{}, Missing: []string{}, Features: []string{}}
	default:
		g.v.Sandbox = b.sandboxReport(true)
		g.probed = true
	}
	if g.o.Repeat < 1 {
		g.o.Repeat = 1
	}
	if g.o.Now == nil {
		g.o.Now = time.Now
	}
	if g.o.Env == nil {
		// A Bound built in code, not by Bind: its copy gets the default,
		// so the one a batch's candidates share is never written.
		b := *g.o.Bound
		b.Env = DefaultEnv(os.Getenv)
		g.o.Bound = &b
	}
	sum := sha256.Sum256(o.Diff)
	g.v.DiffDigest = "sha256:" + hex.EncodeToString(sum[:])
	g.v.CardDigest = o.Digest
	err := g.run(ctx)
	g.v.DurationMS = time.Since(start).Milliseconds()
	if err != nil {
		return nil, err
	}
	g.finish()
	return g.v, nil
}

type gateRun struct {
	o     Options
	v     *Verdict
	base  string
	cs    *patch.ChangeSet
	wt    *worktree.Worktree
	broke bool
	// batch is the batch g is a candidate of (a single gate is a batch of
	// one): it lends the worktrees and shares the base side and the cache
	// with the batch's other candidates (see batch.go). nil only in Static.
	batch *Batch
	// inconclusive records that a run proved nothing (timeout, signal,
	// 125-127): such a verdict is never cached.
	inconclusive bool
	// probed says v.Sandbox holds a real report (see sandboxReport).
	probed bool
	// session is the sandbox helper the commands run in one worktree
	// share, when the sandbox is on.
	session *run.Session
	// policy contains the commands run now: the base side's (which may
	// write the card's build cache, under its lock) or, in a candidate
	// (enterCandidate), the candidate's. nil with the sandbox off.
	policy *sandbox.Policy
	// candidate is the candidate's side while its runs run (see
	// enterCandidate), nil on the base side.
	candidate *Candidate
	leaveSide func() // ends the candidate's side; nil on the base side
	// prebuilt is the side the candidate's prebuild ran on, whose layer
	// every patched run's side lies over (prebuild.go); nil without one.
	prebuilt *Candidate
	// kept is a kept prebuild of the candidate found before the canary
	// was planned (findKept), which the prebuild takes as its own;
	// keepDir is where this gate's prebuild is to be kept ("": not at
	// all, or it did not build whole); tokens are the canary's and the
	// decoy's (see prebuild.go).
	kept    *Candidate
	keepDir string
	tokens  [2]string
	// canary is patch.canary's plan, made before the patched runs (see
	// canary.go).
	canary canaryPlan
	// prepared says the card's prepare command was seen to (see prepare).
	prepared bool
	// readDiff returns git's reading of the diff; listed, when set, the
	// base's entries at the paths the diff names (see startReading).
	readDiff func() (*patch.ChangeSet, error)
	listed   func() *listing
	// patched is the worktree as the diff made it, with the canary's
	// decoy in the oracle test: what every patched run is given, and
	// repatch puts back.
	patched *worktree.Snapshot
	// harnessAllowed is the effective budget's allow_harness
	// (budgetRules), which treeAltered honours too.
	harnessAllowed func(p string) bool
	// given is the tree a patched run is given when it is not patched:
	// patched with the held-out tests copied in, or with the canary in
	// the oracle test. It is what the run must leave as it found it (see
	// treeAltered).
	given *worktree.Snapshot
	// expect is the held-out run's expected standard output while it
	// runs (held_out.expect_stdout), nil otherwise: runCmd keeps the
	// run's stdout apart from its log and runRule compares it.
	expect []byte
	// oracleTime is the oracle test file's modification time as the
	// diff's application left it: every write of its decoy or canary
	// gives it back (setOracle).
	oracleTime time.Time
	// dirTimes are the patched tree's folders' times as the first
	// patched run found them (worktree.Retime).
	dirTimes map[string]int64
	// secretChecked, secretDir and secretWhy are heldOutSecret's answer.
	secretChecked        bool
	secretDir, secretWhy string
}

// errStop ends the rule sequence after a broken rule was recorded.
var errStop = errors.New("rule broken")

func (g *gateRun) run(ctx context.Context) error {
	defer g.startReading(ctx)()
	for _, step := range []func(context.Context) error{
		g.cardRules, g.diffRules, g.dynamicRules, // diffRules judges the budget too
	} {
		if err := step(ctx); err != nil {
			if errors.Is(err, errStop) {
				return nil
			}
			return err
		}
	}
	return nil
}

// startReading starts git's reading of the diff (gitpatch.Read), which
// needs neither the card nor the repository, so it runs while the card's
// rules resolve the base; diffRules takes its result. With the base
// known already (a batch resolves it for every candidate), the base's
// entries at the paths the diff's headers name are listed alongside
// (gitpatch.BaseEntries), for ResolveModes. The caller waits for both
// with the function returned, so nothing they started outlives the gate.
func (g *gateRun) startReading(ctx context.Context) (wait func()) {
	var (
		wg  sync.WaitGroup
		cs  *patch.ChangeSet
		err error
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		cs, err = gitpatch.Read(ctx, g.o.Diff)
	}()
	g.readDiff = func() (*patch.ChangeSet, error) { wg.Wait(); return cs, err }
	g.listed = nil
	stop := func() {}
	if base := g.o.Base; base != "" {
		if h, err := patch.ScanHeaders(g.o.Diff); err == nil {
			l := &listing{base: base, paths: h.BasePaths()}
			lctx, cancel := context.WithCancel(ctx)
			stop = cancel
			wg.Add(1)
			go func() {
				defer wg.Done()
				l.tree, l.err = gitpatch.BaseEntries(lctx, g.o.Repo, base, l.paths)
			}()
			g.listed = func() *listing { wg.Wait(); return l }
		}
	}
	// A gate that ends before it needs the listing (a static refusal)
	// stops it rather than wait for it.
	return func() { stop(); wg.Wait() }
}

// A listing is the base's entries at the paths a diff's headers name,
// listed while git read the diff (startReading).
type listing struct {
	base  string
	paths []string
	tree  map[string]patch.BaseEntry
	err   error
}

// resolveModes is gitpatch.ResolveModes, from the listing startReading
// made when it lists what cs needs.
func (g *gateRun) resolveModes(ctx context.Context, cs *patch.ChangeSet) error {
	if g.listed != nil {
		if l := g.listed(); l.err == nil && l.base == g.base && slices.Equal(l.paths, cs.BasePaths()) {
			return gitpatch.ResolveFrom(ctx, g.o.Repo, g.base, cs, l.tree)
		}
	}
	return gitpatch.ResolveModes(ctx, g.o.Repo, g.base, cs)
}

func (g *gateRun) ok(rule string) {
	g.add(Step{Rule: rule, Status: StatusOK})
}

func (g *gateRun) add(s Step) {
	g.v.Steps = append(g.v.Steps, s)
	if g.o.Progress != nil {
		g.o.Progress(s)
	}
}

// fail records a broken rule and returns errStop.
func (g *gateRun) fail(rule, reason string) error {
	g.add(Step{Rule: rule, Status: StatusFail, Reason: reason})
	return g.broken(rule, reason)
}

func (g *gateRun) broken(rule, reason string) error {
	g.v.Verdict = Fail
	r := rule
	g.v.Rule = &r
	g.v.Reason = reason
	g.broke = true
	return errStop
}

// finish marks every rule not reached as not run, and sets a pass verdict.
func (g *gateRun) finish() {
	seen := map[string]bool{}
	for _, s := range g.v.Steps {
		seen[s.Rule] = true
	}
	for _, r := range Rules {
		if !seen[r] {
			s := Step{Rule: r, Status: StatusNotRun}
			if r == RulePatchCanary && g.o.Card.Canary == card.CanaryOff {
				s.Reason = CanaryOffReason // every verdict of such a card says so
			}
			g.v.Steps = append(g.v.Steps, s)
		}
	}
	// Steps read in gate order even when a rule was decided early (a diff
	// that does not fit the base is known before the base side runs).
	order := map[string]int{}
	for i, r := range Rules {
		order[r] = i
	}
	sort.SliceStable(g.v.Steps, func(i, j int) bool { return order[g.v.Steps[i].Rule] < order[g.v.Steps[j].Rule] })
	if !g.broke {
		g.v.Verdict = Pass
		g.v.Reason = "every rule held"
	}
}

func (g *gateRun) cardRules(ctx context.Context) error {
	c := g.o.Card
	switch {
	case g.o.Trust != nil && len(c.Signatures) > 0:
		signers, err := g.o.Trust(c)
		if err != nil {
			return g.fail(RuleCardSignature, err.Error())
		}
		g.v.Signers = signers
		g.ok(RuleCardSignature)
	case g.o.AllowUnsigned:
		g.v.Unsigned = true
		g.add(Step{Rule: RuleCardSignature, Status: StatusOK, Reason: "unsigned card allowed by --allow-unsigned: its commands were not verified"})
	case len(c.Signatures) == 0:
		return g.fail(RuleCardSignature, "the card is not signed")
	default:
		return g.fail(RuleCardSignature, "no allowed signers to verify the card's signatures against")
	}

	base, err := g.boundBase()
	if err != nil {
		return err
	}
	if base == "" {
		return errStop
	}
	g.base = base
	g.v.Base = base
	g.ok(RuleCardBase)

	if c.Expires != nil && !g.o.Now().Before(*c.Expires) {
		return g.fail(RuleCardExpired, fmt.Sprintf("the card expired at %s", c.Expires.UTC().Format(time.RFC3339)))
	}
	g.ok(RuleCardExpired)

	if c.Sandbox != nil {
		if missing := g.sandboxReport().MissingOf(c.Sandbox.Require); len(missing) > 0 {
			why := "this machine cannot provide them"
			if g.v.Sandbox.Off {
				why = "the sandbox is off (--sandbox=off)"
			}
			return g.fail(RuleSandboxRequire, fmt.Sprintf("the card requires sandbox layers %s: %s", strings.Join(missing, ", "), why))
		}
	}
	g.ok(RuleSandboxRequire)
	return nil
}

// boundBase is the base commit Bind resolved; one that does not hold
// breaks card.base.
func (g *gateRun) boundBase() (string, error) {
	if g.o.BaseErr != nil {
		return "", g.fail(RuleCardBase, g.o.BaseErr.Error())
	}
	return g.o.Base, nil
}

// diffRules reads the diff (diff.parse, diff.path), judges the budget
// (budget.*), and refuses a diff that does not fit the base (diff.apply,
// before any worktree exists).
func (g *gateRun) diffRules(ctx context.Context) error {
	cs, err := g.readDiff()
	if err != nil {
		var pe *patch.Error
		if !errors.As(err, &pe) {
			return err
		}
		if pe.Rule == RuleDiffPath {
			g.ok(RuleDiffParse)
		}
		return g.fail(pe.Rule, pe.Msg)
	}
	// The budget reads modes and symlink targets. A patch that states
	// them all (as git writes them) is judged before the base is listed,
	// a git call a refused diff need not wait for; otherwise the base
	// fills them in first (gitpatch.ResolveModes). A diff that
	// does not fit the base is judged by the budget as the patch states
	// it all the same: the budget comes before diff.apply in gate order.
	var misfit *patch.Error
	resolve := func() error {
		err := g.resolveModes(ctx, cs)
		if pe := (*patch.Error)(nil); errors.As(err, &pe) && pe.Rule == RuleDiffApply {
			misfit = pe
			return nil
		}
		return err
	}
	stated := cs.Stated()
	if !stated {
		if err := resolve(); err != nil {
			var pe *patch.Error
			if errors.As(err, &pe) {
				return g.fail(pe.Rule, pe.Msg)
			}
			return err
		}
	}
	g.ok(RuleDiffParse)
	g.ok(RuleDiffPath)
	g.cs, g.v.Changes = cs, cs
	if err := g.budgetRules(ctx); err != nil {
		return err
	}
	if stated {
		if err := resolve(); err != nil {
			return err
		}
	}
	if misfit != nil {
		return g.fail(misfit.Rule, misfit.Msg)
	}
	return nil
}

func (g *gateRun) budgetRules(ctx context.Context) error {
	scope := g.scope()
	b := scope.Budget
	g.harnessAllowed = scope.HarnessAllowed()
	f := scope.Check(g.cs)
	// The runner's inputs may need the base read: only when no rule
	// before budget.harness refused the diff already.
	if f == nil || slices.Index(budget.Rules, f.Rule) > slices.Index(budget.Rules, budget.RuleHarness) {
		inputs, err := g.o.HarnessInputs(ctx, g.cs.Paths())
		if err != nil {
			return err
		}
		scope.Harness = inputs
		f = scope.Check(g.cs)
	}
	for _, r := range budget.Rules {
		if f != nil && f.Rule == r {
			s := Step{Rule: r, Status: StatusFail, Reason: f.Reason, Path: f.Path}
			if f.Path != "" {
				s.Line = g.cs.FirstLine(f.Path)
			}
			g.add(s)
			return g.broken(r, f.Reason)
		}
		// The counting rules say how close the candidate came, as the
		// seed's runner does ("files changed: 2 (ok)").
		switch r {
		case budget.RuleFiles:
			g.add(Step{Rule: r, Status: StatusOK, Reason: fmt.Sprintf("files changed: %d of %d", g.cs.ChangedFiles(), b.MaxFiles)})
		case budget.RuleLines:
			g.add(Step{Rule: r, Status: StatusOK, Reason: fmt.Sprintf("lines changed: %d of %d", g.cs.ChangedLines(), b.MaxChangedLines)})
		default:
			g.ok(r)
		}
	}
	return nil
}

// scope is the card's scope (budget.CardScope) as far as this diff can
// meet it: of the oracle files, only those among the base entries of the
// paths the diff touches, which ResolveModes already read, since only a
// file the diff touches can break budget.oracle; listing the whole tree
// would cost a git call and scale with the repository.
func (g *gateRun) scope() budget.Scope {
	inBase := map[string]bool{}
	for _, f := range g.cs.Files {
		switch f.OldMode {
		case patch.ModeFile, patch.ModeExecutable, patch.ModeSymlink:
			inBase[f.OldPath] = true
		}
	}
	return budget.CardScope(g.o.Card, g.o.InRepo, func(p string) bool { return inBase[p] })
}

// Static runs the gate's static rules (diff.parse, diff.path, budget.*) on
// diff against base exactly as a gate run does, with no worktree and no
// command. It returns the change set and the first broken rule with its
// reason, or "" when the diff is within the card.
func Static(ctx context.Context, b *Bound, diff []byte) (*patch.ChangeSet, string, string, error) {
	base, err := b.Commit()
	if err != nil {
		return nil, "", "", err
	}
	g := &gateRun{o: Options{Bound: b, Diff: diff}, v: &Verdict{}, base: base, probed: true}
	defer g.startReading(ctx)()
	err = g.diffRules(ctx)
	switch {
	case errors.Is(err, errStop):
		return g.cs, g.v.Failed(), g.v.Reason, nil
	case err != nil:
		return nil, "", "", err
	}
	return g.cs, "", "", nil
}

// sandboxReport probes this machine's sandbox layers the first time a rule
// needs them, and keeps the report in the verdict.
func (g *gateRun) sandboxReport() sandbox.Report {
	if !g.probed {
		g.v.Sandbox = g.batch.sandboxReport(true)
		g.probed = true
	}
	return g.v.Sandbox
}

func (g *gateRun) dynamicRules(ctx context.Context) error {
	return g.batch.dynamicRules(ctx, g)
}

// basePolicy is the sandbox of the base side: o.Policy (or the default)
// with the card's build cache, which base runs may write. nil with the
// sandbox off.
func (g *gateRun) basePolicy() *sandbox.Policy {
	if g.o.Sandbox == SandboxOff {
		return nil
	}
	p := sandbox.Policy{}
	if g.o.Policy != nil {
		p = *g.o.Policy
	}
	p.Candidate = nil
	p.CacheDir, p.Deps = g.o.CacheDir(), g.o.DepsDir() // Deps: read-only to every run but the prepare command's
	if dir, why := g.heldOutSecret(); dir != "" && why == "" {
		// Every card command, base and candidate alike (a candidate's
		// side copies this policy): none reads the expected output.
		p.Secret = append(slices.Clone(p.Secret), dir)
	}
	return &p
}

// prepare runs the card's prepare command before the first run that
// needs what it fetches (RunPrepare: once per build cache key, so
// mostly a marker check). A batch's candidate checks too, since its
// base side may come from the cache. Uncontained, it runs once per gate,
// before the base side.
func (g *gateRun) prepare(ctx context.Context) error {
	if g.o.Card.Prepare == nil || g.candidate != nil || (g.policy == nil && g.prepared) {
		return nil
	}
	_, err := RunPrepare(ctx, PrepareOptions{Bound: g.o.Bound, Policy: g.policy, LogDir: g.o.LogDir,
		Starting: g.o.Starting, Progress: g.o.Progress})
	g.prepared = true
	return err
}

// baseRules runs base.fail and base.invariant in g.wt. Base runs run the
// signed base, and only they write the card's build cache: under its
// lock, so no candidate's overlay reads it meanwhile.
func (g *gateRun) baseRules(ctx context.Context) error {
	if err := g.prepare(ctx); err != nil {
		return err
	}
	if g.policy != nil && g.policy.CacheDir != "" {
		unlock, err := sandbox.LockCache(g.policy.CacheDir)
		if err != nil {
			return err
		}
		defer unlock()
	}
	c := g.o.Card
	if err := g.runRule(ctx, RuleBaseFail, "base-fail", c.Fail, ""); err != nil {
		return err
	}
	return g.runRule(ctx, RuleBaseInvariant, "base-invariant", c.Invariant, "")
}

// enterCandidate switches the gate's runs to a fresh candidate's side
// (see Candidate); leaveCandidate switches back and removes it.
func (g *gateRun) enterCandidate() error {
	base := g.policy
	side, err := EnterCandidate(g.o.Repo, base)
	if err != nil {
		return err
	}
	if side.Policy != nil && g.o.LogDir != "" {
		// The gate's own logs (a --log-dir the sandbox would let it
		// read) would tell the candidate's later runs from its first.
		if dir, err := filepath.Abs(g.o.LogDir); err == nil {
			side.Policy.Hidden = append(slices.Clone(side.Policy.Hidden), dir)
		}
	}
	if g.prebuilt != nil {
		side.Over(g.prebuilt)
	}
	g.candidate = side
	g.policy = side.Policy
	if side.CacheKind != "" {
		g.v.Sandbox.Cache = side.CacheKind
	}
	g.leaveSide = func() {
		g.policy, g.candidate, g.leaveSide = base, nil, nil
		side.Close()
	}
	return nil
}

// freshSession gives the runs from here on a sandbox helper of their own
// (with the sandbox on): a helper's namespaces outlive its commands, and
// what they count (process ids, loopback packets, cgroup totals) would
// tell a run from the runs before it in the same session. The pass run
// and the canary each start one, so each is the first command of its
// helper and the two cannot be told apart that way.
func (g *gateRun) freshSession() {
	if g.session == nil || g.policy == nil {
		return // nothing contained, nothing shared
	}
	g.session.Close()
	g.session = run.NewSession()
	go g.session.Start(g.policy)
}

// closeSession ends the gate's current session, if any.
func (g *gateRun) closeSession() {
	if g.session != nil {
		g.session.Close()
	}
}

// leaveCandidate ends the candidate's side, if one is open.
func (g *gateRun) leaveCandidate() {
	if g.leaveSide != nil {
		g.leaveSide()
	}
}

// patchedRules applies the diff to g.wt, a clean checkout of the base,
// and runs the patched side: diff.apply, diff.actual, patch.pass,
// patch.invariant, patch.held_out, patch.canary.
func (g *gateRun) patchedRules(ctx context.Context) error {
	wt, c := g.wt, g.o.Card
	if g.batch != nil && g.batch.pool != nil {
		g.batch.pool.Spoil(wt) // no later candidate gets this tree
	}
	g.freshSession() // its helper starts while the diff is applied and checked
	// diff.actual's index of the base, made while git applies the diff.
	var (
		ix     *gitpatch.BaseIndex
		ixErr  error
		ixMade sync.WaitGroup
	)
	ixMade.Add(1)
	go func() {
		defer ixMade.Done()
		ix, ixErr = gitpatch.NewBaseIndex(ctx, g.o.Repo, g.base)
	}()
	dropIndex := sync.OnceFunc(func() {
		ixMade.Wait()
		if ixErr == nil {
			ix.Remove()
		}
	})
	defer dropIndex()
	if _, err := wt.GitInput(ctx, g.o.Diff, "apply", "--whitespace=nowarn", "-"); err != nil {
		var ge *gitx.Error
		if errors.As(err, &ge) {
			return g.fail(RuleDiffApply, "git apply: "+firstLine(ge.Stderr))
		}
		return err
	}
	g.ok(RuleDiffApply)
	if g.o.PatchedTree {
		tree, applied, err := gitpatch.PatchedTree(ctx, g.o.Repo, g.base, g.o.Diff)
		if err != nil {
			return err
		}
		if applied {
			g.v.Tree = tree
		}
	}
	// The tree as the diff made it, for repatch to put back without git,
	// and to tell git which files the diff touched: every other file is
	// as the checkout wrote it (worktree.Changed).
	var err error
	if g.patched, err = wt.Snapshot(); err != nil {
		return err
	}
	changed, known, err := wt.Changed(g.base, g.patched)
	if err != nil {
		return err
	}
	var actual *patch.ChangeSet
	ixMade.Wait()
	if known && ixErr == nil {
		// git refusing a listed path is no verdict: the whole tree is
		// read instead.
		if actual, err = gitpatch.ActualAt(ctx, g.o.Repo, ix, wt.GitDir(), wt.Dir, changed); err != nil && ctx.Err() == nil {
			actual, err = nil, nil
		}
	}
	if actual == nil && err == nil {
		actual, err = gitpatch.ActualIn(ctx, g.o.Repo, wt.GitDir(), wt.Dir, g.base, true)
	}
	dropIndex()
	if err != nil {
		return err
	}
	same, why := g.cs.Equal(actual)
	if !same {
		// The worktree index's stat data (ActualIn) can hide a change: a
		// file git apply rewrote in the clock tick the checkout wrote it,
		// at the same size (racy git). Every file is read before refusing.
		if actual, err = gitpatch.ActualIn(ctx, g.o.Repo, wt.GitDir(), wt.Dir, g.base, false); err != nil {
			return err
		}
		same, why = g.cs.Equal(actual)
	}
	if !same {
		return g.fail(RuleDiffActual, "the applied patch differs from what the diff declares: "+why)
	}
	g.ok(RuleDiffActual)
	if err := g.findKept(); err != nil {
		return err
	}
	// Ends the prebuild's side, or the kept one findKept found, after
	// every run's side that lies over it (deferred below).
	defer g.dropPrebuilt()
	// The canary is planned from the tree as the diff made it, before any
	// patched run could change what it reads.
	if err := g.planCanary(); err != nil {
		return err
	}
	if g.canary.plan != nil {
		defer g.unplantDecoy()
		if fi, err := os.Stat(filepath.Join(wt.Dir, filepath.FromSlash(g.canary.plan.File))); err == nil {
			g.oracleTime = fi.ModTime()
		}
		if err := g.plantDecoy(); err != nil {
			return err
		}
		if g.patched, err = wt.Snapshot(); err != nil {
			return err
		}
	}
	if g.policy != nil {
		// A batch's base side may have come from the cache: what the
		// prepare command fetched must be there all the same.
		if err := g.prepare(ctx); err != nil {
			return err
		}
	}
	prebuilt, err := g.prebuild(ctx)
	if err != nil {
		return err
	}
	if !prebuilt {
		if err := g.enterCandidate(); err != nil {
			return err
		}
	}
	defer g.leaveCandidate()
	order, err := g.runOrder()
	if err != nil {
		return err
	}
	// After a prebuild every run starts afresh, the first too: the
	// prebuild's session and tree are not a run's.
	first := !prebuilt
	// start readies the tree for the next patched run: every run after
	// the first starts afresh (one that shared an earlier run's tree,
	// layer or session could find what it left and be neutered where the
	// canary, afresh, is not), and every run, the first included, finds
	// the oracle test written just before it starts, with the decoy or
	// the canary, at the same times.
	start := func(rule, what string, content []byte) error {
		if !first {
			if err := g.afresh(ctx, what); err != nil {
				return err
			}
		}
		first = false
		g.v.RunOrder = append(g.v.RunOrder, rule)
		if err := g.setOracle(content); err != nil {
			return err
		}
		// The tree's times as the first run found them: no access time
		// says a file was read by an earlier run, no folder's time that
		// an earlier run wrote in it.
		if g.dirTimes == nil {
			g.dirTimes = map[string]int64{}
		}
		return g.wt.Retime(g.patched, g.dirTimes)
	}
	for _, rule := range order {
		switch rule {
		case RulePatchPass:
			if err := start(rule, "pass", g.decoy()); err != nil {
				return err
			}
			err = g.runRule(ctx, RulePatchPass, "patch-pass", c.Pass, RulePatchFlaky)
		case RulePatchInvariant:
			if err := start(rule, "invariant", g.decoy()); err != nil {
				return err
			}
			err = g.runRule(ctx, RulePatchInvariant, "patch-invariant", c.Invariant, RulePatchFlaky)
		case RulePatchHeldOut:
			runs, derr := g.heldOutDecide()
			if derr != nil || !runs {
				err = derr
				break
			}
			if err := start(rule, "held-out", g.decoy()); err != nil {
				return err
			}
			err = g.heldOutRun(ctx)
		case RulePatchCanary:
			if g.canary.plan == nil {
				err = g.canaryNotRun()
				break
			}
			if err := start(rule, "canary", g.canary.plan.Canary); err != nil {
				return err
			}
			err = g.canaryRun(ctx)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// runOrder is the order of this gate's patched rules: pass, invariant
// and held-out in their canonical order, and the canary at a place drawn
// at random (crypto/rand) among them, first included. A tree that could
// tell which run comes first, or last, learns nothing of which one is
// the canary's. Rules are still reported in canonical order; the
// verdict's run_order keeps the order the runs happened.
func (g *gateRun) runOrder() ([]string, error) {
	order := []string{RulePatchPass, RulePatchInvariant, RulePatchHeldOut}
	k := len(order)
	switch p := g.o.CanaryPlace; {
	case g.canary.plan == nil || p == CanaryPlaceLast:
	case p > 0:
		k = min(p-1, len(order))
	default:
		n, err := rand.Int(rand.Reader, big.NewInt(int64(len(order)+1)))
		if err != nil {
			return nil, fmt.Errorf("canary: %w", err)
		}
		k = int(n.Int64())
	}
	return slices.Insert(order, k, RulePatchCanary), nil
}

// Values of Options.CanaryPlace beside a 0-based place.
const (
	CanaryPlaceRandom = 0
	CanaryPlaceLast   = -1
)

// decoy is the oracle test with the canary's decoy in it, nil without a
// canary plan.
func (g *gateRun) decoy() []byte {
	if g.canary.plan == nil {
		return nil
	}
	return g.canary.plan.Decoy
}

// setOracle writes the oracle test file (content: the decoy, or the
// canary) just before a patched run, with the times the tree's files
// had when the diff was applied, and records it in the patched tree's
// snapshot: every run, the canary's among them, finds the file written
// at the same step, with the same modification and access times. nil
// content (no canary plan) leaves the file alone.
func (g *gateRun) setOracle(content []byte) error {
	if content == nil {
		return nil
	}
	plan := g.canary.plan
	if err := g.writeOracle(content); err != nil {
		return fmt.Errorf("canary: %s could not be written: %w", plan.File, err)
	}
	if !g.oracleTime.IsZero() {
		if err := os.Chtimes(filepath.Join(g.wt.Dir, filepath.FromSlash(plan.File)), g.oracleTime, g.oracleTime); err != nil {
			return fmt.Errorf("canary: %w", err)
		}
	}
	return g.wt.Refresh(g.patched, plan.File)
}

// afresh starts a later run of the candidate as the pass run started: on
// the patched tree exactly as the diff makes it (repatch), on a fresh
// candidate side (its own cache layer) and in a sandbox session of its
// own. A tree that runs the oracle honestly (or special-cases it),
// plants a marker (in the tree, in its cache layer, in a session's
// counters) and neuters its runner in every run that finds one would
// otherwise pass a broken invariant or the held-out tests neutered, and
// meet the canary unneutered; every patched run after the pass run
// starts this way.
func (g *gateRun) afresh(ctx context.Context, what string) error {
	g.closeSession() // before its side goes: nothing may still run there
	g.leaveCandidate()
	if err := g.enterCandidate(); err != nil {
		return err
	}
	g.freshSession() // its helper starts while the tree is reset
	return g.repatch(ctx, what)
}

// repatch puts the worktree back to the patched tree exactly as the diff
// makes it, the canary's decoy in the oracle test (plantDecoy). Usually the runs changed no file of it (they write caches
// and reports beside them): removing what they added is all it takes,
// without git (worktree.Restore against g.patched). Otherwise it resets
// to the base (untracked and ignored files removed, the files the runs
// changed rewritten) and applies the diff again. Either way, what the
// runs so far left in the tree is gone.
func (g *gateRun) repatch(ctx context.Context, what string) error {
	if same, err := g.wt.Restore(g.patched); err == nil && same {
		return nil
	}
	if err := g.wt.Reset(ctx, g.base); err != nil {
		return err
	}
	if _, err := g.wt.GitInput(ctx, g.o.Diff, "apply", "--whitespace=nowarn", "-"); err != nil {
		var ge *gitx.Error
		if errors.As(err, &ge) {
			return fmt.Errorf("%s: the diff no longer applies to a fresh base: %s", what, firstLine(ge.Stderr))
		}
		return err
	}
	if err := g.plantDecoy(); err != nil {
		return err
	}
	var err error
	g.patched, err = g.wt.Snapshot()
	return err
}

// treeAltered says why a patched run of cmd that just ended must not
// count: it changed a file of the tree it was given (g.given, else
// g.patched), or added one a test runner may load as code
// (testrunner.Loadable). A run that rewrites source, another package's or
// module's, makes its tests run other code than the diff's (the tree is
// put back before the next run, and the change would never show): a
// library that rewrites a broken module while the invariant runs would
// pass it. Adding is the same move: a package folder beside a broken
// module, or a bytecode file for it, is imported in its place. What the
// runner itself writes there (cargo's target folder), what the card's
// effective budget allows (allow_harness) do not count. "" for a base
// run, or a tree left as it was.
func (g *gateRun) treeAltered(cmd card.Command) (string, error) {
	given := g.patched
	if g.given != nil {
		given = g.given
	}
	if g.candidate == nil || given == nil {
		return "", nil
	}
	kind := testrunner.Recognize(cmd.Cmd, cmd.Workdir).Kind
	notice := func(p string, d fs.DirEntry) bool {
		if kind.Writes(p, d.IsDir()) || g.harnessAllowed != nil && g.harnessAllowed(p) {
			return false
		}
		return d.IsDir() || d.Type()&fs.ModeSymlink != 0 || testrunner.Loadable(p)
	}
	c, ok, err := g.wt.Altered(given, notice)
	if err != nil || !ok {
		return "", err
	}
	if c.Added {
		return fmt.Sprintf("the run added %s, which a test runner may load as code: its tests may have run it in place of the tree the diff makes", c.Path), nil
	}
	return fmt.Sprintf("the run changed %s, a file of the patched tree: its tests did not run the tree the diff makes", c.Path), nil
}

// runCmd is how every card command of this gate runs: in the worktree, with
// the command's environment, timeout, the side's sandbox policy (base or
// candidate, see enterCandidate) and the gate's session; the verdict's
// sandbox report notes the cache the run saw. argv is cmd.Cmd, or the
// canary's retargeted form of it.
func (g *gateRun) runCmd(ctx context.Context, cmd card.Command, argv []string, logPath string) (run.Result, error) {
	var env []string
	if g.o.Env != nil {
		env = g.o.Env(cmd)
	}
	if g.candidate != nil {
		env = g.candidate.Env(env)
	}
	spec := run.Spec{
		Argv: argv, Root: g.wt.Dir, Workdir: cmd.Workdir, Env: env,
		Timeout: cmd.Timeout, Log: logPath, Sandbox: g.policy, Session: g.session,
		Disk: run.CardDisk(g.o.Card.DiskCap()),
	}
	if g.candidate != nil {
		spec.Disk.Areas = g.candidate.DiskAreas()
	}
	if g.expect != nil {
		spec.Stdout = card.MaxExpectStdout
	}
	res, err := run.Run(ctx, spec)
	if err == nil && res.Cache != "" && g.v.Sandbox.Cache != sandbox.CachePrivateCold {
		g.v.Sandbox.Cache = res.Cache // one cold run makes the verdict's cache cold
	}
	return res, err
}

// runError turns an error of run.Run into a broken rule when it is the
// card's or the command's doing, and returns any other error as trouble.
func (g *gateRun) runError(rule string, err error) error {
	var we *run.WorkdirError
	var ie *sandbox.IntegrityError
	switch {
	case errors.As(err, &we):
		return g.fail(rule, err.Error())
	case errors.As(err, &ie):
		// A command that rewrote the repository's git config may
		// have planted a program for failpass's own git calls:
		// stop before any more run.
		return g.fail(rule, err.Error())
	}
	return err
}

// runRule runs cmd Repeat times in the worktree. Every run must be
// conclusive and exit cmd.ExpectExit; runs that disagree break flakyRule
// when given, else rule. A base run of a recognized test runner that
// failed for its environment (testrunner.Classify) is inconclusive: a test
// that never compiled or never imported proves no bug.
func (g *gateRun) runRule(ctx context.Context, rule, logName string, cmd card.Command, flakyRule string) error {
	step := Step{Rule: rule, Expected: intp(cmd.ExpectExit)}
	if g.o.Starting != nil {
		g.o.Starting(rule)
	}
	var exits []string
	agree, conclusive := true, true
	var first *run.Result
	var firstLog string
	kind := testrunner.Unknown
	if rule == RuleBaseFail || rule == RuleBaseInvariant {
		kind = testrunner.Recognize(cmd.Cmd, cmd.Workdir).Kind
	}
	environment := ""
	differs := false
	for i := 0; i < g.o.Repeat; i++ {
		name := logName
		if g.o.Repeat > 1 {
			name = fmt.Sprintf("%s.%d", logName, i+1)
		}
		logPath := filepath.Join(g.o.LogDir, name+".log")
		res, err := g.runCmd(ctx, cmd, cmd.Cmd, logPath)
		if err != nil {
			return g.runError(rule, err)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if why, err := g.treeAltered(cmd); err != nil {
			return err
		} else if why != "" {
			step.Exit, step.Log = intp(res.Exit), &logPath
			step.Status, step.Reason = StatusFail, why
			g.add(step)
			return g.broken(rule, why)
		}
		if g.expect != nil && stdoutDiffers(res.Stdout, res.StdoutTruncated, g.expect) {
			differs = true
		}
		env := res.Environment(kind, logPath)
		step.DurationMS += res.Duration.Milliseconds()
		step.Runs = append(step.Runs, RunResult{Argv: cmd.Cmd, Exit: res.Exit, Signal: res.Signal, TimedOut: res.TimedOut,
			DurationMS: res.Duration.Milliseconds(), Environment: env})
		step.Log = &logPath
		exits = append(exits, res.String())
		inconclusive := res.Inconclusive() || env != ""
		if inconclusive {
			conclusive = false
		}
		if env != "" && environment == "" {
			environment = env
		}
		if first == nil {
			r := res
			first, firstLog = &r, logPath
		} else if res.Exit != first.Exit || res.Inconclusive() != first.Inconclusive() {
			agree = false
		}
	}
	step.Exit = intp(first.Exit)
	switch {
	case !conclusive:
		g.inconclusive = true
		step.Status = StatusFail
		step.Reason = fmt.Sprintf("inconclusive run (%s): it proves nothing whatever expect_exit says", strings.Join(exits, ", "))
		if environment != "" {
			step.Reason = fmt.Sprintf("inconclusive run (%s): it failed for its environment, not at a test: %s", strings.Join(exits, ", "), environment)
		}
		g.add(step)
		return g.broken(rule, step.Reason)
	case !agree:
		step.Status = StatusFail
		step.Reason = fmt.Sprintf("runs disagree (%s)", strings.Join(exits, ", "))
		g.add(step)
		if flakyRule != "" {
			return g.broken(flakyRule, step.Reason)
		}
		return g.broken(rule, step.Reason)
	case first.Exit != cmd.ExpectExit:
		step.Status = StatusFail
		step.Reason = fmt.Sprintf("exit %d, expected %d", first.Exit, cmd.ExpectExit)
		if kind == testrunner.Unknown {
			// A patched run that did not compile fails its rule (the
			// candidate broke the build), but the reason should say
			// so, with the compiler's first error, rather than leave
			// the user to open the log.
			if why := first.Environment(testrunner.Recognize(cmd.Cmd, cmd.Workdir).Kind, firstLog); why != "" {
				step.Reason += ": " + why
			}
		}
		if rule == RulePatchInvariant && g.canary.plan != nil && g.canary.mutation == nil && !runsTests(cmd) {
			// Not the likely cause, but the one a user cannot see.
			step.Reason += fmt.Sprintf(" (the run had the canary's decoy in %s; a command that checks that file's format or git status fails on it: see canary in docs/card.md)", g.canary.plan.File)
		}
		g.add(step)
		return g.broken(rule, step.Reason)
	case differs:
		// Only that they differ: never the bytes, nor where.
		step.Status = StatusFail
		step.Reason = fmt.Sprintf("exit %d as expected, but standard output differs from the expected output (held_out.expect_stdout)", first.Exit)
		g.add(step)
		return g.broken(rule, step.Reason)
	}
	step.Status = StatusOK
	if g.expect != nil {
		step.Reason = "standard output equals the expected output"
	}
	g.add(step)
	return nil
}

func intp(n int) *int { return &n }

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// DefaultEnv is the environment card commands get (the sandbox then
// makes HOME, TMPDIR and the caches private): the allow-list of the
// tool's own, run.CommandEnv (never tokens or keys), plus the card's
// signed per-command env.
func DefaultEnv(getenv func(string) string) func(card.Command) []string {
	return func(cmd card.Command) []string {
		env := run.Allowed(getenv, run.CommandEnv...)
		for k, v := range cmd.Env {
			env = append(env, k+"="+v)
		}
		return env
	}
}
