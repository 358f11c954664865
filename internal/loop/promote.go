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
//
// The two steps are not one transaction: a loop killed between them
// leaves the checkout's index and files at commit and the branch at old.
// The checkpoint names the promotion before it starts, and resume
// finishes exactly that state (finishPromotion). hook is the engine's
// test seam, called between the two steps.
func promote(ctx context.Context, repo *gitx.Repo, branch, old, commit string, hook func(string) error) error {
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
		if err := repo.UpdateRef(ctx, "failpass loop: fast-forward", ref, commit, old); err != nil {
			return fmt.Errorf("the branch moved: %w", err)
		}
		return nil
	}
	git := gitIn(ctx, dir)
	if h, err := git("rev-parse", "--verify", "HEAD"); err != nil || h != old {
		return fmt.Errorf("the checkout %s is at %s, not %s", dir, short(h), short(old))
	}
	if st, err := gitx.Status(ctx, dir, false); err != nil || len(st) > 0 {
		return fmt.Errorf("the checkout %s is not clean", dir)
	}
	if _, err := git("merge-base", "--is-ancestor", old, commit); err != nil {
		return fmt.Errorf("%s is not a fast-forward of %s", short(commit), short(old))
	}
	if _, err := git("read-tree", "-m", "-u", old, commit); err != nil {
		return fmt.Errorf("updating the checkout's files: %w", err)
	}
	if err := hook(hookCheckoutUpdated); err != nil {
		return err
	}
	if _, err := git("update-ref", "-m", "failpass loop: fast-forward", ref, commit, old); err != nil {
		return fmt.Errorf("the branch moved during promotion: %w", err)
	}
	return verifyCheckout(ctx, dir, commit)
}

// hookCheckoutUpdated is the hook point between the checkout's update and
// the branch's move during a promotion.
const hookCheckoutUpdated = "promotion-checkout-updated"

// finishPromotion completes a promotion of branch from old to commit that
// was cut between its two steps: where the branch is checked out, HEAD
// and the branch are still old while the index tree is commit's and the
// files match the index (nothing unstaged, nothing untracked). Then the
// branch moves by compare-and-swap, as promote's second step would have,
// and the checkout is verified as promote verifies it. It reports false,
// and changes nothing, for any other state.
func finishPromotion(ctx context.Context, repo *gitx.Repo, branch, old, commit string) (bool, error) {
	ref := "refs/heads/" + branch
	wts, err := listWorktrees(ctx, repo)
	if err != nil {
		return false, err
	}
	var dir string
	for _, w := range wts {
		if w.branch == ref {
			dir = w.path
		}
	}
	if dir == "" {
		return false, nil // a ref alone moves in one step: nothing to finish
	}
	git := gitIn(ctx, dir)
	if h, err := git("rev-parse", "--verify", "HEAD"); err != nil || h != old {
		return false, nil
	}
	want, err := git("rev-parse", "--verify", commit+"^{tree}")
	if err != nil {
		return false, err
	}
	if got, err := git("write-tree"); err != nil || got != want {
		return false, nil
	}
	st, err := gitx.Status(ctx, dir, false)
	if err != nil {
		return false, err
	}
	if !onlyStaged(st) {
		return false, nil
	}
	if _, err := git("update-ref", "-m", "failpass loop: fast-forward (resumed)", ref, commit, old); err != nil {
		return false, fmt.Errorf("the branch moved during promotion: %w", err)
	}
	return true, verifyCheckout(ctx, dir, commit)
}

// onlyStaged says a `status --porcelain=v1 -z` listing has staged
// changes only: every file in the work tree is as the index has it, and
// nothing is untracked.
func onlyStaged(st []byte) bool {
	f := strings.Split(string(st), "\x00")
	for i := 0; i < len(f); i++ {
		e := f[i]
		if e == "" {
			continue
		}
		if len(e) < 4 || e[0] == '?' || e[0] == '!' || e[1] != ' ' {
			return false
		}
		if e[0] == 'R' || e[0] == 'C' {
			i++ // the entry's source path
		}
	}
	return true
}

// verifyCheckout checks that HEAD, the index tree and the files of dir all
// equal commit and that the tree is clean.
func verifyCheckout(ctx context.Context, dir, commit string) error {
	git := gitIn(ctx, dir)
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
	if st, err := gitx.Status(ctx, dir, false); err != nil || len(st) > 0 {
		return fmt.Errorf("after promotion the checkout is not clean")
	}
	return nil
}

// gitIn runs git in the checkout dir, its output trimmed.
func gitIn(ctx context.Context, dir string) func(args ...string) (string, error) {
	return func(args ...string) (string, error) {
		out, err := gitx.Command(ctx, dir, nil, args...)
		return strings.TrimSpace(string(out)), err
	}
}
