package model

import (
	"encoding/json"
	"fmt"
)

// Prompt is a chat request an openai/ adapter sends: instructions, the
// request, and whether the reply must be a JSON object.
type Prompt struct {
	System string
	User   string
	JSON   bool
}

// Role instructions for openai/ adapters. They are fixed text: what varies
// is only the request, so what a model was told is reproducible from it.
const (
	reviewerInstructions = `You are a code reviewer. You review one candidate change, described by the review packet below (the complete diff from comparison_base_sha to head_sha, the change contract, and validation results). You may not edit, commit or run anything: report findings only.

Answer with exactly one JSON object, a review result with schema_version "1.4":
{"schema_version": "1.4", "lens": "aggregate",
 "candidate": {"head_sha": <the packet's head_sha>, "comparison_base_sha": <the packet's comparison_base_sha>},
 "verdict": "clean" | "changes_required" | "blocked",
 "findings": [{"id": "<lowercase id>", "lens": "correctness" | "solution_simplicity" | "code_simplicity",
   "severity": "blocking" | "strong_recommendation" | "defer", "confidence": "high" | "medium" | "low",
   "rule": "...", "evidence": [{"location": "path:line", "detail": "..."}], "concern": "...", "impact": "...",
   "proposed_change": "...", "expected_effect": "..."}],
 "blocking_reasons": ["..."],
 "lens_executions": [{"lens": "correctness" | "solution_simplicity" | "code_simplicity", "head_sha": ..., "comparison_base_sha": ..., "verdict": ..., "freshly_executed": true}]}
No other keys. "clean" only with no blocking findings, no blocking reasons, and no failed validation.`

	fixerInstructions = `You fix a committed candidate change. The request below lists the accepted review findings and failed validations to address, the change contract, and the budget. Make the smallest change that addresses them and stays inside the contract and the budget; never touch protected paths or paths the deny globs match.

Answer with exactly one unified diff against head_sha (git diff format, paths a/... and b/...), in one fenced block, and nothing else.`

	deciderInstructions = `You decide which review findings a fixer should address. For each finding in the request below, check its evidence against the change contract, then accept it, reject it, or defer it, with a one-sentence rationale.

Answer with exactly one JSON object: {"dispositions": [{"finding_id": "<id>", "disposition": "accepted" | "rejected" | "deferred", "rationale": "..."}]}, one entry per finding, no other keys.`
)

// PromptFor builds the chat prompt for role from the request an adapter
// was given, so an openai/ adapter is driven by the very bytes a cmd:
// program would read on stdin.
func PromptFor(role Role, request []byte) (Prompt, error) {
	switch role {
	case RoleDrafter:
		if _, err := validateSchema("draft request", draftRequestSchema, request); err != nil {
			return Prompt{}, err
		}
		var r DraftRequest
		if err := json.Unmarshal(request, &r); err != nil {
			return Prompt{}, err
		}
		return Prompt{User: r.Prompt}, nil
	case RoleReviewer:
		if _, err := ParsePacket(request); err != nil {
			return Prompt{}, err
		}
		return Prompt{System: reviewerInstructions, User: "Review packet:\n" + string(request), JSON: true}, nil
	case RoleFixer:
		if _, err := validateSchema("fix request", fixRequestSchema, request); err != nil {
			return Prompt{}, err
		}
		return Prompt{System: fixerInstructions, User: "Fix request:\n" + string(request)}, nil
	case RoleDecider:
		if _, err := validateSchema("decide request", decideRequestSchema, request); err != nil {
			return Prompt{}, err
		}
		return Prompt{System: deciderInstructions, User: "Decide request:\n" + string(request), JSON: true}, nil
	}
	return Prompt{}, fmt.Errorf("model: unknown role %q", role)
}
