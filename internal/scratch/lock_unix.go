//go:build unix

package scratch

import (
	"os"
	"syscall"
)

// locking: a folder's owner holds its owner file's flock.
const locking = true

// tryLock takes f's flock if nobody holds it, without waiting.
func tryLock(f *os.File) bool {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err != syscall.EINTR {
			return err == nil
		}
	}
}
