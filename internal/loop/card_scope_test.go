package loop

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/failpass/failpass/internal/card"
	"github.com/failpass/failpass/internal/gate"
	"github.com/failpass/failpass/internal/gitx"
)

// TestCardPolicyScopeIsTheGates: the loop takes the card's scope from
// the one computation the gate uses, so a card reached through a
// symlinked folder is an oracle file for the loop exactly as for the
// gate (the loop's own path arithmetic once found it outside the
// repository and let a fixer rewrite it), and a deny glob refuses what
// budget.deny refuses.
func TestCardPolicyScopeIsTheGates(t *testing.T) {
	s := newScen(t, "hello BUG1\n")
	const yml = `id: "C-3"
base_ref: "main"
fail: {cmd: ["sh", "check.sh"], expect_exit: 1}
pass: {cmd: ["sh", "check.sh"], expect_exit: 0}
invariant: {cmd: ["sh", "check.sh"], expect_exit: 0}
budget: {max_files: 5, max_changed_lines: 50, deny_globs: ["ci/**"]}
`
	writeFile(t, filepath.Join(s.dir, "card.yml"), yml, 0o644)
	link := filepath.Join(t.TempDir(), "checkout")
	if err := os.Symlink(s.dir, link); err != nil {
		t.Fatal(err)
	}
	cardPath := filepath.Join(link, "card.yml")
	c, err := card.Parse(cardPath, []byte(yml))
	if err != nil {
		t.Fatal(err)
	}
	pol, err := newCardPolicy(t, s.repo, c, cardPath)
	if err != nil {
		t.Fatal(err)
	}
	if pol.InRepo != "card.yml" {
		t.Errorf("NewCardPolicy(%s).InRepo = %q, want card.yml, as gate.Bind binds it for the gate", cardPath, pol.InRepo)
	}
	for _, tt := range []struct{ path, want string }{
		{"card.yml", "is an oracle file of the card"},
		{"check.sh", "is an oracle file of the card"},
		{"ci/build.yml", `is denied by the card's deny glob "ci/**"`},
		{"app.txt", ""},
	} {
		if got := pol.Outside(tt.path); got != tt.want {
			t.Errorf("Outside(%s) = %q, want %q", tt.path, got, tt.want)
		}
	}
}

// newCardPolicy is NewCardPolicy of c, read from cardPath, bound to repo
// as the loop's command binds it.
func newCardPolicy(t *testing.T, repo *gitx.Repo, c *card.Card, cardPath string) (*CardPolicy, error) {
	t.Helper()
	b, err := gate.Bind(context.Background(), repo, c, cardPath, os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	return NewCardPolicy(context.Background(), b)
}
