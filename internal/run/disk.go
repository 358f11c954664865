package run

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// What one run may write to disk by default: a cold `go test ./...` of a
// real multi-file module, build cache included, writes well under a
// tenth of either (docs/sandbox.md, "Disk"); a candidate that fills a
// CI runner's disk does not fit.
const (
	DefaultMaxDisk      = 4 << 30
	DefaultMaxDiskFiles = 100_000
)

// DiskCap bounds what one run writes to disk: the bytes allocated and the
// files (and folders, links) created in its worktree and private folders
// together, counted from what they held when the run started. Zero
// fields take the defaults.
type DiskCap struct {
	Bytes int64 // the card's sandbox.max_disk; 0 means DefaultMaxDisk
	Files int64 // the card's sandbox.max_disk_files; 0 means DefaultMaxDiskFiles
	// Areas are folders the run writes beside its worktree and the
	// sandbox's private folders, which Run finds itself: the private
	// caches of an uncontained candidate (gate.Candidate.DiskAreas).
	Areas []string
}

// CardDisk is the DiskCap of a card's bounds (card.Card.DiskCap).
func CardDisk(bytes, files int64) DiskCap { return DiskCap{Bytes: bytes, Files: files} }

func (c DiskCap) withDefaults() DiskCap {
	if c.Bytes <= 0 {
		c.Bytes = DefaultMaxDisk
	}
	if c.Files <= 0 {
		c.Files = DefaultMaxDiskFiles
	}
	return c
}

// DiskOver is a run that wrote past its DiskCap: it was killed when the
// watcher saw it, or judged so after it ended.
type DiskOver struct {
	Files   bool  // the file count was exceeded (else the bytes)
	Written int64 // bytes or files written, as the check found them
	Cap     int64
	// Unmeasured, when set, is why the run's folders could not be
	// measured (a folder the run made unreadable to failpass): the run
	// fails closed.
	Unmeasured string
}

func (d *DiskOver) String() string {
	switch {
	case d.Unmeasured != "":
		return "disk cap: could not measure what the run wrote (" + d.Unmeasured + ")"
	case d.Files:
		return fmt.Sprintf("over the disk cap: created %d files, more than sandbox.max_disk_files %d", d.Written, d.Cap)
	}
	return fmt.Sprintf("over the disk cap: wrote %s, more than sandbox.max_disk %s", sizeString(d.Written), sizeString(d.Cap))
}

// sizeString is n bytes in the card's units, rounded down to a tenth.
func sizeString(n int64) string {
	f, units := float64(n), []string{"B", "KiB", "MiB", "GiB", "TiB"}
	i := 0
	for f >= 1024 && i < len(units)-1 {
		f /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%d B", n)
	}
	return fmt.Sprintf("%.1f %s", f, units[i])
}

// usage is what a set of folders holds on disk: allocated bytes
// (st_blocks, so a sparse file counts what it allocates, not its
// length) and entries, each inode once.
type usage struct{ bytes, files int64 }

// Watch intervals: a walk's cost is bounded to about a tenth of one
// core (the next walk waits ten times the last one's duration), never
// more often than minDiskInterval nor less than maxDiskInterval.
const (
	minDiskInterval = 100 * time.Millisecond
	maxDiskInterval = 5 * time.Second
)

// diskWatch measures a run's folders while it runs and calls kill once
// they hold more than the cap over what they held at its start.
type diskWatch struct {
	areas []string
	cap   DiskCap
	base  usage
	kill  func()

	mu     sync.Mutex
	over   *DiskOver
	stop   chan struct{}
	done   chan struct{}
	ended  sync.Once
	result *DiskOver
}

// watchDisk measures areas (the run's baseline, before it starts) and
// watches them from then on. A baseline that cannot be taken is an
// error: the run does not start.
func watchDisk(areas []string, c DiskCap, kill func()) (*diskWatch, error) {
	w := &diskWatch{areas: nestedOut(areas), cap: c.withDefaults(), kill: kill, stop: make(chan struct{}), done: make(chan struct{})}
	start := time.Now()
	var err error
	if w.base, err = measure(w.areas); err != nil {
		return nil, fmt.Errorf("run: disk cap: %w", err)
	}
	go w.loop(time.Since(start))
	return w, nil
}

func (w *diskWatch) loop(last time.Duration) {
	defer close(w.done)
	for {
		t := time.NewTimer(min(max(10*last, minDiskInterval), maxDiskInterval))
		select {
		case <-w.stop:
			t.Stop()
			return
		case <-t.C:
		}
		start := time.Now()
		if o := w.check(); o != nil {
			w.kill()
			return
		}
		last = time.Since(start)
	}
}

// check measures once and records the first overrun.
func (w *diskWatch) check() *DiskOver {
	u, err := measure(w.areas)
	var o *DiskOver
	switch {
	case err != nil:
		o = &DiskOver{Unmeasured: err.Error()}
	case u.bytes-w.base.bytes > w.cap.Bytes:
		o = &DiskOver{Written: u.bytes - w.base.bytes, Cap: w.cap.Bytes}
	case u.files-w.base.files > w.cap.Files:
		o = &DiskOver{Files: true, Written: u.files - w.base.files, Cap: w.cap.Files}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.over == nil {
		w.over = o
	}
	return w.over
}

// end stops the watch once the run's processes are gone and checks one
// last time: a run that wrote past the cap between two checks and ended
// is over it all the same. Later calls return the same. A nil *diskWatch
// returns nil.
func (w *diskWatch) end() *DiskOver {
	if w == nil {
		return nil
	}
	w.ended.Do(func() {
		close(w.stop)
		<-w.done
		w.result = w.check()
	})
	return w.result
}

// nestedOut drops areas inside another (a candidate's go work folder
// inside its private folder), so nothing is counted twice, and "".
func nestedOut(areas []string) []string {
	var clean []string
	for _, a := range areas {
		if a != "" {
			clean = append(clean, filepath.Clean(a))
		}
	}
	slices.Sort(clean)
	var out []string
	for _, a := range slices.Compact(clean) {
		if len(out) == 0 || !within(out[len(out)-1], a) {
			out = append(out, a)
		}
	}
	return out
}

// measure walks areas with fstatat, never following a symlink. A folder
// the run made unreadable (mode 000: failpass owns what the run wrote)
// is made readable to its owner and read; one that still cannot be read
// is an error, so a run cannot hide what it wrote. Entries that vanish
// during the walk are skipped: the run removed them.
func measure(areas []string) (usage, error) {
	m := &measurer{links: map[[2]uint64]bool{}}
	for _, a := range areas {
		var st unix.Stat_t
		if err := unix.Lstat(a, &st); err != nil {
			if errors.Is(err, unix.ENOENT) {
				continue
			}
			return usage{}, fmt.Errorf("%s: %w", a, err)
		}
		m.count(&st)
		if st.Mode&unix.S_IFMT == unix.S_IFDIR {
			if err := m.dir(unix.AT_FDCWD, a, a, 0); err != nil {
				return usage{}, err
			}
		}
	}
	return m.u, nil
}

type measurer struct {
	u     usage
	links map[[2]uint64]bool // dev, ino of files with more than one link, counted once
}

func (m *measurer) count(st *unix.Stat_t) {
	if st.Nlink > 1 && st.Mode&unix.S_IFMT != unix.S_IFDIR {
		k := [2]uint64{uint64(st.Dev), uint64(st.Ino)}
		if m.links[k] {
			return
		}
		m.links[k] = true
	}
	m.u.files++
	m.u.bytes += int64(st.Blocks) * 512
}

// maxDiskDepth bounds how deep the walk goes, one descriptor a level: a
// run that nests folders deeper fails closed rather than exhaust
// failpass's descriptors.
const maxDiskDepth = 512

// dir counts what folder name (relative to the folder at, path for
// errors) holds, depth levels below an area.
func (m *measurer) dir(at int, name, path string, depth int) error {
	if depth > maxDiskDepth {
		return fmt.Errorf("%s: folders nested deeper than %d", path, maxDiskDepth)
	}
	fd, err := unix.Openat(at, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.EACCES) {
		unix.Fchmodat(at, name, 0o700, 0)
		fd, err = unix.Openat(at, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	}
	switch {
	case errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP):
		return nil // removed or replaced meanwhile
	case err != nil:
		return fmt.Errorf("%s: %w", path, err)
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	names, err := readNames(f)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	for _, n := range names {
		var st unix.Stat_t
		if err := unix.Fstatat(fd, n, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			if errors.Is(err, unix.ENOENT) {
				continue
			}
			return fmt.Errorf("%s: %w", filepath.Join(path, n), err)
		}
		m.count(&st)
		if st.Mode&unix.S_IFMT == unix.S_IFDIR {
			if err := m.dir(fd, n, filepath.Join(path, n), depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// readNames lists an open folder. One removed after it was opened (go
// cleans its work folders as it goes) reads as empty, as Linux says
// with ENOENT: what it held is no longer on disk.
func readNames(f *os.File) ([]string, error) {
	names, err := f.Readdirnames(-1)
	if errors.Is(err, unix.ENOENT) {
		return nil, nil
	}
	return names, err
}
