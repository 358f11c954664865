package run

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/failpass/failpass/internal/sandbox"
)

// TestSandboxOverhead measures what the sandbox adds per command: the
// same commands run alternately with and without it, in the same process,
// and the medians compared. bench/sandbox.sh runs it; it is skipped
// otherwise (it measures, it does not check behaviour).
func TestSandboxOverhead(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("FAILPASS_SANDBOX_BENCH"))
	if n <= 0 {
		t.Skip("set FAILPASS_SANDBOX_BENCH=N (bench/sandbox.sh) to measure the sandbox's overhead over N runs")
	}
	if r := sandbox.Probe(); len(r.Applied) == 0 {
		t.Skipf("no sandbox layer on this machine: %v", r.Why)
	}
	wt := sandboxWorktree(t, nil)
	cache := filepath.Join(t.TempDir(), "cache")
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	for _, argv := range [][]string{{"true"}, {"sh", "-c", "echo hi; ls >/dev/null"}} {
		var on, off []time.Duration
		for i := 0; i < n; i++ {
			for _, sb := range []*sandbox.Policy{nil, {CacheDir: cache}} {
				start := time.Now()
				r, err := Run(context.Background(), Spec{Argv: argv, Root: wt, Env: env, Sandbox: sb})
				d := time.Since(start)
				if err != nil || r.Exit != 0 {
					t.Fatalf("Run(%q, sandbox %v) = %v, %v", argv, sb != nil, r, err)
				}
				if sb == nil {
					off = append(off, d)
				} else {
					on = append(on, d)
				}
			}
		}
		mOn, mOff := median(on), median(off)
		fmt.Printf("%-40q runs=%d  median off=%v  on=%v  added=%v  (p90 on=%v)\n", argv, n,
			mOff.Round(10*time.Microsecond), mOn.Round(10*time.Microsecond), (mOn - mOff).Round(10*time.Microsecond), pct(on, 90).Round(10*time.Microsecond))
	}
}

func median(ds []time.Duration) time.Duration { return pct(ds, 50) }

func pct(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[(len(s)-1)*p/100]
}
