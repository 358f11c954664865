package testrunner

import "testing"

// TestStripANSI: pytest's --color=yes output reads as uncolored, text
// between sequences is kept, and a cut sequence never eats a line.
func TestStripANSI(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain\n", "plain\n"},
		{"\x1b[31mERROR\x1b[0m tests/test_time.py\n", "ERROR tests/test_time.py\n"},
		{"\x1b[31m=== \x1b[31m\x1b[1m1 error\x1b[0m\x1b[31m in 0.19s\x1b[0m\x1b[31m ===\x1b[0m", "=== 1 error in 0.19s ==="},
		{"\x1b[38;5;208morange\x1b[0m", "orange"},
		{"a\x1b(Bb", "ab"},                // ESC and one byte
		{"cut\x1b[31\nnext", "cut\nnext"}, // no final byte: the newline stays
		{"end\x1b", "end"},
	} {
		if got := string(StripANSI([]byte(tc.in))); got != tc.want {
			t.Errorf("StripANSI(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestClassifyColored: a collection error pytest printed in color is
// classified as the uncolored one is.
func TestClassifyColored(t *testing.T) {
	plain := "ERROR tests/test_x.py\nE   ModuleNotFoundError: No module named 'nosuchdep'\n!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!\n=== 1 error in 0.19s ===\n"
	colored := "\x1b[31mERROR\x1b[0m tests/test_x.py\n\x1b[31mE   ModuleNotFoundError: No module named 'nosuchdep'\x1b[0m\n!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!\n\x1b[31m=== \x1b[1m1 error\x1b[0m in 0.19s ===\x1b[0m\n"
	want := Classify(Pytest, 2, []byte(plain))
	if want == "" {
		t.Fatalf("Classify(plain collection error) = \"\", want a cause")
	}
	if got := Classify(Pytest, 2, []byte(colored)); got != want {
		t.Errorf("Classify(colored) = %q, want %q as for the uncolored output", got, want)
	}
}
