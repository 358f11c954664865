package loop

import (
	"fmt"
	"path"
	"strings"

	"github.com/failpass/failpass/internal/model"
)

// This file is the loop's pure policy: which findings to act on, when to
// stop early, and how a terminal state maps onto publication and operator
// action. Nothing here touches git, files or processes.

// Finding dispositions as review records name them.
const (
	Accepted = "accepted"
	Rejected = "rejected"
	Deferred = "deferred"
)

// Decision is the built-in policy's (or a decider's) call on one finding.
type Decision struct {
	Finding     model.Finding
	Disposition string // Accepted, Rejected or Deferred
	Rationale   string
	// ScopeStop: a blocking finding whose fix would leave the allowed
	// scope. The loop stops with blocked/scope_decision_required.
	ScopeStop bool
}

// ScopeFunc says why a path is outside the allowed remediation scope, or
// "" when it is inside.
type ScopeFunc func(p string) string

// DecideBuiltin is the documented built-in decision policy. A finding is
// accepted only when all of these hold, checked in this order; the first
// that fails names the rationale:
//
//  1. its severity is not defer (defer findings are deferred);
//  2. its severity is blocking or strong_recommendation;
//  3. its confidence is high or medium;
//  4. every evidence location names a file that exists at the head
//     (files holds the head's tracked paths);
//  5. every such file is inside the allowed scope (scope returns "").
//
// A blocking finding that fails only rule 5 is marked ScopeStop: fixing it
// would expand scope, which an operator must decide.
func DecideBuiltin(findings []model.Finding, files map[string]bool, scope ScopeFunc) []Decision {
	out := make([]Decision, 0, len(findings))
	for _, f := range findings {
		d := Decision{Finding: f, Disposition: Rejected}
		switch {
		case f.Severity == "defer":
			d.Disposition = Deferred
			d.Rationale = "severity defer: left for later by the built-in policy"
		case f.Severity != "blocking" && f.Severity != "strong_recommendation":
			d.Rationale = fmt.Sprintf("severity %q is neither blocking nor strong_recommendation", f.Severity)
		case f.Confidence != "high" && f.Confidence != "medium":
			d.Rationale = fmt.Sprintf("confidence %q is below medium", f.Confidence)
		default:
			d.Disposition, d.Rationale, d.ScopeStop = evidencePolicy(f, files, scope)
		}
		out = append(out, d)
	}
	return out
}

func evidencePolicy(f model.Finding, files map[string]bool, scope ScopeFunc) (string, string, bool) {
	var paths []string
	for _, e := range f.Evidence {
		p, ok := LocationPath(e.Location)
		if !ok {
			return Rejected, fmt.Sprintf("evidence location %q names no file in the repository", e.Location), false
		}
		if !files[p] {
			return Rejected, fmt.Sprintf("evidence location %q names %s, which does not exist at the head", e.Location, p), false
		}
		paths = append(paths, p)
	}
	if len(paths) == 0 {
		return Rejected, "the finding has no evidence location", false
	}
	for _, p := range paths {
		if why := scope(p); why != "" {
			if f.Severity == "blocking" {
				return Rejected, fmt.Sprintf("fixing it would leave the allowed scope: %s %s", p, why), true
			}
			return Rejected, fmt.Sprintf("outside the allowed scope: %s %s", p, why), false
		}
	}
	return Accepted, fmt.Sprintf("%s finding with %s confidence; evidence in %s, inside the allowed scope",
		f.Severity, f.Confidence, strings.Join(paths, ", ")), false
}

// LocationPath reads the repository path out of an evidence location:
// "src/a.go", "src/a.go:12", "src/a.go:12:3", "src/a.go#L12" or
// "src/a.go:12-20". It refuses absolute paths, paths that climb out of the
// repository and paths inside .git.
func LocationPath(loc string) (string, bool) {
	p := strings.TrimSpace(loc)
	if i := strings.IndexByte(p, '#'); i >= 0 {
		p = p[:i]
	}
	// Strip ":<line>..." suffixes (a colon followed by a digit).
	for i := 0; i < len(p); i++ {
		if p[i] == ':' && i+1 < len(p) && p[i+1] >= '0' && p[i+1] <= '9' {
			p = p[:i]
			break
		}
	}
	p = strings.TrimPrefix(strings.TrimSpace(p), "./")
	if p == "" || strings.HasPrefix(p, "/") || strings.ContainsRune(p, 0) || strings.Contains(p, "\\") {
		return "", false
	}
	c := path.Clean(p)
	// Cleaning can expose white space at the end ("a/ /" becomes "a/ "),
	// which a second reading would trim: such a location names no file a
	// reviewer could mean, and refusing it keeps the reading stable.
	if c != strings.TrimSpace(c) || c == "." || c == ".." || strings.HasPrefix(c, "../") || c == ".git" || strings.HasPrefix(c, ".git/") {
		return "", false
	}
	return c, true
}

// FindingKey is how findings from different fresh reviewers are matched:
// by rule and location (the finding's location, or its first evidence
// location), never by the ids reviewers pick.
func FindingKey(f model.Finding) string {
	loc := f.Location
	if loc == "" && len(f.Evidence) > 0 {
		loc = f.Evidence[0].Location
	}
	if p, ok := LocationPath(loc); ok {
		loc = p
	}
	return strings.ToLower(strings.TrimSpace(f.Rule)) + "@" + loc
}

// Pass is what the early-stop policy remembers of one review pass.
type Pass struct {
	Head string `json:"head"`
	// Material are the keys of the findings the pass's decision accepted.
	Material []string `json:"material"`
	// ClaimedFixed are the keys the commit that produced Head claimed to
	// fix (empty for the initial head).
	ClaimedFixed []string `json:"claimed_fixed,omitempty"`
}

// Stop reasons (changes_remaining).
const (
	ReasonBudget         = "cycle_budget_exhausted"
	ReasonRepeated       = "repeated_finding"
	ReasonOscillation    = "oscillation"
	ReasonExpanding      = "expanding_findings"
	ReasonRepeatedFail   = "repeated_failed_attempt"
	ReasonValidationFail = "current_candidate_validation_failure"
)

// EarlyStop applies the design's early stops (section 2.9) to the passes so
// far, the newest last, and returns the changes_remaining reason or "":
//
//   - repeated_finding: a material finding of the newest pass has the key
//     of one the commit before it claimed to fix;
//   - oscillation: the newest material set equals the one two passes back
//     and differs from the one in between (A, B, A);
//   - expanding_findings: after a fix, the material set grew by two or
//     more findings.
func EarlyStop(passes []Pass) string {
	n := len(passes)
	if n < 2 {
		return ""
	}
	last, prev := passes[n-1], passes[n-2]
	claimed := set(last.ClaimedFixed)
	for _, k := range last.Material {
		if claimed[k] {
			return ReasonRepeated
		}
	}
	if n >= 3 && len(last.Material) > 0 && sameSet(last.Material, passes[n-3].Material) && !sameSet(last.Material, prev.Material) {
		return ReasonOscillation
	}
	if len(last.ClaimedFixed) > 0 && len(last.Material) >= len(prev.Material)+2 {
		return ReasonExpanding
	}
	return ""
}

// AttemptFacts is what the failure policy needs of one attempt.
type AttemptFacts struct {
	From    string // started_from_head
	Outcome string // committed, failed, interrupted
}

// RepeatedFailure says whether the last two attempts both failed from the
// same head: more of the same will not make progress.
func RepeatedFailure(attempts []AttemptFacts) bool {
	n := len(attempts)
	if n < 2 {
		return false
	}
	a, b := attempts[n-2], attempts[n-1]
	return a.Outcome == "failed" && b.Outcome == "failed" && a.From == b.From
}

// PublicationStatus maps a terminal state onto publication.status
// (contract rule 82). published is true only when the update_pr push was
// read back equal to the final head.
func PublicationStatus(policy, state, reason string, published bool) string {
	if policy != "update_pr" {
		return "not_applicable"
	}
	switch state {
	case "converged":
		if published {
			return "published"
		}
		return "failed"
	case "blocked":
		if reason == "remote_advanced" || reason == "publication_failed" {
			return "failed"
		}
	}
	return "withheld"
}

// OperatorAction is the one next step the terminal result names.
func OperatorAction(state, reason, policy, branch string, created int) string {
	switch state {
	case "converged":
		if policy == "update_pr" {
			return "review converged and the pull request head was updated; check acceptance against the new head before merging"
		}
		if created == 0 {
			return fmt.Sprintf("review converged with no new commits; %s is unchanged", branch)
		}
		return fmt.Sprintf("review converged; %d fix commit(s) are on %s, unpushed: check acceptance and push them when ready", created, branch)
	case "changes_remaining":
		switch reason {
		case ReasonBudget:
			return "the cycle budget is spent with findings left; read the unresolved findings and fix them by hand, or start a new invocation deliberately"
		case ReasonRepeated:
			return "a finding survived the commit that claimed to fix it; inspect that commit and the finding before another attempt"
		case ReasonOscillation:
			return "the findings oscillate between fixes; an operator must decide which outcome is wanted"
		case ReasonExpanding:
			return "each fix brought more findings; stop and re-examine the change before continuing"
		case ReasonRepeatedFail:
			return "two attempts from the same head failed; read the preserved attempts and their logs"
		case ReasonValidationFail:
			return "validation fails on the candidate and no attempt fixed it; fix it by hand using the preserved attempts and logs"
		}
	}
	switch reason {
	case "candidate_busy":
		return "another failpass loop holds this candidate; wait for it to return, then check the head it returned"
	case "candidate_integrity_failure":
		return "the candidate or its refs changed unexpectedly; nothing was repaired: inspect the branch, HEAD and the preserved attempts"
	case "checkpoint_mismatch":
		return "the checkpoint does not match live git; nothing was changed: reconcile by hand, or start a new invocation with a new id"
	case "missing_capability":
		return "a required capability is missing (a runnable fresh reviewer, a usable review, or a read-only mount); provide it, or record an in-agent override deliberately"
	case "missing_authority":
		return "the publication target or a remote-iteration grant does not match the authority; correct the invocation"
	case "insufficient_change_contract":
		return "the change contract cannot bound the fixes; complete it"
	case "reviewer_integrity_failure":
		return "the reviewer attempted to write; its pass was discarded and the state left as found: inspect it and the reviewer"
	case "validation_unavailable":
		return "required validation could not run; make the commands runnable (see the logs) and start again"
	case "base_drift":
		return "the comparison base kept moving; rebase or settle the base, then start again"
	case "remote_advanced":
		return "the remote head moved; reconcile the unpushed commits with the remote head by hand (nothing was overwritten)"
	case "publication_failed":
		return "publishing failed; the local commits are intact: push them by hand after checking the remote"
	case "scope_decision_required":
		return "a blocking finding needs a change outside the allowed scope; decide whether to widen the scope"
	case "operator_input_required":
		return "the review is not clean and nothing is left that the loop may fix; an operator must rule on the findings"
	}
	return "inspect the checkpoint and the candidate"
}

func set(xs []string) map[string]bool {
	m := make(map[string]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}

func sameSet(a, b []string) bool {
	sa, sb := set(a), set(b)
	if len(sa) != len(sb) {
		return false
	}
	for k := range sa {
		if !sb[k] {
			return false
		}
	}
	return true
}
