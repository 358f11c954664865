package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// GitSnapshot is the content of every file through which a repository's
// git configuration could make git run a program (config, config.worktree,
// hooks, info/attributes, the worktree's .git file), taken before
// untrusted code runs. Check compares the files again afterwards.
type GitSnapshot struct {
	files map[string]string // path → sha256 of content, "dir" for a folder, "" when absent
}

// maxGitFile bounds what SnapshotGit reads of one file; a config larger
// than this is itself suspicious, and is hashed up to the cap plus its size.
const maxGitFile = 4 << 20

// SnapshotGit records the git configuration of a worktree whose git
// folder is gitDir and common folder commonDir (the same folder for a
// repository's main worktree).
func SnapshotGit(gitDir, commonDir string) (*GitSnapshot, error) {
	s := &GitSnapshot{files: map[string]string{}}
	var paths []string
	for _, d := range uniq(commonDir, gitDir) {
		paths = append(paths, filepath.Join(d, "config"), filepath.Join(d, "config.worktree"),
			filepath.Join(d, "info", "attributes"), filepath.Join(d, "commondir"), filepath.Join(d, "gitdir"))
	}
	hooks := filepath.Join(commonDir, "hooks")
	paths = append(paths, hooks)
	entries, err := os.ReadDir(hooks)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("sandbox: git hooks: %w", err)
	}
	for _, e := range entries {
		paths = append(paths, filepath.Join(hooks, e.Name()))
	}
	for _, p := range paths {
		h, err := hashGitFile(p)
		if err != nil {
			return nil, err
		}
		s.files[p] = h
	}
	s.files[hooks+string(filepath.Separator)] = strings.Join(names(entries), "\x00")
	return s, nil
}

// sampleHook says p is one of the hooks/*.sample files git init writes.
// Git never runs a hook by that name, so its content cannot matter; a
// hook that links to one is hashed through the link (hashGitFile). The
// listing of the folder still catches a sample renamed into a hook.
func sampleHook(p string) bool {
	return strings.HasSuffix(p, ".sample") && filepath.Base(filepath.Dir(p)) == "hooks"
}

func uniq(a, b string) []string {
	if a == b {
		return []string{a}
	}
	return []string{a, b}
}

func names(es []os.DirEntry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

func hashGitFile(p string) (string, error) {
	fi, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("sandbox: %w", err)
	}
	switch {
	case fi.IsDir():
		return "dir", nil
	case fi.Mode()&fs.ModeSymlink != 0:
		// What runs is the file the link leads to: hash that too.
		t, _ := os.Readlink(p)
		to, err := os.Stat(p)
		if err != nil || !to.Mode().IsRegular() {
			return "symlink:" + t, nil
		}
		h, err := hashContent(p, to)
		return "symlink:" + t + ":" + h, err
	case !fi.Mode().IsRegular():
		return "special:" + fi.Mode().String(), nil
	case sampleHook(p):
		return "sample", nil
	}
	return hashContent(p, fi)
}

// hashContent hashes the regular file p, whose mode and size are fi's.
func hashContent(p string, fi fs.FileInfo) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", fmt.Errorf("sandbox: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, io.LimitReader(f, maxGitFile)); err != nil {
		return "", fmt.Errorf("sandbox: %w", err)
	}
	return fmt.Sprintf("%s:%d:%s", fi.Mode().Perm(), fi.Size(), hex.EncodeToString(h.Sum(nil))), nil
}

// IntegrityError says that a command changed the repository's git
// configuration: a planted hook, fsmonitor or diff driver. The gate must
// stop and trust nothing it would compute in that repository.
type IntegrityError struct {
	Changed []string // files added, removed or modified
}

func (e *IntegrityError) Error() string {
	return "sandbox: integrity failure: a card command changed the repository's git configuration: " + strings.Join(e.Changed, ", ")
}

// UserFacing marks the error for the CLI's user-error printing.
func (e *IntegrityError) UserFacing() bool { return true }

// Hints says what to do.
func (e *IntegrityError) Hints() []string {
	return []string{"inspect and restore those files before running git or failpass in this repository again; " +
		"the candidate or card that ran is hostile"}
}

// Check compares the files again; any change is an *IntegrityError.
func (s *GitSnapshot) Check() error {
	if s == nil {
		return nil
	}
	var changed []string
	var hooksDir string
	for p := range s.files {
		if strings.HasSuffix(p, string(filepath.Separator)) {
			hooksDir = p
			continue
		}
		h, err := hashGitFile(p)
		if err != nil || h != s.files[p] {
			changed = append(changed, p)
		}
	}
	if hooksDir != "" {
		entries, err := os.ReadDir(strings.TrimSuffix(hooksDir, string(filepath.Separator)))
		if (err == nil || errors.Is(err, fs.ErrNotExist)) && strings.Join(names(entries), "\x00") != s.files[hooksDir] {
			for _, e := range entries {
				p := filepath.Join(hooksDir, e.Name())
				if _, ok := s.files[p]; !ok {
					changed = append(changed, p)
				}
			}
		}
	}
	if len(changed) == 0 {
		return nil
	}
	slices.Sort(changed)
	return &IntegrityError{Changed: slices.Compact(changed)}
}
