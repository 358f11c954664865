package gate

import (
	"github.com/failpass/failpass/internal/card"
	"github.com/failpass/failpass/internal/gitx"
	"github.com/failpass/failpass/internal/sandbox"
)

// Bound is a card bound to a repository: the commit its base names there
// (ResolveBase), the environment its commands run with (DefaultEnv), and
// what follows from the three, the build cache its base runs fill and
// the dependency folder its prepare command fills. The gate, card sign,
// the loop and the tests' warm-up all take these folders from here, so
// all of them meet in the same cache.
type Bound struct {
	Repo *gitx.Repo
	Card *card.Card
	Base string
	Env  func(card.Command) []string
}

// CacheDir is the folder of the build cache BuildCacheKey names, in the
// repository's state.
func (b Bound) CacheDir() string {
	return sandbox.BuildCacheDir(b.Repo.CommonDir, BuildCacheKey(b.Card, b.Base, b.Env))
}

// DepsDir is the card's dependency folder, "" when the card has no
// prepare command.
func (b Bound) DepsDir() string {
	if b.Card.Prepare == nil {
		return ""
	}
	return sandbox.DepsDir(b.CacheDir())
}

// Policy is the sandbox of the card's trusted runs: its build cache,
// which they may write, and its dependency folder, read-only to all but
// the prepare command.
func (b Bound) Policy() *sandbox.Policy {
	return &sandbox.Policy{CacheDir: b.CacheDir(), Deps: b.DepsDir()}
}
