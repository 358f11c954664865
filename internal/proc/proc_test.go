package proc

import (
	"os"
	"os/exec"
	"runtime"
	"testing"
)

const line = "42 (a) b) S 1 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10"

func TestParse(t *testing.T) {
	full := " 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 5 0"
	tests := []struct {
		in   string
		want Stat
		ok   bool
	}{
		{line, Stat{42, 1, 42, 'S', 987654}, true},
		{"42 (sleep) Z 7 9 9 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 5 1000 10", Stat{42, 7, 9, 'Z', 5}, true},
		{"42 (x y) R 3 4" + full, Stat{42, 3, 4, 'R', 0}, true},
		{"42 (sleep) S 1 42", Stat{}, false},
		{"no parenthesis", Stat{}, false},
		{"42 x R 3 4" + full, Stat{}, false},
		{"42 (x) RR 3 4" + full, Stat{}, false},
		{"42 (x) R a 4" + full, Stat{}, false},
		{"42 (x) S 1 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 -5", Stat{}, false},
		// Out of range: ParseUint's maximum must not leak out.
		{"42 (x) S 1 2 2 0 1 0 0 0 0 1 2 0 0 0 0 1 0 4 33333333333333333331", Stat{}, false},
		{"", Stat{}, false},
	}
	for _, tc := range tests {
		got, err := Parse(42, tc.in)
		if got != tc.want || (err == nil) != tc.ok {
			t.Errorf("Parse(%q) = %+v, %v; want %+v, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

// FuzzParse: /proc lines hold a command name any process chooses.
func FuzzParse(f *testing.F) {
	f.Add(line)
	f.Add("1 (x) S")
	f.Fuzz(func(t *testing.T, s string) {
		if got, err := Parse(1, s); err != nil && got != (Stat{}) {
			t.Fatalf("Parse(%q) = %+v, %v; want no value with an error", s, got, err)
		}
	})
}

func TestAlive(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	self, boot := os.Getpid(), BootID()
	start := Start(self)
	if start == 0 || boot == "" {
		t.Fatalf("Start(self) = %d, BootID() = %q; want both", start, boot)
	}
	if !Alive(self, start, boot) {
		t.Error("this process is not alive")
	}
	if Alive(self, start+1, boot) {
		t.Error("another start time (a reused pid) is alive")
	}
	if Alive(self, start, "another-boot") {
		t.Error("a record from another boot is alive")
	}
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if Alive(cmd.Process.Pid, start, boot) {
		t.Errorf("exited process %d is alive", cmd.Process.Pid)
	}
}
