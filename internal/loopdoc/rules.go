package loopdoc

import "github.com/failpass/failpass/internal/jsonschema"

// The cross-field rules of each document, run only on documents that passed
// their schema, so the accessors' ok results are always true here; they are
// still checked where a zero value would mislead. Rule numbers refer to
// section 3 of the review-fix loop design; letters to the gaps of section 4
// that failpass closes under "strict." names.

var changesRemainingReasons = map[string]bool{
	"cycle_budget_exhausted": true, "repeated_finding": true, "oscillation": true,
	"expanding_findings": true, "repeated_failed_attempt": true, "current_candidate_validation_failure": true,
}

var blockedReasons = map[string]bool{
	"candidate_busy": true, "candidate_integrity_failure": true, "checkpoint_mismatch": true,
	"missing_capability": true, "missing_authority": true, "insufficient_change_contract": true,
	"reviewer_integrity_failure": true, "validation_unavailable": true, "base_drift": true,
	"remote_advanced": true, "publication_failed": true, "scope_decision_required": true,
	"operator_input_required": true,
}

func invocationRules(r *report, doc map[string]any) {
	// Rules 27-28: the reviewer override is explicit and only for overrides.
	mode, _ := str(doc, "review_execution", "mode")
	hasAuth := has(doc, "review_execution", "override_authorization")
	if mode == "in_agent_override" && !hasAuth {
		r.add("$.review_execution.override_authorization", "invocation.override_requires_authorization",
			"review_execution.mode in_agent_override requires a non-empty override_authorization naming who allowed it")
	}
	if mode == "fresh_subagent" && hasAuth {
		r.add("$.review_execution.override_authorization", "invocation.fresh_subagent_forbids_authorization",
			"review_execution.mode fresh_subagent must not carry override_authorization")
	}
	// Rules 29-31: the candidate's worktree is clean; ignored and tracked are free.
	for _, cat := range []string{"staged", "unstaged", "untracked"} {
		if len(list(doc, "candidate", "worktree", cat)) > 0 {
			r.add("$.candidate.worktree."+cat, "invocation.worktree_"+cat+"_must_be_empty",
				"the candidate worktree must be clean: %s must be empty", cat)
		}
	}
	// Rules 32-33: exactly one of source_binding and source_unavailable_reason.
	hasBinding := has(doc, "candidate", "source_binding")
	hasReason := has(doc, "candidate", "source_unavailable_reason")
	if hasBinding && hasReason {
		r.add("$.candidate.source_unavailable_reason", "invocation.source_binding_excludes_unavailable_reason",
			"candidate carries both source_binding and source_unavailable_reason; keep exactly one")
	}
	if !hasBinding && !hasReason {
		r.add("$.candidate", "invocation.source_binding_or_unavailable_reason",
			"candidate needs source_binding or source_unavailable_reason")
	}
	// Rules 34-37: what each publication policy requires and forbids.
	policy, _ := str(doc, "publication", "policy")
	hasPR := has(doc, "publication", "pull_request")
	switch policy {
	case "update_pr":
		if !hasPR {
			r.add("$.publication.pull_request", "invocation.update_pr_requires_pull_request",
				"publication.policy update_pr requires publication.pull_request (the exact push target)")
		}
		if !hasBinding {
			r.add("$.candidate.source_binding", "invocation.update_pr_requires_source_binding",
				"publication.policy update_pr requires candidate.source_binding")
		}
	case "local_commit":
		if hasPR {
			r.add("$.publication.pull_request", "invocation.local_commit_forbids_pull_request",
				"publication.policy local_commit must not carry publication.pull_request")
		}
		if len(list(doc, "publication", "remote_iteration_grants")) > 0 {
			r.add("$.publication.remote_iteration_grants", "invocation.local_commit_forbids_grants",
				"publication.policy local_commit makes no remote write: remote_iteration_grants must be empty")
		}
	}
	// Rules 38-39: both validation scopes are named.
	scopes := map[string]bool{}
	for _, v := range list(doc, "validation") {
		s, _ := str(v, "scope")
		scopes[s] = true
	}
	for _, s := range []string{"focused", "full"} {
		if !scopes[s] {
			r.add("$.validation", "invocation.validation_requires_"+s, "validation needs at least one entry with scope %s", s)
		}
	}
	// Gap (d): the push target agrees with the candidate it pushes.
	if hasPR {
		if want, ok := str(doc, "candidate", "source_binding", "observed_object_id"); ok {
			if got, _ := str(doc, "publication", "pull_request", "expected_old_head_sha"); got != want {
				r.add("$.publication.pull_request.expected_old_head_sha", "strict.expected_old_head_matches_source_binding",
					"must equal candidate.source_binding.observed_object_id %s (stricter than the peer)", want)
			}
		}
		want, _ := str(doc, "candidate", "comparison_base", "sha")
		if got, _ := str(doc, "publication", "pull_request", "base_sha"); got != want {
			r.add("$.publication.pull_request.base_sha", "strict.pull_request_base_matches_comparison_base",
				"must equal candidate.comparison_base.sha %s (stricter than the peer)", want)
		}
		headRepo, _ := str(doc, "publication", "pull_request", "head_repository")
		headRef, _ := str(doc, "publication", "pull_request", "head_ref")
		for i, g := range list(doc, "publication", "remote_iteration_grants") {
			p := jsonschema.IndexPath("$.publication.remote_iteration_grants", i)
			if repo, _ := str(g, "repository"); repo != headRepo {
				r.add(p+".repository", "strict.grant_matches_pull_request_target",
					"a remote iteration grant must target publication.pull_request.head_repository %s (stricter than the peer)", quote(headRepo))
			}
			if ref, _ := str(g, "ref"); ref != headRef {
				r.add(p+".ref", "strict.grant_matches_pull_request_target",
					"a remote iteration grant must target publication.pull_request.head_ref %s (stricter than the peer)", quote(headRef))
			}
		}
	}
}

func checkpointRules(r *report, doc map[string]any) {
	heads := strList(doc, "head_history")
	initial, _ := str(doc, "initial_head")
	current, _ := str(doc, "current_head")
	// Rules 56-57.
	if heads[0] != initial {
		r.add("$.head_history[0]", "checkpoint.head_history_starts_at_initial_head", "must equal initial_head %s", initial)
	}
	if heads[len(heads)-1] != current {
		r.add(jsonschema.IndexPath("$.head_history", len(heads)-1), "checkpoint.head_history_ends_at_current_head", "must equal current_head %s", current)
	}
	// Rules 59-62: every attempt spends a cycle; committed ones are the history.
	attempts := list(doc, "cycle_attempts")
	budget, _ := integer(doc, "original_cycle_budget")
	if len(attempts) > budget {
		r.add("$.cycle_attempts", "checkpoint.attempts_within_budget",
			"%d attempts exceed original_cycle_budget %d; every attempt spends a cycle whatever its outcome", len(attempts), budget)
	}
	var committed []string
	failed := 0
	for i, a := range attempts {
		switch out, _ := str(a, "outcome"); out {
		case "committed":
			h, ok := str(a, "resulting_head")
			if !ok {
				r.add(jsonschema.IndexPath("$.cycle_attempts", i)+".resulting_head", "checkpoint.committed_attempt_requires_resulting_head",
					"a committed attempt must record resulting_head")
			}
			// A missing head stays in the count (rule 61) but is not
			// compared again (rule 62): rule 60 already names it.
			committed = append(committed, h)
		case "failed", "interrupted":
			failed++
		}
	}
	if len(committed) != len(heads)-1 {
		r.add("$.head_history", "checkpoint.committed_attempts_match_head_history",
			"%d committed attempts but head_history adds %d heads after the initial one", len(committed), len(heads)-1)
	} else {
		for i, h := range committed {
			if h != "" && h != heads[i+1] {
				r.add(jsonschema.IndexPath("$.head_history", i+1), "checkpoint.committed_heads_match_head_history",
					"committed attempt %d produced %s, but head_history has %s here", i+1, h, heads[i+1])
			}
		}
	}
	// Rule 63.
	bases := list(doc, "base_revision_history")
	baseSHA, _ := str(doc, "comparison_base", "sha")
	if last, _ := str(bases[len(bases)-1], "sha"); last != baseSHA {
		r.add(jsonschema.IndexPath("$.base_revision_history", len(bases)-1)+".sha", "checkpoint.base_history_ends_at_comparison_base",
			"must equal comparison_base.sha %s", baseSHA)
	}
	// Rules 64-65.
	validationOutcomeRules(r, doc, "validation_outcomes", "checkpoint.")
	// Rule 66.
	if n := len(list(doc, "preserved_failed_attempts")); n != failed {
		r.add("$.preserved_failed_attempts", "checkpoint.preserved_attempts_match_failed_attempts",
			"%d preserved failed attempts, but %d cycle_attempts failed or were interrupted", n, failed)
	}
	// Rules 67-68.
	switch status, _ := str(doc, "source", "status"); status {
	case "unavailable":
		if !has(doc, "source", "unavailable_reason") {
			r.add("$.source.unavailable_reason", "checkpoint.source_unavailable_requires_reason", "source.status unavailable requires unavailable_reason")
		}
	case "bound":
		for _, f := range []string{"last_verified_head", "ahead_by", "behind_by"} {
			if !has(doc, "source", f) {
				r.add("$.source."+f, "checkpoint.source_bound_requires_head_and_counts", "source.status bound requires %s", f)
			}
		}
	}
	// Strict: the push mechanics follow the policy, as in the invocation
	// (rules 34 and 36).
	policy, _ := str(doc, "publication", "policy")
	hasTarget := has(doc, "publication", "pull_request")
	if policy == "update_pr" && !hasTarget {
		r.add("$.publication.pull_request", "strict.checkpoint_update_pr_requires_push_target",
			"publication.policy update_pr keeps its push target in publication.pull_request (stricter than the peer)")
	}
	if policy == "local_commit" && hasTarget {
		r.add("$.publication.pull_request", "strict.checkpoint_local_commit_forbids_push_target",
			"publication.policy local_commit has no push target (stricter than the peer)")
	}
	// Gaps (f), (g), (h).
	historyRepeatRules(r, doc)
	reviewBindingRules(r, doc)
	attemptOrderRules(r, doc, heads, initial)
	reviewSequenceRule(r, doc)
	scopes := map[string]bool{}
	for _, v := range list(doc, "validation_outcomes") {
		s, _ := str(v, "scope")
		scopes[s] = true
	}
	for _, s := range []string{"focused", "full"} {
		if !scopes[s] {
			r.add("$.validation_outcomes", "strict.validation_outcomes_cover_"+s,
				"validation_outcomes needs an entry with scope %s (stricter than the peer)", s)
		}
	}
}

// validationOutcomeRules is rules 64-65 for one validation collection. The
// peer checks them on the checkpoint's validation_outcomes; failpass applies
// the same shape rules to the terminal result's validation_summary under a
// strict name.
func validationOutcomeRules(r *report, doc map[string]any, key, prefix string) {
	suffix := ""
	if prefix == "strict." {
		suffix = " (stricter than the peer)"
	}
	for i, v := range list(doc, key) {
		p := jsonschema.IndexPath("$."+key, i)
		switch status, _ := str(v, "status"); status {
		case "passed", "failed":
			if !has(v, "result") {
				r.add(p+".result", prefix+"validation_result_required", "status %s requires result%s", status, suffix)
			}
		case "unavailable":
			if !has(v, "reason") {
				r.add(p+".reason", prefix+"validation_reason_required", "status unavailable requires reason%s", suffix)
			}
		}
	}
}

// historyRepeatRules is gap (f): a history entry is appended only when the
// head or base actually changed, so no identity appears twice in a row.
func historyRepeatRules(r *report, doc map[string]any) {
	heads := list(doc, "head_history")
	for i := 1; i < len(heads); i++ {
		if jsonschema.Equal(heads[i], heads[i-1]) {
			r.add(jsonschema.IndexPath("$.head_history", i), "strict.head_history_no_repeat",
				"repeats the previous head; a head is appended only when it changed (stricter than the peer)")
		}
	}
	bases := list(doc, "base_revision_history")
	for i := 1; i < len(bases); i++ {
		if jsonschema.Equal(bases[i], bases[i-1]) {
			r.add(jsonschema.IndexPath("$.base_revision_history", i), "strict.base_history_no_repeat",
				"repeats the previous base; a base is appended only when it changed (stricter than the peer)")
		}
	}
}

// reviewBindingRules: a review pass judged a head and base the invocation
// actually had, so each record's head_sha is in head_history and its
// comparison_base_sha in base_revision_history.
func reviewBindingRules(r *report, doc map[string]any) {
	heads, bases := map[string]bool{}, map[string]bool{}
	for _, h := range strList(doc, "head_history") {
		heads[h] = true
	}
	for _, b := range list(doc, "base_revision_history") {
		bases[str0(b, "sha")] = true
	}
	for i, rec := range list(doc, "review_records") {
		p := jsonschema.IndexPath("$.review_records", i)
		if h, _ := str(rec, "head_sha"); !heads[h] {
			r.add(p+".head_sha", "strict.review_head_in_head_history",
				"reviewed head %s is not in head_history (stricter than the peer)", h)
		}
		if b, _ := str(rec, "comparison_base_sha"); !bases[b] {
			r.add(p+".comparison_base_sha", "strict.review_base_in_base_history",
				"reviewed base %s is not in base_revision_history (stricter than the peer)", b)
		}
	}
}

// attemptOrderRules is gap (g) for cycle attempts: sequences are 1..n in
// order, and each attempt starts from the head current when it began.
func attemptOrderRules(r *report, doc map[string]any, heads []string, initial string) {
	cur := initial
	for i, a := range list(doc, "cycle_attempts") {
		p := jsonschema.IndexPath("$.cycle_attempts", i)
		if seq, _ := integer(a, "sequence"); seq != i+1 {
			r.add(p+".sequence", "strict.attempt_sequence_contiguous",
				"attempt sequences must run 1..n in order: want %d, got %d (stricter than the peer)", i+1, seq)
		}
		if from, _ := str(a, "started_from_head"); cur != "" && from != cur {
			r.add(p+".started_from_head", "strict.attempt_starts_from_current_head",
				"must be %s, the head current when the attempt began (stricter than the peer)", cur)
		}
		if out, _ := str(a, "outcome"); out == "committed" {
			// Unknown when rule 60 is broken: later starts are not judged.
			cur, _ = str(a, "resulting_head")
		}
	}
}

// reviewSequenceRule is gap (g) for review records: sequences strictly increase.
func reviewSequenceRule(r *report, doc map[string]any) {
	prev := 0
	for i, rec := range list(doc, "review_records") {
		seq, _ := integer(rec, "sequence")
		if i > 0 && seq <= prev {
			r.add(jsonschema.IndexPath("$.review_records", i)+".sequence", "strict.review_sequence_increasing",
				"review record sequences must strictly increase: %d follows %d (stricter than the peer)", seq, prev)
		}
		prev = seq
	}
}

func terminalRules(r *report, doc map[string]any) {
	state, _ := str(doc, "terminal_state")
	reason, hasReason := str(doc, "reason")
	// Rule 80.
	switch state {
	case "converged":
		if hasReason {
			r.add("$.reason", "terminal.converged_forbids_reason", "a converged result carries no reason")
		}
	case "changes_remaining":
		if !changesRemainingReasons[reason] {
			r.add("$.reason", "terminal.changes_remaining_requires_reason",
				"changes_remaining needs one of cycle_budget_exhausted, repeated_finding, oscillation, expanding_findings, repeated_failed_attempt, current_candidate_validation_failure; got %s", reasonText(reason, hasReason))
		}
	case "blocked":
		if !blockedReasons[reason] {
			r.add("$.reason", "terminal.blocked_requires_reason",
				"blocked needs one of the thirteen blocked reasons; got %s", reasonText(reason, hasReason))
		}
	}
	// Rule 81.
	orig, _ := integer(doc, "budget", "original_max_fix_cycles")
	consumed, _ := integer(doc, "budget", "consumed_cycles")
	remaining, _ := integer(doc, "budget", "remaining_cycles")
	if consumed+remaining != orig {
		r.add("$.budget", "terminal.budget_adds_up",
			"consumed_cycles %d + remaining_cycles %d must equal original_max_fix_cycles %d", consumed, remaining, orig)
	}
	// Rule 82.
	policy, _ := str(doc, "publication", "policy")
	status, _ := str(doc, "publication", "status")
	want := ""
	switch {
	case policy == "local_commit":
		want = "not_applicable"
	case state == "converged":
		want = "published"
	case state == "changes_remaining":
		want = "withheld"
	case state == "blocked" && (reason == "remote_advanced" || reason == "publication_failed"):
		want = "failed"
	case state == "blocked":
		want = "withheld"
	}
	if want != "" && status != want {
		r.add("$.publication.status", "terminal.publication_status_matches_state",
			"under %s a %s result must have publication.status %s, got %s", policy, state, want, status)
	}
	// Rules 83-85.
	headInitial, _ := str(doc, "head", "initial")
	headFinal, _ := str(doc, "head", "final")
	unpushed := list(doc, "unpushed_commits")
	if headInitial != headFinal && status != "published" && len(unpushed) == 0 {
		r.add("$.unpushed_commits", "terminal.unpublished_head_requires_unpushed_commits",
			"the head moved and nothing was published, so unpushed_commits must list the new commits")
	}
	if status == "published" && len(unpushed) > 0 {
		r.add("$.unpushed_commits", "terminal.published_forbids_unpushed_commits", "a published result has no unpushed commits")
	}
	baseInitial, _ := field(doc, "comparison_base", "initial")
	baseFinal, _ := field(doc, "comparison_base", "final")
	if ack, _ := field(doc, "acceptance_reconciliation_required"); ack != true &&
		(headInitial != headFinal || !jsonschema.Equal(baseInitial, baseFinal)) {
		r.add("$.acceptance_reconciliation_required", "terminal.acceptance_reconciliation_required",
			"must be true: the head or the comparison base (ref or sha) changed during the invocation")
	}
	// Rule 86.
	heads := strList(doc, "head_history")
	if heads[0] != headInitial {
		r.add("$.head_history[0]", "terminal.head_history_starts_at_initial_head", "must equal head.initial %s", headInitial)
	}
	if heads[len(heads)-1] != headFinal {
		r.add(jsonschema.IndexPath("$.head_history", len(heads)-1), "terminal.head_history_ends_at_final_head", "must equal head.final %s", headFinal)
	}
	bases := list(doc, "base_revision_history")
	if first, _ := str(bases[0], "sha"); first != str0(baseInitial, "sha") {
		r.add("$.base_revision_history[0].sha", "terminal.base_history_starts_at_initial_base",
			"must equal comparison_base.initial.sha %s", str0(baseInitial, "sha"))
	}
	if last, _ := str(bases[len(bases)-1], "sha"); last != str0(baseFinal, "sha") {
		r.add(jsonschema.IndexPath("$.base_revision_history", len(bases)-1)+".sha", "terminal.base_history_ends_at_final_base",
			"must equal comparison_base.final.sha %s", str0(baseFinal, "sha"))
	}
	// Rule 87.
	created := strList(doc, "created_commits")
	if !equalStrings(created, heads[1:]) {
		r.add("$.created_commits", "terminal.created_commits_match_head_history",
			"must equal head_history without its first entry, in order")
	}
	// Rule 88.
	createdSet := map[string]bool{}
	for _, c := range created {
		createdSet[c] = true
	}
	for i, d := range list(doc, "finding_dispositions") {
		p := jsonschema.IndexPath("$.finding_dispositions", i)
		disp, _ := str(d, "disposition")
		fix, hasFix := str(d, "fix_commit_sha")
		if disp == "selected" && !hasFix {
			r.add(p+".fix_commit_sha", "terminal.selected_requires_fix_commit", "a selected finding names the commit that fixed it")
		}
		if disp == "declined" && hasFix {
			r.add(p+".fix_commit_sha", "terminal.declined_forbids_fix_commit", "a declined finding has no fix commit")
		}
		if hasFix && !createdSet[fix] {
			r.add(p+".fix_commit_sha", "terminal.fix_commit_in_created_commits", "%s is not one of created_commits", fix)
		}
	}
	// Rule 89.
	switch src, _ := str(doc, "source", "status"); src {
	case "unavailable":
		if !has(doc, "source", "unavailable_reason") {
			r.add("$.source.unavailable_reason", "terminal.source_unavailable_requires_reason", "source.status unavailable requires unavailable_reason")
		}
	case "bound":
		for _, f := range []string{"initial_head", "final_head"} {
			if !has(doc, "source", f) {
				r.add("$.source."+f, "terminal.source_bound_requires_heads", "source.status bound requires %s", f)
			}
		}
		for _, f := range []string{"ahead_by", "behind_by"} {
			if !has(doc, "source", f) {
				r.add("$.source."+f, "terminal.source_bound_requires_counts", "source.status bound requires %s", f)
			}
		}
	}
	// Rule 90: a converged result carries its own evidence.
	if state == "converged" {
		convergedEvidenceRules(r, doc, headFinal, str0(baseFinal, "sha"))
	}
	// Gaps (a), (c), (e), (f), (g) and the validation shape rules.
	if reason == "cycle_budget_exhausted" && remaining != 0 {
		r.add("$.budget.remaining_cycles", "strict.cycle_budget_exhausted_requires_zero_remaining",
			"cycle_budget_exhausted with %d cycles remaining (stricter than the peer)", remaining)
	}
	if preserved := len(list(doc, "preserved_failed_attempts")); consumed != len(created)+preserved {
		r.add("$.budget.consumed_cycles", "strict.consumed_cycles_match_attempts",
			"every spent cycle either created a commit or left a preserved failed attempt: want %d created + %d preserved = %d, got %d (stricter than the peer)",
			len(created), preserved, len(created)+preserved, consumed)
	}
	publicationStrictRules(r, doc, policy, status, headFinal)
	historyRepeatRules(r, doc)
	reviewBindingRules(r, doc)
	reviewSequenceRule(r, doc)
	validationOutcomeRules(r, doc, "validation_summary", "strict.")
}

func convergedEvidenceRules(r *report, doc map[string]any, headFinal, baseFinal string) {
	scopes := map[string]bool{}
	for i, v := range list(doc, "validation_summary") {
		s, _ := str(v, "scope")
		scopes[s] = true
		if st, _ := str(v, "status"); st != "passed" {
			r.add(jsonschema.IndexPath("$.validation_summary", i)+".status", "terminal.converged_requires_passed_validation",
				"a converged result needs every required validation passed, got %s", st)
		}
	}
	for _, s := range []string{"focused", "full"} {
		if !scopes[s] {
			r.add("$.validation_summary", "terminal.converged_requires_validation_scopes",
				"a converged result needs a passed %s validation", s)
		}
	}
	final := 0
	for i, rec := range list(doc, "review_records") {
		p := jsonschema.IndexPath("$.review_records", i)
		if len(list(rec, "mutation_attempts")) > 0 {
			r.add(p+".mutation_attempts", "terminal.converged_forbids_mutation_attempts",
				"an attempted reviewer mutation on any pass rules out convergence")
		}
		h, _ := str(rec, "head_sha")
		b, _ := str(rec, "comparison_base_sha")
		if h != headFinal || b != baseFinal {
			continue
		}
		final++
		if v, _ := str(rec, "aggregate_verdict"); v != "clean" {
			r.add(p+".aggregate_verdict", "terminal.converged_requires_clean_final_review",
				"the review of the final head and base must be clean, got %s", v)
		}
		if w, _ := str(rec, "write_isolation"); w != "enforced" {
			r.add(p+".write_isolation", "terminal.converged_requires_enforced_isolation",
				"the review of the final head and base needs enforced write isolation, got %s", w)
		}
	}
	if final == 0 {
		r.add("$.review_records", "terminal.converged_requires_final_review",
			"no review record is bound to head.final %s and comparison_base.final.sha %s", headFinal, baseFinal)
	}
}

// publicationStrictRules is gap (e): the publication fields say what
// happened on the remote. local_commit never touches a remote; a published
// result left the remote exactly at the final head.
func publicationStrictRules(r *report, doc map[string]any, policy, status, headFinal string) {
	exposed, _ := field(doc, "publication", "non_converged_exposure")
	if policy == "local_commit" {
		if exposed == true {
			r.add("$.publication.non_converged_exposure", "strict.local_commit_forbids_exposure",
				"local_commit makes no remote write, so it cannot expose a non-converged head (stricter than the peer)")
		}
		for _, f := range []string{"remote_head_before", "remote_head_after"} {
			if has(doc, "publication", f) {
				r.add("$.publication."+f, "strict.local_commit_forbids_remote_heads",
					"local_commit publishes nothing, so it records no remote head (stricter than the peer)")
			}
		}
	}
	if status == "published" {
		if !has(doc, "publication", "remote_head_before") {
			r.add("$.publication.remote_head_before", "strict.published_requires_remote_heads",
				"a published result records the expected old remote head (stricter than the peer)")
		}
		if after, ok := str(doc, "publication", "remote_head_after"); !ok {
			r.add("$.publication.remote_head_after", "strict.published_requires_remote_heads",
				"a published result records the remote head it read back (stricter than the peer)")
		} else if after != headFinal {
			r.add("$.publication.remote_head_after", "strict.published_remote_head_is_final_head",
				"a published remote head must be head.final %s, got %s (stricter than the peer)", headFinal, after)
		}
	}
}

func reasonText(reason string, ok bool) string {
	if !ok {
		return "no reason"
	}
	return quote(reason)
}

func str0(v any, key string) string {
	s, _ := str(v, key)
	return s
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
