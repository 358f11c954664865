package report

import (
	"bytes"
	"github.com/failpass/failpass/internal/verdict"
	"strings"
	"testing"

	"github.com/failpass/failpass/internal/sandbox"
)

func failed(rule, reason, path string, line int) *verdict.Verdict {
	r := rule
	return &verdict.Verdict{Verdict: verdict.Fail, Rule: &r, Reason: reason, Candidate: "main..pr",
		Sandbox: verdict.Sandbox{Applied: []string{"network", "filesystem", "processes", "resources"}, Missing: []string{}},
		Steps:   []verdict.Step{{Rule: "card.signature", Status: verdict.StatusOK}, {Rule: rule, Status: verdict.StatusFail, Reason: reason, Path: path, Line: line}}}
}

func TestAnnotations(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    *verdict.Verdict
		want string
	}{
		{"pass with the whole sandbox", &verdict.Verdict{Verdict: verdict.Pass, Sandbox: verdict.Sandbox{Applied: []string{"network"}, Missing: []string{}}}, ""},
		{"file and line", failed("budget.deny", `a.yml matches deny glob "*.yml"`, "a.yml", 3),
			"::error file=a.yml,line=3,title=failpass budget.deny::GATE: FAIL budget.deny: a.yml matches deny glob \"*.yml\"\n"},
		{"file without a line", failed("budget.binary", "binary change to b.png", "b.png", 0),
			"::error file=b.png,title=failpass budget.binary::GATE: FAIL budget.binary: binary change to b.png\n"},
		{"no file", failed("patch.pass", "exit 1, expected 0", "", 0),
			"::error title=failpass patch.pass::GATE: FAIL patch.pass: exit 1, expected 0\n"},
		{"hostile name cannot end the properties or start a command", failed("budget.deny", "x", "a,line=1:b%0A::warning::x\n::error::y", 2),
			"::error file=a%2Cline=1%3Ab%250A%3A%3Awarning%3A%3Ax?%3A%3Aerror%3A%3Ay,line=2,title=failpass budget.deny::GATE: FAIL budget.deny: x\n"},
		{"hostile reason stays on one line", failed("budget.deny", "50%\r\n::error::forged", "a", 1),
			"::error file=a,line=1,title=failpass budget.deny::GATE: FAIL budget.deny: 50%25??::error::forged\n"},
		{"trouble", &verdict.Verdict{Verdict: verdict.Errored, Error: "cannot read diff"},
			"::error title=failpass error::failpass: trouble: cannot read diff\n"},
		{"missing layers are a warning", &verdict.Verdict{Verdict: verdict.Pass, Sandbox: verdict.Sandbox{Applied: []string{"network"}, Missing: []string{"resources"}, Why: map[string]string{"cgroup-pids": "no pids cgroup", "cgroup-memory": "no memory cgroup"}}},
			"::warning title=failpass sandbox::sandbox layers missing on this runner: resources (cgroup-memory: no memory cgroup; cgroup-pids: no pids cgroup)\n"},
		{"sandbox off", &verdict.Verdict{Verdict: verdict.Pass, Sandbox: sandbox.OffReport()},
			"::warning title=failpass sandbox::the sandbox was off (--sandbox=off): nothing contained the card's commands\n"},
	} {
		var b bytes.Buffer
		Annotations(&b, tc.v)
		if got := b.String(); got != tc.want {
			t.Errorf("%s: Annotations =\n%q\nwant\n%q", tc.name, got, tc.want)
		}
	}
}

func TestMDCode(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"a.go", "`a.go`"},
		{"a`b", "``a`b``"},
		{"`a", "`` `a ``"},
		{"<img src=x>", "`<img src=x>`"},
		{"a\nb", "`a?b`"},
	} {
		if got := mdCode(tc.in); got != tc.want {
			t.Errorf("mdCode(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestSummaryMarkdown(t *testing.T) {
	var b bytes.Buffer
	SummaryMarkdown(&b, failed("budget.deny", "x|y matches", "x|y", 4))
	got := b.String()
	for _, want := range []string{
		"### failpass: FAIL `budget.deny`\n",
		"**Where:** `x|y`, line 4\n",
		"| `budget.deny` | fail |  |  | `x\\|y matches` |\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("SummaryMarkdown = \n%s\nwant it to hold %q", got, want)
		}
	}
}
