package gate

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/failpass/failpass/internal/card"
	"github.com/failpass/failpass/internal/gitx"
	"github.com/failpass/failpass/internal/logdir"
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
	b := &Bound{Repo: repo, Card: c, Path: path, InRepo: cardInRepo(repo, path), Env: DefaultEnv(getenv)}
	var err error
	if b.Digest, err = c.Digest(); err != nil {
		return nil, err
	}
	b.Base, err = resolveBase(ctx, repo, c)
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

// NewLogDir makes a fresh private folder for the logs of one command on
// the card (logdir.New in the repository's state, named by kind), which
// the one pruning rule of every log folder keeps or drops.
func (b *Bound) NewLogDir(kind string) (string, error) {
	return logdir.New(b.Repo.StateDir(), kind)
}

// cardInRepo is the card's path relative to the repository root, or ""
// when the card lives outside it (then it is no oracle file).
func cardInRepo(repo *gitx.Repo, cardPath string) string {
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

// resolveBase is the card's base commit in repo: base_sha when signed in,
// else base_ref resolved once. Bind asks here for every command that
// needs a card's base, which says what went wrong in BaseError's
// words. A base that is not a commit in repo, or a base_sha that
// resolves to another commit, is a *BaseError.
func resolveBase(ctx context.Context, repo *gitx.Repo, c *card.Card) (string, error) {
	want, field := c.BaseRev(), "base_ref"
	if c.BaseSHA != "" {
		field = "base_sha"
	}
	sha, err := repo.Commit(ctx, want)
	if err != nil {
		var ge *gitx.Error
		if errors.As(err, &ge) {
			return "", &BaseError{Field: field, Rev: want, Dir: repo.Dir, fetch: fetchCommand(ctx, repo, want)}
		}
		return "", err
	}
	if c.BaseSHA != "" && sha != c.BaseSHA {
		return "", &BaseError{Field: field, Rev: c.BaseSHA, Resolved: sha}
	}
	return sha, nil
}

// BaseError is a card's base that does not hold in a repository: the
// card's Field (base_sha or base_ref) names Rev, which is not a commit in
// the repository at Dir, or, with Resolved set, the card's base_sha Rev
// resolves to another commit.
type BaseError struct {
	Field, Rev, Dir string
	Resolved        string
	fetch           string // the git command that fetches Rev
}

func (e *BaseError) Error() string {
	if e.Resolved != "" {
		return fmt.Sprintf("%s %s resolves to %s", e.Field, e.Rev, e.Resolved)
	}
	return fmt.Sprintf("%s %q is not a commit in the repository at %s; fetch it: %s", e.Field, e.Rev, e.Dir, e.fetch)
}

// fetchCommand is the git command that fetches rev into repo (from the
// repository's "origin", else its first remote, else a placeholder).
func fetchCommand(ctx context.Context, repo *gitx.Repo, rev string) string {
	remote := "<remote>"
	if out, err := repo.Git(ctx, "remote"); err == nil {
		names := strings.Fields(string(out))
		for i, n := range names {
			if n == "origin" || i == 0 {
				remote = n
			}
			if n == "origin" {
				break
			}
		}
	}
	return fmt.Sprintf("git -C %s fetch %s %s", repo.Dir, remote, rev)
}
