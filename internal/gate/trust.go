package gate

import (
	"context"

	"github.com/failpass/failpass/internal/gitx"
	"github.com/failpass/failpass/internal/sign"
	"github.com/failpass/failpass/internal/worktree"
)

// TrustIn is the card.signature check a gate in repo runs with: the
// allowed signers at path, or, when path is "", at git config
// gpg.ssh.allowedSignersFile; nil when neither names a file (the gate
// then treats the card as unsigned). Trust roots never come from the tree
// under test: a file inside failpass's worktrees, where candidate diffs
// are applied, is refused.
func TrustIn(ctx context.Context, repo *gitx.Repo, path string) (sign.Trust, error) {
	if path == "" {
		path, _ = repo.ConfigPath(ctx, "gpg.ssh.allowedSignersFile") // unset or unreadable: no trust file
	}
	if path == "" {
		return nil, nil
	}
	return sign.LoadTrust(path, worktree.Trees(repo)...)
}
