//go:build !linux && !darwin

package worktree

import "io/fs"

// stampOf: no change time here, so Restore always leaves the reset to git.
func stampOf(fs.FileInfo) (stamp, bool) { return stamp{}, false }
