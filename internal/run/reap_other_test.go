//go:build !linux

package run

import (
	"os/exec"
	"strconv"
	"strings"
)

// marked lists live processes whose environment holds m, as ps shows
// environments (BSD ps: "e" appends them to the command).
func marked(m string) []int {
	out, _ := exec.Command("ps", "-axeww", "-o", "pid=,command=").Output()
	var pids []int
	for _, l := range strings.Split(string(out), "\n") {
		f := strings.Fields(l)
		if len(f) > 1 && strings.Contains(l, m) {
			if pid, err := strconv.Atoi(f[0]); err == nil {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}
