package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/lockedfile"

	"github.com/failpass/failpass/internal/atomicfile"
	"github.com/failpass/failpass/internal/scratch"
)

// Kept layers: a candidate's prebuild, kept for its next gate.
//
// The gate's prebuild compiles a candidate's packages into a layer of
// its own with nothing but the go toolchain running (no test binary,
// nothing the candidate wrote): what the layer holds is what the
// toolchain makes of the candidate's tree, as a base run's entries are
// what it makes of the base's. Once the candidate's runs have ended,
// Keep moves that layer to cache/<keptFormat>/<id>, where the same
// candidate's next gate finds it (OpenKept) and lies it beneath its runs'
// layers, as the prebuild's own layer was: read by every run, written by
// none. The id is the gate's (gate.prebuiltID): it names the card, its
// build cache, the base, the diff and the failpass that planned the
// canary, so only a gate that would build exactly these packages reads
// it. A kept layer is never the card's build cache, and no other
// candidate's run sees it.

// keptFormat names the layout of the kept layers, beside the build
// caches: cache/<keptFormat>/<id>/, each the folder a CandidateCache
// kept (its upper and cold folders) and its note (keptNote).
const keptFormat = "prebuilt-v1"

// keptNote is the file of a kept layer that holds what its gate gave
// Keep to remember with it (the canary's tokens).
const keptNote = "note"

// KeptDir is where the layer whose id is id (a hex digest) is kept.
func KeptDir(commonDir, id string) string {
	if id == "" || strings.ContainsAny(id, `/\.`) {
		id = "unknown"
	}
	return filepath.Join(cacheRoot(commonDir), keptFormat, id)
}

// Keep moves the layer c's runs wrote, with note, to dir (a KeptDir),
// in place of removing it, and closes c. Keep only a layer that nothing
// but the go toolchain wrote (the gate's prebuild), once every run of
// c has ended. A dir another gate kept first is left as it is (it holds
// the same packages); c's layer is then removed.
func (c *CandidateCache) Keep(dir string, note []byte) error {
	if c == nil || c.closed {
		return nil
	}
	err := c.keep(dir, note)
	if cerr := c.Close(); err == nil {
		err = cerr // Close removes what was not moved
	}
	return err
}

func (c *CandidateCache) keep(dir string, note []byte) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return fmt.Errorf("sandbox: keep the prebuild: %w", err)
	}
	if _, err := os.Lstat(dir); err == nil {
		return nil
	}
	// The overlay's work folder and go's work folder are the runs'
	// scratch, never read again.
	for _, d := range []string{c.work(), c.goWork()} {
		if err := scratch.RemoveAll(d); err != nil {
			return fmt.Errorf("sandbox: keep the prebuild: %w", err)
		}
	}
	if err := atomicfile.Write(filepath.Join(c.Dir, keptNote), note, 0o400); err != nil {
		return fmt.Errorf("sandbox: keep the prebuild: %w", err)
	}
	// rename(2) refuses to replace a folder that is not empty: another
	// gate kept the same layer first.
	if err := os.Rename(c.Dir, dir); err != nil && !errors.Is(err, fs.ErrExist) && !errors.Is(err, syscall.ENOTEMPTY) {
		return fmt.Errorf("sandbox: keep the prebuild: %w", err)
	}
	evictKept(filepath.Dir(dir), maxKept)
	return nil
}

// maxKept bounds the kept layers of a repository: each is a candidate's
// compiled packages (11 MiB for spf13/pflag), useful only to that
// candidate's next gate, so the least recently used go first.
const maxKept = 16

// evictKept removes the least recently used kept layers in root (by
// their note's time, which OpenKept renews) until at most n are left,
// skipping any a gate holds.
func evictKept(root string, n int) {
	entries, err := os.ReadDir(root)
	if err != nil || len(entries) <= n {
		return
	}
	type layer struct {
		dir  string
		used time.Time
	}
	var layers []layer
	for _, e := range entries {
		d := filepath.Join(root, e.Name())
		fi, err := os.Lstat(filepath.Join(d, keptNote))
		if err != nil {
			continue // being removed, or not a layer: gc's to judge
		}
		layers = append(layers, layer{d, fi.ModTime()})
	}
	sort.Slice(layers, func(i, j int) bool { return layers[i].used.Before(layers[j].used) })
	for _, l := range layers[:max(len(layers)-n, 0)] {
		RemoveBuildCache(l.dir) // best effort: held means in use
	}
}

// OpenKept opens the layer Keep left in dir, to lie beneath other
// caches' layers (Over), and returns its note. It holds dir's lock
// shared, so gc does not remove it meanwhile; Close releases it and
// removes nothing. ok is false when there is no whole layer there.
func OpenKept(dir string) (c *CandidateCache, note []byte, ok bool) {
	lock := cacheLock(dir)
	if err := os.MkdirAll(filepath.Dir(lock), 0o700); err != nil {
		return nil, nil, false
	}
	f, err := lockedfile.OpenFile(lock, os.O_RDONLY|os.O_CREATE, 0o600)
	if err != nil {
		return nil, nil, false
	}
	// Read under the lock: gc may have removed it since it was seen.
	note, err = os.ReadFile(filepath.Join(dir, keptNote))
	if fi, serr := os.Lstat(filepath.Join(dir, "upper")); err != nil || serr != nil || !fi.IsDir() {
		f.Close()
		return nil, nil, false
	}
	// Runs only read it: without this, gc would see it unused since it
	// was kept.
	now := time.Now()
	os.Chtimes(filepath.Join(dir, keptNote), now, now)
	return &CandidateCache{Dir: dir, shared: f, kept: true}, note, true
}
