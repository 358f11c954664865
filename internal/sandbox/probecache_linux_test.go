package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/failpass/failpass/internal/sandbox/sandboxtest"
)

// cacheHome points the user cache folder at a fresh temporary folder.
func cacheHome(t *testing.T) string {
	t.Helper()
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	p := probeCachePath()
	if p == "" || probeKey() == "" {
		t.Skip("no cache folder or no probe key on this machine")
	}
	return p
}

func sameReport(a, b Report) bool {
	return slices.Equal(a.Applied, b.Applied) && slices.Equal(a.Missing, b.Missing) &&
		slices.Equal(a.Features, b.Features) && a.Landlock == b.Landlock
}

// The cache keeps the newest probeCacheEntries probes, one per key,
// newest first; forgetting one keeps the others.
func TestProbeCacheBounded(t *testing.T) {
	path := cacheHome(t)
	facts := factsOf(probe(), "")
	for i := 0; i < probeCacheEntries+3; i++ {
		facts.Key = fmt.Sprintf("key-%02d", i)
		keepProbe(path, facts)
	}
	facts.Key = "key-05"
	keepProbe(path, facts) // seen again: moves to the front
	var keys []string
	for _, f := range readProbes(path) {
		keys = append(keys, f.Key)
	}
	want := []string{"key-05", "key-10", "key-09", "key-08", "key-07", "key-06", "key-04", "key-03"}
	if !slices.Equal(keys, want) {
		t.Errorf("cached keys %q, want %q", keys, want)
	}
}

// A cached probe gives back exactly what the probe found, and only to
// the same key.
func TestProbeCacheRoundTrip(t *testing.T) {
	path := cacheHome(t)
	full, key := probe(), probeKey()
	keepProbe(path, factsOf(full, key))
	f, ok := cachedProbe(path, key)
	if !ok {
		t.Fatalf("cachedProbe(%s) found nothing after keepProbe", path)
	}
	got := capsFrom(f)
	if !sameReport(got.report, full.report) || got.namespaces != full.namespaces || got.landlock != full.landlock ||
		(got.mem == nil) != (full.mem == nil) || (got.pids == nil) != (full.pids == nil) {
		t.Errorf("capsFrom(cached) = %+v, want what the probe found: %+v", got, full)
	}
	if _, ok := cachedProbe(path, key[:len(key)-1]+"x"); ok {
		t.Error("cachedProbe answered for another key (another binary, boot or user)")
	}
	if err := os.WriteFile(path, []byte(`{"key":`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, ok := cachedProbe(path, key); ok {
		t.Error("cachedProbe answered from a truncated file")
	}
}

// An edited cache cannot make the report claim what the helper is not
// asked to apply: without namespaces no layer that needs them is applied.
func TestProbeCacheForgedFacts(t *testing.T) {
	full := probe()
	forged := factsOf(full, "k")
	forged.Namespaces = false
	forged.Have = append(forged.Have, string(FeatPIDNS), string(FeatNetNS), string(FeatLoopback), string(FeatMountNS))
	r := capsFrom(forged).report
	for _, l := range []Layer{Network, Processes, Filesystem} {
		if r.Has(l) {
			t.Errorf("capsFrom(facts without namespaces) applies %s: %+v", l, r)
		}
	}
}

// A helper that was launched but never ran, or that could not apply a
// layer, makes the next process probe again.
func TestProbeCacheForgotten(t *testing.T) {
	need(t, Processes)
	_, wt := testRepo(t, nil)
	for _, tc := range []struct {
		name string
		end  func(pr *Prepared)
	}{
		{"launched, never started", func(pr *Prepared) { pr.Close() }},
		{"a layer failed", func(pr *Prepared) {
			pr.statusW.Write(status{Step: "landlock", Err: "refused"}.marshal())
			if o, _ := pr.Finish(); o.StartErr == nil {
				t.Errorf("Finish after a failed layer: %+v, want a StartErr", o)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := cacheHome(t)
			keepProbe(path, factsOf(probe(), probeKey()))
			pr, err := (&Policy{}).Prepare(wt, []string{"PATH=/usr/bin:/bin"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := pr.Launch(Command{Path: "/bin/true", Argv: []string{"true"}, Dir: wt}); err != nil {
				t.Fatal(err)
			}
			tc.end(pr)
			if _, ok := cachedProbe(path, probeKey()); ok {
				t.Error("the cached probe is still there, want it forgotten")
			}
		})
	}
}

// TestMain keeps this package's probes out of the user's cache folder.
func TestMain(m *testing.M) {
	if os.Getenv(seccompProbeEnv) == "1" {
		runSeccompProbe()
		os.Exit(0)
	}
	if os.Getenv(sandboxtest.DenyEnv) == "1" {
		if err := sandboxtest.DenyNamespaces(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	dir, err := os.MkdirTemp("", "failpass-sandbox-cache-")
	if err == nil {
		os.Setenv("XDG_CACHE_HOME", dir)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// A helper that cannot even be started (namespaces switched off since
// the probe, say) makes the next process probe again too.
func TestProbeCacheForgottenWhenTheHelperCannotStart(t *testing.T) {
	path := cacheHome(t)
	keepProbe(path, factsOf(probe(), probeKey()))
	h, err := NewHelper()
	if err != nil {
		t.Skipf("no helper here: %v", err)
	}
	h.Started(errors.New("clone: operation not permitted"))
	h.Discard()
	if _, ok := cachedProbe(path, probeKey()); ok {
		t.Error("the cached probe is still there, want it forgotten")
	}
}

// A process under a seccomp filter that denies namespaces has a probe
// key of its own: its probe (fewer layers) must not answer for a process
// without the filter, nor the other way round.
func TestProbeKeySeesSeccomp(t *testing.T) {
	if os.Getenv(sandboxtest.DenyEnv) == "1" {
		if out := os.Getenv("FAILPASS_TEST_KEY_OUT"); out != "" {
			if err := os.WriteFile(out, []byte(probeKey()), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	out := filepath.Join(t.TempDir(), "key")
	t.Setenv("FAILPASS_TEST_KEY_OUT", out)
	sandboxtest.RunDenied(t, "^TestProbeKeySeesSeccomp$")
	denied, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if here := probeKey(); here == "" || string(denied) == "" || string(denied) == here {
		t.Errorf("probe key with namespaces denied %q, without %q: want two different keys", denied, here)
	}
}

// A probe whose helper ran out of time (a loaded machine) is no fact
// about the machine's layers: it is not kept for later processes, which
// would otherwise all run on the fewer layers it found. (The bound was
// 10 s, which a loaded machine can exceed just starting the helper; the
// likeliest reason TestCandidateCacheGoLayeredDenied, whose child probes
// afresh, failed once and passed alone.)
func TestProbeTimeoutNotKept(t *testing.T) {
	saved := probeTimeout
	probeTimeout = time.Nanosecond
	defer func() { probeTimeout = saved }()
	c := doProbe()
	if !c.timedOut || c.cacheable() {
		t.Fatalf("probe with no time for its helper: timedOut %v, cacheable %v; want true, false (report %+v)", c.timedOut, c.cacheable(), c.report)
	}
	probeTimeout = saved
	if c := doProbe(); c.timedOut || !c.cacheable() && c.noHelper == nil {
		t.Fatalf("probe with time: timedOut %v, cacheable %v", c.timedOut, c.cacheable())
	}
}
