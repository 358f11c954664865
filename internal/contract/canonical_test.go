package contract

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

// TestDecodeErrors: input that is not a strict JSON document is a
// *DecodeError with a position, and no value.
func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name, in  string
		line, col int
	}{
		{"empty", "", 1, 1},
		{"duplicate_key", "{\n  \"a\": 1,\n  \"a\": 2\n}", 3, 3},
		{"nested_duplicate_key", `{"x":{"b":1,"b":1}}`, 1, 13},
		{"lone_high_surrogate", `"\ud83d"`, 1, 2},
		{"lone_low_surrogate", `"\ude00x"`, 1, 2},
		{"invalid_utf8", "\"\xff\"", 1, 2},
		{"trailing_data", `{} {}`, 1, 4},
		{"nan", `[NaN]`, 1, 2},
		{"infinity", `[Infinity]`, 1, 2},
		{"overflow", `[1e400]`, 1, 2},
		{"leading_zero", `[01]`, 1, 3},
		{"bom", "\ufeff{}", 1, 1},
		{"raw_control_char", "\"a\tb\"", 1, 3},
		{"single_quotes", `{'a':1}`, 1, 2},
		{"trailing_comma", `[1,]`, 1, 4},
		{"bad_escape", `"\x"`, 1, 2},
		{"unterminated", `{"a":"b`, 1, 8},
		{"too_deep", strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1), 1, MaxDepth + 1},
	}
	for _, tt := range tests {
		v, err := Decode([]byte(tt.in))
		var de *DecodeError
		if !errors.As(err, &de) || v != nil {
			t.Errorf("Decode(%q) = %v, %v; want nil and a *DecodeError", tt.in, v, err)
			continue
		}
		if de.Line != tt.line || de.Col != tt.col {
			t.Errorf("Decode(%q) error at %d:%d (%v), want %d:%d", tt.name, de.Line, de.Col, de, tt.line, tt.col)
		}
	}
	if _, err := Decode(make([]byte, MaxDocumentBytes+1)); err == nil {
		t.Errorf("Decode(%d bytes) = nil error, want the size limit", MaxDocumentBytes+1)
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

// TestSchemasEngineSubset: the published schemas use only the keywords the
// engine interprets, and the engine refuses any other.
func TestSchemasEngineSubset(t *testing.T) {
	for _, bad := range []string{`{"oneOf":[]}`, `{"$ref":"#"}`, `{"additionalProperties":true}`, `{"type":"number"}`, `{"format":"date-time"}`} {
		v, _ := Decode([]byte(bad))
		if _, err := compileSchema(v, "#"); err == nil {
			t.Errorf("compileSchema(%s) = nil error, want unsupported", bad)
		}
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
			for _, k := range compiledSchemas()[Kind(other)].required {
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
	if !numbersEqual("-0", "0") || !numbersEqual("1", "1.0") || numbersEqual("1", "2") || numbersEqual("1e-999999999", "1") {
		t.Error("numbersEqual is wrong")
	}
	if c, err := Canonical([]byte(`[1e-999999999, ` + strings.Repeat("9", 5000) + `]`)); err != nil || !strings.HasPrefix(string(c), "[\n  0.0,\n  999") {
		t.Errorf("Canonical(hostile numbers) = %.40q, %v", c, err)
	}
}
