// Package heldout owns a card's held-out tests: the folder's digest, its
// bounded load, the names its files get in a tree, and their flat copy
// into it.
package heldout

// Design note. The maintainer keeps the held-out tests outside the
// repository; the card carries only their digest. The folder is read once,
// whole and bounded, and every later use (the digest check, every
// candidate's copy) works from those bytes, so a folder that changes while
// a batch runs cannot make one candidate see other tests than the digest
// names. Only regular files count: a symlink, a device or a FIFO in the
// folder is refused, never followed or read.

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
)

// Bounds of a held-out folder. Held-out tests are a few test files and
// their fixtures; anything near these is a mistake (a virtualenv, a build
// folder) and is refused, never truncated.
const (
	MaxFiles     = 1000
	MaxFileSize  = 16 << 20
	MaxTotalSize = 64 << 20
	MaxDepth     = 32
)

// File is one regular file of the folder: its slash-separated path
// relative to the folder, its content and whether it is executable.
type File struct {
	Path string
	Data []byte
	Exec bool
}

// Folder is a loaded held-out folder, files in bytewise order of Path.
type Folder struct {
	Dir    string
	Files  []File
	Digest string
}

// Error is a held-out folder failpass refuses: unreadable, holding
// something other than regular files and folders, empty, too large, or not
// the folder the card names. It is the user's to fix (exit 2).
type Error struct {
	Dir  string
	Path string // the offending entry, relative to Dir; "" for the folder
	Msg  string
	Hint string
	Err  error
}

func (e *Error) Error() string {
	where := e.Dir
	if e.Path != "" {
		where = filepath.Join(e.Dir, filepath.FromSlash(e.Path))
	}
	if e.Err != nil {
		return fmt.Sprintf("held-out folder %s: %s: %v", where, e.Msg, e.Err)
	}
	return fmt.Sprintf("held-out folder %s: %s", where, e.Msg)
}

// Unwrap returns the underlying error, if any.
func (e *Error) Unwrap() error { return e.Err }

// Hints says how to fix the folder.
func (e *Error) Hints() []string {
	if e.Hint == "" {
		return nil
	}
	return []string{e.Hint}
}

// Load reads every regular file under dir (dir itself may be a symlink to
// a folder), bounded by MaxFiles, MaxFileSize, MaxTotalSize and MaxDepth,
// and computes the folder's digest.
func Load(dir string) (*Folder, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, &Error{Dir: dir, Msg: "cannot read", Err: unwrapPath(err), Hint: "--held-out takes the folder of held-out test files"}
	}
	if !fi.IsDir() {
		return nil, &Error{Dir: dir, Msg: "not a folder", Hint: "--held-out takes the folder of held-out test files"}
	}
	l := &loader{dir: dir}
	if err := l.walk("", 0); err != nil {
		return nil, err
	}
	if len(l.files) == 0 {
		return nil, &Error{Dir: dir, Msg: "holds no files", Hint: "put the held-out test files in the folder"}
	}
	sort.Slice(l.files, func(i, j int) bool { return l.files[i].Path < l.files[j].Path })
	return &Folder{Dir: dir, Files: l.files, Digest: Digest(l.files)}, nil
}

type loader struct {
	dir   string
	files []File
	total int64
}

func (l *loader) walk(rel string, depth int) error {
	if depth > MaxDepth {
		return &Error{Dir: l.dir, Path: rel, Msg: fmt.Sprintf("nested deeper than %d folders", MaxDepth)}
	}
	ents, err := os.ReadDir(filepath.Join(l.dir, filepath.FromSlash(rel)))
	if err != nil {
		return &Error{Dir: l.dir, Path: rel, Msg: "cannot read", Err: unwrapPath(err)}
	}
	for _, e := range ents {
		p := e.Name()
		if rel != "" {
			p = rel + "/" + p
		}
		switch t := e.Type(); {
		case t.IsDir():
			if err := l.walk(p, depth+1); err != nil {
				return err
			}
		case t.IsRegular():
			if err := l.read(p); err != nil {
				return err
			}
		case t&fs.ModeSymlink != 0:
			return &Error{Dir: l.dir, Path: p, Msg: "is a symlink", Hint: "held-out tests are regular files: copy the target into the folder instead of linking it"}
		default:
			return &Error{Dir: l.dir, Path: p, Msg: fmt.Sprintf("is not a regular file (%s)", t.Type()), Hint: "held-out tests are regular files; remove devices, sockets and pipes from the folder"}
		}
	}
	return nil
}

// read opens p without following a symlink and without blocking on a FIFO
// swapped in since the listing, and checks again that it is regular.
func (l *loader) read(p string) error {
	if len(l.files) >= MaxFiles {
		return &Error{Dir: l.dir, Msg: fmt.Sprintf("holds more than %d files", MaxFiles), Hint: "keep only the held-out tests and their fixtures in the folder"}
	}
	f, err := os.OpenFile(filepath.Join(l.dir, filepath.FromSlash(p)), os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return &Error{Dir: l.dir, Path: p, Msg: "cannot read", Err: unwrapPath(err)}
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return &Error{Dir: l.dir, Path: p, Msg: "cannot read", Err: unwrapPath(err)}
	}
	if !fi.Mode().IsRegular() {
		return &Error{Dir: l.dir, Path: p, Msg: "is not a regular file", Hint: "held-out tests are regular files"}
	}
	if fi.Size() > MaxFileSize {
		return &Error{Dir: l.dir, Path: p, Msg: fmt.Sprintf("is larger than %d bytes", MaxFileSize), Hint: "held-out tests are small files; keep large data out of the folder"}
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return &Error{Dir: l.dir, Path: p, Msg: "cannot read", Err: unwrapPath(err)}
	}
	if len(data) > MaxFileSize {
		return &Error{Dir: l.dir, Path: p, Msg: fmt.Sprintf("is larger than %d bytes", MaxFileSize), Hint: "held-out tests are small files; keep large data out of the folder"}
	}
	l.total += int64(len(data))
	if l.total > MaxTotalSize {
		return &Error{Dir: l.dir, Msg: fmt.Sprintf("holds more than %d bytes", MaxTotalSize), Hint: "keep only the held-out tests and their fixtures in the folder"}
	}
	l.files = append(l.files, File{Path: p, Data: data, Exec: fi.Mode().Perm()&0o111 != 0})
	return nil
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Digest is the held-out digest of files: SHA-256 over, for every file in
// bytewise order of its slash-separated path, the bytes `<path>` NUL
// `<lowercase hex SHA-256 of the content>` LF; written "sha256:<hex>".
func Digest(files []File) string {
	sorted := slices.Clone(files)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Path < sorted[j].Path })
	h := sha256.New()
	for _, f := range sorted {
		sum := sha256.Sum256(f.Data)
		io.WriteString(h, f.Path)
		h.Write([]byte{0})
		io.WriteString(h, hex.EncodeToString(sum[:]))
		h.Write([]byte{'\n'})
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// MismatchError is a folder whose digest is not the card's: other tests
// than the ones signed.
type MismatchError struct {
	Dir       string
	Got, Want string
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("held-out folder %s has digest %s, the card's held_out.digest is %s: these are not the held-out tests the card was signed with", e.Dir, e.Got, e.Want)
}

// Hints says how to get the right folder.
func (e *MismatchError) Hints() []string {
	return []string{"give the folder the card was signed with, unchanged (every file, path and byte counts); a changed folder needs 'failpass card sign --force --held-out DIR'"}
}

// Check reports a *MismatchError unless the folder's digest is want.
func (f *Folder) Check(want string) error {
	if f.Digest != want {
		return &MismatchError{Dir: f.Dir, Got: f.Digest, Want: want}
	}
	return nil
}

// RelPaths returns copied (slash paths relative to the tree's root) as
// paths relative to workdir (relative to the root too), as the command
// running in workdir names them. A path that would start with "-" gets
// "./" so no program reads it as an option.
func RelPaths(workdir string, copied []string) ([]string, error) {
	out := make([]string, len(copied))
	for i, c := range copied {
		r, err := filepath.Rel(filepath.FromSlash(workdir), filepath.FromSlash(c))
		if err != nil {
			return nil, err
		}
		r = filepath.ToSlash(r)
		if strings.HasPrefix(r, "-") {
			r = "./" + r
		}
		out[i] = r
	}
	return out, nil
}

// DestError is a dest folder the copy cannot use: a path component is a
// symlink or not a folder, or a file cannot be created. In a patched tree
// it is the candidate's doing.
type DestError struct {
	Dest string
	Msg  string
}

func (e *DestError) Error() string { return fmt.Sprintf("held-out dest %q %s", e.Dest, e.Msg) }

// CopyInto writes the folder's files flat into dest, a clean relative
// folder of the tree at root, under the names Names gives (so never over
// an existing file), creating dest's missing folders. It refuses a dest
// with a symlink or a non-folder on its way. It returns the new files'
// slash paths relative to root, in the folder's order.
func (f *Folder) CopyInto(root, dest string) ([]string, error) {
	if dest == "" || path.IsAbs(dest) || path.Clean(dest) != dest || slices.Contains(strings.Split(dest, "/"), "..") {
		return nil, &DestError{Dest: dest, Msg: "is not a clean relative path"}
	}
	dir := root
	if dest != "." {
		for _, part := range strings.Split(dest, "/") {
			dir = filepath.Join(dir, part)
			fi, err := os.Lstat(dir)
			switch {
			case errors.Is(err, fs.ErrNotExist):
				if err := os.Mkdir(dir, 0o755); err != nil {
					return nil, &DestError{Dest: dest, Msg: "cannot be created: " + unwrapPath(err).Error()}
				}
			case err != nil:
				return nil, &DestError{Dest: dest, Msg: "cannot be read: " + unwrapPath(err).Error()}
			case fi.Mode()&fs.ModeSymlink != 0:
				return nil, &DestError{Dest: dest, Msg: "has a symlink on its way (" + part + "): the held-out tests are not copied through it"}
			case !fi.IsDir():
				return nil, &DestError{Dest: dest, Msg: "has a file where a folder belongs (" + part + ")"}
			}
		}
	}
	paths := make([]string, len(f.Files))
	for i, fl := range f.Files {
		paths[i] = fl.Path
	}
	names := Names(paths, func(name string) bool {
		_, err := os.Lstat(filepath.Join(dir, name))
		return !errors.Is(err, fs.ErrNotExist)
	})
	out := make([]string, len(f.Files))
	for i, fl := range f.Files {
		mode := os.FileMode(0o644)
		if fl.Exec {
			mode = 0o755
		}
		p := filepath.Join(dir, names[i])
		w, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, mode)
		if err != nil {
			return nil, &DestError{Dest: dest, Msg: fmt.Sprintf("cannot take %s: %v", names[i], unwrapPath(err))}
		}
		_, err = w.Write(fl.Data)
		if cerr := w.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, fmt.Errorf("held-out copy: %w", err)
		}
		out[i] = path.Join(dest, names[i])
	}
	return out, nil
}

// MaxExpected bounds a held_out.expect_stdout file (card.MaxExpectStdout).
const MaxExpected = 1 << 20

// Split parts the folder for a card with held_out.expect_stdout: the
// expected standard output (the regular file name at the folder's root,
// at most MaxExpected bytes), and the folder without it, which is all
// that is ever copied into a tree. The digest of the returned folder is
// still the whole folder's: it is checked, never recomputed. A name the
// folder lacks, a file too large, or a folder that holds nothing else is
// an *Error.
func (f *Folder) Split(name string) (*Folder, []byte, error) {
	var expected []byte
	found := false
	rest := &Folder{Dir: f.Dir, Digest: f.Digest}
	for _, fl := range f.Files {
		if fl.Path == name {
			expected, found = fl.Data, true
			continue
		}
		rest.Files = append(rest.Files, fl)
	}
	switch {
	case !found:
		return nil, nil, &Error{Dir: f.Dir, Path: name, Msg: "is missing: the card's held_out.expect_stdout names it",
			Hint: "'failpass card sign --held-out DIR --reference FIX.diff' writes it from the reference fix's run"}
	case len(expected) > MaxExpected:
		return nil, nil, &Error{Dir: f.Dir, Path: name, Msg: fmt.Sprintf("is larger than %d bytes", MaxExpected),
			Hint: "print less: a probe's expected output is at most 1 MiB"}
	case len(rest.Files) == 0:
		return nil, nil, &Error{Dir: f.Dir, Msg: "holds only the expected output", Hint: "put the probe the held-out command runs beside it"}
	}
	if expected == nil {
		expected = []byte{}
	}
	return rest, expected, nil
}

// With returns a copy of the folder with the file name (at its root) set
// to data, and the digest of the whole: what card sign writes once it has
// the expected output of a probe.
func (f *Folder) With(name string, data []byte) *Folder {
	out := &Folder{Dir: f.Dir}
	for _, fl := range f.Files {
		if fl.Path != name {
			out.Files = append(out.Files, fl)
		}
	}
	out.Files = append(out.Files, File{Path: name, Data: slices.Clone(data)})
	sort.Slice(out.Files, func(i, j int) bool { return out.Files[i].Path < out.Files[j].Path })
	out.Digest = Digest(out.Files)
	return out
}
