package run

import (
	"os"
	"os/exec"
	"slices"
	"testing"
)

// children reads the threads' children files; it must find exactly what
// a scan of every process finds.
func TestChildrenMatchesScan(t *testing.T) {
	var want []int
	for i := 0; i < 3; i++ {
		c := exec.Command("sleep", "30")
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { c.Process.Kill(); c.Wait() }()
		want = append(want, c.Process.Pid)
	}
	pids := func(ps []procStat) []int {
		var out []int
		for _, p := range ps {
			if slices.Contains(want, p.pid) {
				out = append(out, p.pid)
			}
		}
		slices.Sort(out)
		return out
	}
	slices.Sort(want)
	self := os.Getpid()
	got, scanned := pids(children(self)), pids(scanChildren(self))
	if !slices.Equal(got, want) || !slices.Equal(scanned, want) {
		t.Errorf("children(self) found %v, scanChildren(self) %v; want %v", got, scanned, want)
	}
}
