//go:build unix

package sandbox

import (
	"os"
	"syscall"
)

// tryLock takes the lock on path (a lockedfile lock: flock) if nobody
// holds it, without waiting.
func tryLock(path string) (unlock func(), ok bool) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, false
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, false
	}
	return func() { f.Close() }, true
}
