package cli

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
