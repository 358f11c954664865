package worktree

import (
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"time"
)

// A Snapshot is a worktree as it was at one moment: every path with its
// type, every file's and symlink's stat, and the stat of its git
// directory's files. Restore puts the worktree back to it without git
// when nothing it recorded changed, which is the usual case between two
// runs (a run writes caches and reports, not tracked files): git would
// spend a process or two finding that out.
//
// A stat is the file's mode, owner, size, inode and its modification and
// change times to the nanosecond. No process can set a change time: any
// write, chmod, chown, rename, link or utimes sets it to the clock. A
// file changed after the snapshot therefore shows a later change time,
// unless the change fell in the same clock tick as the write the
// snapshot recorded; the content of such a recent ("racy") file is
// recorded too, and compared. This is git's own rule for its index, at
// a finer grain: git compares whole seconds.
type Snapshot struct {
	paths map[string]entry // slash-separated, relative to the worktree; the .git file included
	admin map[string]entry // the git directory's entries, by name
	// exact is false where the file system's times are too coarse to
	// tell a later change (every time a whole second), or this platform's
	// stat has no change time: Restore then never trusts the snapshot,
	// and the paths serve sweep alone.
	exact bool
}

type entry struct {
	typ    fs.FileMode // fs.DirEntry.Type()
	st     stamp       // regular files and symlinks
	digest *[sha256.Size]byte
}

// racyWindow is how recent a change time must be, when the snapshot
// ends, for the file's content to be recorded as well. The kernel
// stamps a file with its clock as of the last tick (fileClockTick: 4 ms
// at Linux's HZ=250, 10 ms at HZ=100), so a change made after the
// snapshot carries a time no earlier than one tick before it ended.
// Twice that, to be sure.
var racyWindow = 2 * fileClockTick()

// Snapshot records the worktree as it is now.
func (w *Worktree) Snapshot() (*Snapshot, error) {
	s := &Snapshot{paths: map[string]entry{}, admin: map[string]entry{}}
	root, err := os.OpenRoot(w.Dir)
	if err != nil {
		return nil, fmt.Errorf("worktree: snapshot: %w", err)
	}
	defer root.Close()
	coarse, stamped := true, true
	record := func(p string, d fs.DirEntry, into map[string]entry) error {
		e := entry{typ: d.Type()}
		if !d.IsDir() {
			fi, err := d.Info()
			if err != nil {
				return err
			}
			st, ok := stampOf(fi)
			if ok && (st.ctime%1e9 != 0 || st.mtime%1e9 != 0) {
				coarse = false
			}
			stamped = stamped && ok
			e.st = st
		}
		into[p] = e
		return nil
	}
	err = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == "." {
			return err
		}
		return record(p, d, s.paths)
	})
	if err != nil {
		return nil, fmt.Errorf("worktree: snapshot: %w", err)
	}
	admin, err := os.ReadDir(w.gitDir)
	if err != nil {
		return nil, fmt.Errorf("worktree: snapshot: %w", err)
	}
	for _, d := range admin {
		if err := record(d.Name(), d, s.admin); err != nil {
			return nil, fmt.Errorf("worktree: snapshot: %w", err)
		}
	}
	s.exact = stamped && (!coarse || len(s.paths) == 0)
	// Content of the files changed within racyWindow of now: a change
	// in the same clock tick would leave their stat as it is.
	recent := time.Now().Add(-racyWindow).UnixNano()
	for p, e := range s.paths {
		if e.typ.IsRegular() && e.st.ctime >= recent {
			d, err := digestOf(root, p)
			if err != nil {
				return nil, fmt.Errorf("worktree: snapshot: %w", err)
			}
			e.digest = &d
			s.paths[p] = e
		}
	}
	return s, nil
}

// Restore puts the worktree back to s without git, when it can: it
// removes every path s does not have (what `git clean -ffdx` removes,
// and anything turned into another kind of file), and reports whether
// everything else is exactly as s recorded it, the git directory
// included. On false, something s recorded changed or went missing and
// the worktree is not yet s: the caller resets it with git. Like sweep,
// it works through an os.Root, so a planted symlink never leads it out
// of the worktree.
func (w *Worktree) Restore(s *Snapshot) (bool, error) {
	if s == nil || !s.exact {
		return false, nil
	}
	if !sameAdmin(w.gitDir, s.admin) {
		return false, nil
	}
	root, err := os.OpenRoot(w.Dir)
	if err != nil {
		return false, err
	}
	defer root.Close()
	seen, same := 0, true
	err = s.prune(root, func(p string, d fs.DirEntry, e entry) {
		seen++
		if same && !d.IsDir() && !unchanged(root, p, d, e) {
			same = false
		}
	})
	if err != nil {
		return false, fmt.Errorf("worktree: restore: %w", err)
	}
	return same && seen == len(s.paths), nil
}

// Changed lists the paths at which the worktree, as now records it,
// differs from the checkout of commit that Add made: files and
// symlinks added, removed, turned into another kind of file, or whose
// stat (and, where the checkout's snapshot recorded it, content)
// differs. Every other path holds what it held right after the
// checkout, which is what the commit holds: a reader of what changed
// need read the listed paths alone. ok is false when that is not known:
// the worktree was reset to another commit since, or its snapshots
// cannot tell a later change (coarse times). now must be a Snapshot of
// w.
func (w *Worktree) Changed(commit string, now *Snapshot) (paths []string, ok bool, err error) {
	was := w.checkout
	if commit != w.commit || was == nil || now == nil || !was.exact || !now.exact {
		return nil, false, nil
	}
	root, err := os.OpenRoot(w.Dir)
	if err != nil {
		return nil, false, err
	}
	defer root.Close()
	for p, e := range was.paths {
		if p == ".git" || e.typ.IsDir() {
			continue
		}
		n, found := now.paths[p]
		if !found && beyondFile(now, p) {
			// A folder made a file or symlink: the path listed for it
			// replaces what it held (and git refuses a path beyond a
			// symlink).
			continue
		}
		if !found || n.typ != e.typ || n.st != e.st {
			paths = append(paths, p)
			continue
		}
		if e.digest != nil {
			// Written in the tick the checkout's snapshot ended: the
			// stat cannot tell a change made in that same tick.
			d := n.digest
			if d == nil {
				got, err := digestOf(root, p)
				if err != nil {
					return nil, false, err
				}
				d = &got
			}
			if *d != *e.digest {
				paths = append(paths, p)
			}
		}
	}
	for p, n := range now.paths {
		if p == ".git" || n.typ.IsDir() {
			continue
		}
		if e, found := was.paths[p]; !found || e.typ.IsDir() {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	return paths, true, nil
}

// A Change is how the worktree, at one path, differs from a snapshot.
type Change struct {
	Path string
	// Added says Path is new: the snapshot has nothing there (or
	// nothing of that kind). Otherwise a recorded path was rewritten,
	// chmodded, removed or turned into another kind of file.
	Added bool
}

// Altered returns the first change to the worktree since s: every
// change to a path s recorded counts, and an added path counts when
// notice says so. notice is asked of every added file and symlink, and
// of every added folder, which it enters only when notice says so (its
// entries are all added too). ok is false when nothing counts. The .git
// file is left to Restore. Like prune, it reads through an os.Root: a
// symlink planted by a command never leads it outside the tree.
func (w *Worktree) Altered(s *Snapshot, notice func(p string, d fs.DirEntry) bool) (c Change, ok bool, err error) {
	root, err := os.OpenRoot(w.Dir)
	if err != nil {
		return Change{}, false, err
	}
	defer root.Close()
	seen := 0
	var walk func(rel string, added bool) error
	walk = func(rel string, added bool) error {
		f, err := root.Open(rel)
		var ents []fs.DirEntry
		if err == nil {
			ents, err = f.ReadDir(-1)
			f.Close()
		}
		if err != nil && rel != "." {
			// A folder the run made unreadable (chmod 000) hides what
			// it holds: that is a change in itself.
			c, ok = Change{Path: rel, Added: added}, true
			return nil
		}
		if err != nil {
			return err
		}
		slices.SortFunc(ents, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
		for _, d := range ents {
			p := path.Join(rel, d.Name())
			if p == ".git" {
				continue
			}
			e, recorded := s.paths[p]
			switch {
			case !added && recorded && e.typ == d.Type():
				seen++
				if !d.IsDir() {
					if !unchanged(root, p, d, e) {
						c, ok = Change{Path: p}, true
						return nil
					}
					continue
				}
				if err := walk(p, false); err != nil || ok {
					return err
				}
			case !added && recorded:
				c, ok = Change{Path: p}, true // another kind of file now
				return nil
			case notice == nil || !notice(p, d):
			case d.IsDir():
				if err := walk(p, true); err != nil || ok {
					return err
				}
			default:
				c, ok = Change{Path: p, Added: true}, true
				return nil
			}
		}
		return nil
	}
	if err := walk(".", false); err != nil || ok {
		return c, ok, err
	}
	want := len(s.paths)
	if _, found := s.paths[".git"]; found {
		want--
	}
	if seen == want {
		return Change{}, false, nil
	}
	// A recorded path is gone: name the first.
	paths := make([]string, 0, len(s.paths))
	for p := range s.paths {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		if _, err := root.Lstat(p); err != nil && p != ".git" {
			return Change{Path: p}, true, nil
		}
	}
	return Change{}, false, nil
}

// beyondFile says whether a folder on p's path is, in s, no folder.
func beyondFile(s *Snapshot, p string) bool {
	for d := path.Dir(p); d != "."; d = path.Dir(d) {
		if e, ok := s.paths[d]; ok && !e.typ.IsDir() {
			return true
		}
	}
	return false
}

// prune removes from the tree under root every path s does not have
// with the same type: what `git clean -ffdx` removes (untracked and
// ignored files, nested repositories), and anything a command turned
// into another kind of file (a folder made a symlink). It calls kept
// with every other path, folders included. Through an os.Root, a
// symlink a command planted never leads it outside the tree.
func (s *Snapshot) prune(root *os.Root, kept func(p string, d fs.DirEntry, e entry)) error {
	var walk func(rel string) error
	walk = func(rel string) error {
		f, err := root.Open(rel)
		if err != nil {
			return err
		}
		ents, err := f.ReadDir(-1)
		f.Close()
		if err != nil {
			return err
		}
		for _, d := range ents {
			p := path.Join(rel, d.Name())
			e, ok := s.paths[p]
			if !ok || e.typ != d.Type() {
				if err := root.RemoveAll(p); err != nil {
					return err
				}
				continue
			}
			if kept != nil {
				kept(p, d, e)
			}
			if d.IsDir() {
				if err := walk(p); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return walk(".")
}

// unchanged says whether the file at p is still as e recorded it.
func unchanged(root *os.Root, p string, d fs.DirEntry, e entry) bool {
	fi, err := d.Info()
	if err != nil {
		return false
	}
	st, ok := stampOf(fi)
	if !ok || st != e.st {
		return false
	}
	if e.digest != nil {
		got, err := digestOf(root, p)
		return err == nil && got == *e.digest
	}
	return true
}

// sameAdmin says whether the git directory holds exactly the entries
// recorded, each with the same stat: a command that could write it
// (with the sandbox off) may have staged something, flagged an index
// entry skip-worktree or moved HEAD, which only git puts back.
func sameAdmin(dir string, want map[string]entry) bool {
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) != len(want) {
		return false
	}
	for _, d := range ents {
		e, ok := want[d.Name()]
		if !ok || e.typ != d.Type() {
			return false
		}
		if d.IsDir() {
			continue // logs/: git's own, never read back by a gate
		}
		fi, err := d.Info()
		if err != nil {
			return false
		}
		if st, ok := stampOf(fi); !ok || st != e.st {
			return false
		}
	}
	return true
}

func digestOf(root *os.Root, p string) ([sha256.Size]byte, error) {
	var d [sha256.Size]byte
	f, err := root.Open(p)
	if err != nil {
		return d, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return d, err
	}
	copy(d[:], h.Sum(nil))
	return d, nil
}

// Refresh records the file at p (slash-separated, relative to the
// worktree) in s as it is now, stat and content: the caller rewrote it
// on purpose (the gate puts the oracle test's decoy or canary in before
// every patched run), and Restore must not take that for a change.
func (w *Worktree) Refresh(s *Snapshot, p string) error {
	if s == nil {
		return nil
	}
	root, err := os.OpenRoot(w.Dir)
	if err != nil {
		return fmt.Errorf("worktree: refresh: %w", err)
	}
	defer root.Close()
	fi, err := root.Lstat(p)
	if err != nil {
		return fmt.Errorf("worktree: refresh: %w", err)
	}
	st, ok := stampOf(fi)
	if !ok {
		s.exact = false
		return nil
	}
	d, err := digestOf(root, p)
	if err != nil {
		return fmt.Errorf("worktree: refresh: %w", err)
	}
	s.paths[p] = entry{typ: fi.Mode().Type(), st: st, digest: &d}
	return nil
}
