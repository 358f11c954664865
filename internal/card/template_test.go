package card

import (
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/failpass/failpass/internal/testrunner"
)

// TestTemplates: every runner's template is a valid card without
// warnings, found by its name and by the runner Detect reports, whose
// placeholders are exactly the fields the maintainer must fill (in the
// canonical JSON's key order); filled in, none is left.
func TestTemplates(t *testing.T) {
	for _, tc := range []struct {
		name string
		kind testrunner.Kind
		want []string
	}{
		{"go", testrunner.GoTest, []string{"fail.cmd[4]", "fail.cmd[5]", "id", "invariant.cmd[3]", "pass.cmd[4]", "pass.cmd[5]"}},
		{"cargo", testrunner.Cargo, []string{"fail.cmd[2]", "id", "pass.cmd[2]"}},
		{"pytest", testrunner.Pytest, []string{"fail.cmd[4]", "id", "invariant.cmd[4]", "pass.cmd[4]"}},
		{"unittest", testrunner.Unittest, []string{"fail.cmd[3]", "id", "invariant.cmd[3]", "pass.cmd[3]"}},
		{"npm", testrunner.NPM, []string{"fail.cmd[3]", "id", "pass.cmd[3]"}},
	} {
		tm := TemplateNamed(tc.name)
		if tm == nil || TemplateFor(tc.kind) != tm {
			t.Errorf("TemplateNamed(%q) = %v, TemplateFor(%q) = %v; want the same template", tc.name, tm, tc.kind, TemplateFor(tc.kind))
			continue
		}
		data := tm.Card(Placeholder+"ISSUE-ID", "/usr/bin/python3")
		c, err := Parse("card.yml", data)
		if err != nil {
			t.Errorf("%s: the template does not parse: %v\n%s", tc.name, err, data)
			continue
		}
		if got := c.Placeholders(); !slices.Equal(got, tc.want) {
			t.Errorf("%s: Placeholders() = %q, want %q", tc.name, got, tc.want)
		}
		if tm.Python != "" && !strings.Contains(string(data), `"/usr/bin/python3", "-m", "`+tm.Python+`"`) {
			t.Errorf("%s: the template does not name the interpreter:\n%s", tc.name, data)
		}
		if w := c.Warnings(); len(w) > 0 {
			t.Errorf("%s: the template warns: %q", tc.name, w)
		}
		filled, err := Parse("card.yml", []byte(strings.ReplaceAll(string(tm.Card("ISSUE-9", "python3")), Placeholder, "x")))
		if err != nil || filled.Placeholders() != nil || filled.ID != "ISSUE-9" {
			t.Errorf("%s: the filled template = %v, %v; want no placeholder left", tc.name, filled, err)
		}
	}
	if got := TemplatesFor(fstest.MapFS{"package.json": {}, "go.mod": {}}); len(got) != 2 || got[0].Name != "go" || got[1].Name != "npm" {
		t.Errorf("TemplatesFor(go.mod, package.json) = %v, want go then npm", got)
	}
	if TemplateNamed("make") != nil || TemplateFor(testrunner.Jest) != nil {
		t.Errorf("a template for a runner card init does not know")
	}
}
