package gate

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/failpass/failpass/internal/gitx"
	"github.com/failpass/failpass/internal/worktree"
)

// TestPoolPrepareCost measures, on a generated repository of
// FAILPASS_BENCH_FILES files (bench/batch.sh sets 20000), what preparing a
// pooled worktree for the next candidate costs against a fresh
// `git worktree add`, and prints the medians and their ratio. Skipped
// unless the variable is set: it is a benchmark, not a check.
func TestPoolPrepareCost(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("FAILPASS_BENCH_FILES"))
	if n <= 0 {
		t.Skip("set FAILPASS_BENCH_FILES to run")
	}
	rounds := 3
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "main")
	for i := 0; i < n; i++ {
		p := filepath.Join(dir, fmt.Sprintf("d%03d", i/200), fmt.Sprintf("f%05d.txt", i))
		if i%200 == 0 {
			os.MkdirAll(filepath.Dir(p), 0o755)
		}
		if err := os.WriteFile(p, []byte(fmt.Sprintf("file %d\n%s\n", i, "some content of a source file")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(t, dir, ".gitignore", "build/\n")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "base")
	base := git(t, dir, "rev-parse", "HEAD")
	base = base[:len(base)-1]
	repo, err := gitx.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var fresh, pooled []time.Duration
	p := NewPool(repo, 1)
	defer p.Close(ctx)
	wt, err := p.Get(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	for r := 0; r < rounds; r++ {
		start := time.Now()
		w, err := worktree.Add(ctx, repo, base)
		if err != nil {
			t.Fatal(err)
		}
		fresh = append(fresh, time.Since(start))
		w.Remove(ctx)

		// What a candidate leaves: a changed file, a new file, build output.
		write(t, wt.Dir, "d000/f00001.txt", "changed by the candidate\n")
		write(t, wt.Dir, "new.txt", "new\n")
		write(t, wt.Dir, "build/out.o", "obj\n")
		p.Put(wt)
		start = time.Now()
		wt, err = p.Get(ctx, base)
		if err != nil {
			t.Fatal(err)
		}
		pooled = append(pooled, time.Since(start))
	}
	p.Put(wt)
	if _, reused, replaced := p.Stats(); reused != int64(rounds) || replaced != 0 {
		t.Fatalf("pool reused %d, replaced %d", reused, replaced)
	}
	mf, mp := median(fresh), median(pooled)
	fmt.Printf("prepare: files=%d fresh_worktree_add_median=%s pooled_reset_median=%s ratio=%.3f\n", n, mf.Round(time.Millisecond), mp.Round(time.Millisecond), float64(mp)/float64(mf))
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}
