// Package gc is `failpass gc`'s sweep of one repository: what dead runs
// left (worktrees, their git folders and owner files, candidates'
// private folders, temporary folders, cgroups), caches of older formats,
// and caches and logs past an age or beyond a total size. Each part is
// its owner's (worktree, gate, prune, sandbox); this package runs them in
// order and adds up what they did.
package gc

import (
	"context"
	"errors"
	"time"

	"github.com/failpass/failpass/internal/gate"
	"github.com/failpass/failpass/internal/gitx"
	"github.com/failpass/failpass/internal/prune"
	"github.com/failpass/failpass/internal/sandbox"
	"github.com/failpass/failpass/internal/worktree"
)

// Result is what one sweep did. Its JSON form is `failpass gc --json`'s.
type Result struct {
	Removed []string     `json:"removed"` // every path removed, pruned units included
	Cgroups int          `json:"cgroups_removed"`
	Freed   int64        `json:"freed_bytes"`
	Kept    int64        `json:"kept_bytes"` // what caches and logs take after the sweep
	Pruned  []prune.Unit `json:"pruned"`
	// CgroupsSkipped and Skipped are another user's (root's gate,
	// killed, seen by a user's gc): only that user, or root, can remove
	// them, and leaving them is no failure.
	CgroupsSkipped []string `json:"-"`
	CgroupsSkip    int      `json:"cgroups_skipped"`
	Skipped        []string `json:"skipped"`
}

// Run sweeps repo: what dead runs left, then every cache and log folder
// unused for maxAge, then the oldest until the rest total at most
// maxSize. The error joins what could not be removed; the result still
// says what was.
func Run(ctx context.Context, repo *gitx.Repo, maxAge time.Duration, maxSize int64) (*Result, error) {
	r := &Result{Removed: []string{}, Pruned: []prune.Unit{}, Skipped: []string{}}
	removed, skipped, err := worktree.GC(ctx, repo)
	// Caches of an older format (never read again) and the private
	// folders of candidates whose failpass was killed.
	old, cacheErr := gate.RemoveOldCaches(repo)
	errs := []error{err, cacheErr}
	r.Removed = append(append(r.Removed, removed...), old...)
	r.Skipped = append(r.Skipped, skipped...)

	units, theirs, err := prune.Scan(repo.StateDir())
	r.Skipped = append(r.Skipped, theirs...)
	if err == nil {
		// A build cache goes only when no run holds it.
		held := prune.Held{Claims: sandbox.IsBuildCache, Remove: sandbox.RemoveBuildCache}
		var pruned []prune.Unit
		pruned, err = prune.Remove(prune.Select(units, time.Now(), maxAge, maxSize), held)
		r.Pruned = append(r.Pruned, pruned...)
	}
	errs = append(errs, err)
	for _, u := range units {
		r.Kept += u.Bytes
	}
	for _, u := range r.Pruned {
		r.Freed += u.Bytes
		r.Removed = append(r.Removed, u.Path)
	}
	r.Kept -= r.Freed

	// Cgroups of sandboxed commands whose failpass was killed: not paths
	// in the repository, so counted rather than listed.
	r.Cgroups, r.CgroupsSkipped, err = sandbox.RemoveStaleCgroups()
	r.CgroupsSkip = len(r.CgroupsSkipped)
	return r, errors.Join(append(errs, err)...)
}
