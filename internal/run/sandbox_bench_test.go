package run

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
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
	sess := NewSession() // the gate's way: every command through one helper
	defer sess.Close()
	for _, argv := range [][]string{{"true"}, {"sh", "-c", "echo hi; ls >/dev/null"}} {
		var off, own, shared []time.Duration
		for i := 0; i < n; i++ {
			for _, m := range []struct {
				sb   *sandbox.Policy
				sess *Session
				d    *[]time.Duration
			}{{nil, nil, &off}, {&sandbox.Policy{CacheDir: cache}, nil, &own}, {&sandbox.Policy{CacheDir: cache}, sess, &shared}} {
				start := time.Now()
				r, err := Run(context.Background(), Spec{Argv: argv, Root: wt, Env: env, Sandbox: m.sb, Session: m.sess})
				d := time.Since(start)
				if err != nil || r.Exit != 0 {
					t.Fatalf("Run(%q, sandbox %v, session %v) = %v, %v", argv, m.sb != nil, m.sess != nil, r, err)
				}
				*m.d = append(*m.d, d)
			}
		}
		mOff := median(off)
		fmt.Printf("%-30s runs=%d  median off=%v  helper each=%v (added %v)  session=%v (added %v)\n", strings.Join(argv, " "), n,
			mOff.Round(10*time.Microsecond), median(own).Round(10*time.Microsecond), (median(own) - mOff).Round(10*time.Microsecond),
			median(shared).Round(10*time.Microsecond), (median(shared) - mOff).Round(10*time.Microsecond))
	}
}

func median(ds []time.Duration) time.Duration { return pct(ds, 50) }

func pct(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[(len(s)-1)*p/100]
}
