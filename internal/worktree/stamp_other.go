//go:build !linux && !darwin

package worktree

import (
	"io/fs"
	"time"
)

// stampOf: no change time here, so Restore always leaves the reset to git.
func stampOf(fs.FileInfo) (stamp, bool) { return stamp{}, false }

// fileClockTick: not known here; the longest Linux tick.
func fileClockTick() time.Duration { return 10 * time.Millisecond }
