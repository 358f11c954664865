package loop

import (
	"fmt"
	"strings"
)

// WordsError is a validation command string that POSIX word splitting
// cannot read, or that asks for a shell feature failpass never provides.
type WordsError struct {
	Command string
	Reason  string
}

func (e *WordsError) Error() string {
	return fmt.Sprintf("validation command %q: %s", e.Command, e.Reason)
}

// Hints says how to write a command failpass can run.
func (e *WordsError) Hints() []string {
	return []string{"a validation command is split into argv by POSIX word rules (quotes and backslashes) and run without a shell; put pipes, redirections and variables in a script and name the script"}
}

// SplitWords splits a validation command into argv by POSIX shell word
// rules: blanks separate words, single quotes keep everything literally,
// double quotes keep everything but \" \\ \$ \` and a backslash-newline,
// and an unquoted backslash quotes the next character. Nothing is ever
// expanded: an unquoted shell operator or expansion ($ ` | & ; < > ( ) and
// a leading # or ~) is an error, because the command is run without a shell
// and must not silently mean something else than it says.
func SplitWords(s string) ([]string, error) {
	bad := func(format string, args ...any) ([]string, error) {
		return nil, &WordsError{Command: s, Reason: fmt.Sprintf(format, args...)}
	}
	var (
		words []string
		cur   strings.Builder
		in    bool // inside a word (possibly an empty quoted one)
	)
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		case c == '\'':
			in = true
			j := i + 1
			for j < len(rs) && rs[j] != '\'' {
				j++
			}
			if j == len(rs) {
				return bad("unterminated single quote")
			}
			cur.WriteString(string(rs[i+1 : j]))
			i = j
		case c == '"':
			in = true
			j := i + 1
			for ; j < len(rs) && rs[j] != '"'; j++ {
				switch rs[j] {
				case '\\':
					if j+1 < len(rs) && strings.ContainsRune("\"\\$`\n", rs[j+1]) {
						if rs[j+1] != '\n' {
							cur.WriteRune(rs[j+1])
						}
						j++
						continue
					}
					cur.WriteRune('\\')
				case '$', '`':
					return bad("%q inside double quotes would expand in a shell; failpass runs no shell", string(rs[j]))
				default:
					cur.WriteRune(rs[j])
				}
			}
			if j == len(rs) {
				return bad("unterminated double quote")
			}
			i = j
		case c == '\\':
			if i+1 == len(rs) {
				return bad("trailing backslash")
			}
			i++
			if rs[i] != '\n' {
				cur.WriteRune(rs[i])
				in = true
			}
		case strings.ContainsRune("$`|&;<>()", c):
			return bad("unquoted %q is shell syntax; failpass runs no shell", string(c))
		case (c == '#' || c == '~') && !in:
			return bad("unquoted %q at the start of a word is shell syntax; failpass runs no shell", string(c))
		case c == 0:
			return bad("contains a NUL byte")
		default:
			cur.WriteRune(c)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	if len(words) == 0 {
		return bad("no words")
	}
	return words, nil
}
