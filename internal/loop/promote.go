package loop

import (
	"context"
	"fmt"
	"strings"

	"github.com/failpass/failpass/internal/gitx"
)

// promote fast-forwards the candidate branch from old to commit. Where the
// branch is checked out, that checkout must be clean and at old; its
// files, index and HEAD move together (a two-tree read-tree, then a
// compare-and-swap of the ref) and are verified after: HEAD, the index
// tree and the files all equal commit and the tree is clean. Where it is
// not checked out, the ref moves by compare-and-swap alone.
func promote(ctx context.Context, repo *gitx.Repo, branch, old, commit string) error {
	ref := "refs/heads/" + branch
	wts, err := listWorktrees(ctx, repo)
	if err != nil {
		return err
	}
	var dir string
	for _, w := range wts {
		if w.branch == ref {
			dir = w.path
		}
	}
	if dir == "" {
		if _, err := repo.Git(ctx, "update-ref", "-m", "failpass loop: fast-forward", ref, commit, old); err != nil {
			return fmt.Errorf("the branch moved: %w", err)
		}
		return nil
	}
	git := func(args ...string) (string, error) {
		out, err := gitx.Command(ctx, dir, nil, args...)
		return strings.TrimSpace(string(out)), err
	}
	if h, err := git("rev-parse", "--verify", "HEAD"); err != nil || h != old {
		return fmt.Errorf("the checkout %s is at %s, not %s", dir, short(h), short(old))
	}
	if st, err := git("status", "--porcelain", "--untracked-files=all"); err != nil || st != "" {
		return fmt.Errorf("the checkout %s is not clean", dir)
	}
	if _, err := git("merge-base", "--is-ancestor", old, commit); err != nil {
		return fmt.Errorf("%s is not a fast-forward of %s", short(commit), short(old))
	}
	if _, err := git("read-tree", "-m", "-u", old, commit); err != nil {
		return fmt.Errorf("updating the checkout's files: %w", err)
	}
	if _, err := git("update-ref", "-m", "failpass loop: fast-forward", ref, commit, old); err != nil {
		return fmt.Errorf("the branch moved during promotion: %w", err)
	}
	return verifyCheckout(ctx, dir, commit)
}

// verifyCheckout checks that HEAD, the index tree and the files of dir all
// equal commit and that the tree is clean.
func verifyCheckout(ctx context.Context, dir, commit string) error {
	git := func(args ...string) (string, error) {
		out, err := gitx.Command(ctx, dir, nil, args...)
		return strings.TrimSpace(string(out)), err
	}
	h, err := git("rev-parse", "--verify", "HEAD")
	if err != nil || h != commit {
		return fmt.Errorf("after promotion HEAD is %s, not %s", short(h), short(commit))
	}
	want, err := git("rev-parse", "--verify", commit+"^{tree}")
	if err != nil {
		return err
	}
	if got, err := git("write-tree"); err != nil || got != want {
		return fmt.Errorf("after promotion the index tree is %s, not %s", short(got), short(want))
	}
	if st, err := git("status", "--porcelain", "--untracked-files=all"); err != nil || st != "" {
		return fmt.Errorf("after promotion the checkout is not clean")
	}
	return nil
}
