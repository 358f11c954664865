package report

import (
	"testing"

	"github.com/failpass/failpass/internal/sandbox"
)

func TestSandboxLine(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    sandbox.Report
		want string
	}{
		{"every layer held", sandbox.Report{Applied: []string{"network", "filesystem", "processes", "resources"}, Missing: []string{}}, ""},
		{"nothing ran", sandbox.Report{}, ""},
		{"off", sandbox.OffReport(), "sandbox: OFF (--sandbox=off): the card's commands ran uncontained"},
		{"missing, with why", sandbox.Report{Applied: []string{"filesystem"}, Missing: []string{"network", "resources"},
			Why: map[string]string{"netns": "operation not permitted", "cgroups": "not root"}},
			"sandbox: missing network, resources (cgroups: not root; netns: operation not permitted)"},
		{"Landlock only: the tells named", sandbox.Report{Applied: []string{"resources"}, Missing: []string{"network", "filesystem", "processes"},
			Tells: []string{sandbox.TellAccessTimes, sandbox.TellPIDs}},
			"sandbox: missing network, filesystem, processes; runs can be told apart by access times of shared files, process ids"},
	} {
		if got := SandboxLine(tc.r); got != tc.want {
			t.Errorf("%s: SandboxLine = %q, want %q", tc.name, got, tc.want)
		}
	}
}
