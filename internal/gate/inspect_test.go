package gate

import (
	"path/filepath"
)

// What only tests look at: counters and a cache outside a repository.

// OpenCacheDir returns a cache rooted at dir (tests).
func OpenCacheDir(dir string) *Cache {
	return &Cache{dir: filepath.Join(dir, cacheFormat), lock: filepath.Join(dir, "cache.lock"), MaxEntries: DefaultMaxEntries, MaxBytes: DefaultMaxBytes}
}

// Stats reports this process's hits, misses and removed corrupt entries.
func (c *Cache) Stats() (hits, misses, corrupt int64) {
	return c.hits.Load(), c.misses.Load(), c.corruptRemoved.Load()
}

// Stats reports worktrees created, reused and replaced (a reset that could
// not be proven clean).
func (p *Pool) Stats() (created, reused, replaced int64) {
	return p.created.Load(), p.reused.Load(), p.replaced.Load()
}

// Pool is the batch's worktree pool (for statistics and benchmarks).
func (b *Batch) Pool() *Pool { return b.pool }
