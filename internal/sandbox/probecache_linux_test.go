package sandbox

import (
	"errors"
	"os"
	"slices"
	"testing"
)

// cacheHome points the user cache folder at a fresh temporary folder.
func cacheHome(t *testing.T) string {
	t.Helper()
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	p := probeCachePath(probeKey())
	if p == "" {
		t.Skip("no cache folder or no probe key on this machine")
	}
	return p
}

func sameReport(a, b Report) bool {
	return slices.Equal(a.Applied, b.Applied) && slices.Equal(a.Missing, b.Missing) &&
		slices.Equal(a.Features, b.Features) && a.Landlock == b.Landlock
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
			if _, err := os.Stat(path); !os.IsNotExist(err) {
				t.Errorf("the cached probe is still there (%v), want it forgotten", err)
			}
		})
	}
}

// TestMain keeps this package's probes out of the user's cache folder.
func TestMain(m *testing.M) {
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
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("the cached probe is still there (%v), want it forgotten", err)
	}
}
