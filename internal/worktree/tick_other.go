//go:build !linux

package worktree

import "time"

// fileClockTick: not known here; the longest Linux tick.
func fileClockTick() time.Duration { return 10 * time.Millisecond }
