package model

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

const (
	headSHA  = "3ea8f9134120a12e741c3b3f87f67a743ad52ad1"
	baseSHA  = "6d4e80a7e96351b471797a093ebc111917c516bd"
	otherSHA = "0123456789abcdef0123456789abcdef01234567"
)

func testPacket() *ReviewPacket {
	return &ReviewPacket{
		SchemaVersion: PacketSchemaVersion,
		Repository:    PacketRepo{Identity: "example/libparse", BaseBranch: "main"},
		Candidate: PacketCandidate{HeadSHA: headSHA, ComparisonBaseSHA: baseSHA,
			Diff: PacketDiff{Format: "unified_diff", Complete: true, Content: plainDiff}},
		ChangeContract: ChangeContract{Goal: "Empty headers parse.", AcceptanceCriteria: []string{"parse('') returns {}"}},
		Validation:     []Validation{{Name: "focused", Command: "pytest tests/test_header.py", Scope: "focused", Status: "passed"}},
	}
}

// edit decodes doc, applies f to the generic value, and re-encodes it.
func edit(t testing.TB, doc []byte, f func(m map[string]any)) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(doc, &m); err != nil {
		t.Fatal(err)
	}
	f(m)
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sub(m map[string]any, k string) map[string]any { return m[k].(map[string]any) }

func goodResult(verdict string, findings ...map[string]any) map[string]any {
	fs := []any{}
	for _, f := range findings {
		fs = append(fs, f)
	}
	r := map[string]any{
		"schema_version":   "1.4",
		"lens":             "aggregate",
		"candidate":        map[string]any{"head_sha": headSHA, "comparison_base_sha": baseSHA},
		"verdict":          verdict,
		"findings":         fs,
		"blocking_reasons": []any{},
		"lens_executions": []any{
			map[string]any{"lens": "correctness", "head_sha": headSHA, "comparison_base_sha": baseSHA, "verdict": verdict, "freshly_executed": true},
		},
	}
	return r
}

func finding(id, severity string) map[string]any {
	return map[string]any{
		"id": id, "lens": "correctness", "severity": severity, "confidence": "high", "rule": "no-todo",
		"evidence": []any{map[string]any{"location": "README:1", "detail": "TODO left in"}},
		"concern":  "a TODO marker", "impact": "unfinished work ships", "proposed_change": "remove it",
		"expected_effect": "no marker",
	}
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

type resultCase struct {
	name   string
	doc    []byte
	bind   Binding
	reason string // "" means accepted
	schema bool   // the refusal is a schema failure (compared with the peer's schema)
}

func resultCases(t testing.TB) []resultCase {
	bind := Binding{HeadSHA: headSHA, ComparisonBaseSHA: baseSHA}
	clean := goodResult("clean")
	changes := goodResult("changes_required", finding("todo-1", "blocking"))
	changes["lens_executions"].([]any)[0].(map[string]any)["verdict"] = "changes_required"
	with := func(base map[string]any, f func(m map[string]any)) []byte {
		return edit(t, mustJSON(t, base), f)
	}
	return []resultCase{
		{name: "clean", doc: mustJSON(t, clean), bind: bind},
		{name: "changes required", doc: mustJSON(t, changes), bind: bind},
		{name: "clean with recommendation", doc: mustJSON(t, goodResult("clean", finding("nit-1", "strong_recommendation"))), bind: bind},
		{name: "lenses present", doc: mustJSON(t, clean), bind: Binding{HeadSHA: headSHA, ComparisonBaseSHA: baseSHA, Lenses: []string{"correctness"}}},
		{name: "missing lens", doc: mustJSON(t, clean), bind: Binding{HeadSHA: headSHA, ComparisonBaseSHA: baseSHA, Lenses: []string{"correctness", "code_simplicity"}},
			reason: "lens code_simplicity has no fresh execution"},
		{name: "stale lens execution", doc: with(clean, func(m map[string]any) {
			m["lens_executions"].([]any)[0].(map[string]any)["freshly_executed"] = false
		}), bind: Binding{HeadSHA: headSHA, ComparisonBaseSHA: baseSHA, Lenses: []string{"correctness"}}, reason: "no fresh execution"},
		{name: "lens execution on another head", doc: with(clean, func(m map[string]any) {
			m["lens_executions"].([]any)[0].(map[string]any)["head_sha"] = otherSHA
		}), bind: bind, reason: "bound to another head"},
		{name: "other head", doc: with(clean, func(m map[string]any) { sub(m, "candidate")["head_sha"] = otherSHA }), bind: bind, reason: "bound to head " + otherSHA},
		{name: "other base", doc: with(clean, func(m map[string]any) { sub(m, "candidate")["comparison_base_sha"] = otherSHA }), bind: bind, reason: "bound to base"},
		{name: "unbound", doc: with(clean, func(m map[string]any) { m["candidate"] = map[string]any{} }), bind: bind, reason: "does not name the head"},
		{name: "clean with blocking", doc: mustJSON(t, goodResult("clean", finding("todo-1", "blocking"))), bind: bind, reason: "clean but 1 finding(s) are blocking"},
		{name: "clean with blocking reason", doc: with(clean, func(m map[string]any) { m["blocking_reasons"] = []any{"x"} }), bind: bind, reason: "blocking_reasons is not empty"},
		{name: "clean over failed validation", doc: mustJSON(t, clean), bind: Binding{HeadSHA: headSHA, ComparisonBaseSHA: baseSHA, ValidationFailed: true}, reason: "validation failed"},
		{name: "clean while a lens is not", doc: with(clean, func(m map[string]any) {
			m["lens_executions"].([]any)[0].(map[string]any)["verdict"] = "changes_required"
		}), bind: bind, reason: "lens correctness says changes_required"},
		{name: "changes required with nothing", doc: mustJSON(t, goodResult("changes_required")), bind: bind, reason: "no findings"},
		{name: "blocked without reason", doc: mustJSON(t, goodResult("blocked")), bind: bind, reason: "blocking_reasons is empty"},
		{name: "duplicate finding id", doc: mustJSON(t, goodResult("changes_required", finding("a", "blocking"), finding("a", "defer"))), bind: bind, reason: "appears twice"},
		{name: "wrong version", doc: with(clean, func(m map[string]any) { m["schema_version"] = "1.3" }), bind: bind, reason: "schema", schema: true},
		{name: "unknown key", doc: with(clean, func(m map[string]any) { m["score"] = 3 }), bind: bind, reason: "schema", schema: true},
		{name: "missing findings", doc: with(clean, func(m map[string]any) { delete(m, "findings") }), bind: bind, reason: "schema", schema: true},
		{name: "bad verdict", doc: with(clean, func(m map[string]any) { m["verdict"] = "ok" }), bind: bind, reason: "schema", schema: true},
		{name: "uppercase sha", doc: with(clean, func(m map[string]any) { sub(m, "candidate")["head_sha"] = strings.ToUpper(headSHA) }), bind: bind, reason: "schema", schema: true},
		{name: "sha with newline", doc: with(clean, func(m map[string]any) { sub(m, "candidate")["head_sha"] = headSHA + "\n" }), bind: bind, reason: "schema", schema: true},
		{name: "bad finding id", doc: mustJSON(t, goodResult("changes_required", finding("Bad_ID", "blocking"))), bind: bind, reason: "schema", schema: true},
		{name: "empty evidence", doc: with(changes, func(m map[string]any) {
			m["findings"].([]any)[0].(map[string]any)["evidence"] = []any{}
		}), bind: bind, reason: "schema", schema: true},
		{name: "finding lens aggregate", doc: with(changes, func(m map[string]any) {
			m["findings"].([]any)[0].(map[string]any)["lens"] = "aggregate"
		}), bind: bind, reason: "schema", schema: true},
		{name: "empty concern", doc: with(changes, func(m map[string]any) {
			m["findings"].([]any)[0].(map[string]any)["concern"] = ""
		}), bind: bind, reason: "schema", schema: true},
		{name: "findings not array", doc: with(clean, func(m map[string]any) { m["findings"] = map[string]any{} }), bind: bind, reason: "schema", schema: true},
		{name: "not an object", doc: []byte(`[1]`), bind: bind, reason: "schema", schema: true},
		{name: "duplicate key", doc: []byte(`{"schema_version":"1.4","schema_version":"1.4"}`), bind: bind, reason: "schema"},
		{name: "trailing data", doc: append(mustJSON(t, clean), []byte(` {}`)...), bind: bind, reason: "schema"},
		{name: "not json", doc: []byte(`verdict: clean`), bind: bind, reason: "schema"},
	}
}

func TestValidateResult(t *testing.T) {
	for _, tt := range resultCases(t) {
		t.Run(tt.name, func(t *testing.T) {
			r, err := ValidateResult(tt.doc, tt.bind)
			if tt.reason == "" {
				if err != nil || r == nil {
					t.Fatalf("ValidateResult(%s) = %v, want accepted", tt.doc, err)
				}
				return
			}
			var re *RefusedError
			if r != nil || !errors.As(err, &re) || !strings.Contains(re.Error(), tt.reason) {
				t.Fatalf("ValidateResult(%s) = %v, %v; want refusal containing %q", tt.doc, r, err, tt.reason)
			}
		})
	}
}

type packetCase struct {
	name string
	doc  []byte
	ok   bool
}

func packetCases(t testing.TB) []packetCase {
	good, err := testPacket().Marshal()
	if err != nil {
		t.Fatal(err)
	}
	with := func(f func(m map[string]any)) []byte { return edit(t, good, f) }
	return []packetCase{
		{"good", good, true},
		{"diff by path", with(func(m map[string]any) {
			sub(m, "candidate")["diff"] = map[string]any{"format": "unified_diff", "complete": true, "path": "/tmp/x.diff"}
		}), true},
		{"diff with content and path", with(func(m map[string]any) { sub(sub(m, "candidate"), "diff")["path"] = "/tmp/x" }), false},
		{"diff incomplete", with(func(m map[string]any) { sub(sub(m, "candidate"), "diff")["complete"] = false }), false},
		{"diff complete 1", with(func(m map[string]any) { sub(sub(m, "candidate"), "diff")["complete"] = 1 }), false},
		{"empty diff", with(func(m map[string]any) { sub(sub(m, "candidate"), "diff")["content"] = "" }), false},
		{"no validation", with(func(m map[string]any) { m["validation"] = []any{} }), false},
		{"bad scope", with(func(m map[string]any) { m["validation"].([]any)[0].(map[string]any)["scope"] = "all" }), false},
		{"no criteria", with(func(m map[string]any) { sub(m, "change_contract")["acceptance_criteria"] = []any{} }), false},
		{"source without location", with(func(m map[string]any) {
			sub(m, "sources")["named_documents"] = []any{map[string]any{"label": "x"}}
		}), false},
		{"worktree", with(func(m map[string]any) {
			m["worktree"] = map[string]any{"tracked": []any{"a"}, "staged": []any{}, "unstaged": []any{}, "untracked": []any{}, "ignored": []any{}}
		}), true},
		{"base drift wrong decision", with(func(m map[string]any) {
			m["base_drift"] = map[string]any{"captured_base_sha": baseSHA, "current_base_sha": baseSHA, "effective_diff_changed": false,
				"resulting_tree_changed": false, "conflict": false, "relevant_overlap": false, "repository_requires_reset": false,
				"decision": "keep", "reason": "x"}
		}), false},
		{"unicode goal", with(func(m map[string]any) { sub(m, "change_contract")["goal"] = "é" }), true},
		{"extra key", with(func(m map[string]any) { m["extra"] = true }), false},
	}
}

func TestParsePacket(t *testing.T) {
	for _, tt := range packetCases(t) {
		p, err := ParsePacket(tt.doc)
		if tt.ok != (err == nil) || (err != nil) != (p == nil) {
			t.Errorf("ParsePacket(%s) = %v, %v; want ok=%v", tt.doc, p, err, tt.ok)
		}
	}
	p := testPacket()
	p.Validation[0].Status = "failed"
	if !p.ValidationFailed() {
		t.Errorf("ValidationFailed() = false for a failed validation")
	}
	p.Candidate.HeadSHA = "abc"
	if _, err := p.Marshal(); err == nil {
		t.Errorf("Marshal() of a packet with a short head_sha = nil error, want a schema error")
	}
}

// peerSchema compiles one of the peer's review-suite schemas, copied
// byte for byte into testdata/peer (its README says from where).
func peerSchema(t *testing.T, name string) *jsonschema.Schema {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", "testdata", "peer", "review-suite", name))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	s, err := c.Compile(p)
	if err != nil {
		t.Fatalf("compile %s: %v", p, err)
	}
	return s
}

func peerAccepts(t *testing.T, s *jsonschema.Schema, doc []byte) bool {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return false
	}
	return s.Validate(v) == nil
}

// TestPeerSchemasAgree is a second opinion: on every test vector, our
// reading of the peer's schemas (schemas/review-*.schema.json, checked by
// our engine) accepts exactly what the peer's own schema files accept
// under a full draft 2020-12 validator.
func TestPeerSchemasAgree(t *testing.T) {
	ps := peerSchema(t, "review-packet.schema.json")
	rs := peerSchema(t, "review-result.schema.json")
	for _, tt := range packetCases(t) {
		err := validateSchema("review packet", packetSchema(), tt.doc)
		if ours, peer := err == nil, peerAccepts(t, ps, tt.doc); ours != peer {
			t.Errorf("packet %s: ours accepts=%v (%v), peer accepts=%v", tt.name, ours, err, peer)
		}
	}
	for _, tt := range resultCases(t) {
		if tt.name == "duplicate key" || tt.name == "trailing data" {
			continue // stricter than JSON Schema on purpose: not a schema question
		}
		err := validateSchema("review result", resultSchema(), tt.doc)
		if ours, peer := err == nil, peerAccepts(t, rs, tt.doc); ours != peer {
			t.Errorf("result %s: ours accepts=%v (%v), peer accepts=%v", tt.name, ours, err, peer)
		}
	}
}

// FuzzValidateResult: a refused result returns nothing, and an accepted
// one re-encodes to a document that is accepted again.
func FuzzValidateResult(f *testing.F) {
	for _, tt := range resultCases(f) {
		f.Add(tt.doc)
	}
	bind := Binding{HeadSHA: headSHA, ComparisonBaseSHA: baseSHA}
	f.Fuzz(func(t *testing.T, doc []byte) {
		r, err := ValidateResult(doc, bind)
		if err != nil {
			if r != nil {
				t.Fatalf("ValidateResult(%q) returned a result with error %v", doc, err)
			}
			return
		}
		again, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ValidateResult(again, bind); err != nil {
			t.Fatalf("re-encoded result %s refused: %v", again, err)
		}
	})
}

// FuzzParsePacket: a parse error returns no packet; an accepted packet
// marshals to a packet that parses again.
func FuzzParsePacket(f *testing.F) {
	for _, tt := range packetCases(f) {
		f.Add(tt.doc)
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		p, err := ParsePacket(doc)
		if err != nil {
			if p != nil {
				t.Fatalf("ParsePacket(%q) returned a packet with error %v", doc, err)
			}
			return
		}
		if _, err := p.Marshal(); err != nil {
			t.Fatalf("Marshal of accepted packet %q: %v", doc, err)
		}
	})
}
