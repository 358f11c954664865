package model

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
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
		if err := validateSchema("draft request", draftRequestSchema(), request); err != nil {
			return Prompt{}, err
		}
		var r DraftRequest
		if err := json.Unmarshal(request, &r); err != nil {
			return Prompt{}, err
		}
		return Prompt{User: r.Prompt}, nil
	case RoleReviewer:
		p, err := ParsePacket(request)
		if err != nil {
			return Prompt{}, err
		}
		if p.Candidate.Diff.Content == "" {
			// An endpoint cannot open a file on this machine.
			return Prompt{}, errors.New("model: an openai/ reviewer needs the packet's diff inline (candidate.diff.content), not a path")
		}
		return Prompt{System: reviewerInstructions, User: "Review packet:\n" + string(request), JSON: true}, nil
	case RoleFixer:
		if err := validateSchema("fix request", fixRequestSchema(), request); err != nil {
			return Prompt{}, err
		}
		return Prompt{System: fixerInstructions, User: "Fix request:\n" + string(request)}, nil
	case RoleDecider:
		if err := validateSchema("decide request", decideRequestSchema(), request); err != nil {
			return Prompt{}, err
		}
		return Prompt{System: deciderInstructions, User: "Decide request:\n" + string(request), JSON: true}, nil
	}
	return Prompt{}, fmt.Errorf("model: unknown role %q", role)
}

// Bounds of the stack a prompt carries: a short stack is what the seed
// allows a model to see, so a long one is cut to its head and tail (where
// the throw site and the test frame usually are), and each line to a
// width. Together they bound a stack to about 40×200 characters.
const (
	MaxStackLines     = 40
	MaxStackLineRunes = 200
	// MaxStackFile bounds the stack file read from disk.
	MaxStackFile = 1 << 20
)

// DraftInstruction is the fixed instruction that ends every draft prompt.
const DraftInstruction = `Answer with exactly one unified diff (git diff format, paths a/... and b/...) against the card's base that makes the fail command pass, keeps the invariant passing, stays inside the card's budget, and touches no path the deny globs match, no file the card's commands name, no file the test runner loads beside the tests (test files, conftest.py, __init__.py on the tests' path, the runner's configuration, go.mod, go.work, vendor/) unless budget.allow_harness names it, and not the card. No other text.`

// PromptParts is everything a draft prompt is made of; nothing else (no
// tree listing, no issue thread, no file contents) ever enters it.
type PromptParts struct {
	Card     string // the card as YAML
	DiffStat string // `git diff --stat` of a candidate against the base; "" for none
	Stack    string // already trimmed (TrimStack); "" for none
}

// BuildPrompt lays the parts out in a fixed order with fixed headings.
func BuildPrompt(p PromptParts) string {
	var b []byte
	section := func(title, body string) {
		b = append(b, "## "+title+"\n\n"...)
		b = append(b, body...)
		if len(body) > 0 && body[len(body)-1] != '\n' {
			b = append(b, '\n')
		}
		b = append(b, '\n')
	}
	section("Contract card", p.Card)
	if p.DiffStat != "" {
		section("Candidate (git diff --stat against the base)", p.DiffStat)
	}
	if p.Stack != "" {
		section("Stack", p.Stack)
	}
	section("Instruction", DraftInstruction)
	return string(b[:len(b)-1])
}

// TrimStack bounds a stack to MaxStackLines lines of at most
// MaxStackLineRunes characters, keeping the first and last lines and
// saying how many were cut. Invalid UTF-8 and control characters other
// than tab are replaced, so a stack cannot smuggle terminal escapes into a
// prompt. TrimStack(TrimStack(s)) == TrimStack(s).
func TrimStack(s string) string {
	s = strings.ToValidUTF8(strings.ReplaceAll(s, "\r\n", "\n"), "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' || (r >= ' ' && r != 0x7f && !(r >= 0x80 && r < 0xa0)) {
			return r
		}
		return '\uFFFD'
	}, s)
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return ""
	}
	lines := strings.Split(s, "\n")
	if len(lines) > MaxStackLines {
		// An odd count (half, marker, half) stays under the bound, so a
		// second pass changes nothing.
		half := (MaxStackLines - 1) / 2
		cut := len(lines) - 2*half
		lines = append(append(append([]string{}, lines[:half]...), fmt.Sprintf("… %d lines trimmed …", cut)), lines[len(lines)-half:]...)
	}
	for i, l := range lines {
		if r := []rune(l); len(r) > MaxStackLineRunes {
			lines[i] = string(r[:MaxStackLineRunes-1]) + "…"
		}
	}
	return strings.Join(lines, "\n") + "\n"
}
