// Package report renders gate verdicts for humans (text), scripts (JSON
// and NDJSON) and CI dashboards.
package report

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/failpass/failpass/internal/gate"
)

// Text writes the human form: one line per rule, then the verdict line.
//
//	base.fail: exit 1 (ok)
//	budget.files: files changed: 4 > 3
//	patch.pass: not run
//	GATE: FAIL budget.files: files changed: 4 > 3
func Text(w io.Writer, v *gate.Verdict) {
	for _, s := range v.Steps {
		fmt.Fprintln(w, StepLine(s))
	}
	fmt.Fprintln(w, VerdictLine(v))
}

// StepLine is one rule's line in the human form.
func StepLine(s gate.Step) string {
	switch s.Status {
	case gate.StatusNotRun:
		return s.Rule + ": not run"
	case gate.StatusOK:
		if s.Exit != nil {
			return fmt.Sprintf("%s: exit %d (ok)", s.Rule, *s.Exit)
		}
		if s.Reason != "" {
			return fmt.Sprintf("%s: ok (%s)", s.Rule, s.Reason)
		}
		return s.Rule + ": ok"
	default:
		return fmt.Sprintf("%s: %s", s.Rule, s.Reason)
	}
}

// VerdictLine is `GATE: PASS` or `GATE: FAIL <rule>: <reason>`.
func VerdictLine(v *gate.Verdict) string {
	if v.Verdict == gate.Pass {
		return "GATE: PASS"
	}
	return fmt.Sprintf("GATE: FAIL %s: %s", v.Failed(), v.Reason)
}

// JSON writes v as one line of JSON (the `--json` contract).
func JSON(w io.Writer, v *gate.Verdict) error {
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
