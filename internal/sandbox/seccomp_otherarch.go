//go:build linux && !amd64 && !arm64

package sandbox

// No seccomp table for this architecture: the feature is reported
// missing.
const (
	seccompArch   = 0
	seccompX32Bit = 0
)

var deniedArch = []uintptr{}
