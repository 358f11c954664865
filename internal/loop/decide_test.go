package loop

import (
	"reflect"
	"strings"
	"testing"

	"github.com/failpass/failpass/internal/model"
	"github.com/failpass/failpass/internal/shellquote"
)

func finding(id, sev, conf string, locs ...string) model.Finding {
	f := model.Finding{ID: id, Lens: "correctness", Severity: sev, Confidence: conf, Rule: "r-" + id}
	for _, l := range locs {
		f.Evidence = append(f.Evidence, model.Evidence{Location: l, Detail: "d"})
	}
	return f
}

func TestDecideBuiltin(t *testing.T) {
	files := map[string]bool{"a.go": true, "b.go": true, "deny/x.go": true}
	scope := func(p string) string {
		if strings.HasPrefix(p, "deny/") {
			return "is denied"
		}
		return ""
	}
	cases := []struct {
		name      string
		f         model.Finding
		want      string
		scopeStop bool
		rationale string
	}{
		{"blocking high in scope", finding("f1", "blocking", "high", "a.go:3"), Accepted, false, "inside the allowed scope"},
		{"strong medium in scope", finding("f2", "strong_recommendation", "medium", "b.go#L2", "a.go"), Accepted, false, "a.go"},
		{"defer", finding("f3", "defer", "high", "a.go"), Deferred, false, "defer"},
		{"low confidence", finding("f4", "blocking", "low", "a.go"), Rejected, false, "confidence"},
		{"missing file", finding("f5", "blocking", "high", "gone.go:1"), Rejected, false, "does not exist at the head"},
		{"one of two missing", finding("f6", "blocking", "high", "a.go:1", "gone.go"), Rejected, false, "gone.go"},
		{"not a path", finding("f7", "blocking", "high", "/etc/passwd"), Rejected, false, "names no file"},
		{"climbs out", finding("f8", "blocking", "high", "../x.go"), Rejected, false, "names no file"},
		{"blocking outside scope", finding("f9", "blocking", "high", "deny/x.go:1"), Rejected, true, "leave the allowed scope"},
		{"strong outside scope", finding("f10", "strong_recommendation", "high", "deny/x.go"), Rejected, false, "outside the allowed scope"},
		{"no evidence", finding("f11", "blocking", "high"), Rejected, false, "no evidence"},
	}
	for _, c := range cases {
		got := DecideBuiltin([]model.Finding{c.f}, files, scope)[0]
		if got.Disposition != c.want || got.ScopeStop != c.scopeStop || !strings.Contains(got.Rationale, c.rationale) {
			t.Errorf("%s: DecideBuiltin = %s (scope stop %v, %q), want %s (scope stop %v, containing %q)",
				c.name, got.Disposition, got.ScopeStop, got.Rationale, c.want, c.scopeStop, c.rationale)
		}
	}
}

func TestLocationPath(t *testing.T) {
	cases := []struct {
		in   string
		want string
		ok   bool
	}{
		{"a.go", "a.go", true},
		{"src/a.go:12", "src/a.go", true},
		{"src/a.go:12:3", "src/a.go", true},
		{"src/a.go#L10-L12", "src/a.go", true},
		{"./src/../src/a.go", "src/a.go", true},
		{"weird:name.go", "weird:name.go", true},
		{"", "", false},
		{"/abs/a.go", "", false},
		{"../a.go", "", false},
		{".git/config", "", false},
		{"a\\b", "", false},
		{":12", "", false},
	}
	for _, c := range cases {
		got, ok := LocationPath(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("LocationPath(%q) = %q, %v, want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestFindingKeyIgnoresIDs(t *testing.T) {
	a := finding("f1", "blocking", "high", "a.go:3")
	b := finding("other-id", "blocking", "high", "a.go:9")
	b.Rule = a.Rule
	if FindingKey(a) != FindingKey(b) {
		t.Errorf("FindingKey(%+v) = %q, FindingKey(%+v) = %q, want equal", a, FindingKey(a), b, FindingKey(b))
	}
}

func TestEarlyStop(t *testing.T) {
	p := func(material, claimed []string) Pass { return Pass{Material: material, ClaimedFixed: claimed} }
	A, B, C, D := []string{"a"}, []string{"b"}, []string{"c"}, []string{"d"}
	cases := []struct {
		name   string
		passes []Pass
		want   string
	}{
		{"first pass", []Pass{p(A, nil)}, ""},
		{"new finding after fix", []Pass{p(A, nil), p(B, A)}, ""},
		{"survives its fix", []Pass{p(A, nil), p(A, A)}, ReasonRepeated},
		{"survives among others", []Pass{p(A, nil), p([]string{"x", "a"}, A)}, ReasonRepeated},
		{"oscillates", []Pass{p(A, nil), p(B, A), p(A, B)}, ReasonOscillation},
		{"no oscillation on progress", []Pass{p(A, nil), p(B, A), p(C, B), p(D, C)}, ""},
		{"expands by two", []Pass{p(A, nil), p([]string{"b", "c", "d"}, A)}, ReasonExpanding},
		{"grows by one", []Pass{p(A, nil), p([]string{"b", "c"}, A)}, ""},
		{"growth without a fix", []Pass{p(A, nil), p([]string{"b", "c", "d"}, nil)}, ""},
	}
	for _, c := range cases {
		if got := EarlyStop(c.passes); got != c.want {
			t.Errorf("%s: EarlyStop = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestRepeatedFailure(t *testing.T) {
	cases := []struct {
		in   []AttemptFacts
		want bool
	}{
		{nil, false},
		{[]AttemptFacts{{"h1", "failed"}}, false},
		{[]AttemptFacts{{"h1", "failed"}, {"h1", "failed"}}, true},
		{[]AttemptFacts{{"h1", "failed"}, {"h2", "failed"}}, false},
		{[]AttemptFacts{{"h1", "interrupted"}, {"h1", "failed"}}, false},
		{[]AttemptFacts{{"h1", "failed"}, {"h1", "committed"}}, false},
	}
	for _, c := range cases {
		if got := RepeatedFailure(c.in); got != c.want {
			t.Errorf("RepeatedFailure(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestPublicationStatus(t *testing.T) {
	cases := []struct {
		policy, state, reason string
		published             bool
		want                  string
	}{
		{"local_commit", "converged", "", false, "not_applicable"},
		{"local_commit", "blocked", "remote_advanced", false, "not_applicable"},
		{"update_pr", "converged", "", true, "published"},
		{"update_pr", "changes_remaining", ReasonBudget, false, "withheld"},
		{"update_pr", "blocked", "remote_advanced", false, "failed"},
		{"update_pr", "blocked", "publication_failed", false, "failed"},
		{"update_pr", "blocked", "candidate_busy", false, "withheld"},
	}
	for _, c := range cases {
		if got := PublicationStatus(c.policy, c.state, c.reason, c.published); got != c.want {
			t.Errorf("PublicationStatus(%q, %q, %q, %v) = %q, want %q", c.policy, c.state, c.reason, c.published, got, c.want)
		}
	}
}

func TestOperatorActionCoversEveryReason(t *testing.T) {
	for _, r := range []string{"candidate_busy", "candidate_integrity_failure", "checkpoint_mismatch", "missing_capability",
		"missing_authority", "insufficient_change_contract", "reviewer_integrity_failure", "validation_unavailable",
		"base_drift", "remote_advanced", "publication_failed", "scope_decision_required", "operator_input_required"} {
		if got := OperatorAction("blocked", r, "local_commit", "b", 0); strings.HasPrefix(got, "inspect the checkpoint") {
			t.Errorf("OperatorAction(blocked, %q) = %q, want a specific action", r, got)
		}
	}
	for _, r := range []string{ReasonBudget, ReasonRepeated, ReasonOscillation, ReasonExpanding, ReasonRepeatedFail, ReasonValidationFail} {
		if got := OperatorAction("changes_remaining", r, "local_commit", "b", 0); strings.HasPrefix(got, "inspect the checkpoint") {
			t.Errorf("OperatorAction(changes_remaining, %q) = %q, want a specific action", r, got)
		}
	}
}

func TestSplitWords(t *testing.T) {
	cases := []struct {
		in   string
		want []string
		err  string
	}{
		{"go test ./...", []string{"go", "test", "./..."}, ""},
		{"  sh   check.sh  ", []string{"sh", "check.sh"}, ""},
		{`pytest 'tests/a b.py::t'`, []string{"pytest", "tests/a b.py::t"}, ""},
		{`echo "a \"b\" \\ c"`, []string{"echo", `a "b" \ c`}, ""},
		{`echo "a\nb"`, []string{"echo", `a\nb`}, ""},
		{`a\ b c`, []string{"a b", "c"}, ""},
		{`x '' ""`, []string{"x", "", ""}, ""},
		{"a=b cmd", []string{"a=b", "cmd"}, ""},
		{"a#b", []string{"a#b"}, ""},
		{"", nil, "no words"},
		{"make && rm -rf /", nil, "shell syntax"},
		{"echo $HOME", nil, "shell syntax"},
		{`echo "$HOME"`, nil, "would expand"},
		{"cat < x", nil, "shell syntax"},
		{"# comment", nil, "shell syntax"},
		{"~/bin/x", nil, "shell syntax"},
		{`echo 'open`, nil, "unterminated single"},
		{`echo "open`, nil, "unterminated double"},
		{`echo \`, nil, "trailing backslash"},
	}
	for _, c := range cases {
		got, err := SplitWords(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || got != nil {
				t.Errorf("SplitWords(%q) = %q, %v, want error containing %q", c.in, got, err, c.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("SplitWords(%q) = %q, %v, want %q", c.in, got, err, c.want)
		}
	}
}

// FuzzSplitWords: an error returns no words; a split command written back
// with shellquote.Join splits to the same argv (the canonical form round-trips).
func FuzzSplitWords(f *testing.F) {
	for _, s := range []string{"go test ./...", `a 'b c' "d\"e"`, `x\ y`, "a$b", `"`, "x '' y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		words, err := SplitWords(s)
		if err != nil {
			if words != nil {
				t.Fatalf("SplitWords(%q) returned words with an error", s)
			}
			return
		}
		again, err := SplitWords(shellquote.Join(words))
		if err != nil || !reflect.DeepEqual(again, words) {
			t.Fatalf("SplitWords(shellquote.Join(%q)) = %q, %v, want %q", words, again, err, words)
		}
	})
}

// FuzzLocationPath: a refused location gives no path; an accepted path is
// clean, relative, outside .git, and a fixed point.
func FuzzLocationPath(f *testing.F) {
	for _, s := range []string{"a.go:1", "../x", "/abs", "a/./b#L1", ".git/x", "x:y:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, ok := LocationPath(s)
		if !ok {
			if p != "" {
				t.Fatalf("LocationPath(%q) refused but returned %q", s, p)
			}
			return
		}
		if strings.HasPrefix(p, "/") || strings.HasPrefix(p, "../") || p == ".." || strings.HasPrefix(p, ".git/") {
			t.Fatalf("LocationPath(%q) = %q escapes", s, p)
		}
		if q, ok := LocationPath(p); ok && q != p && !strings.ContainsAny(p, ":#") {
			t.Fatalf("LocationPath(LocationPath(%q)) = %q, want %q", s, q, p)
		}
	})
}
