package cli

import "context"

func runCardInit(ctx context.Context, env *Env, args []string) error { return notBuilt("card init") }
func runCardLint(ctx context.Context, env *Env, args []string) error { return notBuilt("card lint") }
func runCardCanonical(ctx context.Context, env *Env, args []string) error {
	return notBuilt("card canonical")
}
