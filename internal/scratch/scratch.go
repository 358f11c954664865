// Package scratch makes failpass's temporary folders in the system's
// temporary folder, each beside an owner file its process holds locked,
// and removes those a dead process left: a failpass killed with -9 runs
// none of its deferred removals. A lock the kernel drops with its holder
// needs no process id, so the judgment holds across PID namespaces and
// pid reuse.
package scratch

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// prefix starts every name this package makes.
const prefix = "failpass-"

// ownerSuffix names the owner file beside each folder: <folder>.owner.
const ownerSuffix = ".owner"

// A Dir is one temporary folder and the lock on its owner file.
type Dir struct {
	Path  string
	owner *os.File
}

// New makes an empty folder named failpass-<what>-<random> in the
// system's temporary folder, owned by this process until Remove.
func New(what string) (*Dir, error) {
	for range 10 {
		f, err := os.CreateTemp("", prefix+what+"-*"+ownerSuffix)
		if err != nil {
			return nil, fmt.Errorf("scratch: %w", err)
		}
		// Someone else may hold the fresh file's lock for an instant (a
		// sweep), and a sweep may have removed it before this lock: then
		// the lock holds a file nobody sees. Either way, a new name; New
		// never waits on a lock another process holds.
		if locking && (!tryLock(f) || !stillThere(f)) {
			f.Close()
			continue
		}
		d := &Dir{Path: strings.TrimSuffix(f.Name(), ownerSuffix), owner: f}
		if err := os.Mkdir(d.Path, 0o700); err != nil {
			d.Remove()
			return nil, fmt.Errorf("scratch: %w", err)
		}
		return d, nil
	}
	return nil, errors.New("scratch: no owner file stayed in place")
}

// Remove removes the folder, then its owner file. A nil Dir is nothing.
func (d *Dir) Remove() error {
	if d == nil || d.owner == nil {
		return nil
	}
	err := RemoveAll(d.Path)
	os.Remove(d.owner.Name())
	d.owner.Close()
	d.owner = nil
	return err
}

// Sweep removes every folder New made whose owner is gone (its owner
// file can be locked), with the owner file, and returns the folders.
func Sweep() []string {
	owners, _ := filepath.Glob(filepath.Join(os.TempDir(), prefix+"*"+ownerSuffix))
	var removed []string
	for _, o := range owners {
		f, err := os.OpenFile(o, os.O_RDWR, 0)
		if err != nil {
			continue
		}
		if tryLock(f) {
			dir := strings.TrimSuffix(o, ownerSuffix)
			if RemoveAll(dir) == nil {
				os.Remove(o)
				removed = append(removed, dir)
			}
		}
		f.Close()
	}
	return removed
}

// stillThere says whether f's name still names f.
func stillThere(f *os.File) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Lstat(f.Name())
	return err == nil && os.SameFile(a, b)
}

// RemoveAll removes dir even when a command left folders in it without
// write or search permission.
func RemoveAll(dir string) error {
	if err := os.RemoveAll(dir); err == nil {
		return nil
	}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if d != nil && d.IsDir() {
			os.Chmod(p, 0o700)
		}
		return nil
	})
	return os.RemoveAll(dir)
}

// OwnedByAnother returns the first of paths that exists and belongs to
// another user, when failpass does not run as root (root removes what
// anyone left). A gc without root leaves such a path and says so: it is
// another user's run's (root's gate, killed), and only they can remove it.
func OwnedByAnother(paths ...string) (string, bool) {
	uid := os.Getuid()
	if uid == 0 {
		return "", false
	}
	for _, p := range paths {
		fi, err := os.Lstat(p)
		if err != nil {
			continue
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != uid {
			return p, true
		}
	}
	return "", false
}
