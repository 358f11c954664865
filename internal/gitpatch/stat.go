package gitpatch

import (
	"context"

	"github.com/failpass/failpass/internal/gitx"
)

// Stat is git's diffstat of a diff (git apply --stat), the summary of a
// candidate a drafter's prompt shows. The diff is read alone, as Read
// reads it; a diff git cannot read is git's *gitx.Error.
func Stat(ctx context.Context, diff []byte) ([]byte, error) {
	return applyAlone(ctx, diff, "apply", "--stat", "-")
}

// StatCommits is git's diffstat of the change from the commit base to the
// commit rev (git diff --stat=100), without external diff or textconv
// drivers and without colour.
func StatCommits(ctx context.Context, repo *gitx.Repo, base, rev string) ([]byte, error) {
	return repo.Git(ctx, "diff", "--no-ext-diff", "--no-textconv", "--no-color", "--stat=100", base, rev, "--")
}
