package loopdoc

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/failpass/failpass/internal/jsonschema"
)

// The cross-document checks tie adjacent documents of one invocation
// together (section 2.14): invocation → checkpoint, checkpoint → terminal
// result. Both functions check the same seven identities (invocation ID,
// repository, branch, original budget, publication policy, initial head,
// initial base SHA) plus the optional pull-request identity, so the
// invocation and the terminal result agree transitively. Like the peer's
// (rule 110) they run on the documents as given, without schema validation
// first, and never panic on a missing or mistyped field: a missing identity
// is a mismatch. Paths name the node in the later document.

// identity is one field compared across two documents: where it lives in
// each, the rule name, and the path reported.
type identity struct {
	rule        string
	earlier     []string // keys in the earlier document
	later       []string // keys in the later document
	earlierName string
	laterPath   string
}

// CheckCheckpointAgainstInvocation checks a checkpoint against the
// invocation it derives from (rules 92-99, plus failpass's strict checks
// of the push target and the review independence mode).
func CheckCheckpointAgainstInvocation(inv, cp map[string]any) []Violation {
	r := &report{}
	ids := []identity{
		{"cross.invocation_id", []string{"invocation_id"}, []string{"invocation_id"}, "invocation_id", "$.invocation_id"},
		{"cross.repository", []string{"repository", "identity"}, []string{"repository", "identity"}, "repository.identity", "$.repository.identity"},
		{"cross.repository", []string{"repository", "git_common_directory"}, []string{"repository", "git_common_directory"}, "repository.git_common_directory", "$.repository.git_common_directory"},
		{"cross.branch", []string{"candidate", "branch"}, []string{"branch"}, "candidate.branch", "$.branch"},
		{"cross.original_budget", []string{"fix_cycle_budget", "max_fix_cycles"}, []string{"original_cycle_budget"}, "fix_cycle_budget.max_fix_cycles", "$.original_cycle_budget"},
		{"cross.publication_policy", []string{"publication", "policy"}, []string{"publication", "policy"}, "publication.policy", "$.publication.policy"},
		{"cross.initial_head", []string{"candidate", "head_sha"}, []string{"initial_head"}, "candidate.head_sha", "$.initial_head"},
	}
	for _, id := range ids {
		compareIdentity(r, id, inv, cp, "invocation")
	}
	// Initial base: only the SHA, the ref may be spelled differently (rule 95).
	want, wok := str(inv, "candidate", "comparison_base", "sha")
	got, gok := firstBaseSHA(cp)
	mismatch(r, wok, gok, want, got, "$.base_revision_history[0].sha", "cross.initial_base",
		"the invocation's candidate.comparison_base.sha")
	pullRequestIdentity(r, inv, []string{"candidate", "pull_request"}, cp, "invocation's candidate.pull_request")

	// Strict: the checkpoint's push mechanics are the invocation's.
	if ipr, ok := field(inv, "publication", "pull_request"); ok {
		if cpr, ok := field(cp, "publication", "pull_request"); ok {
			for _, f := range []string{"head_repository", "head_ref", "base_ref"} {
				a, aok := str(ipr, f)
				b, bok := str(cpr, f)
				mismatch(r, aok, bok, a, b, "$.publication.pull_request."+f, "strict.cross_publication_target",
					"the invocation's publication.pull_request."+f+" (stricter than the peer)")
			}
		}
	}
	// Strict: every review pass ran in the mode the invocation recorded.
	if mode, ok := str(inv, "review_execution", "mode"); ok {
		for i, rec := range list(cp, "review_records") {
			if got, gok := str(rec, "review_independence"); gok && got != mode {
				r.add(jsonschema.IndexPath("$.review_records", i)+".review_independence", "strict.cross_review_independence",
					"must be %s as the invocation's review_execution.mode says, got %s (stricter than the peer)", mode, quote(got))
			}
		}
	}
	return r.out
}

// CheckTerminalAgainstCheckpoint checks a terminal result against the
// invocation's last checkpoint (rules 100-109, plus gap (b): the histories,
// review records and preserved attempts are the checkpoint's).
func CheckTerminalAgainstCheckpoint(cp, tr map[string]any) []Violation {
	r := &report{}
	// Rule 100: cycle accounting reconstructed from the checkpoint (rule 69);
	// the original budget is the identity cross.original_budget below.
	orig, origOK := integer(cp, "original_cycle_budget")
	attempts, attemptsOK := field(cp, "cycle_attempts")
	al, isList := attempts.([]any)
	consumed := len(al)
	acct := []struct {
		key  string
		want int
		ok   bool
	}{
		{"consumed_cycles", consumed, attemptsOK && isList},
		{"remaining_cycles", orig - consumed, origOK && attemptsOK && isList},
	}
	for _, a := range acct {
		got, gok := integer(tr, "budget", a.key)
		p := "$.budget." + a.key
		switch {
		case !a.ok:
			r.add(p, "cross.budget", "the checkpoint has no usable original_cycle_budget and cycle_attempts to reconstruct it from")
		case !gok:
			r.add(p, "cross.budget", "missing or not an integer; the checkpoint reconstructs %d", a.want)
		case got != a.want:
			r.add(p, "cross.budget", "must be %d as reconstructed from the checkpoint, got %d", a.want, got)
		}
	}
	ids := []identity{
		{"cross.invocation_id", []string{"invocation_id"}, []string{"invocation_id"}, "invocation_id", "$.invocation_id"},
		{"cross.repository", []string{"repository", "identity"}, []string{"repository", "identity"}, "repository.identity", "$.repository.identity"},
		{"cross.repository", []string{"repository", "git_common_directory"}, []string{"repository", "git_common_directory"}, "repository.git_common_directory", "$.repository.git_common_directory"},
		{"cross.branch", []string{"branch"}, []string{"branch"}, "branch", "$.branch"},
		{"cross.original_budget", []string{"original_cycle_budget"}, []string{"budget", "original_max_fix_cycles"}, "original_cycle_budget", "$.budget.original_max_fix_cycles"},
		{"cross.publication_policy", []string{"publication", "policy"}, []string{"publication", "policy"}, "publication.policy", "$.publication.policy"},
		{"cross.initial_head", []string{"initial_head"}, []string{"head", "initial"}, "initial_head", "$.head.initial"},
		{"cross.final_head", []string{"current_head"}, []string{"head", "final"}, "current_head", "$.head.final"},
		{"cross.final_base", []string{"comparison_base", "sha"}, []string{"comparison_base", "final", "sha"}, "comparison_base.sha", "$.comparison_base.final.sha"},
	}
	for _, id := range ids {
		compareIdentity(r, id, cp, tr, "checkpoint")
	}
	want, wok := firstBaseSHA(cp)
	got, gok := str(tr, "comparison_base", "initial", "sha")
	mismatch(r, wok, gok, want, got, "$.comparison_base.initial.sha", "cross.initial_base",
		"the checkpoint's base_revision_history[0].sha")
	pullRequestIdentity(r, cp, []string{"pull_request"}, tr, "checkpoint's pull_request")

	// Gap (b): the terminal result repeats the checkpoint's records.
	for _, k := range []string{"head_history", "base_revision_history", "review_records", "preserved_failed_attempts"} {
		a, aok := field(cp, k)
		b, bok := field(tr, k)
		if aok && bok && jsonschema.Equal(a, b) {
			continue
		}
		r.add("$."+k, "strict.cross_"+k, "must equal the checkpoint's %s (stricter than the peer)", k)
	}
	return r.out
}

func compareIdentity(r *report, id identity, earlier, later map[string]any, earlierDoc string) {
	a, aok := field(earlier, id.earlier...)
	b, bok := field(later, id.later...)
	if aok && bok && scalarEqual(a, b) {
		return
	}
	if aok && bok {
		r.add(id.laterPath, id.rule, "must equal the %s's %s %s, got %s", earlierDoc, id.earlierName, render(a), render(b))
		return
	}
	mismatch(r, aok, bok, render(a), render(b), id.laterPath, id.rule, "the "+earlierDoc+"'s "+id.earlierName)
}

// scalarEqual compares identity values; numbers by value (3 == 3.0 is not
// at issue here because the schema rejects 3.0, but a cross check runs on
// unchecked documents and must not call 3 and 3.0 different identities in
// one place and equal in another).
func scalarEqual(a, b any) bool {
	switch a.(type) {
	case map[string]any, []any:
		return false
	}
	return jsonschema.Equal(a, b)
}

func mismatch(r *report, wok, gok bool, want, got, path, rule, what string) {
	switch {
	case !wok:
		r.add(path, rule, "%s is missing or not a plain value", what)
	case !gok:
		r.add(path, rule, "missing or not a plain value; must equal %s %s", what, want)
	case want != got:
		r.add(path, rule, "must equal %s %s, got %s", what, want, got)
	}
}

func render(v any) string {
	switch v := v.(type) {
	case string:
		return quote(v)
	case json.Number:
		return string(v)
	case bool:
		return strconv.FormatBool(v)
	case nil:
		return "null"
	}
	return fmt.Sprintf("%s", jsonschema.TypeName(v))
}

func firstBaseSHA(doc map[string]any) (string, bool) {
	l := list(doc, "base_revision_history")
	if len(l) == 0 {
		return "", false
	}
	return str(l[0], "sha")
}

// pullRequestIdentity is rules 99 and 109: where both adjacent documents
// carry a pull-request identity, repository and number agree; absence on
// either side is not a mismatch.
func pullRequestIdentity(r *report, earlier map[string]any, keys []string, later map[string]any, what string) {
	a, aok := field(earlier, keys...)
	b, bok := field(later, "pull_request")
	if !aok || !bok {
		return
	}
	for _, f := range []string{"repository", "number"} {
		av, aok := field(a, f)
		bv, bok := field(b, f)
		if aok && bok && scalarEqual(av, bv) {
			continue
		}
		if aok && bok {
			r.add("$.pull_request."+f, "cross.pull_request", "must equal the %s.%s %s, got %s", what, f, render(av), render(bv))
			continue
		}
		mismatch(r, aok, bok, render(av), render(bv), "$.pull_request."+f, "cross.pull_request", "the "+what+"."+f)
	}
}
