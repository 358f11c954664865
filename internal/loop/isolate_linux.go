//go:build linux

package loop

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"

	"golang.org/x/sys/unix"
)

// isolation describes the private view a role process runs in.
type isolation struct {
	// readOnly are folders bind-mounted read-only over themselves: the
	// user's checkout and the git common dir, so HEAD, refs, the index and
	// the config cannot be written at all.
	readOnly []string
	// overlay, when set, is a folder presented through an overlay whose
	// upper layer is a throwaway tmpfs: the process sees the exact files,
	// the folder itself is never written, and every write it attempted is
	// left in the upper layer as evidence.
	overlay string
	// writable are folders inside readOnly ones that stay writable: a
	// fresh bind mount of each over itself (the fixer's own worktree and
	// its git admin folder).
	writable []string
	// hidden are folders covered by an empty read-only tmpfs: what a fresh
	// reviewer must not see (the loop's documents, earlier attempts).
	hidden []string
	// scratch is an empty folder used only as the tmpfs mount point.
	scratch string
}

// errNoIsolation says a private read-only view could not be built here
// (no CAP_SYS_ADMIN, no mount namespaces, no overlayfs).
var errNoIsolation = errors.New("a private read-only mount namespace is not available")

// runIsolated runs fn on an OS thread of its own that first moves into a
// private mount namespace and builds the view iso describes. Processes fn
// starts inherit the thread's namespace. It returns the paths (relative to
// iso.overlay) that were written in the overlay. The thread is never handed
// back to the Go scheduler: it exits with the goroutine, and with it the
// namespace and the mounts.
func runIsolated(iso isolation, fn func() error) (written []string, err error) {
	type result struct {
		written []string
		err     error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		// No UnlockOSThread: a thread whose namespace changed must die.
		w, err := isolatedThread(iso, fn)
		ch <- result{w, err}
	}()
	r := <-ch
	return r.written, r.err
}

func isolatedThread(iso isolation, fn func() error) ([]string, error) {
	if err := unix.Unshare(unix.CLONE_NEWNS | unix.CLONE_FS); err != nil {
		return nil, fmt.Errorf("%w: unshare: %v", errNoIsolation, err)
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return nil, fmt.Errorf("%w: make mounts private: %v", errNoIsolation, err)
	}
	for _, p := range iso.readOnly {
		if err := unix.Mount(p, p, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return nil, fmt.Errorf("%w: bind %s: %v", errNoIsolation, p, err)
		}
		if err := unix.Mount("", p, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY, ""); err != nil {
			return nil, fmt.Errorf("%w: read-only %s: %v", errNoIsolation, p, err)
		}
	}
	for _, p := range iso.hidden {
		if err := unix.Mount("tmpfs", p, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=4k,mode=0555"); err != nil {
			return nil, fmt.Errorf("%w: hide %s: %v", errNoIsolation, p, err)
		}
	}
	for _, p := range iso.writable {
		if err := unix.Mount(p, p, "", unix.MS_BIND, ""); err != nil {
			return nil, fmt.Errorf("%w: bind %s writable: %v", errNoIsolation, p, err)
		}
		// A bind mount copies the flags of the mount it was taken from
		// (read-only here); remounting without MS_RDONLY clears that.
		if err := unix.Mount("", p, "", unix.MS_BIND|unix.MS_REMOUNT, ""); err != nil {
			return nil, fmt.Errorf("%w: remount %s writable: %v", errNoIsolation, p, err)
		}
	}
	upper := ""
	if iso.overlay != "" {
		if err := unix.Mount("tmpfs", iso.scratch, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "size=64m,mode=0700"); err != nil {
			return nil, fmt.Errorf("%w: tmpfs: %v", errNoIsolation, err)
		}
		upper = filepath.Join(iso.scratch, "upper")
		work := filepath.Join(iso.scratch, "work")
		if err := os.Mkdir(upper, 0o755); err != nil {
			return nil, fmt.Errorf("%w: %v", errNoIsolation, err)
		}
		if err := os.Mkdir(work, 0o700); err != nil {
			return nil, fmt.Errorf("%w: %v", errNoIsolation, err)
		}
		opts := "lowerdir=" + iso.overlay + ",upperdir=" + upper + ",workdir=" + work
		if err := unix.Mount("overlay", iso.overlay, "overlay", 0, opts); err != nil {
			return nil, fmt.Errorf("%w: overlay: %v", errNoIsolation, err)
		}
	}
	ferr := fn()
	var written []string
	if upper != "" {
		filepath.WalkDir(upper, func(p string, d fs.DirEntry, err error) error {
			if err != nil || p == upper {
				return nil
			}
			rel, _ := filepath.Rel(upper, p)
			written = append(written, filepath.ToSlash(rel))
			return nil
		})
		sort.Strings(written)
	}
	return written, ferr
}
