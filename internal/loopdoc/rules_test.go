package loopdoc

import (
	"strings"
	"testing"
)

// SHAs of the examples, for mutations that must stay consistent.
const (
	lcConv0 = `"215755f652d2292ae8a463067561c0a26e32884c"`
	lcConv1 = `"c74f0b5142ccacb786a7803f4db3a190c310dba2"`
	lcCR1   = `"b4b185f2df3a9c024aebd7209e13835808806e62"`
	lcCR0   = `"72ee65f89d779af1f260a989048b382f0867de1c"`
	upConv0 = `"42b092552a76d3902cb3dcbe746f4e05cc76b496"`
	upConv1 = `"119a5e98d42d4d4ef056e5a099e361d8d702527c"`
	upConv2 = `"8d38e2e1349072f3323a5eb6d84d1ae236d5b197"`
	upCR0   = `"da3377b11bfbd9ee007c6ef427ee59bb2a3fdc5c"`
	upCR1   = `"6d5a850693b59c7aa8ac636215cb1085859801a4"`
	base0   = `"a60a9112e177d010cecf18e99df85670bdd4722c"`
	base1   = `"3cf2496aa406411b15d684dbd119b7b6f1b72b08"`
	other   = `"0123456789abcdef0123456789abcdef01234567"`
)

// ruleCase is one row of a per-rule table: a valid example, edits, and the
// exact set of rules the edited document breaks (none: it must stay valid,
// which is the "satisfies the rule" half of a rule's pair).
type ruleCase struct {
	name string
	base string
	ops  []op
	want []string
	path string // when set, some violation must name this path
}

func runRuleCases(t *testing.T, cases []ruleCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			doc := example(t, c.base)
			apply(t, doc, c.ops...)
			kind := kindOf(c.base)
			vs, err := ValidateDocument(kind, doc)
			if err != nil {
				t.Fatal(err)
			}
			if !sameRules(vs, c.want) {
				t.Fatalf("Validate(%s with %v) = %v, want rules %v", c.base, c.ops, vs, c.want)
			}
			if c.path != "" && !hasPath(vs, c.path) {
				t.Errorf("Validate(%s with %v) = %v, want a violation at %s", c.base, c.ops, vs, c.path)
			}
		})
	}
}

// TestSchemaEngine covers rules 1-8: the schema subset's semantics.
func TestSchemaEngine(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{"rule2/one_error_per_mistyped_node", invLocal, []op{set("repository", `"x"`)}, []string{"schema.type"}, "$.repository"},
		{"rule2/mistyped_string", invLocal, []op{set("invocation_id", `5`)}, []string{"schema.type"}, "$.invocation_id"},
		{"rule3/integer_accepts_integer", invLocal, []op{set("fix_cycle_budget.max_fix_cycles", `10`)}, nil, ""},
		{"rule3/integer_rejects_3.0", invLocal, []op{set("fix_cycle_budget.max_fix_cycles", `3.0`)}, []string{"schema.type"}, "$.fix_cycle_budget.max_fix_cycles"},
		{"rule3/integer_rejects_3.5", invLocal, []op{set("fix_cycle_budget.max_fix_cycles", `3.5`)}, []string{"schema.type"}, ""},
		{"rule3/integer_rejects_3e0", invLocal, []op{set("fix_cycle_budget.max_fix_cycles", `3e0`)}, []string{"schema.type"}, ""},
		{"rule3/integer_rejects_boolean", invLocal, []op{set("fix_cycle_budget.max_fix_cycles", `true`)}, []string{"schema.type"}, ""},
		{"rule3/integer_rejects_string", invLocal, []op{set("fix_cycle_budget.max_fix_cycles", `"3"`)}, []string{"schema.type"}, ""},
		{"rule4/const_true_rejects_1", invLocal, []op{set("candidate.all_changes_committed", `1`)}, []string{"schema.const"}, "$.candidate.all_changes_committed"},
		{"rule4/const_true_rejects_false", invLocal, []op{set("candidate.diff.complete", `false`)}, []string{"schema.const"}, ""},
		{"rule4/const_schema_version", invLocal, []op{set("schema_version", `"1.1"`)}, []string{"schema.const"}, "$.schema_version"},
		{"rule4/const_schema_version_number", invLocal, []op{set("schema_version", `1.0`)}, []string{"schema.const"}, ""},
		{"rule5/minLength_empty", invLocal, []op{set("invocation_id", `""`)}, []string{"schema.minLength"}, ""},
		{"rule5/minLength_one_code_point", invLocal, []op{set("invocation_id", `"\u00e9"`)}, nil, ""},
		{"rule5/minLength_astral_code_point", invLocal, []op{set("invocation_id", `"\ud83d\ude00"`)}, nil, ""},
		{"rule6/sha_uppercase", invLocal, []op{set("candidate.head_sha", `"215755F652D2292AE8A463067561C0A26E32884C"`)}, []string{"schema.pattern"}, "$.candidate.head_sha"},
		{"rule6/sha_trailing_newline", invLocal, []op{set("candidate.head_sha", `"215755f652d2292ae8a463067561c0a26e32884c\n"`)}, []string{"schema.pattern"}, ""},
		{"rule6/sha_39", invLocal, []op{set("candidate.head_sha", `"215755f652d2292ae8a463067561c0a26e32884"`)}, []string{"schema.pattern"}, ""},
		{"rule6/sha_41", invLocal, []op{set("candidate.head_sha", `"215755f652d2292ae8a463067561c0a26e32884cc"`)}, []string{"schema.pattern"}, ""},
		{"rule7/required_nested", invLocal, []op{del("candidate.diff.content")}, []string{"schema.required"}, "$.candidate.diff.content"},
		{"rule7/unknown_nested", invLocal, []op{set("candidate.diff.extra", `1`)}, []string{"schema.additionalProperties"}, "$.candidate.diff.extra"},
		{"rule7/unknown_odd_key_quoted", invLocal, []op{set("candidate.diff", `{"format":"unified_diff","complete":true,"content":"x","a.b\n":1}`)}, []string{"schema.additionalProperties"}, `$.candidate.diff["a.b\n"]`},
		{"rule7/unknown_top", invLocal, []op{set("review_only", `true`)}, []string{"schema.additionalProperties"}, "$.review_only"},
		{"rule8/semantic_skipped_on_schema_error", invLocal, []op{set("invocation_id", `""`), set("candidate.worktree.staged", `["a.go"]`)}, []string{"schema.minLength"}, ""},
	})
}

// TestRequiredFields covers rules 9, 41 and 70: every required top-level
// field, deleted alone, is the one error.
func TestRequiredFields(t *testing.T) {
	for _, base := range []string{invLocal, cpLocal, trLocal} {
		doc := example(t, base)
		for _, k := range sortedKeys(doc) {
			required := false
			for _, r := range compiledSchemas()[kindOf(base)].Required() {
				required = required || r == k
			}
			if !required {
				continue
			}
			runRuleCases(t, []ruleCase{{"required/" + string(kindOf(base)) + "/" + k, base, []op{del(k)}, []string{"schema.required"}, "$." + k}})
		}
	}
}

// TestInvocationSchemaRules covers rules 10-26.
func TestInvocationSchemaRules(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{"rule11/repository_identity", invLocal, []op{set("repository.identity", `""`)}, []string{"schema.minLength"}, ""},
		{"rule11/git_common_directory", invLocal, []op{del("repository.git_common_directory")}, []string{"schema.required"}, ""},
		{"rule12/comparison_base_ref", invLocal, []op{set("candidate.comparison_base.ref", `""`)}, []string{"schema.minLength"}, ""},
		{"rule12/branch", invLocal, []op{del("candidate.branch")}, []string{"schema.required"}, ""},
		{"rule13/diff_format", invLocal, []op{set("candidate.diff.format", `"git"`)}, []string{"schema.const"}, ""},
		{"rule13/diff_content", invLocal, []op{set("candidate.diff.content", `""`)}, []string{"schema.minLength"}, ""},
		{"rule14/worktree_list", invLocal, []op{del("candidate.worktree.ignored")}, []string{"schema.required"}, ""},
		{"rule14/worktree_strings", invLocal, []op{set("candidate.worktree.tracked", `[1]`)}, []string{"schema.type"}, "$.candidate.worktree.tracked[0]"},
		{"rule15/all_changes_committed", invLocal, []op{set("candidate.all_changes_committed", `false`)}, []string{"schema.const"}, ""},
		{"rule16/pull_request_number", invUpdate, []op{set("candidate.pull_request.number", `0`)}, []string{"schema.minimum"}, ""},
		{"rule16/pull_request_valid", invLocal, []op{set("candidate.pull_request", `{"repository":"r","number":1}`)}, nil, ""},
		{"rule17/source_binding_object_id", invUpdate, []op{set("candidate.source_binding.observed_object_id", `"main"`)}, []string{"schema.pattern"}, ""},
		{"rule17/source_binding_remote_url", invUpdate, []op{del("candidate.source_binding.remote_url")}, []string{"schema.required"}, ""},
		{"rule18/source_unavailable_reason", invLocal, []op{set("candidate.source_unavailable_reason", `""`)}, []string{"schema.minLength"}, ""},
		{"rule19/acceptance_criteria", invLocal, []op{set("change_contract.acceptance_criteria", `[]`)}, []string{"schema.minItems"}, ""},
		{"rule19/non_goals_may_be_empty", invLocal, []op{set("change_contract.non_goals", `[]`)}, nil, ""},
		{"rule19/non_goals_non_empty_strings", invLocal, []op{set("change_contract.non_goals", `[""]`)}, []string{"schema.minLength"}, ""},
		{"rule19/allowed_remediation_scope", invLocal, []op{del("change_contract.allowed_remediation_scope")}, []string{"schema.required"}, ""},
		{"rule20/source_entry_location", invLocal, []op{del("change_contract.sources.named_documents[0].location")}, []string{"schema.required"}, ""},
		{"rule20/source_entry_summary_type", invLocal, []op{set("change_contract.sources.named_documents[0].summary", `5`)}, []string{"schema.type"}, ""},
		{"rule20/sources_list", invLocal, []op{del("change_contract.sources.nearby_patterns")}, []string{"schema.required"}, ""},
		{"rule21/mode_enum", invLocal, []op{set("review_execution.mode", `"review_only"`)}, []string{"schema.enum"}, ""},
		{"rule21/review_only_key_rejected", invLocal, []op{set("review_execution.review_only", `true`)}, []string{"schema.additionalProperties"}, ""},
		{"rule22/budget_zero", invLocal, []op{set("fix_cycle_budget.max_fix_cycles", `0`)}, []string{"schema.minimum"}, ""},
		{"rule22/budget_negative", invLocal, []op{set("fix_cycle_budget.max_fix_cycles", `-1`)}, []string{"schema.minimum"}, ""},
		{"rule22/budget_eleven", invLocal, []op{set("fix_cycle_budget.max_fix_cycles", `11`)}, []string{"schema.maximum"}, ""},
		{"rule22/budget_missing", invLocal, []op{del("fix_cycle_budget.max_fix_cycles")}, []string{"schema.required"}, ""},
		{"rule22/budget_huge", invLocal, []op{set("fix_cycle_budget.max_fix_cycles", `100000000000000000000000`)}, []string{"schema.maximum"}, ""},
		{"rule23/validation_empty", invLocal, []op{set("validation", `[]`)}, []string{"schema.minItems"}, ""},
		{"rule23/validation_scope", invLocal, []op{set("validation[0].scope", `"partial"`)}, []string{"schema.enum"}, ""},
		{"rule23/validation_command", invLocal, []op{set("validation[0].command", `""`)}, []string{"schema.minLength"}, ""},
		{"rule24/policy", invLocal, []op{set("publication.policy", `"push"`)}, []string{"schema.enum"}, ""},
		{"rule25/pull_request_base_sha", invUpdate, []op{del("publication.pull_request.base_sha")}, []string{"schema.required"}, ""},
		{"rule25/pull_request_expected_old", invUpdate, []op{set("publication.pull_request.expected_old_head_sha", `"HEAD"`)}, []string{"schema.pattern"}, ""},
		{"rule26/grant_kind", invUpdate, []op{del("publication.remote_iteration_grants[0].kind")}, []string{"schema.required"}, ""},
		{"rule26/grant_evidence", invUpdate, []op{set("publication.remote_iteration_grants[0].origin_only_evidence", `""`)}, []string{"schema.minLength"}, ""},
	})
}

// TestInvocationRules covers rules 27-40 and gap (d).
func TestInvocationRules(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{"rule27/override_with_authorization_ok", invLocal, []op{set("review_execution", `{"mode":"in_agent_override","override_authorization":"maintainer"}`)}, nil, ""},
		{"rule27/override_requires_authorization", invLocal, []op{set("review_execution.mode", `"in_agent_override"`)}, []string{"invocation.override_requires_authorization"}, "$.review_execution.override_authorization"},
		{"rule28/fresh_subagent_forbids_authorization", invLocal, []op{set("review_execution.override_authorization", `"x"`)}, []string{"invocation.fresh_subagent_forbids_authorization"}, ""},
		{"rule29/staged", invLocal, []op{set("candidate.worktree.staged", `["a.go"]`)}, []string{"invocation.worktree_staged_must_be_empty"}, "$.candidate.worktree.staged"},
		{"rule30/unstaged", invLocal, []op{set("candidate.worktree.unstaged", `["a.go"]`)}, []string{"invocation.worktree_unstaged_must_be_empty"}, ""},
		{"rule31/untracked", invLocal, []op{set("candidate.worktree.untracked", `["a.go"]`)}, []string{"invocation.worktree_untracked_must_be_empty"}, ""},
		{"rule31/ignored_and_tracked_free", invLocal, []op{set("candidate.worktree.ignored", `["x","y"]`), set("candidate.worktree.tracked", `[]`)}, nil, ""},
		{"rule32/both_sources", invLocal, []op{set("candidate.source_binding", `{"repository":"r","remote_url":"u","ref":"refs/heads/x","observed_object_id":`+lcConv0+`}`)}, []string{"invocation.source_binding_excludes_unavailable_reason"}, ""},
		{"rule33/no_source", invLocal, []op{del("candidate.source_unavailable_reason")}, []string{"invocation.source_binding_or_unavailable_reason"}, ""},
		{"rule34/update_pr_requires_pull_request", invUpdate, []op{del("publication.pull_request")}, []string{"invocation.update_pr_requires_pull_request"}, ""},
		{"rule35/update_pr_requires_source_binding", invUpdate, []op{del("candidate.source_binding"), set("candidate.source_unavailable_reason", `"none"`)}, []string{"invocation.update_pr_requires_source_binding"}, ""},
		{"rule36/local_commit_forbids_pull_request", invLocal, []op{set("publication.pull_request", `{"head_repository":"r","head_ref":"refs/heads/x","expected_old_head_sha":`+lcConv0+`,"base_ref":"main","base_sha":`+base0+`}`)}, []string{"invocation.local_commit_forbids_pull_request"}, ""},
		{"rule37/local_commit_forbids_grants", invLocal, []op{set("publication.remote_iteration_grants", `[{"mechanism_id":"m","kind":"ci","repository":"r","ref":"x","origin_only_evidence":"e"}]`)}, []string{"invocation.local_commit_forbids_grants"}, ""},
		{"rule37/local_commit_empty_grants_ok", invLocal, []op{set("publication.remote_iteration_grants", `[]`)}, nil, ""},
		{"rule38/validation_requires_focused", invLocal, []op{set("validation[0].scope", `"full"`)}, []string{"invocation.validation_requires_focused"}, ""},
		{"rule39/validation_requires_full", invLocal, []op{set("validation[1].scope", `"focused"`)}, []string{"invocation.validation_requires_full"}, ""},
		{"rule40/source_binding_under_local_commit_ok", invLocal, []op{del("candidate.source_unavailable_reason"), set("candidate.source_binding", `{"repository":"r","remote_url":"u","ref":"refs/heads/x","observed_object_id":`+other+`}`)}, nil, ""},
		{"gap_d/expected_old_head", invUpdate, []op{set("publication.pull_request.expected_old_head_sha", other)}, []string{"strict.expected_old_head_matches_source_binding"}, "$.publication.pull_request.expected_old_head_sha"},
		{"gap_d/base_sha", invUpdate, []op{set("publication.pull_request.base_sha", other)}, []string{"strict.pull_request_base_matches_comparison_base"}, ""},
		{"gap_d/grant_repository", invUpdate, []op{set("publication.remote_iteration_grants[0].repository", `"someone/else"`)}, []string{"strict.grant_matches_pull_request_target"}, "$.publication.remote_iteration_grants[0].repository"},
		{"gap_d/grant_ref", invUpdate, []op{set("publication.remote_iteration_grants[0].ref", `"refs/heads/main"`)}, []string{"strict.grant_matches_pull_request_target"}, "$.publication.remote_iteration_grants[0].ref"},
	})
}

// TestCheckpointSchemaRules covers rules 42-55 and 58.
func TestCheckpointSchemaRules(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{"rule42/worktree", cpLocal, []op{del("worktree.staged")}, []string{"schema.required"}, ""},
		{"rule43/current_head", cpLocal, []op{set("current_head", `"abc"`)}, []string{"schema.pattern"}, ""},
		{"rule44/pull_request_number", cpUpdate, []op{set("pull_request.number", `0`)}, []string{"schema.minimum"}, ""},
		{"rule45/no_sha_in_push_mechanics", cpUpdate, []op{set("publication.pull_request.base_sha", base0)}, []string{"schema.additionalProperties"}, "$.publication.pull_request.base_sha"},
		{"rule45/push_mechanics_required", cpUpdate, []op{del("publication.pull_request.base_ref")}, []string{"schema.required"}, ""},
		{"rule46/budget_range", cpLocal, []op{set("original_cycle_budget", `11`)}, []string{"schema.maximum"}, ""},
		{"rule47/attempt_outcome", cpLocal, []op{set("cycle_attempts[0].outcome", `"skipped"`)}, []string{"schema.enum"}, ""},
		{"rule47/attempt_sequence", cpLocal, []op{set("cycle_attempts[0].sequence", `0`)}, []string{"schema.minimum"}, ""},
		{"rule47/attempt_finding_id", cpLocal, []op{set("cycle_attempts[0].finding_id", `""`)}, []string{"schema.minLength"}, ""},
		{"rule48/head_history", cpLocal, []op{set("head_history", `[]`)}, []string{"schema.minItems"}, ""},
		{"rule49/base_revision_history", cpLocal, []op{set("base_revision_history", `[]`)}, []string{"schema.minItems"}, ""},
		{"rule51/validation_status", cpLocal, []op{set("validation_outcomes[0].status", `"skipped"`)}, []string{"schema.enum"}, ""},
		{"rule51/validation_result_non_empty", cpLocal, []op{set("validation_outcomes[0].result", `""`)}, []string{"schema.minLength"}, ""},
		{"rule52/preserved_reason", cpLocalCR, []op{del("preserved_failed_attempts[0].reason")}, []string{"schema.required"}, ""},
		{"rule53/source_counts", cpUpdate, []op{set("source.ahead_by", `-1`)}, []string{"schema.minimum"}, ""},
		{"rule53/source_status", cpUpdate, []op{set("source.status", `"gone"`)}, []string{"schema.enum"}, ""},
		{"rule54/phase", cpLocal, []op{set("current_phase", `"deploy"`)}, []string{"schema.enum"}, ""},
		{"rule55/next_action", cpLocal, []op{set("expected_next_action", `""`)}, []string{"schema.minLength"}, ""},
		{"rule58/reviewer_identity_required", cpLocal, []op{del("review_records[1].reviewer_identity")}, []string{"schema.required"}, "$.review_records[1].reviewer_identity"},
		{"rule58/write_isolation_enum", cpLocal, []op{set("review_records[1].write_isolation", `"partial"`)}, []string{"schema.enum"}, "$.review_records[1].write_isolation"},
		{"rule58/verdict_enum", cpLocal, []op{set("review_records[0].aggregate_verdict", `"ok"`)}, []string{"schema.enum"}, ""},
		{"rule58/disposition_enum", cpLocal, []op{set("review_records[0].finding_dispositions[0].disposition", `"selected"`)}, []string{"schema.enum"}, ""},
		{"rule58/mutation_attempts_strings", cpLocal, []op{set("review_records[0].mutation_attempts", `[""]`)}, []string{"schema.minLength"}, ""},
		{"rule58/optional_fields_ok", cpLocal, []op{set("review_records[0].observed_ref_changes", `["refs/heads/other moved"]`), set("review_records[0].integrity_evidence", `"tool_trace"`)}, nil, ""},
		{"rule58/integrity_evidence_enum", cpLocal, []op{set("review_records[0].integrity_evidence", `"vibes"`)}, []string{"schema.enum"}, ""},
	})
}

// TestCheckpointRules covers rules 56-69 and gaps (f), (g), (h).
func TestCheckpointRules(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{"rule56/head_history_starts_at_initial_head", cpLocalCR, []op{set("head_history[0]", other), set("review_records[0].head_sha", other)}, []string{"checkpoint.head_history_starts_at_initial_head"}, "$.head_history[0]"},
		{"rule57/head_history_ends_at_current_head", cpLocalCR, []op{set("current_head", other)}, []string{"checkpoint.head_history_ends_at_current_head"}, "$.head_history[1]"},
		{"rule59/attempts_within_budget", cpLocalCR, []op{set("original_cycle_budget", `2`)}, []string{"checkpoint.attempts_within_budget"}, ""},
		{"rule59/attempts_at_budget_ok", cpLocalCR, []op{set("original_cycle_budget", `3`)}, nil, ""},
		{"rule60/committed_requires_resulting_head", cpLocalCR, []op{del("cycle_attempts[0].resulting_head")}, []string{"checkpoint.committed_attempt_requires_resulting_head"}, "$.cycle_attempts[0].resulting_head"},
		{"rule61/committed_count", cpLocalCR, []op{set("head_history[2]", other), set("current_head", other)}, []string{"checkpoint.committed_attempts_match_head_history"}, ""},
		{"rule62/committed_heads_in_order", cpUpdate, []op{set("head_history[1]", other), set("review_records[1].head_sha", other), set("review_records[2].head_sha", other)}, []string{"checkpoint.committed_heads_match_head_history"}, "$.head_history[1]"},
		{"rule62/failed_between_committed_ok", cpLocalCR, nil, nil, ""},
		{"rule63/base_history_ends_at_comparison_base", cpLocalCR, []op{set("comparison_base.sha", other)}, []string{"checkpoint.base_history_ends_at_comparison_base"}, ""},
		{"rule63/only_sha_compared", cpLocalCR, []op{set("comparison_base.ref", `"refs/heads/trunk"`)}, nil, ""},
		{"rule64/result_required", cpLocalCR, []op{del("validation_outcomes[0].result")}, []string{"checkpoint.validation_result_required"}, "$.validation_outcomes[0].result"},
		{"rule65/reason_required", cpLocalCR, []op{set("validation_outcomes[1].status", `"unavailable"`)}, []string{"checkpoint.validation_reason_required"}, ""},
		{"rule65/reason_given_ok", cpLocalCR, []op{set("validation_outcomes[1].status", `"unavailable"`), set("validation_outcomes[1].reason", `"no database"`)}, nil, ""},
		{"rule66/preserved_attempts", cpLocalCR, []op{del("preserved_failed_attempts[1]")}, []string{"checkpoint.preserved_attempts_match_failed_attempts"}, ""},
		{"rule66/interrupted_counts", cpLocalCR, []op{set("cycle_attempts[2].outcome", `"interrupted"`)}, nil, ""},
		{"rule67/unavailable_requires_reason", cpLocalCR, []op{del("source.unavailable_reason")}, []string{"checkpoint.source_unavailable_requires_reason"}, ""},
		{"rule68/bound_requires_counts", cpUpdate, []op{del("source.ahead_by")}, []string{"checkpoint.source_bound_requires_head_and_counts"}, "$.source.ahead_by"},
		{"rule68/bound_requires_head", cpUpdate, []op{del("source.last_verified_head")}, []string{"checkpoint.source_bound_requires_head_and_counts"}, ""},
		{"gap_f/head_history_repeat", cpUpdate, []op{set("cycle_attempts[1].resulting_head", upConv1), set("head_history[2]", upConv1), set("current_head", upConv1), set("review_records[3].head_sha", upConv1)}, []string{"strict.head_history_no_repeat"}, "$.head_history[2]"},
		{"gap_f/base_history_repeat", cpUpdate, []op{set("base_revision_history[1]", `{"ref":"refs/heads/main","sha":`+base0+`}`), set("comparison_base.sha", base0), set("review_records[2].comparison_base_sha", base0), set("review_records[3].comparison_base_sha", base0)}, []string{"strict.base_history_no_repeat"}, "$.base_revision_history[1]"},
		{"gap_g/attempt_sequence", cpLocalCR, []op{set("cycle_attempts[1].sequence", `5`)}, []string{"strict.attempt_sequence_contiguous"}, "$.cycle_attempts[1].sequence"},
		{"gap_g/attempt_started_from_current_head", cpLocalCR, []op{set("cycle_attempts[1].started_from_head", lcCR0)}, []string{"strict.attempt_starts_from_current_head"}, "$.cycle_attempts[1].started_from_head"},
		{"gap_g/review_sequence", cpLocalCR, []op{set("review_records[1].sequence", `1`)}, []string{"strict.review_sequence_increasing"}, "$.review_records[1].sequence"},
		{"gap_g/review_sequence_gaps_ok", cpLocalCR, []op{set("review_records[1].sequence", `7`)}, nil, ""},
		{"strict/update_pr_push_target", cpUpdate, []op{del("publication.pull_request")}, []string{"strict.checkpoint_update_pr_requires_push_target"}, ""},
		{"strict/local_commit_no_push_target", cpLocal, []op{set("publication.pull_request", `{"head_repository":"r","head_ref":"refs/heads/x","base_ref":"main"}`)}, []string{"strict.checkpoint_local_commit_forbids_push_target"}, ""},
		{"strict/review_head_recorded", cpLocalCR, []op{set("review_records[0].head_sha", other)}, []string{"strict.review_head_in_head_history"}, "$.review_records[0].head_sha"},
		{"strict/review_base_recorded", cpLocalCR, []op{set("review_records[1].comparison_base_sha", other)}, []string{"strict.review_base_in_base_history"}, "$.review_records[1].comparison_base_sha"},
		{"gap_h/validation_outcomes_full", cpLocalCR, []op{del("validation_outcomes[1]")}, []string{"strict.validation_outcomes_cover_full"}, ""},
		{"gap_h/validation_outcomes_focused", cpLocalCR, []op{del("validation_outcomes[0]")}, []string{"strict.validation_outcomes_cover_focused"}, ""},
	})
}

// TestTerminalSchemaRules covers rules 71-79.
func TestTerminalSchemaRules(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{"rule71/state_enum", trLocal, []op{set("terminal_state", `"done"`)}, []string{"schema.enum"}, ""},
		{"rule71/reason_enum", trLocalCR, []op{set("reason", `"tired"`)}, []string{"schema.enum"}, ""},
		{"rule72/original_range", trLocal, []op{set("budget.original_max_fix_cycles", `0`)}, []string{"schema.minimum"}, ""},
		{"rule72/consumed_non_negative", trLocal, []op{set("budget.consumed_cycles", `-1`)}, []string{"schema.minimum"}, ""},
		{"rule72/remaining_integer", trLocal, []op{set("budget.remaining_cycles", `2.0`)}, []string{"schema.type"}, ""},
		{"rule73/resume_status", trLocal, []op{set("resume_status", `"maybe"`)}, []string{"schema.enum"}, ""},
		{"rule74/head_sha", trLocal, []op{set("head.initial", `"HEAD"`)}, []string{"schema.pattern"}, ""},
		{"rule74/base_ref_required", trLocal, []op{del("comparison_base.initial.ref")}, []string{"schema.required"}, ""},
		{"rule75/created_commits_shas", trLocal, []op{set("created_commits[0]", `"x"`)}, []string{"schema.pattern"}, ""},
		{"rule75/head_history_non_empty", trLocal, []op{set("head_history", `[]`)}, []string{"schema.minItems"}, ""},
		{"rule76/disposition_vocabulary", trLocal, []op{set("finding_dispositions[0].disposition", `"accepted"`)}, []string{"schema.enum"}, ""},
		{"rule77/source_counts", trUpdate, []op{set("source.behind_by", `-2`)}, []string{"schema.minimum"}, ""},
		{"rule78/publication_status", trLocal, []op{set("publication.status", `"pushed"`)}, []string{"schema.enum"}, ""},
		{"rule78/exposure_boolean", trLocal, []op{set("publication.non_converged_exposure", `"false"`)}, []string{"schema.type"}, ""},
		{"rule78/exposure_required", trLocal, []op{del("publication.non_converged_exposure")}, []string{"schema.required"}, ""},
		{"rule79/acceptance_boolean", trLocal, []op{set("acceptance_reconciliation_required", `1`)}, []string{"schema.type"}, ""},
		{"rule79/unresolved_strings", trLocal, []op{set("unresolved_or_deferred_findings", `[""]`)}, []string{"schema.minLength"}, ""},
		{"rule79/operator_action", trLocal, []op{set("operator_action", `""`)}, []string{"schema.minLength"}, ""},
		{"rule58/terminal_review_record", trLocal, []op{del("review_records[0].mutation_attempts")}, []string{"schema.required"}, "$.review_records[0].mutation_attempts"},
	})
}

// TestTerminalRules covers rules 80-90 and gaps (a), (c), (e), (f), (g).
func TestTerminalRules(t *testing.T) {
	publishedCR := []op{set("publication.status", `"published"`), set("unpushed_commits", `[]`),
		set("publication.remote_head_before", upCR0), set("publication.remote_head_after", upCR1)}
	runRuleCases(t, []ruleCase{
		{"rule80/converged_forbids_reason", trLocal, []op{set("reason", `"oscillation"`)}, []string{"terminal.converged_forbids_reason"}, "$.reason"},
		{"rule80/changes_remaining_requires_reason", trLocalCR, []op{del("reason")}, []string{"terminal.changes_remaining_requires_reason"}, ""},
		{"rule80/changes_remaining_wrong_list", trLocalCR, []op{set("reason", `"base_drift"`)}, []string{"terminal.changes_remaining_requires_reason"}, ""},
		{"rule80/blocked_requires_reason", trLocalBlock, []op{del("reason")}, []string{"terminal.blocked_requires_reason"}, ""},
		{"rule80/blocked_wrong_list", trLocalBlock, []op{set("reason", `"oscillation"`)}, []string{"terminal.blocked_requires_reason"}, ""},
		{"rule81/budget_adds_up", trLocal, []op{set("budget.remaining_cycles", `1`)}, []string{"terminal.budget_adds_up"}, "$.budget"},
		{"rule82a/local_commit_not_applicable", trLocal, []op{set("publication.status", `"withheld"`)}, []string{"terminal.publication_status_matches_state"}, "$.publication.status"},
		{"rule82b/update_pr_converged_published", trUpdate, []op{set("publication.status", `"withheld"`), set("unpushed_commits", `[`+upConv1+`,`+upConv2+`]`)}, []string{"terminal.publication_status_matches_state"}, ""},
		{"rule82c/update_pr_changes_remaining_withheld", trUpdateCR, publishedCR, []string{"terminal.publication_status_matches_state"}, ""},
		{"rule82d/update_pr_remote_advanced_failed", trUpdateBl, []op{set("publication.status", `"withheld"`)}, []string{"terminal.publication_status_matches_state"}, ""},
		{"rule82d/update_pr_other_blocked_withheld", trUpdateBl, []op{set("reason", `"base_drift"`)}, []string{"terminal.publication_status_matches_state"}, ""},
		{"rule82d/publication_failed_ok", trUpdateBl, []op{set("reason", `"publication_failed"`)}, nil, ""},
		{"rule83/moved_head_unpublished_needs_unpushed", trLocal, []op{set("unpushed_commits", `[]`)}, []string{"terminal.unpublished_head_requires_unpushed_commits"}, ""},
		{"rule84/published_forbids_unpushed", trUpdate, []op{set("unpushed_commits", `[`+upConv2+`]`)}, []string{"terminal.published_forbids_unpushed_commits"}, ""},
		{"rule85/acceptance_after_head_change", trLocal, []op{set("acceptance_reconciliation_required", `false`)}, []string{"terminal.acceptance_reconciliation_required"}, ""},
		{"rule85/acceptance_after_base_ref_change", trLocalBlock, []op{set("comparison_base.final.ref", `"refs/heads/trunk"`)}, []string{"terminal.acceptance_reconciliation_required"}, ""},
		{"rule85/nothing_changed_ok", trLocalBlock, []op{set("acceptance_reconciliation_required", `false`)}, nil, ""},
		{"rule86/head_history_starts", trLocal, []op{set("head_history[0]", other), set("review_records[0].head_sha", other)}, []string{"terminal.head_history_starts_at_initial_head"}, ""},
		{"rule86/head_history_ends", trLocalCR, []op{set("head.final", other)}, []string{"terminal.head_history_ends_at_final_head"}, ""},
		{"rule86/base_history_starts", trUpdate, []op{set("comparison_base.initial.sha", other)}, []string{"terminal.base_history_starts_at_initial_base"}, ""},
		{"rule86/base_history_ends", trLocalCR, []op{set("comparison_base.final.sha", other)}, []string{"terminal.base_history_ends_at_final_base"}, ""},
		{"rule87/created_commits_order", trUpdate, []op{set("created_commits", `[`+upConv2+`,`+upConv1+`]`)}, []string{"terminal.created_commits_match_head_history"}, ""},
		{"rule88/selected_requires_fix_commit", trLocal, []op{del("finding_dispositions[0].fix_commit_sha")}, []string{"terminal.selected_requires_fix_commit"}, "$.finding_dispositions[0].fix_commit_sha"},
		{"rule88/declined_forbids_fix_commit", trLocalCR, []op{set("finding_dispositions[2].fix_commit_sha", lcCR1)}, []string{"terminal.declined_forbids_fix_commit"}, ""},
		{"rule88/fix_commit_in_created", trLocal, []op{set("finding_dispositions[0].fix_commit_sha", other)}, []string{"terminal.fix_commit_in_created_commits"}, ""},
		{"rule89/unavailable_requires_reason", trLocal, []op{del("source.unavailable_reason")}, []string{"terminal.source_unavailable_requires_reason"}, ""},
		{"rule89/bound_requires_heads", trUpdate, []op{del("source.final_head")}, []string{"terminal.source_bound_requires_heads"}, ""},
		{"rule89/bound_requires_counts", trUpdate, []op{del("source.behind_by")}, []string{"terminal.source_bound_requires_counts"}, ""},
		{"rule90a/converged_requires_passed_validation", trLocal, []op{set("validation_summary[1].status", `"failed"`)}, []string{"terminal.converged_requires_passed_validation"}, "$.validation_summary[1].status"},
		{"rule90b/converged_requires_both_scopes", trLocal, []op{del("validation_summary[1]")}, []string{"terminal.converged_requires_validation_scopes"}, ""},
		{"rule90b/converged_empty_summary", trLocal, []op{set("validation_summary", `[]`)}, []string{"terminal.converged_requires_validation_scopes"}, ""},
		{"rule90c/converged_forbids_mutation_attempts_any_head", trLocal, []op{set("review_records[0].mutation_attempts", `["git commit --amend"]`)}, []string{"terminal.converged_forbids_mutation_attempts"}, "$.review_records[0].mutation_attempts"},
		{"rule90c/mutation_attempts_ok_when_not_converged", trLocalCR, []op{set("review_records[0].mutation_attempts", `["git commit --amend"]`)}, nil, ""},
		{"rule90d/converged_requires_final_review", trLocal, []op{set("review_records[1].head_sha", lcConv0)}, []string{"terminal.converged_requires_final_review"}, ""},
		{"rule90e/converged_requires_clean_final_review", trLocal, []op{set("review_records[1].aggregate_verdict", `"changes_required"`)}, []string{"terminal.converged_requires_clean_final_review"}, "$.review_records[1].aggregate_verdict"},
		{"rule90f/converged_requires_enforced_isolation", trLocal, []op{set("review_records[1].write_isolation", `"violated"`)}, []string{"terminal.converged_requires_enforced_isolation"}, "$.review_records[1].write_isolation"},
		{"gap_a/cycle_budget_exhausted_requires_zero_remaining", trUpdateCR, []op{set("reason", `"cycle_budget_exhausted"`)}, []string{"strict.cycle_budget_exhausted_requires_zero_remaining"}, "$.budget.remaining_cycles"},
		{"gap_a/cycle_budget_exhausted_at_zero_ok", trLocalCR, []op{set("reason", `"cycle_budget_exhausted"`)}, nil, ""},
		{"gap_c/consumed_cycles_match_attempts", trLocalCR, []op{del("preserved_failed_attempts[1]")}, []string{"strict.consumed_cycles_match_attempts"}, ""},
		{"gap_e/local_commit_forbids_exposure", trLocal, []op{set("publication.non_converged_exposure", `true`)}, []string{"strict.local_commit_forbids_exposure"}, ""},
		{"gap_e/local_commit_forbids_remote_heads", trLocal, []op{set("publication.remote_head_before", lcConv0)}, []string{"strict.local_commit_forbids_remote_heads"}, ""},
		{"gap_e/published_requires_remote_heads", trUpdate, []op{del("publication.remote_head_before")}, []string{"strict.published_requires_remote_heads"}, ""},
		{"gap_e/published_remote_head_is_final", trUpdate, []op{set("publication.remote_head_after", upConv1)}, []string{"strict.published_remote_head_is_final_head"}, "$.publication.remote_head_after"},
		{"gap_e/exposure_under_update_pr_ok", trUpdateCR, []op{set("publication.non_converged_exposure", `true`)}, nil, ""},
		{"gap_f/head_history_repeat", trLocal, []op{set("head_history[2]", lcConv1), set("created_commits[1]", lcConv1), set("unpushed_commits[1]", lcConv1), set("budget.consumed_cycles", `2`), set("budget.remaining_cycles", `1`)}, []string{"strict.head_history_no_repeat"}, "$.head_history[2]"},
		{"gap_f/base_history_repeat", trLocal, []op{set("base_revision_history[1]", `{"ref":"refs/heads/main","sha":`+base0+`}`)}, []string{"strict.base_history_no_repeat"}, ""},
		{"gap_g/review_sequence", trLocal, []op{set("review_records[1].sequence", `1`)}, []string{"strict.review_sequence_increasing"}, ""},
		{"strict/review_head_recorded", trLocal, []op{set("review_records[0].head_sha", other)}, []string{"strict.review_head_in_head_history"}, ""},
		{"strict/review_base_recorded", trUpdate, []op{set("review_records[0].comparison_base_sha", base1)}, nil, ""},
		{"strict/summary_result_required", trLocal, []op{del("validation_summary[0].result")}, []string{"strict.validation_result_required"}, ""},
		{"strict/summary_reason_required", trLocalBlock, []op{del("validation_summary[1].reason")}, []string{"strict.validation_reason_required"}, ""},
	})
}

// TestStrictRulesSayTheyAreStricter: every rule beyond the peer is named
// strict.* and its message says so, so a user can tell a peer-valid
// document from a broken one.
func TestStrictRulesSayTheyAreStricter(t *testing.T) {
	doc := example(t, trLocal)
	apply(t, doc, set("publication.non_converged_exposure", `true`), set("review_records[1].sequence", `1`))
	vs, _ := ValidateDocument(KindTerminalResult, doc)
	if len(vs) == 0 {
		t.Fatal("no violations")
	}
	for _, v := range vs {
		if !strings.HasPrefix(v.Rule, "strict.") || !strings.Contains(v.Msg, "stricter than the peer") {
			t.Errorf("violation %v: want a strict.* rule whose message says it is stricter than the peer", v)
		}
	}
}

// TestViolationsIndependentOfKeyOrder: the same broken document with its
// keys in another order gives the same violations in the same order.
func TestViolationsIndependentOfKeyOrder(t *testing.T) {
	doc := example(t, trLocal)
	apply(t, doc, set("reason", `"oscillation"`), set("extra", `1`), del("operator_action"), set("budget.remaining_cycles", `"x"`))
	a, _ := ValidateDocument(KindTerminalResult, doc)
	b, err := Validate(KindTerminalResult, reorderedJSON(doc))
	if err != nil || len(a) == 0 || len(a) != len(b) {
		t.Fatalf("Validate(reordered) = %v, %v; want %v", b, err, a)
	}
	for i := range a {
		if a[i] != b[i] {
			t.Errorf("violation %d: %v after reordering, want %v", i, b[i], a[i])
		}
	}
}
