package cli

import "context"

func recordCommands() []*command {
	return []*command{
		{name: "verify", summary: "verify a signed gate record without rerunning anything", run: runRecordVerify},
	}
}

func budgetCommands() []*command {
	return []*command{
		{name: "suggest", summary: "count the repository files a stack trace names", run: runBudgetSuggest},
	}
}

func runRecordVerify(ctx context.Context, env *Env, args []string) error {
	return notBuilt("record verify")
}
func runNote(ctx context.Context, env *Env, args []string) error { return notBuilt("note") }
