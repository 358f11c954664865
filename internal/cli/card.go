package cli

func cardCommands() []*command {
	return []*command{
		{name: "init", summary: "write a card for the project's test runner (Go, pytest, unittest, npm, Cargo)", run: runCardInit},
		{name: "lint", summary: "validate a card, run nothing", run: runCardLint},
		{name: "canonical", summary: "print the card's signed bytes (RFC 8785 JSON)", run: runCardCanonical},
		{name: "sign", summary: "run the decision table on the base and sign the card", run: runCardSign},
		{name: "verify", summary: "verify a card's signatures against allowed signers", run: runCardVerify},
		{name: "from-commit", summary: "build a card and its reference fix from an upstream fix commit", run: runCardFromCommit},
		{name: "annotate", summary: "append an annotation that may only tighten the budget", run: runCardAnnotate},
	}
}
