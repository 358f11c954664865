package cli

func loopCommands() []*command {
	return []*command{
		{name: "start", summary: "start a review-fix loop on a committed candidate", run: runLoopStart},
		{name: "resume", summary: "resume an interrupted loop", run: runLoopResume},
		{name: "status", summary: "show a loop's checkpoint", run: runLoopStatus},
		{name: "validate", summary: "validate an invocation, checkpoint or terminal result", run: runLoopValidate},
		{name: "fmt", summary: "write or check the canonical form of loop documents", run: runLoopFmt},
		{name: "schema", summary: "print an embedded JSON Schema", run: runLoopSchema},
	}
}
