//go:build !linux

package worktree

// Retime does nothing off Linux: the gate's runs there are not
// contained, and times are the least of what they can tell apart.
func (w *Worktree) Retime(s *Snapshot, dirs map[string]int64) error { return nil }
