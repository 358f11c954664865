package fromcommit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/failpass/failpass/internal/gitx"
	"github.com/failpass/failpass/internal/scratch"
)

// BasesRef is the ref namespace that keeps every base from-commit made
// reachable, so `git gc` never collects one a card pins. failpass's own
// gc never touches refs.
const BasesRef = "refs/failpass/bases/"

// Change is one path a commit changes, from `git diff-tree --raw`:
// renames come as a deletion and an addition.
type Change struct {
	Status  byte // 'A', 'M', 'D', 'T'
	NewMode string
	NewBlob string
	Path    string
}

// Ecosystem is the kind of project the fix's tests belong to.
type Ecosystem string

// The ecosystems from-commit builds cards for.
const (
	Go     Ecosystem = "go"
	Python Ecosystem = "python"
)

// IsTestFile says whether p (slash-separated, repository-relative) is a
// test file in eco: Go `*_test.go` and anything under a `testdata/`
// folder; Python `test_*.py`, `*_test.py`, `conftest.py` and anything
// under a `tests/` or `test/` folder.
func IsTestFile(eco Ecosystem, p string) bool {
	base := path.Base(p)
	dirs := strings.Split(path.Dir(p), "/")
	switch eco {
	case Go:
		return strings.HasSuffix(base, "_test.go") || contains(dirs, "testdata")
	case Python:
		return isPythonTestModule(p) || base == "conftest.py" || contains(dirs, "tests") || contains(dirs, "test")
	}
	return false
}

// isPythonTestModule says whether p is a file pytest collects by default.
func isPythonTestModule(p string) bool {
	base := path.Base(p)
	return strings.HasSuffix(base, ".py") && (strings.HasPrefix(base, "test_") || strings.HasSuffix(base, "_test.py"))
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// changes lists what rev changes against parent, without rename detection.
func changes(ctx context.Context, repo *gitx.Repo, parent, rev string) ([]Change, error) {
	out, err := repo.Git(ctx, "diff-tree", "-r", "-z", "--no-renames", "--no-commit-id", "--raw", parent, rev)
	if err != nil {
		return nil, err
	}
	// -z raw: ":oldmode newmode oldsha newsha status" NUL path NUL.
	fields := strings.Split(string(out), "\x00")
	var cs []Change
	for i := 0; i+1 < len(fields); i += 2 {
		meta := strings.Fields(strings.TrimPrefix(fields[i], ":"))
		if len(meta) != 5 || meta[4] == "" {
			return nil, fmt.Errorf("git diff-tree: unexpected record %q", fields[i])
		}
		cs = append(cs, Change{Status: meta[4][0], NewMode: meta[1], NewBlob: meta[3], Path: fields[i+1]})
	}
	return cs, nil
}

// commitIdentity is what a base commit copies from the fix commit, as
// GIT_* environment entries: author and committer, names, emails, dates.
func commitIdentity(ctx context.Context, repo *gitx.Repo, rev string) ([]string, error) {
	out, err := repo.Git(ctx, "show", "-s", "--format=%an%x00%ae%x00%ad%x00%cn%x00%ce%x00%cd", "--date=raw", rev)
	if err != nil {
		return nil, err
	}
	f := strings.Split(strings.TrimSuffix(string(out), "\n"), "\x00")
	if len(f) != 6 {
		return nil, fmt.Errorf("git show %s: unexpected identity %q", rev, out)
	}
	return []string{
		"GIT_AUTHOR_NAME=" + f[0], "GIT_AUTHOR_EMAIL=" + f[1], "GIT_AUTHOR_DATE=" + f[2],
		"GIT_COMMITTER_NAME=" + f[3], "GIT_COMMITTER_EMAIL=" + f[4], "GIT_COMMITTER_DATE=" + f[5],
	}, nil
}

// MakeBase makes the instance's base commit: parent's tree with rev's
// changes to the test paths, committed with rev's author, committer and
// dates and a fixed message, so the same rev always gives the same base.
// Only git plumbing runs, on a private index file: the user's checkout,
// index and HEAD are never touched. The base is kept reachable under
// BasesRef + the first 12 digits of rev.
func MakeBase(ctx context.Context, repo *gitx.Repo, parent, rev string, tests []Change) (string, error) {
	sd, err := scratch.New("base")
	if err != nil {
		return "", fmt.Errorf("base: %w", err)
	}
	defer sd.Remove()
	tmp := sd.Path
	index := []string{"GIT_INDEX_FILE=" + filepath.Join(tmp, "index")}
	git := func(stdin []byte, env []string, args ...string) ([]byte, error) {
		return gitx.CommandEnv(ctx, repo.Dir, stdin, append(append([]string{}, index...), env...), args...)
	}
	if _, err := git(nil, nil, "read-tree", parent+"^{tree}"); err != nil {
		return "", fmt.Errorf("base: %w", err)
	}
	var info bytes.Buffer
	for _, c := range tests {
		if c.Status == 'D' {
			// Mode 0 removes the path from the index.
			fmt.Fprintf(&info, "0 %s\t%s\x00", strings.Repeat("0", len(c.NewBlob)), c.Path)
			continue
		}
		fmt.Fprintf(&info, "%s %s\t%s\x00", c.NewMode, c.NewBlob, c.Path)
	}
	if info.Len() > 0 {
		if _, err := git(info.Bytes(), nil, "update-index", "-z", "--index-info"); err != nil {
			return "", fmt.Errorf("base: %w", err)
		}
	}
	tree, err := git(nil, nil, "write-tree")
	if err != nil {
		return "", fmt.Errorf("base: %w", err)
	}
	id, err := commitIdentity(ctx, repo, rev)
	if err != nil {
		return "", err
	}
	msg := fmt.Sprintf("failpass base for %s\n\nThe parent of %s with that commit's changes to test files,\nmade by failpass card from-commit.\n", rev, rev)
	out, err := git([]byte(msg), id, "-c", "commit.gpgSign=false", "-c", "i18n.commitEncoding=UTF-8",
		"commit-tree", "--no-gpg-sign", strings.TrimSpace(string(tree)), "-p", parent)
	if err != nil {
		return "", fmt.Errorf("base: %w", err)
	}
	base := strings.TrimSpace(string(out))
	if _, err := repo.Git(ctx, "update-ref", "-m", "failpass card from-commit", BasesRef+rev[:12], base); err != nil {
		return "", fmt.Errorf("base: %w", err)
	}
	return base, nil
}

// revParse resolves rev to a full commit id; "" when it names no commit.
func revParse(ctx context.Context, repo *gitx.Repo, rev string) (string, error) {
	out, err := repo.Commit(ctx, rev)
	if err != nil {
		var ge *gitx.Error
		if errors.As(err, &ge) {
			return "", nil
		}
		return "", err
	}
	return out, nil
}

// catFile is the content of path in rev; nil when rev has no such file.
func catFile(ctx context.Context, repo *gitx.Repo, rev, p string) ([]byte, error) {
	out, err := repo.Git(ctx, "cat-file", "blob", rev+":"+p)
	if err != nil {
		var ge *gitx.Error
		if errors.As(err, &ge) {
			return nil, nil
		}
		return nil, err
	}
	return out, nil
}

// lsFiles lists the names of the files directly in dir in rev.
func lsFiles(ctx context.Context, repo *gitx.Repo, rev, dir string) ([]string, error) {
	tree := rev + "^{tree}"
	if dir != "." {
		tree = rev + ":" + dir
	}
	out, err := repo.Git(ctx, "ls-tree", "-z", "--name-only", tree)
	if err != nil {
		var ge *gitx.Error
		if errors.As(err, &ge) {
			return nil, nil
		}
		return nil, err
	}
	var names []string
	for _, n := range strings.Split(string(out), "\x00") {
		if n != "" {
			names = append(names, n)
		}
	}
	return names, nil
}
