package gate

import (
	"context"
	"errors"
	"path/filepath"
	"strings"

	"github.com/failpass/failpass/internal/card"
	"github.com/failpass/failpass/internal/gitx"
	"github.com/failpass/failpass/internal/sandbox"
)

// Bound is a card bound to a repository, resolved once (Bind): where the
// card lives, the commit its base names there, its digest, the
// environment its commands run with, and what follows from them, the
// build cache its base runs fill and the dependency folder its prepare
// command fills. The gate (one candidate or a batch), card sign, the
// loop, the model commands and the tests' warm-up are each handed one,
// so all of them meet in the same cache and say a base that does not
// hold in the same words.
type Bound struct {
	Repo *gitx.Repo
	Card *card.Card
	// Path is the card's file as given, for messages ("" for a card built
	// in code); InRepo is its path in the repository, "" when it lives
	// outside (then it is no oracle file).
	Path, InRepo string
	// Digest is Card.Digest().
	Digest string
	// Base is the commit the card's base names in Repo; "" when it does
	// not hold there, and BaseErr says why (the gate's card.base rule
	// breaks with it, every other command stops with it).
	Base    string
	BaseErr *BaseError
	// Env is what a card command sees (DefaultEnv): it also keys the
	// build cache.
	Env func(card.Command) []string
}

// Bind binds c, read from path, to repo, with the environment getenv
// gives card commands (DefaultEnv). A base that does not hold is kept in
// BaseErr, not returned: a gate decides card.base on it. The error is
// trouble reading the repository or the card.
func Bind(ctx context.Context, repo *gitx.Repo, c *card.Card, path string, getenv func(string) string) (*Bound, error) {
	b := &Bound{Repo: repo, Card: c, Path: path, InRepo: CardInRepo(repo, path), Env: DefaultEnv(getenv)}
	var err error
	if b.Digest, err = c.Digest(); err != nil {
		return nil, err
	}
	b.Base, err = ResolveBase(ctx, repo, c)
	if errors.As(err, &b.BaseErr) {
		err = nil
	}
	if err != nil {
		return nil, err
	}
	return b, nil
}

// Commit is the card's base commit, or the *BaseError that says why it
// does not hold: what a command that needs the base and decides no
// card.base asks.
func (b *Bound) Commit() (string, error) {
	if b.BaseErr != nil {
		return "", b.BaseErr
	}
	return b.Base, nil
}

// CacheDir is the folder of the build cache BuildCacheKey names, in the
// repository's state.
func (b *Bound) CacheDir() string {
	return sandbox.BuildCacheDir(b.Repo.CommonDir, BuildCacheKey(b.Card, b.Base, b.Env))
}

// DepsDir is the card's dependency folder, "" when the card has no
// prepare command.
func (b *Bound) DepsDir() string {
	if b.Card.Prepare == nil {
		return ""
	}
	return sandbox.DepsDir(b.CacheDir())
}

// Policy is the sandbox of the card's trusted runs: its build cache,
// which they may write, and its dependency folder, read-only to all but
// the prepare command.
func (b *Bound) Policy() *sandbox.Policy {
	return &sandbox.Policy{CacheDir: b.CacheDir(), Deps: b.DepsDir()}
}

// CardInRepo is the card's path relative to the repository root, or ""
// when the card lives outside it (then it is no oracle file).
func CardInRepo(repo *gitx.Repo, cardPath string) string {
	if cardPath == "" {
		return ""
	}
	abs, err := filepath.Abs(cardPath)
	if err != nil {
		return ""
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	root := repo.Dir
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return ""
	}
	return filepath.ToSlash(rel)
}
