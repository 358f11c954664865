// Package libparse parses "Key: Value" header lines.
package libparse

import (
	"errors"
	"strings"
)

// ErrEmpty is returned for an empty header line.
var ErrEmpty = errors.New("empty header")

// ParseHeader splits "Key: Value" into its key and value.
func ParseHeader(line string) (key, value string, err error) {
	// Bug (issue 4419): an empty line indexes past the end.
	if line[0] == ' ' {
		return "", "", errors.New("leading space")
	}
	k, v, ok := strings.Cut(line, ":")
	if !ok {
		return "", "", errors.New("missing colon")
	}
	return strings.TrimSpace(k), strings.TrimSpace(v), nil
}
