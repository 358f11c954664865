package gate

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/failpass/failpass/internal/card"
	"github.com/failpass/failpass/internal/sandbox"
)

// The card's commands append their role to a file in the build cache, as
// a compiler fills it: a warming run must write the cache (it is the
// base's run), once per cache.
const warmCard = `id: "T-WARM"
base_ref: "main"
fail: {cmd: ["sh", "-c", "mkdir -p \"$GOCACHE\" && echo pass >> \"$GOCACHE/runs\"; sh tests/check.sh"], expect_exit: 1}
pass: {cmd: ["sh", "-c", "mkdir -p \"$GOCACHE\" && echo pass >> \"$GOCACHE/runs\"; sh tests/check.sh"], expect_exit: 0}
invariant: {cmd: ["sh", "-c", "echo invariant >> \"$GOCACHE/runs\"; sh tests/invariant.sh"], expect_exit: 0}
budget: {max_files: 2, max_changed_lines: 20}
`

// TestWarmCache: the loop's warming runs the pass and invariant commands
// on the base as the cache's writer (the pass command failing there, as
// it must, changes nothing), once; without a sandbox it runs nothing.
func TestWarmCache(t *testing.T) {
	if !sandbox.Probe().Has(sandbox.Filesystem) {
		t.Skip("this machine cannot provide the filesystem layer")
	}
	repo, base := newRepo(t)
	c, err := card.Parse("card.yml", []byte(warmCard))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	b := testBound(t, repo, c, base)
	cacheDir := b.CacheDir()
	o := PrepareOptions{Bound: b,
		Policy: &sandbox.Policy{CacheDir: cacheDir}, LogDir: t.TempDir()}
	runs := filepath.Join(cacheDir, "go-build", "runs")
	for i, want := range []bool{true, false} {
		ran, err := WarmCache(ctx, o)
		if err != nil || ran != want {
			t.Fatalf("WarmCache #%d = %v, %v; want %v", i+1, ran, err, want)
		}
		if b, _ := os.ReadFile(runs); strings.Join(strings.Fields(string(b)), " ") != "pass invariant" {
			t.Fatalf("after WarmCache #%d the cache holds runs %q, want pass then invariant, once", i+1, b)
		}
	}
	off := o
	off.Policy = nil
	if ran, err := WarmCache(ctx, off); ran || err != nil {
		t.Errorf("WarmCache without a sandbox = %v, %v; want nothing run", ran, err)
	}
}
