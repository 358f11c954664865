package patch

import (
	"fmt"
	"strings"
)

// unquotePrefix reads a C-style quoted name at the start of s, as git
// writes names with special bytes ("a/\303\251", "\t", "\n", "\"", "\\"),
// and returns it with the text after the closing quote.
func unquotePrefix(s string) (name, tail string, err error) {
	if !strings.HasPrefix(s, `"`) {
		return "", "", fmt.Errorf("name does not start with a quote")
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			return b.String(), s[i+1:], nil
		case '\\':
			i++
			if i >= len(s) {
				return "", "", fmt.Errorf("unterminated escape in quoted name")
			}
			switch e := s[i]; e {
			case 'a':
				b.WriteByte('\a')
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'v':
				b.WriteByte('\v')
			case '"', '\\':
				b.WriteByte(e)
			case '0', '1', '2', '3':
				if i+2 >= len(s) || !isOctal(s[i+1]) || !isOctal(s[i+2]) {
					return "", "", fmt.Errorf("bad octal escape in quoted name")
				}
				b.WriteByte((e-'0')<<6 | (s[i+1]-'0')<<3 | (s[i+2] - '0'))
				i += 2
			default:
				return "", "", fmt.Errorf("unknown escape \\%c in quoted name", e)
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", "", fmt.Errorf("unterminated quoted name")
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }

// unquoteName reads a whole header value that is either a quoted name or
// a bare one (rename from/to, copy from/to).
func unquoteName(s string) (string, error) {
	if strings.HasPrefix(s, `"`) {
		n, tail, err := unquotePrefix(s)
		if err != nil {
			return "", err
		}
		if tail != "" {
			return "", fmt.Errorf("text after the quoted name")
		}
		return n, nil
	}
	if s == "" {
		return "", fmt.Errorf("empty name")
	}
	if strings.ContainsAny(s, "\"\\\t") {
		return "", fmt.Errorf("unquoted name with a quote, backslash or tab: %q", s)
	}
	return s, nil
}
