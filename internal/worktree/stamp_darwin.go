package worktree

import (
	"io/fs"
	"syscall"
	"time"
)

func stampOf(fi fs.FileInfo) (stamp, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return stamp{}, false
	}
	return stamp{
		mode: uint32(st.Mode), uid: st.Uid, gid: st.Gid, size: st.Size,
		dev: uint64(st.Dev), ino: st.Ino,
		mtime: st.Mtimespec.Nano(), ctime: st.Ctimespec.Nano(),
	}, true
}

// fileClockTick: not known here; the longest Linux tick.
func fileClockTick() time.Duration { return 10 * time.Millisecond }
