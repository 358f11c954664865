package gate

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/failpass/failpass/internal/gitx"
	"github.com/failpass/failpass/internal/worktree"
)

// poolFiles is the size of BenchmarkPoolPrepare's generated repository
// (bench/batch.sh passes -pool-files 20000).
var poolFiles = flag.Int("pool-files", 2000, "files in BenchmarkPoolPrepare's generated repository")

// BenchmarkPoolPrepare measures, on a generated repository of -pool-files
// files, what preparing a pooled worktree for the next candidate costs
// against a fresh worktree (worktree.Add), the two interleaved in every
// iteration; it reports both medians (ms) and their ratio.
func BenchmarkPoolPrepare(b *testing.B) {
	n := *poolFiles
	dir := b.TempDir()
	git(b, dir, "init", "-q", "-b", "main")
	for i := 0; i < n; i++ {
		p := filepath.Join(dir, fmt.Sprintf("d%03d", i/200), fmt.Sprintf("f%05d.txt", i))
		if i%200 == 0 {
			os.MkdirAll(filepath.Dir(p), 0o755)
		}
		if err := os.WriteFile(p, []byte(fmt.Sprintf("file %d\n%s\n", i, "some content of a source file")), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	write(b, dir, ".gitignore", "build/\n")
	git(b, dir, "add", "-A")
	git(b, dir, "commit", "-q", "-m", "base")
	base := git(b, dir, "rev-parse", "HEAD")
	base = base[:len(base)-1]
	repo, err := gitx.Open(context.Background(), dir)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	var fresh, pooled []time.Duration
	p := NewPool(repo, 1)
	defer p.Close(ctx)
	wt, err := p.Get(ctx, base)
	if err != nil {
		b.Fatal(err)
	}
	rounds := 0
	for b.Loop() {
		rounds++
		start := time.Now()
		w, err := worktree.Add(ctx, repo, base)
		if err != nil {
			b.Fatal(err)
		}
		fresh = append(fresh, time.Since(start))
		w.Remove(ctx)

		// What a candidate leaves: a changed file, a new file, build output.
		write(b, wt.Dir, "d000/f00001.txt", "changed by the candidate\n")
		write(b, wt.Dir, "new.txt", "new\n")
		write(b, wt.Dir, "build/out.o", "obj\n")
		p.Put(wt)
		start = time.Now()
		wt, err = p.Get(ctx, base)
		if err != nil {
			b.Fatal(err)
		}
		pooled = append(pooled, time.Since(start))
	}
	p.Put(wt)
	if _, reused, replaced := p.Stats(); reused != int64(rounds) || replaced != 0 {
		b.Fatalf("pool reused %d of %d, replaced %d", reused, rounds, replaced)
	}
	mf, mp := median(fresh), median(pooled)
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(float64(mf)/float64(time.Millisecond), "fresh-ms")
	b.ReportMetric(float64(mp)/float64(time.Millisecond), "pooled-ms")
	b.ReportMetric(float64(mp)/float64(mf), "pooled/fresh")
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}
