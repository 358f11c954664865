package cli

import "context"

func resultsCommands() []*command {
	return []*command{
		{name: "merge", summary: "combine shard outputs into one summary", run: runResultsMerge},
	}
}

func runResultsMerge(ctx context.Context, env *Env, args []string) error {
	return notBuilt("results merge")
}
