package gate

import "github.com/failpass/failpass/internal/verdict"

// The verdict's names, as the gate's own code spells them: the verdict,
// its steps, rule ids and statuses are package verdict's, which renders
// and signs them without the engine. Code outside gate uses verdict.
type (
	Verdict   = verdict.Verdict
	Step      = verdict.Step
	RunResult = verdict.RunResult
)

const (
	RuleCardSignature  = verdict.RuleCardSignature
	RuleCardBase       = verdict.RuleCardBase
	RuleCardExpired    = verdict.RuleCardExpired
	RuleSandboxRequire = verdict.RuleSandboxRequire
	RuleDiffParse      = verdict.RuleDiffParse
	RuleDiffPath       = verdict.RuleDiffPath
	RuleBudgetBinary   = verdict.RuleBudgetBinary
	RuleBudgetSymlink  = verdict.RuleBudgetSymlink
	RuleBudgetDeny     = verdict.RuleBudgetDeny
	RuleBudgetOracle   = verdict.RuleBudgetOracle
	RuleBudgetHarness  = verdict.RuleBudgetHarness
	RuleBudgetFiles    = verdict.RuleBudgetFiles
	RuleBudgetLines    = verdict.RuleBudgetLines
	RuleBaseFail       = verdict.RuleBaseFail
	RuleBaseInvariant  = verdict.RuleBaseInvariant
	RuleDiffApply      = verdict.RuleDiffApply
	RuleDiffActual     = verdict.RuleDiffActual
	RulePatchPass      = verdict.RulePatchPass
	RulePatchInvariant = verdict.RulePatchInvariant
	RulePatchHeldOut   = verdict.RulePatchHeldOut
	RulePatchCanary    = verdict.RulePatchCanary
	RulePatchFlaky     = verdict.RulePatchFlaky

	StatusOK     = verdict.StatusOK
	StatusFail   = verdict.StatusFail
	StatusNotRun = verdict.StatusNotRun

	Pass    = verdict.Pass
	Fail    = verdict.Fail
	Errored = verdict.Errored

	HeldOutRan      = verdict.HeldOutRan
	HeldOutSkipped  = verdict.HeldOutSkipped
	HeldOutNotGiven = verdict.HeldOutNotGiven

	CanaryOffReason     = verdict.CanaryOffReason
	CanaryNotRecognized = verdict.CanaryNotRecognized
)

// Rules lists every rule id in the order the gate checks them.
var Rules = verdict.Rules
