//go:build darwin || freebsd || netbsd || openbsd

package cli

import "golang.org/x/sys/unix"

// ioctlReadTermios reads a terminal's settings; it succeeds only on a terminal.
const ioctlReadTermios = unix.TIOCGETA
