// Package verdict is the gate's answer for one candidate, as every
// output renders it and every record signs it: the verdict, its steps,
// the rule ids in gate order, and the sandbox report it was reached
// under. It holds data and names only, so the packages that render and
// sign verdicts (report, record) import it without the engine that
// reaches them (gate, sandbox, the processes they start).
package verdict

import (
	"slices"

	"github.com/failpass/failpass/internal/patch"
)

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

// What a gate did with a card's held-out tests: the verdict's held_out
// field (omitted when the card has none, or the gate stopped before
// patch.held_out).
const (
	HeldOutRan      = "ran"       // copied in from --held-out DIR and run
	HeldOutSkipped  = "skipped"   // --skip-held-out: not run, the rule passed loudly
	HeldOutNotGiven = "not_given" // neither flag: the rule failed
)

// Values of Step.Mutation for a patch.canary that ran.
const (
	MutationRan    = "ran"
	MutationNotRun = "not run: "
)

// The reasons a patch.canary step gives for not running. They are part of
// the output contract: `patch.canary: not run (<reason>)`.
const (
	CanaryOffReason     = `canary: "off" in the card`
	CanaryNotRecognized = "runner not recognized"
)

// Step is one rule's outcome. Exit and Expected are nil for rules that run
// no command.
type Step struct {
	Rule       string  `json:"rule"`
	Status     string  `json:"status"`
	Exit       *int    `json:"exit"`
	Expected   *int    `json:"expected"`
	DurationMS int64   `json:"duration_ms"`
	Log        *string `json:"log"`
	Reason     string  `json:"reason,omitempty"`
	// Detail says, for a patch.canary that did not run because its
	// runner or selection is not recognized, which part of it: what
	// record verify needs to tell a tree the canary cannot follow from a
	// command it does.
	Detail string `json:"detail,omitempty"`
	// Mutation says, for a patch.canary that ran, whether it ran the
	// oracle test with its literal expectation changed (MutationRan) or
	// the inserted assertion, and then why (MutationNotRun...).
	Mutation string `json:"mutation,omitempty"`
	// Path and Line say where in the candidate a broken rule points: the
	// repository path a budget rule names (a denied, oracle, binary or
	// escaping file) and, when the change edits that file's lines, the
	// line of the first edit in its new version. CI annotations use them.
	Path string `json:"path,omitempty"`
	Line int    `json:"line,omitempty"`
	// Runs holds every run's result under --repeat (and the one run
	// otherwise), for records and humans.
	Runs []RunResult `json:"runs,omitempty"`
}

// RunResult is one command run as a record keeps it.
type RunResult struct {
	Argv       []string `json:"argv"`
	Exit       int      `json:"exit"`
	Signal     string   `json:"signal,omitempty"`
	TimedOut   bool     `json:"timed_out"`
	DurationMS int64    `json:"duration_ms"`
	// Environment, when set, says the run failed for its environment
	// rather than at a test (testrunner.Classify): it is inconclusive.
	Environment string `json:"environment,omitempty"`
}

// Verdict is the gate's answer for one candidate. Its JSON form is the
// `--json` contract of README.md (under "Gate a candidate").
type Verdict struct {
	Verdict    string  `json:"verdict"`
	Rule       *string `json:"rule"`
	Reason     string  `json:"reason"`
	Candidate  string  `json:"candidate"`
	Base       string  `json:"base"`
	CardDigest string  `json:"card_digest"`
	DiffDigest string  `json:"diff_digest"`
	Sandbox    Sandbox `json:"sandbox"`
	Steps      []Step  `json:"steps"`
	HeldOut    string  `json:"held_out,omitempty"` // HeldOutRan, HeldOutSkipped, HeldOutNotGiven (see heldout.go)
	Cached     bool    `json:"cached,omitempty"`
	// BaseCached says the base side came from the cache (an earlier
	// gate's or batch's run) rather than running for this verdict.
	BaseCached bool `json:"base_cached,omitempty"`
	// Error is why a batch could not gate this candidate at all (its diff
	// or card unreadable, oversize): the verdict is then Errored.
	Error      string   `json:"error,omitempty"`
	LogDir     string   `json:"log_dir,omitempty"`
	Unsigned   bool     `json:"unsigned,omitempty"`
	Signers    []string `json:"signers,omitempty"`
	DurationMS int64    `json:"duration_ms"`
	// RunOrder lists the patched rules whose commands ran, in the order
	// they ran: the canary's place among them is drawn at random. Last,
	// so the fields before it read as they did before it existed.
	RunOrder []string `json:"run_order,omitempty"`

	// Changes is the static change set (the budget's, modes resolved
	// from the base), nil when the gate stopped before diff.path held; a
	// record takes its numstat from it. Not part of the JSON.
	Changes *patch.ChangeSet `json:"-"`
	// Tree is the tree the diff makes from Base (gitpatch.PatchedTree),
	// set when Options.PatchedTree asked for it, diff.apply held and git
	// applied the diff to the base's tree; a record names it as its
	// subject. Not part of the JSON.
	Tree string `json:"-"`
}

// Failed reports the first broken rule, or "" when the candidate passed.
func (v *Verdict) Failed() string {
	if v.Rule == nil {
		return ""
	}
	return *v.Rule
}

// Layer is one containment layer of the sandbox (package sandbox names
// them: network, filesystem, processes, resources).
type Layer string

// Sandbox says which layers and features a run used and which this machine
// could not provide, with a reason for each missing feature. It is the
// verdict's `sandbox` object, which the signed record carries too;
// package sandbox makes it (sandbox.Report).
type Sandbox struct {
	Applied  []string          `json:"applied"`
	Missing  []string          `json:"missing"`
	Features []string          `json:"features"`
	Why      map[string]string `json:"why_missing,omitempty"` // feature → reason
	Landlock int               `json:"landlock_abi,omitempty"`
	Off      bool              `json:"off,omitempty"` // --sandbox=off: nothing applied by choice
	// Cache says how the candidate's runs saw the card's build cache:
	// CacheOverlay or CachePrivateCold ("" when no candidate code ran).
	Cache string `json:"cache,omitempty"`
	// Tells are what a command can still observe here that differs from
	// one run to the next, and so tells a patched run from the canary's
	// (Tell*): each a layer's mechanism this machine lacks.
	Tells []string `json:"tells,omitempty"`
}

// Has says whether layer l was applied.
func (r Sandbox) Has(l Layer) bool { return slices.Contains(r.Applied, string(l)) }

// MissingOf returns the layers of want that r did not apply, in want's
// order: what a card's `sandbox.require` rule fails on.
func (r Sandbox) MissingOf(want []string) []string {
	var out []string
	for _, w := range want {
		if !slices.Contains(r.Applied, w) {
			out = append(out, w)
		}
	}
	return out
}
