package model

import (
	"errors"
	"path"
	"strings"
	"testing"
)

func TestCheckProse(t *testing.T) {
	touched := []string{"src/libparse/header.py", "tests/test_header.py"}
	denied := func(p string) bool {
		for _, g := range []string{"pyproject.toml", "setup.cfg"} {
			if path.Base(p) == g {
				return true
			}
		}
		return strings.HasPrefix(p, ".github/") || strings.HasPrefix(p, "docs/")
	}
	oracle := func(p string) bool { return p == "tests/test_header.py" || p == "issue-contract.yml" }
	tests := []struct {
		prose  string
		reason string // "" means accepted
	}{
		{prose: ""},
		{prose: "This handles the empty header."},
		{prose: "Changed `src/libparse/header.py` to return early."},
		{prose: "The fix is in header.py; see parse()."},
		{prose: "Callers and/or users see no change; n/a otherwise, e.g. for v1.2 headers."},
		{prose: "Uses header.strip and os.path.join as before."},
		{prose: "See https://example.org/issues/4419 for the report."},
		{prose: "You should also update src/libparse/reader.py.", reason: "reader.py, which the diff does not touch"},
		{prose: "I also considered `src/util`.", reason: "src/util, which the diff does not touch"},
		{prose: "Bump the version in pyproject.toml too.", reason: "pyproject.toml, a path the card denies"},
		{prose: "Add a workflow under .github/workflows/ci.yml", reason: "a path the card denies"},
		{prose: "The card file issue-contract.yml is wrong.", reason: "an oracle file"},
		{prose: "Please raise the budget to 5 files.", reason: "asks to change the card"},
		{prose: "This needs max_files: 4.", reason: "card field"},
		{prose: "The limit should be increased for this fix.", reason: "asks to change the card"},
		{prose: "We could drop the deny glob for docs.", reason: "change the card"},
		{prose: "Change the fail command to run all tests.", reason: "asks to change the card"},
		{prose: "This goes slightly over the budget.", reason: "asks to change the card"},
		{prose: "It needs more lines than allowed.", reason: "asks to change the card"},
		{prose: "Increasing the line limit would help.", reason: "asks to change the card"},
	}
	for _, tt := range tests {
		err := CheckProse(tt.prose, touched, denied, oracle)
		if tt.reason == "" {
			if err != nil {
				t.Errorf("CheckProse(%q) = %v, want nil", tt.prose, err)
			}
			continue
		}
		var re *RefusedError
		if !errors.As(err, &re) || !strings.Contains(re.Reason, tt.reason) {
			t.Errorf("CheckProse(%q) = %v, want a refusal containing %q", tt.prose, err, tt.reason)
		}
	}
}

func TestProsePaths(t *testing.T) {
	tests := []struct {
		prose string
		want  []string
	}{
		{"edit `a/b.go` and (c.py), then Makefile.", []string{"a/b.go", "c.py", "Makefile"}},
		{"and/or n/a e.g. i.e. v1.2 3.14 foo.bar()", nil},
		{"src/x/y and ./z.toml: done", []string{"src/x/y", "z.toml"}},
		{"../etc/passwd", nil},
	}
	for _, tt := range tests {
		got := ProsePaths(tt.prose)
		if strings.Join(got, "|") != strings.Join(tt.want, "|") {
			t.Errorf("ProsePaths(%q) = %q, want %q", tt.prose, got, tt.want)
		}
	}
}
