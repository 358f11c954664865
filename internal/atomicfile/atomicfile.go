// Package atomicfile owns durable file writes: a reader sees the old file
// or the new one, never half of one, and a crash loses neither. It is the
// one writer of every file failpass keeps or hands over (cards, records,
// loop documents, owner files, cache entries, the probe cache, JUnit
// reports): each write has a temporary file of its own, so writers
// sharing a path never trip over each other, and a failed write (a full
// disk) removes it.
package atomicfile

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
)

// Write replaces path with data: a temporary file in the same folder,
// written, chmod'ed to perm, fsynced, renamed over path, then the folder
// fsynced so the rename itself is durable. A symlink at path is replaced,
// not followed; callers that mean the target resolve it first.
func Write(path string, data []byte, perm os.FileMode) error {
	return write(path, data, perm, os.Rename, true)
}

// ErrChanged is Replace's refusal: the file no longer holds what the
// caller read, so another writer's change would be lost.
var ErrChanged = errors.New("changed since it was read")

// Replace rewrites an existing file in place as a user edits one: a
// symlink is written through to its target, the file keeps its
// permission bits, and the write is Write's. With orig non-nil it first
// checks that the file still holds exactly orig, and returns ErrChanged
// (writing nothing) when it does not.
func Replace(path string, data, orig []byte) error {
	target, err := filepath.EvalSymlinks(path)
	if err != nil {
		return err
	}
	st, err := os.Stat(target)
	if err != nil {
		return err
	}
	if orig != nil {
		f, err := os.Open(target)
		if err != nil {
			return err
		}
		cur, err := io.ReadAll(io.LimitReader(f, int64(len(orig))+1))
		f.Close()
		if err != nil {
			return err
		}
		if !bytes.Equal(cur, orig) {
			return ErrChanged
		}
	}
	return Write(target, data, st.Mode().Perm())
}

// WriteUnsynced is Write without the two fsyncs: a reader still sees the
// old file or the new one whole, but a crash of the machine may lose the
// write. It suits a file whose meaning ends with the boot, such as a
// worktree's owner file (it names the boot id, so after a crash every
// owner is dead anyway), written where an fsync costs a gate 1 to 5 ms.
func WriteUnsynced(path string, data []byte, perm os.FileMode) error {
	return write(path, data, perm, os.Rename, false)
}

// Create is Write for a path that must not exist yet: the temporary file
// is hard-linked into place, which fails with an error satisfying
// errors.Is(err, fs.ErrExist) instead of replacing anything.
func Create(path string, data []byte, perm os.FileMode) error {
	return write(path, data, perm, func(tmp, path string) error {
		err := os.Link(tmp, path)
		var le *os.LinkError
		if errors.As(err, &le) {
			return le.Err
		}
		return err
	}, true)
}

func write(path string, data []byte, perm os.FileMode, place func(tmp, path string) error, durable bool) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed; removes the link source after Create
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(perm)
	}
	if err == nil && durable {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = place(tmp.Name(), path)
	}
	if err != nil || !durable {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
