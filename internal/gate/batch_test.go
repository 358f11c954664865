package gate

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/failpass/failpass/internal/gittest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/failpass/failpass/internal/card"
	"github.com/failpass/failpass/internal/gitx"
	"github.com/failpass/failpass/internal/sandbox"
)

func TestMain(m *testing.M) { gittest.Main(m, "gate") }

// The test repository's git and files, as every package drives them.
var (
	git    = gittest.Git
	write  = gittest.Write
	mkdiff = gittest.Diff
)

// The test repository: a bug (answer=41), a check that wants 42, and an
// invariant that fails if anything a previous candidate planted is
// visible: a stray file, an ignored file, a tracked file changed behind
// an index flag, or per-worktree git config. It loads the library first,
// as check.sh does: each patched run starts on a tree of its own, so a
// planting library fails its own invariant only by what it plants there.
const (
	checkSh     = ". src/lib.sh\n[ \"$answer\" = 42 ]\n"
	invariantSh = `. src/lib.sh >/dev/null 2>&1
[ ! -e planted.txt ] || exit 3
[ ! -e build/junk ] || exit 4
! grep -q EVIL src/other.sh || exit 5
gd=$(git rev-parse --git-dir 2>/dev/null) || exit 0
[ ! -e "$gd/config.worktree" ] || exit 6
[ ! -e "$gd/hooks" ] || exit 7
exit 0
`
	cardYAML = `id: "T-1"
base_ref: "main"
fail: {cmd: ["sh", "tests/check.sh"], expect_exit: 1}
pass: {cmd: ["sh", "tests/check.sh"], expect_exit: 0}
invariant: {cmd: ["sh", "tests/invariant.sh"], expect_exit: 0}
budget: {max_files: 2, max_changed_lines: 20, deny_globs: ["ci/**"]}
`
)

func newRepo(t testing.TB) (*gitx.Repo, string) {
	t.Helper()
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "main")
	write(t, dir, "src/lib.sh", "answer=41\n")
	write(t, dir, "src/other.sh", "echo other\n")
	write(t, dir, "tests/check.sh", checkSh)
	write(t, dir, "tests/invariant.sh", invariantSh)
	write(t, dir, ".gitignore", "build/\n")
	write(t, dir, "ci/x.yml", "x: 1\n")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "base")
	base := strings.TrimSpace(git(t, dir, "rev-parse", "HEAD"))
	repo, err := gitx.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return repo, base
}

type cand struct {
	name string
	diff []byte
}

// candidates is the mix: honest, hostile, failing, flaky, planting.
func candidates(t testing.TB, dir string) []cand {
	return []cand{
		{"honest", mkdiff(t, dir, map[string]string{"src/lib.sh": "answer=42\n"})},
		{"wrong", mkdiff(t, dir, map[string]string{"src/lib.sh": "answer=43\n"})},
		{"deny", mkdiff(t, dir, map[string]string{"src/lib.sh": "answer=42\n", "ci/x.yml": "x: 2\n"})},
		{"oracle", mkdiff(t, dir, map[string]string{"tests/check.sh": "exit 0\n"})},
		{"garbage", []byte("this is not a diff\n")},
		{"stale", []byte("--- a/src/lib.sh\n+++ b/src/lib.sh\n@@ -1 +1 @@\n-answer=40\n+answer=42\n")},
		// Passes on one run, fails on the next: the worktree keeps a flag
		// file between repeats.
		{"flaky", mkdiff(t, dir, map[string]string{"src/lib.sh": "if [ -e .flip ]; then rm .flip; answer=0; else : > .flip; answer=42; fi\n"})},
		// Plants everything a pooled worktree must not carry over. Its
		// pass run breaks: it changed src/other.sh, a file of the tree
		// (gateRun.treeAltered); what it planted stays for the next.
		{"planter", mkdiff(t, dir, map[string]string{"src/lib.sh": `answer=42
: > planted.txt
mkdir -p build && : > build/junk
echo EVIL >> src/other.sh
git update-index --skip-worktree src/other.sh 2>/dev/null
gd=$(git rev-parse --git-dir 2>/dev/null) && { printf '[core]\n\tbare = true\n' > "$gd/config.worktree"; mkdir -p "$gd/hooks"; } 2>/dev/null
true
`})},
		{"honest-after", mkdiff(t, dir, map[string]string{"src/lib.sh": "answer=42 # again\n"})},
	}
}

func testCard(t testing.TB) *card.Card {
	c, err := card.Parse("card.yml", []byte(cardYAML))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func opts(t testing.TB, repo *gitx.Repo, c *card.Card, base string, cd cand, repeat int) Options {
	return Options{
		Bound: testBound(t, repo, c, base), Diff: cd.diff, DiffName: cd.name,
		AllowUnsigned: true, Repeat: repeat,
	}
}

// testBound is c bound to repo at base, as Bind binds it, with base
// given rather than resolved, and no digest for a card that is not whole
// (one a test builds for a single rule).
func testBound(t testing.TB, repo *gitx.Repo, c *card.Card, base string) *Bound {
	d, _ := c.Digest()
	return &Bound{Repo: repo, Card: c, Digest: d, Base: base, Env: DefaultEnv(os.Getenv)}
}

// norm is a verdict without what may differ between a batch and a lone
// run: timings, log paths, cached flags.
func norm(t testing.TB, v *Verdict) string {
	t.Helper()
	w := *v
	w.DurationMS, w.LogDir, w.Cached, w.BaseCached = 0, "", false, false
	// A lone gate probes the sandbox only once a command runs; a batch
	// has probed for every candidate. How the candidate saw the build
	// cache must agree.
	w.Sandbox = sandbox.Report{Cache: v.Sandbox.Cache}
	w.Steps = nil
	for _, s := range v.Steps {
		s.DurationMS, s.Log = 0, nil
		var runs []RunResult
		for _, r := range s.Runs {
			r.DurationMS = 0
			runs = append(runs, r)
		}
		s.Runs = runs
		w.Steps = append(w.Steps, s)
	}
	b, err := json.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestBatchSameAsAlone(t *testing.T) {
	if testing.Short() {
		t.Skip("gates every candidate twice, alone and in a batch: the full suite runs it")
	}
	repo, base := newRepo(t)
	c := testCard(t)
	cands := candidates(t, repo.Dir)
	want := map[string]string{
		"honest": "", "wrong": RulePatchPass, "deny": RuleBudgetDeny, "oracle": RuleBudgetOracle,
		"garbage": RuleDiffParse, "stale": RuleDiffApply, "flaky": RulePatchFlaky,
		"planter": RulePatchPass, "honest-after": "",
	}
	alone := map[string]string{}
	for _, cd := range cands {
		v, err := Run(context.Background(), opts(t, repo, c, base, cd, 3))
		if err != nil {
			t.Fatalf("Run(%s): %v", cd.name, err)
		}
		if v.Failed() != want[cd.name] {
			t.Errorf("Run(%s) broke %q (%s), want %q", cd.name, v.Failed(), v.Reason, want[cd.name])
		}
		alone[cd.name] = norm(t, v)
	}
	for _, jobs := range []int{1, 2} {
		b := NewBatch(BatchConfig{Repo: repo, Jobs: jobs, LogDir: t.TempDir()})
		got := gateAll(t, b, repo, c, base, cands, 3)
		for _, cd := range cands {
			if got[cd.name] != alone[cd.name] {
				t.Errorf("jobs=%d: batch verdict of %s differs from alone:\nbatch: %s\nalone: %s", jobs, cd.name, got[cd.name], alone[cd.name])
			}
		}
		if err := b.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		// The six candidates that reach a worktree each get one no
		// earlier candidate touched (Pool.Spoil).
		if created, reused, _ := b.Pool().Stats(); created != 6 || reused != 0 {
			t.Errorf("jobs=%d: pool created %d worktrees, reused %d: want one new worktree for each of 6 candidates", jobs, created, reused)
		}
	}
	assertNoWorktrees(t, repo)
}

// gateAll gates cands with b.Run (at most b's Jobs at a time) and
// returns the normalized verdicts.
func gateAll(t testing.TB, b *Batch, repo *gitx.Repo, c *card.Card, base string, cands []cand, repeat int) map[string]string {
	t.Helper()
	var list []Options
	for _, cd := range cands {
		list = append(list, opts(t, repo, c, base, cd, repeat))
	}
	got := map[string]string{}
	for i, v := range runAll(t, b, list) {
		if v != nil {
			got[cands[i].name] = norm(t, v)
		}
	}
	return got
}

func assertNoWorktrees(t testing.TB, repo *gitx.Repo) {
	t.Helper()
	out := git(t, repo.Dir, "worktree", "list", "--porcelain")
	if n := strings.Count(out, "worktree "); n != 1 {
		t.Errorf("worktrees left behind:\n%s", out)
	}
}

// A planting candidate followed by an honest one in the same (only)
// pooled worktree: the honest one's invariant sees nothing planted.
func TestPoolPlantedStateDoesNotSurvive(t *testing.T) {
	repo, base := newRepo(t)
	c := testCard(t)
	all := candidates(t, repo.Dir)
	var planter, honest cand
	for _, cd := range all {
		switch cd.name {
		case "planter":
			planter = cd
		case "honest-after":
			honest = cd
		}
	}
	b := NewBatch(BatchConfig{Repo: repo, Jobs: 1, LogDir: t.TempDir()})
	defer b.Close(context.Background())
	for i := 0; i < 2; i++ {
		v, err := b.Gate(context.Background(), opts(t, repo, c, base, planter, 1))
		if err != nil || v.Failed() != RulePatchPass || !strings.Contains(v.Reason, "changed src/other.sh") {
			t.Fatalf("planter: %v %v", v, err)
		}
		v, err = b.Gate(context.Background(), opts(t, repo, c, base, honest, 1))
		if err != nil {
			t.Fatal(err)
		}
		if v.Verdict != Pass {
			t.Fatalf("honest candidate after a planter in the same worktree: %s %s", v.Failed(), v.Reason)
		}
	}
	// Every candidate gets a tree no earlier candidate touched: the base
	// side's worktree is the candidate's own, and a candidate's is never
	// lent again.
	if created, _, _ := b.Pool().Stats(); created != 4 {
		t.Errorf("pool created %d worktrees for 4 candidates: want one each", created)
	}
}

// TestPoolSpoiledNotLent: a worktree a candidate's diff was applied to is
// never lent again: a folder mode (or an extended attribute) a candidate
// set on a tracked folder, which a reset leaves, never reaches the next
// candidate. The new worktree takes the same path.
func TestPoolSpoiledNotLent(t *testing.T) {
	repo, base := newRepo(t)
	p := NewPool(repo, 1)
	defer p.Close(context.Background())
	wt, err := p.Get(context.Background(), base)
	if err != nil {
		t.Fatal(err)
	}
	p.Spoil(wt)
	dir := wt.Dir
	if err := os.Chmod(filepath.Join(wt.Dir, "src"), 0o700); err != nil {
		t.Fatal(err)
	}
	p.Put(wt)
	wt2, err := p.Get(context.Background(), base)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Put(wt2)
	fi, err := os.Stat(filepath.Join(wt2.Dir, "src"))
	if wt2 == wt || err != nil || fi.Mode().Perm() == 0o700 {
		t.Errorf("after a spoiled worktree: lent %p (was %p), src %v, %v; want a new worktree", wt2, wt, fi.Mode(), err)
	}
	if wt2.Dir != dir {
		t.Errorf("new worktree at %s, want the freed slot %s", wt2.Dir, dir)
	}
	if created, reused, _ := p.Stats(); created != 2 || reused != 0 {
		t.Errorf("pool created %d, reused %d; want 2, 0", created, reused)
	}
}

// A worktree whose reset cannot be proven clean (a folder a command made
// unreadable) is replaced, not lent.
func TestPoolReplacesUncleanable(t *testing.T) {
	repo, base := newRepo(t)
	p := NewPool(repo, 1)
	defer p.Close(context.Background())
	wt, err := p.Get(context.Background(), base)
	if err != nil {
		t.Fatal(err)
	}
	write(t, wt.Dir, "src/lib.sh", "changed\n")
	write(t, wt.Dir, "locked/x", "x")
	os.Chmod(filepath.Join(wt.Dir, "locked"), 0)
	defer os.Chmod(filepath.Join(wt.Dir, "locked"), 0o755)
	p.Put(wt)
	wt2, err := p.Get(context.Background(), base)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(wt2.Dir, "src/lib.sh"))
	if string(b) != "answer=41\n" {
		t.Errorf("lent worktree has src/lib.sh = %q", b)
	}
	if _, err := os.Lstat(filepath.Join(wt2.Dir, "locked")); err == nil {
		t.Errorf("lent worktree still has the locked folder")
	}
	p.Put(wt2)
}

// A cached pass is reported as cached; the same diff edited is gated
// again and fails; a changed card never reuses the old verdict.
func TestCacheEditedDiffRegated(t *testing.T) {
	repo, base := newRepo(t)
	c := testCard(t)
	cache := OpenCacheDir(t.TempDir())
	honest := cand{"fix.diff", mkdiff(t, repo.Dir, map[string]string{"src/lib.sh": "answer=42\n"})}
	gate := func(c *card.Card, cd cand) *Verdict {
		t.Helper()
		b := NewBatch(BatchConfig{Repo: repo, Cache: cache, Jobs: 1, LogDir: t.TempDir()})
		defer b.Close(context.Background())
		v, err := b.Gate(context.Background(), opts(t, repo, c, base, cd, 1))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	v1 := gate(c, honest)
	if v1.Verdict != Pass || v1.Cached {
		t.Fatalf("first run: %s cached=%v", v1.Verdict, v1.Cached)
	}
	v2 := gate(c, honest)
	if v2.Verdict != Pass || !v2.Cached {
		t.Fatalf("second run: %s cached=%v, want a cached pass", v2.Verdict, v2.Cached)
	}
	if norm(t, v1) != norm(t, v2) {
		t.Errorf("cached verdict differs:\n%s\n%s", norm(t, v1), norm(t, v2))
	}
	edited := cand{"fix.diff", mkdiff(t, repo.Dir, map[string]string{"src/lib.sh": "answer=44\n"})}
	v3 := gate(c, edited)
	if v3.Cached || v3.Failed() != RulePatchPass {
		t.Errorf("edited diff: cached=%v rule=%q, want a fresh patch.pass failure", v3.Cached, v3.Failed())
	}
	c2, err := card.Parse("card.yml", []byte(strings.Replace(cardYAML, "max_changed_lines: 20", "max_changed_lines: 19", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if v4 := gate(c2, honest); v4.Cached || v4.Verdict != Pass {
		t.Errorf("changed card: cached=%v verdict=%s, want a fresh pass", v4.Cached, v4.Verdict)
	}
	// The base side is shared through the cache too.
	if v5 := gate(c, cand{"other.diff", mkdiff(t, repo.Dir, map[string]string{"src/lib.sh": "answer=42 # b\n"})}); !v5.BaseCached || v5.Cached {
		t.Errorf("new diff of a known card: base_cached=%v cached=%v, want the base side from the cache only", v5.BaseCached, v5.Cached)
	}
}

// A corrupted or foreign entry is a miss and is removed.
func TestCacheCorruptEntry(t *testing.T) {
	dir := t.TempDir()
	c := OpenCacheDir(dir)
	k := Key{Kind: "verdict", Tool: "t", Base: "b", CardDigest: "c", DiffDigest: "d", Env: "e", Repeat: 1}
	other := k
	other.DiffDigest = "x"
	for _, tc := range []struct {
		name string
		data string
	}{
		{"truncated", `{"key": {"kind": "verdict"`},
		{"garbage", "\x00\x01"},
		{"foreign key", mustJSON(t, cacheEntry{Key: other, Value: json.RawMessage(`{"rule": ""}`)})},
		{"bad value", mustJSON(t, cacheEntry{Key: k, Value: json.RawMessage(`"str"`)})},
	} {
		p := c.path(k.ID())
		os.MkdirAll(filepath.Dir(p), 0o700)
		os.WriteFile(p, []byte(tc.data), 0o600)
		var e dynEntry
		if c.Get(k, &e) {
			t.Errorf("Get with a %s entry = hit, want miss", tc.name)
		}
		if _, err := os.Stat(p); err == nil {
			t.Errorf("a %s entry was not removed", tc.name)
		}
	}
	if err := c.Put(k, dynEntry{Rule: "patch.pass"}); err != nil {
		t.Fatal(err)
	}
	var e dynEntry
	if !c.Get(k, &e) || e.Rule != "patch.pass" {
		t.Errorf("Get after Put = %+v", e)
	}
}

func mustJSON(t testing.TB, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Entries are bounded; pruning keeps the most recently used.
func TestCachePrune(t *testing.T) {
	c := OpenCacheDir(t.TempDir())
	c.MaxEntries = 10
	var keys []Key
	for i := 0; i < 30; i++ {
		k := Key{Kind: "verdict", Repeat: i + 1}
		keys = append(keys, k)
		if err := c.Put(k, dynEntry{Rule: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	var e dynEntry
	c.Get(keys[0], &e) // recently used
	if err := c.Prune(); err != nil {
		t.Fatal(err)
	}
	n := 0
	filepath.WalkDir(c.dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			n++
		}
		return nil
	})
	if n > 10 {
		t.Errorf("%d entries after pruning, want at most 10", n)
	}
	if !c.Get(keys[0], &e) {
		t.Errorf("the most recently used entry was pruned")
	}
}

// Writers and readers of one entry in separate Cache values (as separate
// processes are) never see half an entry: every Get after a Put hits (a
// torn entry would read as a miss and be removed as corrupt), what it
// reads is one writer's whole value, and no Cache saw a corrupt entry.
func TestCacheConcurrent(t *testing.T) {
	dir := t.TempDir()
	k := Key{Kind: "verdict", Repeat: 1}
	const writers = 8
	caches := make([]*Cache, writers)
	var wg sync.WaitGroup
	for i := range caches {
		caches[i] = OpenCacheDir(dir)
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := caches[i]
			mine := dynEntry{Rule: fmt.Sprintf("writer-%d", i), Reason: strings.Repeat(strconv.Itoa(i), 4096+i*512)}
			for j := 0; j < 50; j++ {
				if err := c.Put(k, mine); err != nil {
					t.Errorf("Put = %v", err)
					return
				}
				var e dynEntry
				if !c.Get(k, &e) {
					t.Errorf("Get after Put missed: a torn or removed entry")
					return
				}
				n, err := strconv.Atoi(strings.TrimPrefix(e.Rule, "writer-"))
				if err != nil || n < 0 || n >= writers || e.Reason != strings.Repeat(strconv.Itoa(n), 4096+n*512) {
					t.Errorf("read an entry no writer wrote whole: rule %q, %d bytes of reason", e.Rule, len(e.Reason))
					return
				}
			}
		}()
	}
	wg.Wait()
	for i, c := range caches {
		if _, _, corrupt := c.Stats(); corrupt != 0 {
			t.Errorf("cache %d removed %d corrupt entries", i, corrupt)
		}
	}
}

// The environment fingerprint changes with the program a command
// resolves to and with the command's environment.
func TestEnvFingerprint(t *testing.T) {
	c := testCard(t)
	bin1, bin2 := t.TempDir(), t.TempDir()
	write(t, bin1, "sh", "#!/bin/true\n")
	write(t, bin2, "sh", "#!/bin/true\n# another version\n")
	os.Chmod(filepath.Join(bin1, "sh"), 0o755)
	os.Chmod(filepath.Join(bin2, "sh"), 0o755)
	fp := func(path string, extra ...string) string {
		f, err := EnvFingerprint(c, func(card.Command) []string { return append([]string{"PATH=" + path}, extra...) })
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	a, b := fp(bin1), fp(bin2)
	if a == b {
		t.Errorf("fingerprint ignores which sh the PATH finds")
	}
	if fp(bin1) != a {
		t.Errorf("fingerprint not deterministic")
	}
	if fp(bin1, "GOFLAGS=-race") == a {
		t.Errorf("fingerprint ignores the environment")
	}
	os.WriteFile(filepath.Join(bin1, "sh"), []byte("#!/bin/true\n# upgraded\n"), 0o755)
	if fp(bin1) == a {
		t.Errorf("fingerprint ignores an upgraded program")
	}
}

// A reused worktree must not hide a change racy git would miss: the reset
// rewrites a file and, within the same second, the next diff writes the
// same number of bytes to it.
func TestPoolRacyRewrite(t *testing.T) {
	if testing.Short() {
		t.Skip("races rewrites against pooled worktrees: the full suite runs it")
	}
	repo, base := newRepo(t)
	c := testCard(t)
	long := cand{"long", mkdiff(t, repo.Dir, map[string]string{"src/lib.sh": "answer=42\nx=1\n"})}
	same := cand{"same-size", mkdiff(t, repo.Dir, map[string]string{"src/lib.sh": "answer=42\n"})}
	b := NewBatch(BatchConfig{Repo: repo, Jobs: 1, LogDir: t.TempDir()})
	defer b.Close(context.Background())
	for i := 0; i < 8; i++ {
		for _, cd := range []cand{long, same} {
			v, err := b.Gate(context.Background(), opts(t, repo, c, base, cd, 1))
			if err != nil {
				t.Fatal(err)
			}
			if v.Verdict != Pass {
				t.Fatalf("round %d: %s broke %s: %s", i, cd.name, v.Failed(), v.Reason)
			}
		}
	}
}
