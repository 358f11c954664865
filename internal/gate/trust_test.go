package gate

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/failpass/failpass/internal/worktree"
)

// TestTrustIn: the gate's trust roots come from the path given, else from
// git config; neither gives no check; a file inside failpass's worktrees
// is refused whichever way it is named.
func TestTrustIn(t *testing.T) {
	repo, _ := newRepo(t)
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	line := "m@example.org " + strings.TrimSpace(string(ssh.MarshalAuthorizedKey(sp))) + "\n"
	outside := filepath.Join(t.TempDir(), "allowed_signers")
	write(t, filepath.Dir(outside), "allowed_signers", line)
	inside := repo.StateDir("worktrees", "x", "allowed_signers")
	write(t, filepath.Dir(inside), "allowed_signers", line)
	ctx := context.Background()

	if tr, err := TrustIn(ctx, repo, ""); tr != nil || err != nil {
		t.Errorf("TrustIn(no path, no config) = %v, %v; want nil, nil", tr != nil, err)
	}
	if tr, err := TrustIn(ctx, repo, outside); tr == nil || err != nil {
		t.Errorf("TrustIn(%s) = %v, %v; want a check", outside, tr != nil, err)
	}
	if _, err := TrustIn(ctx, repo, inside); err == nil || !strings.Contains(err.Error(), "trust roots never come from it") {
		t.Errorf("TrustIn(%s) = %v; want the file refused", inside, err)
	}
	// A tree in the user's cache folder, where worktrees live now.
	for _, trees := range worktree.Trees(repo)[1:] {
		inTree := filepath.Join(trees, "0000000000000000", "allowed_signers")
		write(t, filepath.Dir(inTree), "allowed_signers", line)
		if _, err := TrustIn(ctx, repo, inTree); err == nil || !strings.Contains(err.Error(), "trust roots never come from it") {
			t.Errorf("TrustIn(%s) = %v; want the file refused", inTree, err)
		}
	}
	if len(worktree.Trees(repo)) < 2 {
		t.Errorf("worktree.Trees = %q: no folder of trees in the cache folder", worktree.Trees(repo))
	}
	git(t, repo.Dir, "config", "gpg.ssh.allowedSignersFile", inside)
	if _, err := TrustIn(ctx, repo, ""); err == nil {
		t.Errorf("TrustIn(config %s) = nil error; want the file refused", inside)
	}
	git(t, repo.Dir, "config", "gpg.ssh.allowedSignersFile", outside)
	if tr, err := TrustIn(ctx, repo, ""); tr == nil || err != nil {
		t.Errorf("TrustIn(config %s) = %v, %v; want a check", outside, tr != nil, err)
	}
}
