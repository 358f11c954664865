package cli

import "context"

func runLoopValidate(ctx context.Context, env *Env, args []string) error {
	return notBuilt("loop validate")
}
func runLoopFmt(ctx context.Context, env *Env, args []string) error { return notBuilt("loop fmt") }
func runLoopSchema(ctx context.Context, env *Env, args []string) error {
	return notBuilt("loop schema")
}
