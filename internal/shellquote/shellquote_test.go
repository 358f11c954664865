package shellquote

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// A real sh splits Join's output back into the argv it was given.
func TestJoinRoundTrip(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	for _, argv := range [][]string{
		{"go", "test", "-run", "^TestA$", "./pkg"},
		{"it's", "a b", "", "$HOME", "`id`", "a\nb", "100%", "*", "--x=\"y\""},
	} {
		// printf prints each word on its own line, NUL-terminated.
		out, err := exec.Command(sh, "-c", `printf '%s\0' `+Join(argv)).Output()
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
		if !slices.Equal(got, argv) {
			t.Errorf("Join(%q) = %s, which sh splits into %q", argv, Join(argv), got)
		}
	}
}

func TestQuoteLeavesSafeWordsBare(t *testing.T) {
	for in, want := range map[string]string{
		"./a/b.go": "./a/b.go", "a@b.c": "a@b.c", "": "''", "a b": "'a b'", "a'b": `'a'\''b'`,
	} {
		if got := Quote(in); got != want {
			t.Errorf("Quote(%q) = %s, want %s", in, got, want)
		}
	}
}
