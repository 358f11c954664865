//go:build unix

package scratch

import (
	"os"
	"syscall"
)

// lock takes f's flock, waiting for it (New's own fresh file: nobody
// else holds it but a sweep, for an instant).
func lock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			return err
		}
	}
}

// tryLock takes f's flock if nobody holds it, without waiting.
func tryLock(f *os.File) bool {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err != syscall.EINTR {
			return err == nil
		}
	}
}
