package loop

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// ErrBusy says another process holds a loop lock on the same candidate or
// remote target.
var ErrBusy = errors.New("held by another failpass loop")

// Lock is one non-blocking flock on a file under <common>/failpass/locks/.
// The OS drops it when the process dies, so a lock never outlives its
// holder and the checkpoint never has to claim a lease.
type Lock struct {
	f    *os.File
	Name string // what is locked, for messages
}

// lockKey names a lock file: kind plus a hash of the key, so refs and URLs
// of any spelling make safe file names.
func lockKey(kind, key string) string {
	h := sha256.Sum256([]byte(key))
	return kind + "-" + hex.EncodeToString(h[:16]) + ".lock"
}

// acquire takes the lock on dir/<kind>-<hash(key)>.lock without waiting.
// It returns ErrBusy (wrapped) when another holder has it. name is what
// messages call it: the key holds a NUL between its parts, which a
// message must not carry to a terminal or a JSON document.
func acquire(dir, kind, key, name string) (*Lock, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("loop: lock folder: %w", err)
	}
	p := filepath.Join(dir, lockKey(kind, key))
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("loop: lock %s: %w", name, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("%s: %w", name, ErrBusy)
		}
		return nil, fmt.Errorf("loop: lock %s: %w", name, err)
	}
	return &Lock{f: f, Name: name}, nil
}

// Release drops the lock. Releasing nil or twice is harmless.
func (l *Lock) Release() {
	if l == nil || l.f == nil {
		return
	}
	unix.Flock(int(l.f.Fd()), unix.LOCK_UN)
	l.f.Close()
	l.f = nil
}

// Locks are an invocation's locks: the local candidate ref first, the
// remote target (update_pr) second; released in the reverse order.
type Locks struct {
	local, remote *Lock
}

// LockCandidate takes the local candidate lock (keyed by the common dir and
// the fully qualified branch ref) and, when remoteKey is not empty, the
// remote-target lock (keyed by the common dir, the head repository and the
// remote ref). Either held elsewhere gives ErrBusy and leaves nothing held.
func LockCandidate(commonDir, branchRef, remoteKey string) (*Locks, error) {
	dir := filepath.Join(commonDir, "failpass", "locks")
	local, err := acquire(dir, "local-ref", commonDir+"\x00"+branchRef, branchRef+" of "+commonDir)
	if err != nil {
		return nil, err
	}
	ls := &Locks{local: local}
	if remoteKey != "" {
		remote, err := acquire(dir, "remote-target", commonDir+"\x00"+remoteKey, "the pull request's head "+strings.ReplaceAll(remoteKey, "\x00", " "))
		if err != nil {
			local.Release()
			return nil, err
		}
		ls.remote = remote
	}
	return ls, nil
}

// Release drops the remote lock, then the local one.
func (ls *Locks) Release() {
	if ls == nil {
		return
	}
	ls.remote.Release()
	ls.local.Release()
}
