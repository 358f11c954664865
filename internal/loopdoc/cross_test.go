package loopdoc

import (
	"testing"
)

type crossCase struct {
	name   string
	pair   string // example directory
	onLate bool   // edit the later document (else the earlier one)
	ops    []op
	want   []string
	path   string
}

// TestCheckpointAgainstInvocation covers rules 92-99 and the strict push
// target and review-mode checks: the seven identities of section 2.14.
func TestCheckpointAgainstInvocation(t *testing.T) {
	cases := []crossCase{
		{"valid/local", "local-commit-converged", true, nil, nil, ""},
		{"valid/update", "update-pr-converged", true, nil, nil, ""},
		{"rule92/invocation_id", "local-commit-converged", true, []op{set("invocation_id", `"other"`)}, []string{"cross.invocation_id"}, "$.invocation_id"},
		{"rule93/initial_head", "local-commit-converged", true, []op{set("initial_head", other)}, []string{"cross.initial_head"}, "$.initial_head"},
		{"rule94/branch", "local-commit-converged", true, []op{set("branch", `"other"`)}, []string{"cross.branch"}, "$.branch"},
		{"rule95/initial_base", "update-pr-converged", true, []op{set("base_revision_history[0].sha", other)}, []string{"cross.initial_base"}, "$.base_revision_history[0].sha"},
		{"rule95/base_ref_not_compared", "update-pr-converged", false, []op{set("candidate.comparison_base.ref", `"main"`)}, nil, ""},
		{"rule96/budget", "local-commit-converged", false, []op{set("fix_cycle_budget.max_fix_cycles", `4`)}, []string{"cross.original_budget"}, "$.original_cycle_budget"},
		{"rule97/repository_identity", "local-commit-converged", true, []op{set("repository.identity", `"fork/example-calc"`)}, []string{"cross.repository"}, "$.repository.identity"},
		{"rule97/git_common_directory", "local-commit-converged", true, []op{set("repository.git_common_directory", `"/elsewhere/.git"`)}, []string{"cross.repository"}, "$.repository.git_common_directory"},
		{"rule98/publication_policy", "local-commit-converged", true, []op{set("publication.policy", `"update_pr"`)}, []string{"cross.publication_policy"}, ""},
		{"rule99/pull_request_number", "update-pr-converged", true, []op{set("pull_request.number", `13`)}, []string{"cross.pull_request"}, "$.pull_request.number"},
		{"rule99/pull_request_repository", "update-pr-converged", false, []op{set("candidate.pull_request.repository", `"fork/x"`)}, []string{"cross.pull_request"}, "$.pull_request.repository"},
		{"rule99/absent_on_one_side_ok", "update-pr-converged", true, []op{del("pull_request")}, nil, ""},
		{"strict/publication_target", "update-pr-converged", true, []op{set("publication.pull_request.head_ref", `"refs/heads/other"`)}, []string{"strict.cross_publication_target"}, ""},
		{"strict/review_independence", "update-pr-converged", true, []op{set("review_records[1].review_independence", `"in_agent_override"`)}, []string{"strict.cross_review_independence"}, "$.review_records[1].review_independence"},
		{"rule110/missing_identity", "local-commit-converged", true, []op{del("branch")}, []string{"cross.branch"}, ""},
		{"rule110/mistyped_identity", "local-commit-converged", true, []op{set("original_cycle_budget", `"3"`)}, []string{"cross.original_budget"}, ""},
		{"rule110/number_by_value", "local-commit-converged", true, []op{set("original_cycle_budget", `3.0`)}, nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			inv := example(t, c.pair+"/invocation")
			cp := example(t, c.pair+"/checkpoint")
			if c.onLate {
				apply(t, cp, c.ops...)
			} else {
				apply(t, inv, c.ops...)
			}
			vs := CheckCheckpointAgainstInvocation(inv, cp)
			if !sameRules(vs, c.want) {
				t.Fatalf("CheckCheckpointAgainstInvocation(%s with %v) = %v, want %v", c.pair, c.ops, vs, c.want)
			}
			if c.path != "" && !hasPath(vs, c.path) {
				t.Errorf("CheckCheckpointAgainstInvocation(%s with %v) = %v, want a violation at %s", c.pair, c.ops, vs, c.path)
			}
		})
	}
}

// TestTerminalAgainstCheckpoint covers rules 100-109 and gap (b).
func TestTerminalAgainstCheckpoint(t *testing.T) {
	cases := []crossCase{
		{"valid/local", "local-commit-changes-remaining", true, nil, nil, ""},
		{"valid/update", "update-pr-converged", true, nil, nil, ""},
		{"rule100/consumed", "local-commit-converged", true, []op{set("budget.consumed_cycles", `2`), set("budget.remaining_cycles", `1`)}, []string{"cross.budget"}, "$.budget.consumed_cycles"},
		{"rule100/remaining_from_checkpoint", "local-commit-converged", false, []op{set("original_cycle_budget", `4`)}, []string{"cross.budget", "cross.original_budget"}, "$.budget.remaining_cycles"},
		{"rule100/original", "local-commit-converged", true, []op{set("budget.original_max_fix_cycles", `4`), set("budget.remaining_cycles", `3`)}, []string{"cross.original_budget", "cross.budget"}, "$.budget.original_max_fix_cycles"},
		{"rule101/invocation_id", "local-commit-converged", true, []op{set("invocation_id", `"other"`)}, []string{"cross.invocation_id"}, ""},
		{"rule102/initial_head", "local-commit-converged", false, []op{set("initial_head", other)}, []string{"cross.initial_head"}, "$.head.initial"},
		{"rule103/final_head", "local-commit-converged", false, []op{set("current_head", other)}, []string{"cross.final_head"}, "$.head.final"},
		{"rule104/final_base", "update-pr-converged", true, []op{set("comparison_base.final.sha", other)}, []string{"cross.final_base"}, "$.comparison_base.final.sha"},
		{"rule105/initial_base", "update-pr-converged", true, []op{set("comparison_base.initial.sha", other)}, []string{"cross.initial_base"}, "$.comparison_base.initial.sha"},
		{"rule106/repository", "local-commit-converged", true, []op{set("repository.git_common_directory", `"/x/.git"`)}, []string{"cross.repository"}, ""},
		{"rule107/branch", "local-commit-converged", true, []op{set("branch", `"other"`)}, []string{"cross.branch"}, ""},
		{"rule108/publication_policy", "local-commit-converged", true, []op{set("publication.policy", `"update_pr"`)}, []string{"cross.publication_policy"}, ""},
		{"rule109/pull_request", "update-pr-converged", true, []op{set("pull_request.number", `99`)}, []string{"cross.pull_request"}, ""},
		{"rule109/absent_ok", "update-pr-converged", false, []op{del("pull_request")}, nil, ""},
		{"gap_b/head_history", "update-pr-converged", true, []op{set("head_history[1]", other)}, []string{"strict.cross_head_history"}, "$.head_history"},
		{"gap_b/base_revision_history", "update-pr-converged", true, []op{set("base_revision_history[0].ref", `"main"`)}, []string{"strict.cross_base_revision_history"}, ""},
		{"gap_b/review_records", "update-pr-converged", true, []op{set("review_records[3].reviewer_identity", `"someone-else"`)}, []string{"strict.cross_review_records"}, ""},
		{"gap_b/preserved_failed_attempts", "local-commit-changes-remaining", true, []op{set("preserved_failed_attempts[0].reason", `"different"`)}, []string{"strict.cross_preserved_failed_attempts"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cp := example(t, c.pair+"/checkpoint")
			tr := example(t, c.pair+"/terminal-result")
			if c.onLate {
				apply(t, tr, c.ops...)
			} else {
				apply(t, cp, c.ops...)
			}
			vs := CheckTerminalAgainstCheckpoint(cp, tr)
			if !sameRules(vs, c.want) {
				t.Fatalf("CheckTerminalAgainstCheckpoint(%s with %v) = %v, want %v", c.pair, c.ops, vs, c.want)
			}
			if c.path != "" && !hasPath(vs, c.path) {
				t.Errorf("CheckTerminalAgainstCheckpoint(%s with %v) = %v, want a violation at %s", c.pair, c.ops, vs, c.path)
			}
		})
	}
}

// TestCrossChecksOnGarbage: rule 110 runs the checks on unchecked
// documents; they must report, never panic.
func TestCrossChecksOnGarbage(t *testing.T) {
	docs := []map[string]any{
		{},
		{"invocation_id": []any{}, "base_revision_history": "x", "cycle_attempts": map[string]any{}, "budget": 3, "head": []any{1}},
		{"base_revision_history": []any{nil}, "pull_request": "x", "candidate": map[string]any{"pull_request": 5}},
	}
	for i, a := range docs {
		for k, b := range docs {
			if vs := CheckCheckpointAgainstInvocation(a, b); len(vs) == 0 {
				t.Errorf("CheckCheckpointAgainstInvocation(doc%d, doc%d) = none, want violations", i, k)
			}
			if vs := CheckTerminalAgainstCheckpoint(a, b); len(vs) == 0 {
				t.Errorf("CheckTerminalAgainstCheckpoint(doc%d, doc%d) = none, want violations", i, k)
			}
		}
	}
}
