package run

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/failpass/failpass/internal/proc"
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
	pids := func(ps []proc.Stat) []int {
		var out []int
		for _, p := range ps {
			if slices.Contains(want, p.PID) {
				out = append(out, p.PID)
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

// marked lists live processes whose environment holds m.
func marked(m string) []int {
	var pids []int
	names, _ := filepath.Glob("/proc/[0-9]*/environ")
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(b, []byte{0}) {
			if string(kv) == m {
				pid, _ := strconv.Atoi(strings.Split(n, "/")[2])
				if st, err := proc.Read(pid); err == nil && st.State != 'Z' {
					pids = append(pids, pid)
				}
			}
		}
	}
	return pids
}
