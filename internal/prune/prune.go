// Package prune removes failpass's caches and logs past an age and beyond
// a total size: the part of `failpass gc` that bounds the disk a
// repository's <git common dir>/failpass/ takes.
package prune

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/failpass/failpass/internal/scratch"
)

// Defaults for `failpass gc`, documented in the README.
const (
	DefaultMaxAge  = 30 * 24 * time.Hour
	DefaultMaxSize = 5 << 30 // 5 GiB
	// InUse is how recently a unit must have been written for gc to leave
	// it alone whatever its size: a gate may be filling it right now.
	InUse = 10 * time.Minute
)

// Unit is one thing gc removes whole: a run's log folder
// (logs/<run>/), or one cache (cache/<kind>/<entry>: a card's sandbox
// build cache, a bucket of gate results).
type Unit struct {
	Path     string    `json:"path"`
	Kind     string    `json:"kind"` // "logs" or "cache"
	Bytes    int64     `json:"bytes"`
	LastUsed time.Time `json:"last_used"` // the newest modification of anything in it
}

// Scan lists the units under stateDir (<git common dir>/failpass). A
// missing folder has none. Symlinks are never followed. Without root, a
// unit (or a folder of them) another user owns is returned as skipped,
// not measured: only that user, or root, can remove it.
func Scan(stateDir string) (units []Unit, skipped []string, err error) {
	add := func(p, kind string) error {
		if q, ok := scratch.OwnedByAnother(p); ok {
			skipped = append(skipped, q)
			return nil
		}
		u, err := measure(p, kind)
		if err == nil {
			units = append(units, u)
		}
		return err
	}
	list := func(dir string) ([]string, error) {
		if q, ok := scratch.OwnedByAnother(dir); ok {
			skipped = append(skipped, q)
			return nil, nil
		}
		return children(dir)
	}
	logs, err := list(filepath.Join(stateDir, "logs"))
	if err != nil {
		return nil, nil, err
	}
	for _, p := range logs {
		if err := add(p, "logs"); err != nil {
			return nil, nil, err
		}
	}
	kinds, err := list(filepath.Join(stateDir, "cache"))
	if err != nil {
		return nil, nil, err
	}
	for _, k := range kinds {
		if fi, err := os.Lstat(k); err != nil || !fi.IsDir() {
			continue
		}
		entries, err := list(k)
		if err != nil {
			return nil, nil, err
		}
		for _, p := range entries {
			if err := add(p, "cache"); err != nil {
				return nil, nil, err
			}
		}
	}
	return units, skipped, nil
}

func children(dir string) ([]string, error) {
	es, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(es))
	for _, e := range es {
		out = append(out, filepath.Join(dir, e.Name()))
	}
	return out, nil
}

// measure sums a unit's file sizes and finds its newest modification.
func measure(path, kind string) (Unit, error) {
	u := Unit{Path: path, Kind: kind}
	err := filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil // removed meanwhile
			}
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		if fi.Mode().IsRegular() {
			u.Bytes += fi.Size()
		}
		if fi.ModTime().After(u.LastUsed) {
			u.LastUsed = fi.ModTime()
		}
		return nil
	})
	return u, err
}

// Select picks the units to remove: every unit last used maxAge or more
// before now, then, oldest first, units until the rest total at most
// maxSize. A unit used within InUse of now is never picked. It is pure.
func Select(units []Unit, now time.Time, maxAge time.Duration, maxSize int64) []Unit {
	sorted := append([]Unit(nil), units...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].LastUsed.Before(sorted[j].LastUsed) })
	var total int64
	for _, u := range sorted {
		total += u.Bytes
	}
	var out []Unit
	for _, u := range sorted {
		if now.Sub(u.LastUsed) < InUse {
			continue
		}
		if now.Sub(u.LastUsed) >= maxAge || total > maxSize {
			out = append(out, u)
			total -= u.Bytes
		}
	}
	return out
}

// Held is how Remove treats units another package guards: Claims says
// whether path is one of them, and Remove removes it unless a run holds
// it (removed false, no error). sandbox's build caches are such units: a
// candidate's overlay may have one as its lower layer, which must not
// change under the mount. The zero Held claims nothing.
type Held struct {
	Claims func(path string) bool
	Remove func(path string) (removed bool, err error)
}

// Remove deletes the units and returns those it removed (the ones held
// claims first, in order, then the rest); the others' errors are joined.
func Remove(units []Unit, held Held) ([]Unit, error) {
	var rest, done []Unit
	var errs []error
	for _, u := range units {
		if held.Claims == nil || !held.Claims(u.Path) {
			rest = append(rest, u)
			continue
		}
		if ok, err := held.Remove(u.Path); err != nil {
			errs = append(errs, err)
		} else if ok {
			done = append(done, u)
		}
	}
	for _, u := range rest {
		if err := os.RemoveAll(u.Path); err != nil {
			errs = append(errs, err)
			continue
		}
		done = append(done, u)
	}
	return done, errors.Join(errs...)
}

// ParseSize reads a size: a number of bytes with an optional unit, B,
// KiB, MiB, GiB, TiB (powers of 1024; K, M, G, T mean the same) or KB,
// MB, GB, TB (powers of 1000): 2GiB, 500MB, 1073741824.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := len(t)
	for i > 0 && (t[i-1] < '0' || t[i-1] > '9') && t[i-1] != '.' {
		i--
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	mult := map[string]float64{
		"": 1, "b": 1,
		"k": 1 << 10, "kib": 1 << 10, "m": 1 << 20, "mib": 1 << 20, "g": 1 << 30, "gib": 1 << 30, "t": 1 << 40, "tib": 1 << 40,
		"kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
	}[unit]
	f, err := strconv.ParseFloat(num, 64)
	if mult == 0 || err != nil || f < 0 || num == "" || strings.HasPrefix(num, "+") {
		return 0, fmt.Errorf("size %q: want a number of bytes with an optional unit, as 2GiB or 500MB", s)
	}
	if f*mult > 1<<62 {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return int64(f * mult), nil
}

// ParseAge reads an age: a Go duration (12h, 90m) or a number of days
// (30d).
func ParseAge(s string) (time.Duration, error) {
	if d, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.ParseFloat(d, 64)
		if err == nil && n >= 0 && n < 100000 && !strings.HasPrefix(d, "+") {
			return time.Duration(n * float64(24*time.Hour)), nil
		}
	} else if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return d, nil
	}
	return 0, fmt.Errorf("age %q: want a duration such as 30d, 12h or 90m", s)
}

// FormatSize writes n bytes for humans: 0 B, 512 B, 1.5 KiB, 2.0 GiB.
func FormatSize(n int64) string {
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	f, units := float64(n), []string{"KiB", "MiB", "GiB", "TiB"}
	i := -1
	for f >= 1024 && i < len(units)-1 {
		f /= 1024
		i++
	}
	return fmt.Sprintf("%.1f %s", f, units[i])
}
