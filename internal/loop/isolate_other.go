//go:build !linux

package loop

import "errors"

type isolation struct {
	readOnly []string
	overlay  string
	writable []string
	hidden   []string
	scratch  string
}

var errNoIsolation = errors.New("a private read-only mount namespace is not available on this system")

func runIsolated(iso isolation, fn func() error) ([]string, error) { return nil, errNoIsolation }
