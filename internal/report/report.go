// Package report renders gate verdicts for humans (text), scripts (JSON
// and NDJSON) and CI dashboards.
package report

import (
	"encoding/json"
	"fmt"
	"github.com/failpass/failpass/internal/verdict"
	"io"
	"maps"
	"slices"
	"strings"
)

// Text writes the human form: one line per rule, then the verdict line.
//
//	base.fail: exit 1 (ok)
//	budget.files: files changed: 4 > 3
//	patch.pass: not run
//	patch.canary: not run (runner not recognized)
//	GATE: FAIL budget.files: files changed: 4 > 3
//
// Under --repeat N the command rules say how many runs agreed
// (`base.fail: exit 1 (ok, 3 runs)`), and a `patch.flaky:` line says
// whether the patched runs agreed.
func Text(w io.Writer, v *verdict.Verdict) {
	repeated := 0
	for _, s := range v.Steps {
		fmt.Fprintln(w, oneLine(StepLine(s)))
		repeated = max(repeated, len(s.Runs))
	}
	if repeated > 1 {
		fmt.Fprintln(w, oneLine(flakyLine(v, repeated)))
	}
	if l := SandboxLine(v.Sandbox); l != "" {
		fmt.Fprintln(w, oneLine(l))
	}
	fmt.Fprintln(w, oneLine(VerdictLine(v)))
}

// SandboxLine says, before the verdict, which containment layers the
// card's commands ran without, so a verdict reached with the candidate's
// code uncontained never reads like one that was contained:
//
//	sandbox: OFF (--sandbox=off): the card's commands ran uncontained
//	sandbox: missing network, filesystem (mount namespace: operation not permitted)
//
// It is "" when every layer held, or when no command ran.
func SandboxLine(r verdict.Sandbox) string {
	if r.Off {
		return "sandbox: OFF (--sandbox=off): the card's commands ran uncontained"
	}
	if len(r.Missing) == 0 {
		return ""
	}
	line := "sandbox: missing " + strings.Join(r.Missing, ", ")
	var why []string
	for _, f := range slices.Sorted(maps.Keys(r.Why)) {
		why = append(why, f+": "+r.Why[f])
	}
	if len(why) > 0 {
		line += " (" + strings.Join(why, "; ") + ")"
	}
	if len(r.Tells) > 0 {
		// What the canary cannot hide here: a run may tell itself from
		// the canary's by these.
		line += "; runs can be told apart by " + strings.Join(r.Tells, ", ")
	}
	return line
}

// flakyLine is the patch.flaky rule's line under --repeat: broken, held
// (every patched command's n runs agreed), or not reached.
func flakyLine(v *verdict.Verdict, n int) string {
	if v.Failed() == verdict.RulePatchFlaky {
		return fmt.Sprintf("%s: %s", verdict.RulePatchFlaky, v.Reason)
	}
	for _, s := range v.Steps {
		if s.Rule == verdict.RulePatchInvariant && s.Status == verdict.StatusOK {
			return fmt.Sprintf("%s: ok (the patched runs agree, %d runs each)", verdict.RulePatchFlaky, n)
		}
	}
	return verdict.RulePatchFlaky + ": not run"
}

// mutationNote is what a patch.canary that ran says of the mutation
// canary: "" for a run of the oracle's mutation (the step's own words say
// it), else why it did not run.
func mutationNote(s verdict.Step) string {
	if why, ok := strings.CutPrefix(s.Mutation, verdict.MutationNotRun); ok {
		return "; the mutation canary did not run: " + why
	}
	if s.Mutation == verdict.MutationRan {
		return "; with the oracle's expectation mutated"
	}
	return ""
}

// StepLine is one rule's line in the human form.
func StepLine(s verdict.Step) string {
	runs := ""
	if len(s.Runs) > 1 {
		runs = fmt.Sprintf(", %d runs", len(s.Runs))
	}
	switch s.Status {
	case verdict.StatusNotRun:
		if s.Reason != "" {
			return fmt.Sprintf("%s: not run (%s)", s.Rule, s.Reason)
		}
		return s.Rule + ": not run"
	case verdict.StatusOK:
		if s.Exit != nil {
			return fmt.Sprintf("%s: exit %d (ok%s)%s", s.Rule, *s.Exit, runs, mutationNote(s))
		}
		if s.Reason != "" {
			return fmt.Sprintf("%s: ok (%s)", s.Rule, s.Reason)
		}
		return s.Rule + ": ok"
	default:
		if runs != "" {
			return fmt.Sprintf("%s: %s (%d runs)", s.Rule, s.Reason, len(s.Runs))
		}
		return fmt.Sprintf("%s: %s", s.Rule, s.Reason)
	}
}

// VerdictLine is `GATE: PASS` or `GATE: FAIL <rule>: <reason>`; a pass
// with the card's held-out tests skipped says so on the same line.
func VerdictLine(v *verdict.Verdict) string {
	switch v.Verdict {
	case verdict.Pass:
		if v.HeldOut == verdict.HeldOutSkipped {
			return "GATE: PASS (held-out tests SKIPPED by --skip-held-out)"
		}
		return "GATE: PASS"
	case verdict.Errored:
		return "GATE: ERROR " + v.Error
	}
	return fmt.Sprintf("GATE: FAIL %s: %s", v.Failed(), v.Reason)
}

// JSON writes v as one line of JSON (the `--json` contract).
func JSON(w io.Writer, v *verdict.Verdict) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// JSONError writes the `--json` form of trouble (exit 2).
func JSONError(w io.Writer, err error) {
	b, _ := json.Marshal(struct {
		Verdict string `json:"verdict"`
		Error   string `json:"error"`
	}{"error", err.Error()})
	fmt.Fprintf(w, "%s\n", b)
}
