package signoff

import "fmt"

// DecisionUnsatisfiable is the row `card sign --reference DIFF` adds after
// dirty: the reference fix does not fit the card's budget, does not apply
// to the base, or does not make the pass and invariant commands pass. A
// card no fix can satisfy must not be signed.
const DecisionUnsatisfiable Decision = "unsatisfiable"

// ReferenceCheck is what signing saw of the reference fix: why it could
// not be tried at all (Refused: the budget refused it, or it does not
// apply), else the pass and invariant runs on the base with it applied.
type ReferenceCheck struct {
	Refused   string
	Pass      Outcome
	Invariant Outcome
}

// Reference applies the reference row to v, the verdict of Decide: a
// verdict that would sign becomes unsatisfiable unless the reference fix
// was tried and its pass and invariant runs both exit as the card expects.
// Any other verdict stands: the rows before it matched first. Pure, like
// Decide.
func Reference(v Verdict, ref ReferenceCheck, expectPass, expectInvariant int) Verdict {
	if v.Decision != DecisionSign {
		return v
	}
	switch {
	case ref.Refused != "":
		return Verdict{DecisionUnsatisfiable, "the reference fix " + ref.Refused}
	case ref.Pass.Environment != "":
		return Verdict{DecisionEnvironment, "the pass command failed for its environment with the reference fix, not at a test: " + ref.Pass.Environment}
	case ref.Invariant.Environment != "":
		return Verdict{DecisionEnvironment, "the invariant failed for its environment with the reference fix, not at a test: " + ref.Invariant.Environment}
	case ref.Pass.Inconclusive:
		return Verdict{DecisionUnsatisfiable, "the pass command was inconclusive with the reference fix (timeout, signal, or exit 125/126/127)"}
	case ref.Pass.Exit != expectPass:
		return Verdict{DecisionUnsatisfiable, fmt.Sprintf("the pass command exits %d with the reference fix, the card expects %d", ref.Pass.Exit, expectPass)}
	case ref.Invariant.Inconclusive:
		return Verdict{DecisionUnsatisfiable, "the invariant command was inconclusive with the reference fix (timeout, signal, or exit 125/126/127)"}
	case ref.Invariant.Exit != expectInvariant:
		return Verdict{DecisionUnsatisfiable, fmt.Sprintf("the invariant command exits %d with the reference fix, the card expects %d", ref.Invariant.Exit, expectInvariant)}
	}
	return Verdict{DecisionSign, v.Reason + "; the reference fix passes"}
}
