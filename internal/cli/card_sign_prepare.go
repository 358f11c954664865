package cli

import (
	"context"
	"fmt"

	"github.com/failpass/failpass/internal/card"
	"github.com/failpass/failpass/internal/gate"
	"github.com/failpass/failpass/internal/gitx"
	"github.com/failpass/failpass/internal/sandbox"
)

// signPrepare runs the card's prepare command before the decision
// table's runs, as the gate does before its base runs (gate.RunPrepare:
// once per build cache key, so the first gate after signing finds the
// dependencies fetched). policy is the signing runs' sandbox; nil runs
// it uncontained.
func signPrepare(ctx context.Context, env *Env, repo *gitx.Repo, c *card.Card, base string, policy *sandbox.Policy) error {
	if c.Prepare == nil {
		return nil
	}
	logDir, err := signLogDir(repo)
	if err != nil {
		return err
	}
	res, err := gate.RunPrepare(ctx, gate.PrepareOptions{Repo: repo, Card: c, Base: base, Policy: policy, LogDir: logDir,
		Env: func(cmd card.Command) []string { return signEnv(env.Getenv, cmd) }})
	if err != nil {
		if ctx.Err() != nil {
			return Errorf("interrupted while running the prepare command; the card was left unchanged")
		}
		return err
	}
	if res.Ran {
		fmt.Fprintf(env.Stdout, "prepare: exit 0 in %s\n", signMS(res.Duration))
	} else {
		fmt.Fprintln(env.Stdout, "prepare: done before for this base and these commands")
	}
	return nil
}
