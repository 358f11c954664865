package run

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/failpass/failpass/internal/sandbox"
)

// BenchmarkSandboxOverhead measures what the sandbox adds per command:
// the same commands run alternately without it, with a helper re-exec of
// their own, and through one session helper (the gate's way), in the
// same process; it reports the medians (ms) and what each way adds.
// bench/sandbox.sh runs it with -benchtime Nx.
func BenchmarkSandboxOverhead(b *testing.B) {
	if r := sandbox.Probe(); len(r.Applied) == 0 {
		b.Skipf("no sandbox layer on this machine: %v", r.Why)
	}
	wt := sandboxWorktree(b, nil)
	cache := filepath.Join(b.TempDir(), "cache")
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	sess := NewSession()
	defer sess.Close()
	for _, c := range []struct {
		name string
		argv []string
	}{{"true", []string{"true"}}, {"sh", []string{"sh", "-c", "echo hi; ls >/dev/null"}}} {
		argv := c.argv
		b.Run(c.name, func(b *testing.B) {
			var off, own, shared []time.Duration
			for b.Loop() {
				for _, m := range []struct {
					sb   *sandbox.Policy
					sess *Session
					d    *[]time.Duration
				}{{nil, nil, &off}, {&sandbox.Policy{CacheDir: cache}, nil, &own}, {&sandbox.Policy{CacheDir: cache}, sess, &shared}} {
					start := time.Now()
					r, err := Run(context.Background(), Spec{Argv: argv, Root: wt, Env: env, Sandbox: m.sb, Session: m.sess})
					d := time.Since(start)
					if err != nil || r.Exit != 0 {
						b.Fatalf("Run(%q, sandbox %v, session %v) = %v, %v", argv, m.sb != nil, m.sess != nil, r, err)
					}
					*m.d = append(*m.d, d)
				}
			}
			ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
			mOff := median(off)
			b.ReportMetric(0, "ns/op")
			b.ReportMetric(ms(mOff), "off-ms")
			b.ReportMetric(ms(median(own)-mOff), "helper-added-ms")
			b.ReportMetric(ms(median(shared)-mOff), "session-added-ms")
		})
	}
}

func median(ds []time.Duration) time.Duration { return pct(ds, 50) }

func pct(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[(len(s)-1)*p/100]
}
