package cli

import "context"

func runLoopStart(ctx context.Context, env *Env, args []string) error { return notBuilt("loop start") }
func runLoopResume(ctx context.Context, env *Env, args []string) error {
	return notBuilt("loop resume")
}
func runLoopStatus(ctx context.Context, env *Env, args []string) error {
	return notBuilt("loop status")
}
