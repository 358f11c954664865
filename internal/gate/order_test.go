package gate

import (
	"slices"
	"testing"

	"github.com/failpass/failpass/internal/testrunner"
)

// TestRunOrder: the canary's place is drawn among all four, first
// included, the other patched rules keep their canonical order, and
// CanaryPlace pins it.
func TestRunOrder(t *testing.T) {
	g := &gateRun{canary: canaryPlan{plan: &testrunner.Canary{}}}
	seen := map[int]int{}
	for range 400 {
		order, err := g.runOrder()
		if err != nil {
			t.Fatal(err)
		}
		k := slices.Index(order, RulePatchCanary)
		seen[k]++
		rest := slices.DeleteFunc(slices.Clone(order), func(r string) bool { return r == RulePatchCanary })
		if !slices.Equal(rest, []string{RulePatchPass, RulePatchInvariant, RulePatchHeldOut}) {
			t.Fatalf("runOrder = %q", order)
		}
	}
	for k := 0; k < 4; k++ {
		if seen[k] < 40 {
			t.Errorf("the canary drew place %d %d times in 400: %v", k, seen[k], seen)
		}
	}
	for place, want := range map[int]int{1: 0, 2: 1, 4: 3, 9: 3, CanaryPlaceLast: 3} {
		g.o.CanaryPlace = place
		if order, _ := g.runOrder(); slices.Index(order, RulePatchCanary) != want {
			t.Errorf("CanaryPlace %d: runOrder = %q, want the canary at %d", place, order, want)
		}
	}
	// Without a canary plan, no draw: it is decided last, without a run.
	g = &gateRun{}
	if order, _ := g.runOrder(); order[3] != RulePatchCanary {
		t.Errorf("runOrder without a plan = %q", order)
	}
}
