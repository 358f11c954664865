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
				if st, ok := readStat(pid); ok && st.state != 'Z' {
					pids = append(pids, pid)
				}
			}
		}
	}
	return pids
}

func TestParseStat(t *testing.T) {
	tests := []struct {
		in   string
		want procStat
		ok   bool
	}{
		{"42 (sleep) S 1 42 42 0 -1", procStat{42, 1, 42, 'S'}, true},
		{"42 (a) b) c) Z 7 9 9 0", procStat{42, 7, 9, 'Z'}, true},
		{"42 (x y) R 3 4", procStat{42, 3, 4, 'R'}, true},
		{"42 (x) R 3", procStat{}, false},
		{"42 x R 3 4", procStat{}, false},
		{"42 (x) RR 3 4", procStat{}, false},
		{"42 (x) R a 4", procStat{}, false},
		{"", procStat{}, false},
	}
	for _, tc := range tests {
		got, ok := parseStat(42, tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseStat(%q) = %+v, %v; want %+v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func FuzzParseStat(f *testing.F) {
	f.Add("42 (sleep) S 1 42 42 0 -1")
	f.Add("42 (a) b) Z 7 9 9 0")
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := parseStat(1, s)
		if !ok && got != (procStat{}) {
			t.Fatalf("parseStat(%q) = %+v, false; want no value", s, got)
		}
	})
}
