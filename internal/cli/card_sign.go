package cli

import "context"

func runCardSign(ctx context.Context, env *Env, args []string) error { return notBuilt("card sign") }
func runCardVerify(ctx context.Context, env *Env, args []string) error {
	return notBuilt("card verify")
}
func runCardAnnotate(ctx context.Context, env *Env, args []string) error {
	return notBuilt("card annotate")
}
