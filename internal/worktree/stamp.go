package worktree

// stamp is the stat Snapshot compares: what git's index records of a
// file, to the nanosecond.
type stamp struct {
	mode         uint32
	uid, gid     uint32
	size         int64
	dev, ino     uint64
	mtime, ctime int64 // nanoseconds since 1970
}
