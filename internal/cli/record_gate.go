package cli

import (
	"context"

	"github.com/failpass/failpass/internal/card"
	"github.com/failpass/failpass/internal/gate"
	"github.com/failpass/failpass/internal/gitx"
)

// gateRecord writes the signed record of one gate run (--record). The
// record work (issue 3, item 5) replaces this.
func gateRecord(ctx context.Context, env *Env, repo *gitx.Repo, c *card.Card, diff []byte, v *gate.Verdict, path, key string) error {
	return notBuilt("gate --record")
}
