package budget

import (
	"testing"

	"github.com/failpass/failpass/internal/card"
)

// TestCardScope: the scope carries the effective budget (annotations'
// tightenings applied) and the oracle files, and says of a path what
// budget.deny and budget.oracle would.
func TestCardScope(t *testing.T) {
	one := 1
	c := &card.Card{
		Fail:      card.Command{Cmd: []string{"sh", "tests/check.sh"}, ExpectExit: 1},
		Pass:      card.Command{Cmd: []string{"sh", "tests/check.sh"}},
		Invariant: card.Command{Workdir: "lib", Cmd: []string{"go", "test", "./..."}},
		Budget:    card.Budget{MaxFiles: 3, MaxChangedLines: 40, DenyGlobs: []string{"ci/**"}},
		Annotations: []card.Annotation{{By: "r", Note: "n", Tighten: &card.Tightening{
			MaxFiles: &one, DenyGlobs: []string{"*.lock"}}}},
	}
	files := map[string]bool{"tests/check.sh": true, "lib/x.go": true}
	s := CardScope(c, "cards/c.yml", func(p string) bool { return files[p] })
	if s.Budget.MaxFiles != 1 || len(s.Budget.DenyGlobs) != 2 {
		t.Errorf("CardScope().Budget = %+v, want the tightened budget", s.Budget)
	}
	for _, tt := range []struct{ path, want string }{
		{"tests/check.sh", "is an oracle file of the card"},
		{"cards/c.yml", "is an oracle file of the card"},
		{"ci/x.yml", `is denied by the card's deny glob "ci/**"`},
		{"go.lock", `is denied by the card's deny glob "*.lock"`},
		{"lib/x.go", ""},
	} {
		if got := s.Outside(tt.path); got != tt.want {
			t.Errorf("Outside(%s) = %q, want %q", tt.path, got, tt.want)
		}
	}
	// A deny glob that does not compile denies every path, as budget.deny
	// refuses every change under it.
	s.Budget.DenyGlobs = []string{"a/***/b"}
	if g, ok := s.Denied("lib/x.go"); !ok || g != "a/***/b" {
		t.Errorf("Denied(lib/x.go) under a bad glob = %q, %t, want the glob, true", g, ok)
	}
	if f := s.Check(cs(mod("lib/x.go", 1, 1))); f == nil || f.Rule != RuleDeny {
		t.Errorf("Check under a bad glob = %+v, want budget.deny", f)
	}
}
