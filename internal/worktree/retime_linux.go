package worktree

import (
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// Retime gives every path of s (the patched tree, as Restore keeps it)
// the times it had when the gate first saw it: for files and symlinks
// the access time equals the modification time (never read since it was
// written), for folders both are the times recorded in dirs on the first
// call (a run that added and removed files changed them). Every patched
// run then starts with the tree's times as the first one did: a file an
// earlier run read (its access time later than its modification time)
// or a folder an earlier run wrote in would tell a later run from the
// first. The change time of every path becomes now, the same step before
// every run. s's stamps are updated, and Retime returns only once the
// file clock has moved past them, so a change a run makes is never
// stamped with the same change time (Restore's check stays exact).
func (w *Worktree) Retime(s *Snapshot, dirs map[string]int64) error {
	if s == nil {
		return nil
	}
	set := func(p string, at, mt int64) error {
		ts := []unix.Timespec{unix.NsecToTimespec(at), unix.NsecToTimespec(mt)}
		return unix.UtimesNanoAt(unix.AT_FDCWD, filepath.Join(w.Dir, filepath.FromSlash(p)), ts, unix.AT_SYMLINK_NOFOLLOW)
	}
	dirTime := func(p string) (int64, error) {
		if t, ok := dirs[p]; ok {
			return t, nil
		}
		fi, err := os.Lstat(filepath.Join(w.Dir, filepath.FromSlash(p)))
		if err != nil {
			return 0, err
		}
		dirs[p] = fi.ModTime().UnixNano()
		return dirs[p], nil
	}
	var latest int64
	for p, e := range s.paths {
		if e.typ.IsDir() {
			t, err := dirTime(p)
			if err != nil {
				return err
			}
			if err := set(p, t, t); err != nil {
				return err
			}
			continue
		}
		if err := set(p, e.st.mtime, e.st.mtime); err != nil {
			return err
		}
		fi, err := os.Lstat(filepath.Join(w.Dir, filepath.FromSlash(p)))
		if err != nil {
			return err
		}
		st, ok := stampOf(fi)
		if !ok {
			s.exact = false
			continue
		}
		e.st = st
		s.paths[p] = e
		latest = max(latest, st.ctime)
	}
	// The root folder last: setting its children's times does not change
	// it, but a run's writes did.
	t, err := dirTime(".")
	if err != nil {
		return err
	}
	if err := set(".", t, t); err != nil {
		return err
	}
	for tick := fileClockTick(); ; {
		var now unix.Timespec
		if unix.ClockGettime(unix.CLOCK_REALTIME_COARSE, &now) != nil || now.Nano() > latest {
			return nil
		}
		time.Sleep(tick / 2)
	}
}
