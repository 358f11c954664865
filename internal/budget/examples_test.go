package budget

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/failpass/failpass/internal/card"
	"github.com/failpass/failpass/internal/gitpatch"
	"github.com/failpass/failpass/internal/patch"
)

// The demo's diffs against the demo's card, read by the real patch reader
// (git's parser): the honest fix is within budget, each hostile one is
// stopped by the rule the demo promises.
func TestExamples(t *testing.T) {
	dir := filepath.Join("..", "..", "examples", "demo")
	raw, err := os.ReadFile(filepath.Join(dir, "issue-contract.yml"))
	if err != nil {
		t.Skipf("no demo: %v", err)
	}
	c, err := card.Parse("issue-contract.yml", raw)
	if err != nil {
		t.Fatalf("card.Parse: %v", err)
	}
	var cmds []card.Command
	for _, r := range card.Roles {
		cmds = append(cmds, c.Command(r))
	}
	project := filepath.Join(dir, "project")
	isFile := func(p string) bool {
		st, err := os.Lstat(filepath.Join(project, filepath.FromSlash(p)))
		return err == nil && st.Mode().IsRegular()
	}
	oracle := OracleFiles(cmds, "", isFile)
	for _, tc := range []struct{ diff, rule string }{
		{"honest.diff", ""},
		{"hostile-workflow.diff", RuleDeny},
		{"hostile-gut-test.diff", RuleDeny},
		{"hostile-prose.diff", patch.RuleParse},
	} {
		d, err := os.ReadFile(filepath.Join(dir, tc.diff))
		if err != nil {
			t.Fatal(err)
		}
		cs, err := gitpatch.Read(context.Background(), d)
		var pe *patch.Error
		if errors.As(err, &pe) {
			if pe.Rule != tc.rule {
				t.Errorf("%s: Read error %s %q, want %s", tc.diff, pe.Rule, pe.Msg, tc.rule)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.diff, err)
		}
		got := check(cs, c.EffectiveBudget(), oracle)
		switch {
		case got == nil && tc.rule != "":
			t.Errorf("%s: Check = nil, want %s", tc.diff, tc.rule)
		case got != nil && got.Rule != tc.rule:
			t.Errorf("%s: Check = %+v, want %q", tc.diff, *got, tc.rule)
		}
	}
}
