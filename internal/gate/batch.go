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
	"time"

	"github.com/failpass/failpass/internal/gitx"
	"github.com/failpass/failpass/internal/patch"
	"github.com/failpass/failpass/internal/run"
	"github.com/failpass/failpass/internal/sandbox"
	"github.com/failpass/failpass/internal/worktree"
)

// Batch gates many candidates and shares what gating them one at a time
// would repeat: the base side (fail and invariant on the unchanged base)
// runs once per card, base and environment; patched sides run in pooled
// worktrees reset between candidates; results are kept in a
// content-addressed Cache. Gate is safe for concurrent use, and its
// verdicts equal Run's except for timings, log paths and the cached flags.
type Batch struct {
	repo  *gitx.Repo
	cache *Cache
	pool  *Pool

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
	// Jobs bounds the worktree pool: one worktree per concurrent Gate.
	Jobs int
	// LogDir is the root of every command log of the batch; "" makes a
	// fresh folder under the repository's state the first time a command
	// runs, so a batch refused statically leaves nothing behind.
	LogDir string
}

// NewBatch makes a Batch. Callers `defer b.Close(ctx)`.
func NewBatch(cfg BatchConfig) *Batch {
	return &Batch{
		repo: cfg.Repo, cache: cfg.Cache, pool: NewPool(cfg.Repo, cfg.Jobs),
		logRoot: cfg.LogDir,
		bases:   map[string]*baseCall{}, envs: map[string]*envCall{},
	}
}

// Gate checks one candidate as Run does, sharing the base side, the
// worktree pool and the cache with the batch's other candidates.
// o.LogDir is ignored: logs go under the batch's log folder.
func (b *Batch) Gate(ctx context.Context, o Options) (*Verdict, error) {
	o.LogDir = ""
	o.KeepWorktree = false
	return runGate(ctx, o, b)
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

// logDir returns a fresh folder for one set of logs under the batch's root.
func (b *Batch) logDir(name string) (string, error) {
	b.logOnce.Do(func() {
		if b.logRoot == "" {
			b.logRoot, b.logErr = NewLogDir(b.repo)
		}
	})
	if b.logErr != nil {
		return "", b.logErr
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

// dynamicRules is the batch form of the base and patched sides.
func (b *Batch) dynamicRules(ctx context.Context, g *gateRun) error {
	fp, err := b.envFingerprint(g)
	if err != nil {
		return err
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
			if e.Rule != "" {
				return g.broken(e.Rule, e.Reason)
			}
			return nil
		}
	}
	mark := len(g.v.Steps)
	err = b.dynamic(ctx, g, fp)
	if err != nil && !errors.Is(err, errStop) {
		return err
	}
	if b.cacheable(g) && !g.inconclusive && ctx.Err() == nil {
		e := dynEntry{Steps: g.v.Steps[mark:], Cache: g.v.Sandbox.Cache, HeldOut: g.v.HeldOut}
		if g.broke {
			e.Rule, e.Reason = g.v.Failed(), g.v.Reason
		}
		// A failed store costs a later run time, never correctness.
		b.cache.Put(key, e)
	}
	return err
}

func (b *Batch) dynamic(ctx context.Context, g *gateRun, fp string) error {
	base, err := b.baseSide(ctx, g, fp)
	if err != nil {
		return err
	}
	for _, s := range base.Steps {
		g.add(s)
	}
	if base.Cached {
		g.v.BaseCached = true
	}
	if base.Rule != "" {
		g.inconclusive = g.inconclusive || base.Inconclusive
		return g.broken(base.Rule, base.Reason)
	}
	wt, err := b.pool.Get(ctx, g.base)
	if err != nil {
		return err
	}
	defer b.pool.Put(wt)
	g.wt = wt
	if g.policy = g.basePolicy(); g.policy != nil {
		g.session = run.NewSession() // the pass and invariant runs share one helper
		defer g.session.Close()
	}
	if g.o.LogDir, err = b.logDir("candidate"); err != nil {
		return err
	}
	g.v.LogDir = g.o.LogDir
	if err := unracy(ctx, wt, g.cs); err != nil {
		return err
	}
	return g.patchedRules(ctx)
}

// unracy guards diff.actual against racy git in a reused worktree. The
// reset may have rewritten a file the diff changes within the same second
// git apply then writes it (same size, same inode): git trusts an index
// entry whose stat matches, and gitpatch.ActualIn reads a copy of the index
// whose fresh mtime hides that the entry is racy, so the change would go
// unseen. Backdating those files and refreshing their entries makes
// whatever git apply writes differ from the index in mtime.
func unracy(ctx context.Context, wt *worktree.Worktree, cs *patch.ChangeSet) error {
	old := time.Unix(1, 0)
	n := 0
	for _, f := range cs.Files {
		if f.OldPath == "" {
			continue
		}
		p := filepath.Join(wt.Dir, filepath.FromSlash(f.OldPath))
		if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() {
			if os.Chtimes(p, old, old) == nil {
				n++
			}
		}
	}
	if n == 0 {
		return nil
	}
	_, err := wt.Git(ctx, "update-index", "-q", "--refresh")
	var ge *gitx.Error
	if errors.As(err, &ge) {
		// --refresh exits 1 when an entry needs updating; content is what
		// counts here, and it was just proven clean.
		return nil
	}
	return err
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

// baseSide returns the base results for g's card, base and environment,
// computing them once per batch (and once per cache lifetime) however
// many candidates ask at the same time.
func (b *Batch) baseSide(ctx context.Context, g *gateRun, fp string) (*baseResult, error) {
	key := Key{
		Kind: "base", Tool: ToolID(), Base: g.base, CardDigest: g.v.CardDigest,
		Sandbox: sandboxKey(g.v.Sandbox), Env: fp, Repeat: g.o.Repeat,
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
			return c.res, c.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	c.res, c.err = b.computeBase(ctx, g, key)
	if c.err != nil {
		// Trouble is not a result: a later candidate may try again.
		b.mu.Lock()
		delete(b.bases, id)
		b.mu.Unlock()
	}
	close(c.done)
	return c.res, c.err
}

func (b *Batch) computeBase(ctx context.Context, g *gateRun, key Key) (*baseResult, error) {
	if b.cacheable(g) {
		var r baseResult
		if b.cache.Get(key, &r) && validBase(r) {
			r.Cached = true
			return &r, nil
		}
	}
	wt, err := b.pool.Get(ctx, g.base)
	if err != nil {
		return nil, err
	}
	defer b.pool.Put(wt)
	bg := &gateRun{o: g.o, v: &Verdict{}, base: g.base, wt: wt}
	bg.o.Progress, bg.o.Starting = nil, nil
	if bg.policy = bg.basePolicy(); bg.policy != nil {
		bg.session = run.NewSession() // the base runs share one helper
		defer bg.session.Close()
	}
	if bg.o.LogDir, err = b.logDir("base"); err != nil {
		return nil, err
	}
	err = bg.baseRules(ctx)
	if err != nil && !errors.Is(err, errStop) {
		return nil, err
	}
	r := &baseResult{Steps: bg.v.Steps, Inconclusive: bg.inconclusive}
	if bg.broke {
		r.Rule, r.Reason = bg.v.Failed(), bg.v.Reason
	}
	if b.cacheable(g) && !r.Inconclusive && ctx.Err() == nil {
		b.cache.Put(key, r)
	}
	return r, nil
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
