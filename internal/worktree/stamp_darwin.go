package worktree

import (
	"io/fs"
	"syscall"
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
