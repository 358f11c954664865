package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/failpass/failpass/internal/gitx"
	"github.com/failpass/failpass/internal/patch"
)

// splitRange reads `--commits BASE..HEAD`. Three dots, an empty side or a
// side that looks like an option are usage errors.
func splitRange(r string) (string, string, error) {
	base, head, ok := strings.Cut(r, "..")
	switch {
	case !ok:
		return "", "", &UsageError{Msg: fmt.Sprintf("--commits %q: want BASE..HEAD", r), Hint: "failpass gate --card card.yml --commits origin/main..HEAD"}
	case strings.HasPrefix(head, "."):
		return "", "", &UsageError{Msg: fmt.Sprintf("--commits %q: BASE...HEAD is not taken; give BASE..HEAD (the merge base is found for you)", r)}
	case base == "" || head == "":
		return "", "", &UsageError{Msg: fmt.Sprintf("--commits %q: both BASE and HEAD are needed", r), Hint: "failpass gate --card card.yml --commits origin/main..HEAD"}
	case strings.HasPrefix(base, "-") || strings.HasPrefix(head, "-"):
		return "", "", &UsageError{Msg: fmt.Sprintf("--commits %q: a revision may not start with '-'", r)}
	}
	return base, head, nil
}

// commitsDiff is the candidate of `gate --commits BASE..HEAD`: the change
// from merge-base(BASE, HEAD) to HEAD, as git writes it from its objects
// (binary-safe, full index lines, no file on disk). The user's diff
// configuration (prefixes, colour, submodule format, order files, context,
// relative paths, rename detection) is overridden so the same commits
// always give the same bytes.
func commitsDiff(ctx context.Context, repo *gitx.Repo, r string) ([]byte, error) {
	baseRev, headRev, err := splitRange(r)
	if err != nil {
		return nil, err
	}
	base, err := commitOf(ctx, repo, baseRev, "BASE")
	if err != nil {
		return nil, err
	}
	head, err := commitOf(ctx, repo, headRev, "HEAD")
	if err != nil {
		return nil, err
	}
	out, err := repo.Git(ctx, "merge-base", base, head)
	if err != nil {
		var ge *gitx.Error
		if errors.As(err, &ge) && ge.Exit == 1 {
			return nil, Errorf("--commits %s: %s and %s have no common ancestor", r, baseRev, headRev).
				Hint("fetch the full history of both (a shallow clone hides the merge base): git fetch --unshallow")
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
		return nil, Errorf("--commits %s: the change is larger than %d bytes", r, patch.MaxSize).
			Hint("a candidate fix this large is not a fix the budget can hold; split it")
	}
	return d, nil
}

// commitOf resolves rev to a commit id in repo.
func commitOf(ctx context.Context, repo *gitx.Repo, rev, side string) (string, error) {
	out, err := repo.Commit(ctx, rev)
	if err != nil {
		var ge *gitx.Error
		if errors.As(err, &ge) {
			return "", Errorf("--commits: %s %q is not a commit in the repository at %s", side, rev, repo.Dir).
				Hint("fetch it first, e.g. git fetch origin %s", rev)
		}
		return "", err
	}
	return out, nil
}
