package cli

import "context"

func runPrompt(ctx context.Context, env *Env, args []string) error { return notBuilt("prompt") }
func runDraft(ctx context.Context, env *Env, args []string) error  { return notBuilt("draft") }
