package cli

import "context"

func runGate(ctx context.Context, env *Env, args []string) error { return notBuilt("gate") }
