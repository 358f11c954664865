package worktree

import (
	"io/fs"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

func stampOf(fi fs.FileInfo) (stamp, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return stamp{}, false
	}
	return stamp{
		mode: st.Mode, uid: st.Uid, gid: st.Gid, size: st.Size,
		dev: uint64(st.Dev), ino: st.Ino,
		mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano(),
	}, true
}

// fileClockTick is the resolution of the coarse clock Linux stamps files
// with (current_time): one scheduler tick. 10 ms, the longest tick, when
// it cannot be read.
func fileClockTick() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGetres(unix.CLOCK_REALTIME_COARSE, &ts); err != nil || ts.Nano() <= 0 {
		return 10 * time.Millisecond
	}
	return time.Duration(ts.Nano())
}
