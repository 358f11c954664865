package sandbox

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Seeding a new build cache.
//
// A card's build cache is keyed by its base and commands, so every new
// card of a repository started cold: its first writer (card sign, or the
// first gate) compiled the standard library's test dependencies and the
// module's dependencies again, minutes for a real Go project, right after
// card from-commit or the repository's last card compiled the same
// packages. The go command's cache needs no such separation: its entries
// are keyed by the action's full inputs (toolchain, flags, environment,
// sources), so an entry another card's runs wrote is used only where it
// is exactly what this card's runs would build, and ignored otherwise.
//
// What may be shared is only what trusted runs wrote: every build cache
// of the repository has one kind of writer, runs of a base (a card's
// signed base, card sign's runs, from-commit's runs of the upstream
// commits the maintainer chose), each under the cache's writer lock.
// Candidates never write one (they write private layers). So a new cache
// starts as hard links to the go command's cache of the repository's
// most recently used build cache. The go command's outputs (files named
// <hash>-d) are content-addressed and never rewritten with other bytes,
// so they are hard links, and no bytes are copied; its action entries
// (<hash>-a, a hundred bytes each) and its own bookkeeping are rewritten
// in place, so they are copied, and neither cache's runs can change an
// entry of the other. Only the go command's cache is seeded: pip's and
// npm's caches hold downloads, which runs may not fetch anyway.

// goCacheDir is the go command's cache inside a build cache dir (the
// GOCACHE that buildEnv gives the runs).
func goCacheDir(cacheDir string) string { return filepath.Join(cacheDir, "go-build") }

// seedGoCache fills the go command's cache of the new build cache dir
// from the most recently used one beside it, as hard links. Best effort:
// without a seed, or where links cannot be made (another file system, a
// cache of another user), the cache starts cold, as it did before. The
// caller holds dir's writer lock.
func seedGoCache(dir string) {
	dst := goCacheDir(dir)
	if _, err := os.Lstat(dst); !errors.Is(err, fs.ErrNotExist) {
		return // not new
	}
	src := newestGoCache(filepath.Dir(dir), filepath.Base(dir))
	if src == "" {
		return
	}
	tmp := dst + ".seed"
	os.RemoveAll(tmp)
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		to := filepath.Join(tmp, rel)
		switch {
		case d.IsDir():
			return os.Mkdir(to, 0o700)
		case d.Type().IsRegular() && strings.HasSuffix(d.Name(), "-d"):
			return os.Link(p, to)
		case d.Type().IsRegular():
			return copyFile(p, to)
		}
		return nil // nothing else belongs in a go cache
	})
	if err == nil {
		err = os.Rename(tmp, dst)
	}
	if err != nil {
		os.RemoveAll(tmp)
	}
}

// newestGoCache returns the go command's cache, among the build caches
// in formatDir other than the one named except, whose entries were
// written last, or "".
func newestGoCache(formatDir, except string) string {
	caches, err := os.ReadDir(formatDir)
	if err != nil {
		return ""
	}
	best, bestTime := "", time.Time{}
	for _, c := range caches {
		if !c.IsDir() || c.Name() == except {
			continue
		}
		gc := goCacheDir(filepath.Join(formatDir, c.Name()))
		// The go command adds entries in 256 subfolders (00 to ff): the
		// newest of their times is when it last wrote.
		subs, err := os.ReadDir(gc)
		if err != nil {
			continue
		}
		for _, s := range subs {
			if fi, err := s.Info(); err == nil && s.IsDir() && fi.ModTime().After(bestTime) {
				best, bestTime = gc, fi.ModTime()
			}
		}
	}
	return best
}

// copyFile copies a small file (a go cache's action entry).
func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o600)
}
