package gitpatch

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/failpass/failpass/internal/gitx"
	"github.com/failpass/failpass/internal/patch"
)

// Range is a candidate given as commits, `gate --commits BASE..HEAD`: the
// change from the merge base of Base and Head to Head.
type Range struct {
	Base, Head string
}

func (r Range) String() string { return r.Base + ".." + r.Head }

// RangeError is a range that cannot be gated: spelled wrong (Usage: the
// command line is at fault), a side that is not a commit here, no merge
// base, a change too large. The message names the --commits flag; Hint
// says the fix.
type RangeError struct {
	Msg   string
	Hint  []string
	Usage bool
}

func (e *RangeError) Error() string { return e.Msg }

// Hints are the fix, one line each.
func (e *RangeError) Hints() []string { return e.Hint }

func rangeError(usage bool, msg string, hints ...string) *RangeError {
	return &RangeError{Msg: msg, Hint: hints, Usage: usage}
}

// ParseRange reads BASE..HEAD. Three dots, an empty side or a side that
// looks like an option are a *RangeError with Usage set.
func ParseRange(s string) (Range, error) {
	const example = "failpass gate --card card.yml --commits origin/main..HEAD"
	base, head, ok := strings.Cut(s, "..")
	switch {
	case !ok:
		return Range{}, rangeError(true, fmt.Sprintf("--commits %q: want BASE..HEAD", s), example)
	case strings.HasPrefix(head, "."):
		return Range{}, rangeError(true, fmt.Sprintf("--commits %q: BASE...HEAD is not taken; give BASE..HEAD (the merge base is found for you)", s))
	case base == "" || head == "":
		return Range{}, rangeError(true, fmt.Sprintf("--commits %q: both BASE and HEAD are needed", s), example)
	case strings.HasPrefix(base, "-") || strings.HasPrefix(head, "-"):
		return Range{}, rangeError(true, fmt.Sprintf("--commits %q: a revision may not start with '-'", s))
	}
	return Range{Base: base, Head: head}, nil
}

// RangeDiff is the candidate r names: the change from merge-base(Base,
// Head) to Head, as git writes it from its objects (binary-safe, full
// index lines, no file on disk). The user's diff configuration (prefixes,
// colour, submodule format, order files, context, relative paths, rename
// detection) is overridden so the same commits always give the same
// bytes. A side that is not a commit, no merge base or a change over
// patch.MaxSize is a *RangeError; trouble running git is returned as it
// is.
func RangeDiff(ctx context.Context, repo *gitx.Repo, r Range) ([]byte, error) {
	base, err := rangeSide(ctx, repo, r.Base, "BASE")
	if err != nil {
		return nil, err
	}
	head, err := rangeSide(ctx, repo, r.Head, "HEAD")
	if err != nil {
		return nil, err
	}
	out, err := repo.Git(ctx, "merge-base", base, head)
	if err != nil {
		var ge *gitx.Error
		if errors.As(err, &ge) && ge.Exit == 1 {
			return nil, rangeError(false, fmt.Sprintf("--commits %s: %s and %s have no common ancestor", r, r.Base, r.Head),
				"fetch the full history of both (a shallow clone hides the merge base): git fetch --unshallow")
		}
		return nil, err
	}
	mb := strings.TrimSpace(string(out))
	d, err := repo.Git(ctx, "diff", "--binary", "--full-index", "--no-color", "--no-relative",
		"--src-prefix=a/", "--dst-prefix=b/", "--submodule=short", "--unified=3", "-M", "-O/dev/null",
		mb, head, "--")
	if err != nil {
		return nil, err
	}
	if len(d) > patch.MaxSize {
		return nil, rangeError(false, fmt.Sprintf("--commits %s: the change is larger than %d bytes", r, patch.MaxSize),
			"a candidate fix this large is not a fix the budget can hold; split it")
	}
	return d, nil
}

// rangeSide resolves one side of a range to a commit id in repo.
func rangeSide(ctx context.Context, repo *gitx.Repo, rev, side string) (string, error) {
	id, err := repo.Commit(ctx, rev)
	if err != nil {
		var ge *gitx.Error
		if errors.As(err, &ge) {
			return "", rangeError(false, fmt.Sprintf("--commits: %s %q is not a commit in the repository at %s", side, rev, repo.Dir),
				fmt.Sprintf("fetch it first, e.g. git fetch origin %s", rev))
		}
		return "", err
	}
	return id, nil
}
