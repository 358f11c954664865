// Package shellquote writes strings and argvs as POSIX shell words, for
// the commands failpass prints for a user to paste (hints, notes) and
// the command strings it hands to a shell.
package shellquote

import "strings"

// Quote returns s as one POSIX shell word: as is when every byte is safe
// unquoted, else in single quotes (a single quote inside as '\”).
func Quote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Join returns argv as one command line a POSIX shell splits back into
// the same argv.
func Join(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = Quote(a)
	}
	return strings.Join(q, " ")
}
