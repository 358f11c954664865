//go:build linux

package sandbox

import "golang.org/x/sys/unix"

// The arm64 table: its audit architecture; a 32-bit (compat) call
// carries AUDIT_ARCH_ARM and fails. No x32 and no calls of its own to
// deny.
const (
	seccompArch   = unix.AUDIT_ARCH_AARCH64
	seccompX32Bit = 0
)

var deniedArch = []uintptr{}
