package gate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/failpass/failpass/internal/gitx"
	"github.com/failpass/failpass/internal/logdir"
	"github.com/failpass/failpass/internal/run"
	"github.com/failpass/failpass/internal/sandbox"
	"github.com/failpass/failpass/internal/worktree"
)

// Batch gates many candidates and shares what gating them one at a time
// would repeat: the base side (fail and invariant on the unchanged base)
// runs once per card, base and environment; patched sides run in pooled
// worktrees reset between candidates; results are kept in a
// content-addressed Cache. Run schedules a list of candidates; Gate is
// safe for concurrent use. Verdicts equal a lone gate's except for
// timings, log paths and the cached flags.
//
// A single gate (the package's Run) is a batch of one, so the two share
// every rule and guard: it differs only in what a lone candidate has to
// itself (its log folder, --keep-worktree, live step progress, a sandbox
// probed only once a command runs) and in never touching the verdict
// cache.
type Batch struct {
	repo  *gitx.Repo
	cache *Cache
	pool  *Pool
	jobs  int
	// lone marks Run's batch of one (see newBatch).
	lone bool

	logRoot string
	logOnce sync.Once
	logErr  error
	seq     atomic.Int64

	probeOnce sync.Once
	probe     sandbox.Report

	mu    sync.Mutex
	bases map[string]*baseCall
	envs  map[string]*envCall
}

// BatchConfig sets up a Batch.
type BatchConfig struct {
	Repo *gitx.Repo
	// Cache keeps base results and verdicts across runs; nil (--no-cache)
	// computes everything and stores nothing.
	Cache *Cache
	// Jobs bounds the candidates gated at a time (Run) and the worktree
	// pool: one worktree per concurrent Gate. Below 1 means 1.
	Jobs int
	// LogDir is the root of every command log of the batch; "" makes a
	// fresh folder under the repository's state the first time a command
	// runs, so a batch refused statically leaves nothing behind.
	LogDir string
}

// NewBatch makes a Batch. Callers `defer b.Close(ctx)`.
func NewBatch(cfg BatchConfig) *Batch { return newBatch(cfg, false) }

// newBatch makes a Batch; lone makes the batch of one a single gate is
// (Run): its one log folder is cfg.LogDir itself, not a root of
// per-side folders, and the candidate's LogDir, KeepWorktree and
// progress callbacks are honoured.
func newBatch(cfg BatchConfig, lone bool) *Batch {
	jobs := max(cfg.Jobs, 1)
	return &Batch{
		repo: cfg.Repo, cache: cfg.Cache, pool: NewPool(cfg.Repo, jobs), jobs: jobs,
		lone: lone, logRoot: cfg.LogDir,
		bases: map[string]*baseCall{}, envs: map[string]*envCall{},
	}
}

// Run checks one candidate. An error means trouble (exit 2): the verdict
// is for broken rules.
//
// It is a batch of one: the same rules, worktree handling and guards as
// a Batch's candidates, with the candidate's own log folder (o.LogDir,
// or a fresh one once a command runs) and worktree (o.KeepWorktree
// leaves it for inspection). It neither reads nor writes the verdict
// cache: a single candidate is always gated afresh.
func Run(ctx context.Context, o Options) (*Verdict, error) {
	if err := o.bound(); err != nil {
		return nil, err
	}
	b := newBatch(BatchConfig{Repo: o.Repo, Cache: o.Cache, Jobs: 1, LogDir: o.LogDir}, true)
	defer b.Close(context.WithoutCancel(ctx))
	return b.Gate(ctx, o)
}

// Gate checks one candidate as Run does, sharing the base side, the
// worktree pool and the cache with the batch's other candidates.
// o.LogDir and o.KeepWorktree are ignored: logs go under the batch's log
// folder, and worktrees go back to the pool.
func (b *Batch) Gate(ctx context.Context, o Options) (*Verdict, error) {
	if !b.lone {
		o.LogDir = ""
		o.KeepWorktree = false
	}
	return runGate(ctx, o, b)
}

// CandidateError is trouble gating one candidate of Batch.Run: Index is
// its position in the list given.
type CandidateError struct {
	Index int
	Err   error
}

func (e *CandidateError) Error() string { return fmt.Sprintf("candidate %d: %v", e.Index, e.Err) }

func (e *CandidateError) Unwrap() error { return e.Err }

// Run gates cands, at most Jobs at a time, and hands each verdict to done
// as it finishes (completion order, not list order); calls to done never
// overlap, so done may print. The first trouble, gating a candidate (a
// *CandidateError) or returned by done, cancels the candidates still to
// run or running, and Run returns it once every gate has ended; a
// cancelled ctx is returned as ctx.Err(). done is not called after
// trouble. Close the batch afterwards as always.
func (b *Batch) Run(ctx context.Context, cands []Options, done func(i int, v *Verdict) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type result struct {
		i   int
		v   *Verdict
		err error
	}
	next := make(chan int)
	results := make(chan result)
	var wg sync.WaitGroup
	for range min(b.jobs, len(cands)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				v, err := b.Gate(ctx, cands[i])
				results <- result{i, v, err}
			}
		}()
	}
	go func() {
		defer close(next)
		for i := range cands {
			select {
			case next <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() {
		wg.Wait()
		close(results)
	}()
	var first error
	for r := range results {
		switch {
		case first != nil:
			continue // drained: every worker ends before Run returns
		case r.err != nil:
			first = &CandidateError{Index: r.i, Err: r.err}
		default:
			first = done(r.i, r.v)
		}
		if first != nil {
			cancel()
		}
	}
	if first == nil {
		first = ctx.Err() // the caller's cancellation: Run cancels only on trouble
	}
	return first
}

// Close removes the pooled worktrees and prunes the cache to its bounds.
func (b *Batch) Close(ctx context.Context) error {
	err := b.pool.Close(ctx)
	if b.cache != nil {
		err = errors.Join(err, b.cache.Prune())
	}
	return err
}

func (b *Batch) sandboxReport(on bool) sandbox.Report {
	if !on {
		return sandbox.OffReport()
	}
	b.probeOnce.Do(func() { b.probe = sandbox.Probe() })
	return b.probe
}

// logDir returns a fresh folder for one set of logs under the batch's
// root; in a batch of one, the root itself, which holds the base and
// patched logs side by side.
func (b *Batch) logDir(name string) (string, error) {
	b.logOnce.Do(func() {
		if b.logRoot == "" {
			b.logRoot, b.logErr = logdir.New(b.repo.StateDir(), "")
		}
	})
	if b.logErr != nil {
		return "", b.logErr
	}
	if b.lone {
		return b.logRoot, nil
	}
	dir := filepath.Join(b.logRoot, fmt.Sprintf("%04d-%s", b.seq.Add(1), name))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	return dir, nil
}

// dynEntry is what the cache keeps of a verdict: the steps from base.fail
// on and the rule they broke. The static rules are always re-checked (an
// expiry or a signer list changes without the card or diff changing).
type dynEntry struct {
	Steps   []Step `json:"steps"`
	Rule    string `json:"rule"`
	Reason  string `json:"reason"`
	Cache   string `json:"cache,omitempty"` // how the candidate saw the build cache (sandbox.Report.Cache)
	HeldOut string `json:"held_out,omitempty"`
	// RunOrder is the verdict's run_order.
	RunOrder []string `json:"run_order,omitempty"`
}

// baseResult is the shared base side of one card, base and environment.
type baseResult struct {
	Steps        []Step `json:"steps"`
	Rule         string `json:"rule"`
	Reason       string `json:"reason"`
	Inconclusive bool   `json:"-"`
	Cached       bool   `json:"-"`
}

type baseCall struct {
	done chan struct{}
	res  *baseResult
	err  error
}

type envCall struct {
	done chan struct{}
	fp   string
	err  error
}

// ranBase is what the gate that ran a base side itself keeps of it for
// its own patched side: the worktree, already a checkout of the base,
// the base side's sandbox policy, and the session, already started.
type ranBase struct {
	wt      *worktree.Worktree
	policy  *sandbox.Policy
	session *run.Session
}

// dynamicRules is the base and patched sides, through the cache when the
// batch has one. A batch of one never caches its verdict; with a cache
// it takes the base side's results from it (or stores them there), as a
// batch does; without one it computes no key and no environment
// fingerprint.
func (b *Batch) dynamicRules(ctx context.Context, g *gateRun) error {
	if b.lone && b.cache == nil {
		return b.dynamic(ctx, g, Key{})
	}
	g.sandboxReport() // commands run from here on: the verdict says how
	fp, err := b.envFingerprint(g)
	if err != nil {
		return err
	}
	if b.lone {
		return b.dynamic(ctx, g, baseKey(g, fp))
	}
	key := Key{
		Kind: "verdict", Tool: ToolID(), Base: g.base, CardDigest: g.v.CardDigest,
		DiffDigest: g.v.DiffDigest, Sandbox: sandboxKey(g.v.Sandbox), Env: fp, Repeat: g.o.Repeat,
		HeldOut: heldOutKey(g.o),
	}
	if b.cacheable(g) {
		var e dynEntry
		if b.cache.Get(key, &e) && validDyn(e) {
			g.v.Sandbox.Cache = e.Cache
			for _, s := range e.Steps {
				if s.Log != nil && !exists(*s.Log) {
					s.Log = nil // pruned since; the verdict stands
				}
				g.add(s)
			}
			g.v.Cached = true
			g.v.HeldOut = e.HeldOut
			g.v.RunOrder = e.RunOrder
			if e.Rule != "" {
				return g.broken(e.Rule, e.Reason)
			}
			return nil
		}
	}
	mark := len(g.v.Steps)
	err = b.dynamic(ctx, g, baseKey(g, fp))
	if err != nil && !errors.Is(err, errStop) {
		return err
	}
	if b.cacheable(g) && !g.inconclusive && ctx.Err() == nil {
		e := dynEntry{Steps: g.v.Steps[mark:], Cache: g.v.Sandbox.Cache, HeldOut: g.v.HeldOut, RunOrder: g.v.RunOrder}
		if g.broke {
			e.Rule, e.Reason = g.v.Failed(), g.v.Reason
		}
		// A failed store costs a later run time, never correctness.
		b.cache.Put(key, e)
	}
	return err
}

// baseKey is the cache key of g's base side, whose environment
// fingerprint is fp.
func baseKey(g *gateRun, fp string) Key {
	return Key{
		Kind: "base", Tool: ToolID(), Base: g.base, CardDigest: g.v.CardDigest,
		Sandbox: sandboxKey(g.v.Sandbox), Env: fp, Repeat: g.o.Repeat,
	}
}

// dynamic runs g's base side (or takes the batch's) and then its patched
// side in a clean checkout of the base.
func (b *Batch) dynamic(ctx context.Context, g *gateRun, baseKey Key) error {
	base, ran, err := b.baseSide(ctx, g, baseKey)
	if err != nil {
		return err
	}
	for _, s := range base.Steps {
		if ran != nil {
			g.v.Steps = append(g.v.Steps, s) // heard live as they ran
		} else {
			g.add(s)
		}
	}
	if base.Cached {
		g.v.BaseCached = true
	}
	if base.Rule != "" {
		if ran != nil {
			ran.session.Close()
			b.release(g, ran.wt)
		}
		g.inconclusive = g.inconclusive || base.Inconclusive
		return g.broken(base.Rule, base.Reason)
	}
	if ran != nil {
		// Only the signed base's commands ran here since the worktree was
		// made or proven clean: a reset to the base is enough.
		// Base commands may leave files behind; the patch must meet the
		// exact base, or diff.actual would count their leftovers. Reset
		// also rewrites the worktree's .git file, which a command could
		// have pointed at the user's checkout; every git call from here
		// on names the git directory explicitly.
		g.wt, g.policy, g.session = ran.wt, ran.policy, ran.session
		defer b.release(g, g.wt)
		defer g.closeSession()
		if err := g.wt.Reset(ctx, g.base); err != nil {
			return err
		}
	} else {
		if g.policy = g.basePolicy(); g.policy != nil {
			g.session = run.NewSession() // replaced before the pass run (freshSession)
			defer g.closeSession()
			go g.session.Start(g.policy) // while the pool resets a worktree
		}
		wt, err := b.pool.Get(ctx, g.base)
		if err != nil {
			return err
		}
		g.wt = wt
		defer b.release(g, wt)
	}
	if g.o.LogDir, err = b.logDir("candidate"); err != nil {
		return err
	}
	g.v.LogDir = g.o.LogDir
	return g.patchedRules(ctx)
}

// release gives g's worktree back to the pool, or keeps it for
// inspection (--keep-worktree, a lone gate's only).
func (b *Batch) release(g *gateRun, wt *worktree.Worktree) {
	if g.o.KeepWorktree {
		b.pool.Keep(wt)
		return
	}
	b.pool.Put(wt)
}

// cacheable says whether g's results may be stored in, and served from,
// the cache: only when the filesystem layer contained every run. Without
// it a candidate's code could have written a cache a base run read (the
// user's own GOCACHE under --sandbox=off, the card's build cache on a
// machine without Landlock and mount namespaces), or the verdict cache
// itself; such a verdict is computed afresh every time.
func (b *Batch) cacheable(g *gateRun) bool {
	return b.cache != nil && g.v.Sandbox.Has(sandbox.Filesystem)
}

// baseSide returns the base results for g's card, base and environment
// (key), computing them once per batch (and once per cache lifetime)
// however many candidates ask at the same time. The gate that runs them
// itself also gets the worktree and session they ran in (ran), to use
// for its own patched side; a batch of one always does.
func (b *Batch) baseSide(ctx context.Context, g *gateRun, key Key) (*baseResult, *ranBase, error) {
	if b.lone {
		return b.computeBase(ctx, g, key)
	}
	id := key.ID()
	b.mu.Lock()
	c, ok := b.bases[id]
	if !ok {
		c = &baseCall{done: make(chan struct{})}
		b.bases[id] = c
	}
	b.mu.Unlock()
	if ok {
		select {
		case <-c.done:
			return c.res, nil, c.err
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
	}
	var ran *ranBase
	c.res, ran, c.err = b.computeBase(ctx, g, key)
	if c.err != nil {
		// Trouble is not a result: a later candidate may try again.
		b.mu.Lock()
		delete(b.bases, id)
		b.mu.Unlock()
	}
	close(c.done)
	return c.res, ran, c.err
}

// computeBase runs base.fail and base.invariant in a worktree of the
// pool, unless the cache has them. It reports the steps to g's Starting
// and Progress as they run.
func (b *Batch) computeBase(ctx context.Context, g *gateRun, key Key) (*baseResult, *ranBase, error) {
	if b.cacheable(g) {
		var r baseResult
		if b.cache.Get(key, &r) && validBase(r) {
			r.Cached = true
			return &r, nil, nil
		}
	}
	bg := &gateRun{o: g.o, v: &Verdict{}, base: g.base, batch: b, probed: true}
	ran := &ranBase{session: run.NewSession()}
	if ran.policy = bg.basePolicy(); ran.policy != nil {
		// The probe and the helper need nothing from the worktree, so
		// they start while git checks it out.
		go ran.session.Start(ran.policy)
	}
	var err error
	if ran.wt, err = b.pool.Get(ctx, g.base); err != nil {
		ran.session.Close()
		return nil, nil, err
	}
	bg.wt, bg.policy, bg.session = ran.wt, ran.policy, ran.session
	g.sandboxReport() // commands run from here on: the verdict says how
	if bg.o.LogDir, err = b.logDir("base"); err == nil {
		if b.lone {
			g.v.LogDir = bg.o.LogDir // the candidate's folder, whatever rule breaks
		}
		err = bg.baseRules(ctx)
	}
	if err != nil && !errors.Is(err, errStop) {
		ran.session.Close()
		b.release(g, ran.wt)
		return nil, nil, err
	}
	r := &baseResult{Steps: bg.v.Steps, Inconclusive: bg.inconclusive}
	if bg.broke {
		r.Rule, r.Reason = bg.v.Failed(), bg.v.Reason
	}
	if b.cacheable(g) && !r.Inconclusive && ctx.Err() == nil {
		b.cache.Put(key, r)
	}
	return r, ran, nil
}

// envFingerprint is computed once per card per batch.
func (b *Batch) envFingerprint(g *gateRun) (string, error) {
	id := g.v.CardDigest
	b.mu.Lock()
	c, ok := b.envs[id]
	if !ok {
		c = &envCall{done: make(chan struct{})}
		b.envs[id] = c
	}
	b.mu.Unlock()
	if ok {
		<-c.done
		return c.fp, c.err
	}
	c.fp, c.err = EnvFingerprint(g.o.Card, g.o.Env)
	close(c.done)
	return c.fp, c.err
}

var dynamicRuleSet = map[string]bool{
	RuleBaseFail: true, RuleBaseInvariant: true, RuleDiffApply: true, RuleDiffActual: true,
	RulePatchPass: true, RulePatchInvariant: true, RulePatchCanary: true, RulePatchHeldOut: true,
}

// validDyn refuses a cache entry that could not have come from a real
// run: a pass needs every dynamic rule to have held, a failure needs a
// broken rule among them. Anything else is treated as a miss.
func validDyn(e dynEntry) bool {
	if !stepsValid(e.Steps) {
		return false
	}
	if e.Rule == "" {
		if len(e.Steps) != len(dynamicRuleSet) {
			return false
		}
		for _, s := range e.Steps {
			if s.Status != StatusOK && !canaryNotRun(s) {
				return false
			}
		}
		return true
	}
	return (dynamicRuleSet[e.Rule] || e.Rule == RulePatchFlaky) && e.Steps[len(e.Steps)-1].Status == StatusFail && e.Reason != ""
}

// canaryNotRun is the one step that may hold without running: a canary
// the card turned off or whose runner is not recognized, which says why.
func canaryNotRun(s Step) bool {
	return s.Rule == RulePatchCanary && s.Status == StatusNotRun && s.Reason != ""
}

func validBase(r baseResult) bool {
	if !stepsValid(r.Steps) || len(r.Steps) > 2 {
		return false
	}
	for _, s := range r.Steps {
		if s.Rule != RuleBaseFail && s.Rule != RuleBaseInvariant {
			return false
		}
	}
	if r.Rule == "" {
		return len(r.Steps) == 2 && r.Steps[0].Status == StatusOK && r.Steps[1].Status == StatusOK
	}
	return r.Steps[len(r.Steps)-1].Status == StatusFail && r.Steps[len(r.Steps)-1].Rule == r.Rule
}

func stepsValid(steps []Step) bool {
	if len(steps) == 0 {
		return false
	}
	seen := map[string]bool{}
	for _, s := range steps {
		if !dynamicRuleSet[s.Rule] || seen[s.Rule] || (s.Status != StatusOK && s.Status != StatusFail && !canaryNotRun(s)) {
			return false
		}
		seen[s.Rule] = true
	}
	return true
}

// sandboxKey names the sandbox a result was obtained under.
func sandboxKey(r sandbox.Report) []string {
	if r.Off {
		return []string{"off"}
	}
	return append([]string{"features:" + strings.Join(r.Features, ",")}, r.Applied...)
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}
