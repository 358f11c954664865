package report

import (
	"github.com/failpass/failpass/internal/verdict"
	"testing"

	"github.com/failpass/failpass/internal/sandbox"
)

func TestSandboxLine(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    verdict.Sandbox
		want string
	}{
		{"every layer held", verdict.Sandbox{Applied: []string{"network", "filesystem", "processes", "resources"}, Missing: []string{}}, ""},
		{"nothing ran", verdict.Sandbox{}, ""},
		{"off", sandbox.OffReport(), "sandbox: OFF (--sandbox=off): the card's commands ran uncontained"},
		{"missing, with why", verdict.Sandbox{Applied: []string{"filesystem"}, Missing: []string{"network", "resources"},
			Why: map[string]string{"netns": "operation not permitted", "cgroups": "not root"}},
			"sandbox: missing network, resources (cgroups: not root; netns: operation not permitted)"},
		{"Landlock only: the tells named", verdict.Sandbox{Applied: []string{"resources"}, Missing: []string{"network", "filesystem", "processes"},
			Tells: []string{sandbox.TellAccessTimes, sandbox.TellPIDs}},
			"sandbox: missing network, filesystem, processes; runs can be told apart by access times of shared files, process ids"},
	} {
		if got := SandboxLine(tc.r); got != tc.want {
			t.Errorf("%s: SandboxLine = %q, want %q", tc.name, got, tc.want)
		}
	}
}
