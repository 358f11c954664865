package gate

// Rule ids, in the order the gate checks them (Rules), and then
// patch.flaky, which is no step of its own: under --repeat it breaks when
// the patched runs of a rule disagree. They are API: scripts and outside
// checks read them from `--json` output, so they are never renamed.
const (
	RuleCardSignature  = "card.signature"
	RuleCardBase       = "card.base"
	RuleCardExpired    = "card.expired"
	RuleSandboxRequire = "sandbox.require"
	RuleDiffParse      = "diff.parse"
	RuleDiffPath       = "diff.path"
	RuleBudgetBinary   = "budget.binary"
	RuleBudgetSymlink  = "budget.symlink"
	RuleBudgetDeny     = "budget.deny"
	RuleBudgetOracle   = "budget.oracle"
	RuleBudgetHarness  = "budget.harness"
	RuleBudgetFiles    = "budget.files"
	RuleBudgetLines    = "budget.lines"
	RuleBaseFail       = "base.fail"
	RuleBaseInvariant  = "base.invariant"
	RuleDiffApply      = "diff.apply"
	RuleDiffActual     = "diff.actual"
	RulePatchPass      = "patch.pass"
	RulePatchInvariant = "patch.invariant"
	RulePatchHeldOut   = "patch.held_out"
	RulePatchCanary    = "patch.canary"
	RulePatchFlaky     = "patch.flaky"
)

// Rules lists every rule id in the order the gate checks them.
var Rules = []string{
	RuleCardSignature, RuleCardBase, RuleCardExpired, RuleSandboxRequire,
	RuleDiffParse, RuleDiffPath,
	RuleBudgetBinary, RuleBudgetSymlink, RuleBudgetDeny, RuleBudgetOracle, RuleBudgetHarness, RuleBudgetFiles, RuleBudgetLines,
	RuleBaseFail, RuleBaseInvariant, RuleDiffApply, RuleDiffActual,
	RulePatchPass, RulePatchInvariant, RulePatchHeldOut, RulePatchCanary,
}

// Step statuses.
const (
	StatusOK     = "ok"
	StatusFail   = "fail"
	StatusNotRun = "not_run"
)

// Verdicts.
const (
	Pass = "pass"
	Fail = "fail"
	// Errored is a batch candidate that could not be gated (unreadable or
	// oversize): neither pass nor fail, and the batch exits 2.
	Errored = "error"
)
