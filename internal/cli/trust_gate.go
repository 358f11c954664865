package cli

import (
	"github.com/failpass/failpass/internal/card"
	"github.com/failpass/failpass/internal/gitx"
)

// cardTrust loads an allowed_signers file and returns the card.signature
// check the gate and the loop share.
func cardTrust(path string) (func(*card.Card) ([]string, error), error) {
	return cardTrustFromFile(path)
}

// cardTrustIn is cardTrust for a run in repo. Trust roots never come from
// the tree under test: a trust file inside failpass's worktrees (where
// candidate diffs are applied) is refused.
func cardTrustIn(repo *gitx.Repo, path string) (func(*card.Card) ([]string, error), error) {
	return cardTrustFromFile(path, repo.StateDir("worktrees"))
}
