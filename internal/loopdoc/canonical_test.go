package loopdoc

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCanonical pins the canonical form against outputs of the peer's
// Python (json.dumps(json.loads(in), sort_keys=True, indent=2) + "\n").
func TestCanonical(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"b":1,"a":[],"c":{}}`, "{\n  \"a\": [],\n  \"b\": 1,\n  \"c\": {}\n}\n"},
		{`"\u00e9\ud83d\ude00<>&/\u007f\u0001\t\"\\"`, "\"\\u00e9\\ud83d\\ude00<>&/\\u007f\\u0001\\t\\\"\\\\\"\n"},
		{"\"é😀\"", "\"\\u00e9\\ud83d\\ude00\"\n"},
		{`[1E5, -0, 1.50, 1e16, 1e-5, 0.0001, -0.0, 123456789012345678901234567890, 1e15, 0.1, 2.5e-10, 1.7976931348623157e308, 5e-324, 1e-400]`,
			"[\n  100000.0,\n  0,\n  1.5,\n  1e+16,\n  1e-05,\n  0.0001,\n  -0.0,\n  123456789012345678901234567890,\n  1000000000000000.0,\n  0.1,\n  2.5e-10,\n  1.7976931348623157e+308,\n  5e-324,\n  0.0\n]\n"},
		{`{"\u00e9":1,"z":2,"Z":3,"\ud83d\ude00":4,"\uffff":5}`, "{\n  \"Z\": 3,\n  \"z\": 2,\n  \"\\u00e9\": 1,\n  \"\\uffff\": 5,\n  \"\\ud83d\\ude00\": 4\n}\n"},
		{`[[],[{}],{"a":[1,{"b":null}]}]`, "[\n  [],\n  [\n    {}\n  ],\n  {\n    \"a\": [\n      1,\n      {\n        \"b\": null\n      }\n    ]\n  }\n]\n"},
		{`{"k":true,"f":false}`, "{\n  \"f\": false,\n  \"k\": true\n}\n"},
		{`"\u2028\b\f\r\n"`, "\"\\u2028\\b\\f\\r\\n\"\n"},
		{" \n\t{ } \r\n", "{}\n"},
	}
	for _, tt := range tests {
		got, err := Canonical([]byte(tt.in))
		if err != nil || string(got) != tt.want {
			t.Errorf("Canonical(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			continue
		}
		again, err := Canonical(got)
		if err != nil || !bytes.Equal(again, got) {
			t.Errorf("Canonical(Canonical(%q)) = %q, %v; want idempotent", tt.in, again, err)
		}
	}
}

// TestValidateNonObject: a top level that is not an object is an error
// (exit 2), not a violation.
func TestValidateNonObject(t *testing.T) {
	for _, in := range []string{`[]`, `"x"`, `3`, `null`} {
		vs, err := Validate(KindInvocation, []byte(in))
		var ne *NotObjectError
		if !errors.As(err, &ne) || vs != nil {
			t.Errorf("Validate(%s) = %v, %v; want *NotObjectError", in, vs, err)
		}
	}
}

// TestInfer: kinds are told apart by their own fields.
func TestInfer(t *testing.T) {
	tests := []struct {
		in   string
		want Kind
		err  bool
	}{
		{`{"candidate":{}}`, KindInvocation, false},
		{`{"current_phase":"x","schema_version":"1.0"}`, KindCheckpoint, false},
		{`{"terminal_state":"blocked"}`, KindTerminalResult, false},
		{`{"schema_version":"1.0","invocation_id":"x"}`, "", true},
		{`{"candidate":{},"terminal_state":"x"}`, "", true},
	}
	for _, tt := range tests {
		doc, _ := DecodeObject([]byte(tt.in))
		got, err := Infer(doc)
		if got != tt.want || (err != nil) != tt.err {
			t.Errorf("Infer(%s) = %q, %v; want %q, error %v", tt.in, got, err, tt.want, tt.err)
		}
	}
}

// TestPublishedSchemas: the published schemas are canonical, embedded
// byte for byte, compile (the engine refuses a schema that says more than
// it checks), and say in a $comment how integers are read.
func TestPublishedSchemas(t *testing.T) {
	if len(compiledSchemas()) != len(SchemaNames) {
		t.Fatalf("compiled %d schemas, want %d", len(compiledSchemas()), len(SchemaNames))
	}
	for _, name := range SchemaNames {
		data, err := Schema(Kind(name))
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := IsCanonical(data); !ok || err != nil {
			t.Errorf("schema %s is not canonical: %v", name, err)
		}
		disk, err := os.ReadFile(filepath.Join("schemas", name+".schema.json"))
		if err != nil || !bytes.Equal(disk, data) {
			t.Errorf("embedded schema %s differs from the published file", name)
		}
		if !strings.Contains(string(data), `"$comment"`) || !strings.Contains(string(data), "3.0") {
			t.Errorf("schema %s lacks the $comment about integers", name)
		}
	}
	if _, err := Schema("card"); err == nil {
		t.Error(`Schema("card") = nil error`)
	}
}

// TestViolationJSON pins the --json field names.
func TestViolationJSON(t *testing.T) {
	b, _ := json.Marshal(Violation{Path: "$.a", Rule: "r", Msg: "m"})
	if string(b) != `{"path":"$.a","rule":"r","message":"m"}` {
		t.Errorf("json.Marshal(Violation) = %s", b)
	}
}

// TestSchemaViolationText pins the schema violations' text as the CLI
// prints it (PATH: RULE: MSG): the rule ids and messages are an interface.
func TestSchemaViolationText(t *testing.T) {
	tests := []struct {
		ops  []op
		want string
	}{
		{[]op{set("fix_cycle_budget.max_fix_cycles", `3.0`)}, "$.fix_cycle_budget.max_fix_cycles: schema.type: expected integer, got number with a fraction or exponent"},
		{[]op{set("fix_cycle_budget.max_fix_cycles", `0`)}, "$.fix_cycle_budget.max_fix_cycles: schema.minimum: must be at least 1, got 0"},
		{[]op{set("fix_cycle_budget.max_fix_cycles", `11`)}, "$.fix_cycle_budget.max_fix_cycles: schema.maximum: must be at most 10, got 11"},
		{[]op{set("candidate.head_sha", `"ABC"`)}, "$.candidate.head_sha: schema.pattern: must match ^[0-9a-f]{40}$ (a SHA is exactly 40 lowercase hex characters)"},
		{[]op{set("candidate.all_changes_committed", `1`)}, "$.candidate.all_changes_committed: schema.const: must be true"},
		{[]op{set("schema_version", `"1.1"`)}, `$.schema_version: schema.const: must be "1.0"`},
		{[]op{set("invocation_id", `""`)}, "$.invocation_id: schema.minLength: must be at least 1 character(s) long"},
		{[]op{del("candidate.diff.content")}, "$.candidate.diff.content: schema.required: required field is missing"},
		{[]op{set("candidate.diff.a b", `1`)}, `$.candidate.diff["a b"]: schema.additionalProperties: unknown field`},
	}
	for _, tt := range tests {
		doc := example(t, invLocal)
		apply(t, doc, tt.ops...)
		vs, err := ValidateDocument(KindInvocation, doc)
		if err != nil || len(vs) != 1 || vs[0].String() != tt.want {
			t.Errorf("ValidateDocument(%v) = %v, %v; want [%s]", tt.ops, vs, err, tt.want)
		}
	}
}

// TestInferMutated: a document that lost any one field, or gained any one
// field of another kind, is still recognized, so a held-out mutation is
// judged as the kind it was (exit 1), not refused as unknown (exit 2).
func TestInferMutated(t *testing.T) {
	for _, base := range []string{invLocal, invUpdate, cpLocal, cpUpdate, trLocal, trUpdateBl} {
		kind := kindOf(base)
		for _, k := range sortedKeys(example(t, base)) {
			doc := example(t, base)
			delete(doc, k)
			if got, err := Infer(doc); got != kind {
				t.Errorf("Infer(%s without %s) = %q, %v; want %s", base, k, got, err, kind)
			}
		}
		for _, other := range SchemaNames {
			for _, k := range compiledSchemas()[Kind(other)].Required() {
				doc := example(t, base)
				if _, ok := doc[k]; ok {
					continue
				}
				doc[k] = "x"
				if got, err := Infer(doc); got != kind {
					t.Errorf("Infer(%s plus %s) = %q, %v; want %s", base, k, got, err, kind)
				}
			}
		}
	}
}

// TestHostileNumbers: huge exponents and long integers are handled in
// bounded time everywhere a number is compared or written.
func TestHostileNumbers(t *testing.T) {
	doc := example(t, cpLocal)
	apply(t, doc, set("original_cycle_budget", `1e-999999999`), set("schema_version", `1e-999999999`))
	inv := example(t, invLocal)
	apply(t, inv, set("fix_cycle_budget.max_fix_cycles", `1e-999999999`))
	CheckCheckpointAgainstInvocation(inv, doc)
	if vs, _ := ValidateDocument(KindCheckpoint, doc); len(vs) == 0 {
		t.Error("1e-999999999 accepted as a budget")
	}
	for lit, rule := range map[string]string{"-" + strings.Repeat("9", 40): "schema.minimum", strings.Repeat("9", 40): "schema.maximum"} {
		d := example(t, invLocal)
		apply(t, d, set("fix_cycle_budget.max_fix_cycles", lit))
		if vs, _ := ValidateDocument(KindInvocation, d); !sameRules(vs, []string{rule}) {
			t.Errorf("budget %.10s...: %v, want %s", lit, vs, rule)
		}
	}
	if c, err := Canonical([]byte(`[1e-999999999, ` + strings.Repeat("9", 5000) + `]`)); err != nil || !strings.HasPrefix(string(c), "[\n  0.0,\n  999") {
		t.Errorf("Canonical(hostile numbers) = %.40q, %v", c, err)
	}
}
