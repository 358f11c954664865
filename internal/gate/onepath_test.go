package gate

import (
	"context"
	"errors"
	"os"
	"sync"
	"testing"

	"github.com/failpass/failpass/internal/sandbox"
)

// A single candidate neither reads nor writes the verdict cache, even
// where the batch would store its verdict (the filesystem layer applies).
func TestRunNoVerdictCache(t *testing.T) {
	if !sandbox.Probe().Has(sandbox.Filesystem) {
		t.Skip("this machine cannot provide the filesystem layer: nothing would be cached anyway")
	}
	repo, base := newRepo(t)
	c := testCard(t)
	honest := cand{"fix", mkdiff(t, repo.Dir, map[string]string{"src/lib.sh": "answer=42\n"})}
	for i := 0; i < 2; i++ {
		v, err := Run(context.Background(), opts(t, repo, c, base, honest, 1))
		if err != nil {
			t.Fatal(err)
		}
		if v.Verdict != Pass || v.Cached || v.BaseCached {
			t.Fatalf("Run #%d = %s cached=%v base_cached=%v, want a pass gated afresh", i+1, v.Verdict, v.Cached, v.BaseCached)
		}
	}
	if _, err := os.Stat(repo.StateDir("cache", "gate")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a single gate touched the verdict cache: stat = %v", err)
	}
	// The check is real: a batch of the same candidate stores its verdict.
	b := NewBatch(BatchConfig{Repo: repo, Cache: OpenCache(repo), Jobs: 1, LogDir: t.TempDir()})
	if _, err := b.Gate(context.Background(), opts(t, repo, c, base, honest, 1)); err != nil {
		t.Fatal(err)
	}
	b.Close(context.Background())
	if _, err := os.Stat(repo.StateDir("cache", "gate")); err != nil {
		t.Errorf("a batch stored nothing: %v", err)
	}
}

// Batch.Run calls done once per candidate, never two at a time, and the
// first error done returns stops the batch: Run returns it, done is not
// called again, and Close leaves no worktree.
func TestBatchRunStopsAtTrouble(t *testing.T) {
	repo, base := newRepo(t)
	c := testCard(t)
	var list []Options
	for _, cd := range candidates(t, repo.Dir) {
		if cd.name != "flaky" {
			list = append(list, opts(t, repo, c, base, cd, 1))
		}
	}
	b := NewBatch(BatchConfig{Repo: repo, Jobs: 2, LogDir: t.TempDir()})
	stop := errors.New("stop")
	calls := 0
	err := b.Run(context.Background(), list, func(i int, v *Verdict) error {
		calls++
		if calls == 2 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || calls != 2 {
		t.Errorf("Run = %v after %d calls of done, want %v after 2", err, calls, stop)
	}
	if err := b.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	assertNoWorktrees(t, repo)

	// Trouble gating one candidate (a card Bind did not bind, so the
	// verdict could not name it) names it, after the candidates before
	// it.
	bad := *list[2].Bound
	bad.Digest = ""
	list = list[:4]
	list[2].Bound = &bad
	b = NewBatch(BatchConfig{Repo: repo, Jobs: 1, LogDir: t.TempDir()})
	defer b.Close(context.Background())
	var seen []int
	err = b.Run(context.Background(), list, func(i int, v *Verdict) error {
		seen = append(seen, i)
		return nil
	})
	var ce *CandidateError
	if !errors.As(err, &ce) || ce.Index != 2 || len(seen) != 2 {
		t.Errorf("Run with a bad third card = %v after verdicts %v, want a *CandidateError for index 2 after 0 and 1", err, seen)
	}
}

// runAll gates list with b.Run and checks the callback contract: every
// candidate once, never two calls at a time.
func runAll(t testing.TB, b *Batch, list []Options) []*Verdict {
	t.Helper()
	got := make([]*Verdict, len(list))
	var busy sync.Mutex
	err := b.Run(context.Background(), list, func(i int, v *Verdict) error {
		if !busy.TryLock() {
			t.Errorf("done called while another call runs")
			return nil
		}
		defer busy.Unlock()
		if got[i] != nil {
			t.Errorf("done called twice for candidate %d", i)
		}
		got[i] = v
		return nil
	})
	if err != nil {
		t.Fatalf("Batch.Run = %v", err)
	}
	for i, v := range got {
		if v == nil {
			t.Errorf("no verdict for candidate %d", i)
		}
	}
	return got
}
