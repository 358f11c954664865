package jsonschema

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	santhosh "github.com/santhosh-tekuri/jsonschema/v6"
)

// A schema using every keyword the engine interprets.
const testSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$id": "https://example.invalid/test.schema.json",
  "$comment": "annotations are ignored",
  "title": "test",
  "description": "every keyword",
  "type": "object",
  "additionalProperties": false,
  "required": ["version", "sha", "count"],
  "properties": {
    "version": {"const": "1.0"},
    "done": {"type": "boolean", "const": true},
    "sha": {"type": "string", "pattern": "^[0-9a-f]{4}$"},
    "id": {"type": "string", "pattern": "[a-z]"},
    "name": {"type": "string", "minLength": 2},
    "count": {"type": "integer", "minimum": 1, "maximum": 10},
    "big": {"type": "integer", "minimum": -100000000000000000000, "maximum": 100000000000000000000},
    "mode": {"enum": ["a", "b", 3]},
    "tags": {"type": "array", "minItems": 1, "items": {"type": "string", "minLength": 1}},
    "open": {"type": "object"},
    "odd key": {"type": "boolean"},
    "diff": {"oneOf": [
      {"type": "object", "additionalProperties": false, "required": ["content"], "properties": {"content": {"type": "string", "minLength": 1}}},
      {"type": "object", "additionalProperties": false, "required": ["path"], "properties": {"path": {"type": "string", "minLength": 1}, "x": {"type": "boolean"}}}
    ]},
    "either": {"oneOf": [{"type": "string"}, {"type": "string", "minLength": 1}]}
  }
}`

func mustCompile(t testing.TB, schema string, explain map[string]string) *Schema {
	t.Helper()
	s, err := Compile([]byte(schema), explain)
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	return s
}

func decode(t testing.TB, doc string) any {
	t.Helper()
	v, err := Decode([]byte(doc))
	if err != nil {
		t.Fatalf("bad test document %.80s: %v", doc, err)
	}
	return v
}

type validateCase struct {
	name string
	doc  string
	want []Problem // nil: valid
	// draft2020 is false where the engine is deliberately stricter than
	// draft 2020-12 (integers by spelling).
	draft2020Differs bool
}

func validateCases() []validateCase {
	p := func(path, kw, msg string) Problem { return Problem{Path: path, Keyword: kw, Msg: msg} }
	return []validateCase{
		{name: "minimal", doc: `{"version":"1.0","sha":"00ff","count":1}`},
		{name: "every field", doc: `{"version":"1.0","done":true,"sha":"00ff","id":"X-y","name":"ab","count":10,"big":-99999999999999999999,
			"mode":3,"tags":["t"],"open":{"anything":[1]},"odd key":false,"diff":{"path":"p","x":true},"either":""}`},
		{name: "not an object", doc: `[1]`, want: []Problem{p("$", "type", "expected object, got array")}},
		{name: "missing required in order", doc: `{}`, want: []Problem{
			p("$.version", "required", "required field is missing"), p("$.sha", "required", "required field is missing"),
			p("$.count", "required", "required field is missing")}},
		{name: "unknown fields by name, quoted when odd", doc: `{"version":"1.0","sha":"00ff","count":1,"zz":1,"a.b\n":2,"aa":3}`, want: []Problem{
			p(`$["a.b\n"]`, "additionalProperties", "unknown field"), p("$.aa", "additionalProperties", "unknown field"),
			p("$.zz", "additionalProperties", "unknown field")}},
		{name: "problems in field order", doc: `{"version":"2","sha":"00FF","count":0,"mode":"c"}`, want: []Problem{
			p("$.count", "minimum", "must be at least 1, got 0"), p("$.mode", "enum", `must be one of "a", "b", 3, got "c"`),
			p("$.sha", "pattern", "must match ^[0-9a-f]{4}$ (four hex digits)"), p("$.version", "const", `must be "1.0"`)}},
		{name: "const is typed", doc: `{"version":1.0,"sha":"00ff","count":1}`, want: []Problem{p("$.version", "const", `must be "1.0"`)}},
		{name: "const true rejects 1", doc: `{"version":"1.0","sha":"00ff","count":1,"done":false}`, want: []Problem{p("$.done", "const", "must be true")}},
		{name: "type mismatch is the node's only problem", doc: `{"version":"1.0","sha":7,"count":1,"done":1}`, want: []Problem{
			p("$.done", "type", "expected boolean, got integer"), p("$.sha", "type", "expected string, got integer")}},
		{name: "integer by spelling: 3.0", doc: `{"version":"1.0","sha":"00ff","count":3.0}`, draft2020Differs: true, want: []Problem{
			p("$.count", "type", "expected integer, got number with a fraction or exponent")}},
		{name: "integer by spelling: 1e0", doc: `{"version":"1.0","sha":"00ff","count":1e0}`, draft2020Differs: true, want: []Problem{
			p("$.count", "type", "expected integer, got number with a fraction or exponent")}},
		{name: "integer not a boolean or string", doc: `{"version":"1.0","sha":"00ff","count":true,"big":"1"}`, want: []Problem{
			p("$.big", "type", "expected integer, got string"), p("$.count", "type", "expected integer, got boolean")}},
		{name: "maximum", doc: `{"version":"1.0","sha":"00ff","count":11}`, want: []Problem{p("$.count", "maximum", "must be at most 10, got 11")}},
		{name: "bounds beyond int64", doc: `{"version":"1.0","sha":"00ff","count":1,"big":100000000000000000001}`, want: []Problem{
			p("$.big", "maximum", "must be at most 100000000000000000000, got 100000000000000000001")}},
		{name: "int64 value, big bound", doc: `{"version":"1.0","sha":"00ff","count":1,"big":-9223372036854775808}`},
		{name: "long integers by their sign", doc: `{"version":"1.0","sha":"00ff","count":-` + strings.Repeat("9", 40) + `,"big":` + strings.Repeat("9", 40) + `}`, want: []Problem{
			p("$.big", "maximum", "must be at most 100000000000000000000, got a 40-digit integer"),
			p("$.count", "minimum", "must be at least 1, got a 40-digit negative integer")}},
		{name: "minLength counts code points", doc: `{"version":"1.0","sha":"00ff","count":1,"name":"é"}`, want: []Problem{
			p("$.name", "minLength", "must be at least 2 character(s) long")}},
		{name: "two code points", doc: `{"version":"1.0","sha":"00ff","count":1,"name":"éé"}`},
		{name: "pattern: $ is the very end", doc: `{"version":"1.0","sha":"00ff\n","count":1}`, want: []Problem{
			p("$.sha", "pattern", "must match ^[0-9a-f]{4}$ (four hex digits)")}},
		{name: "pattern: unanchored searches", doc: `{"version":"1.0","sha":"00ff","count":1,"id":"ABC"}`, want: []Problem{p("$.id", "pattern", "must match [a-z]")}},
		{name: "array: minItems and items by index", doc: `{"version":"1.0","sha":"00ff","count":1,"tags":[]}`, want: []Problem{
			p("$.tags", "minItems", "must have at least 1 item(s)")}},
		{name: "array items", doc: `{"version":"1.0","sha":"00ff","count":1,"tags":["a","",3]}`, want: []Problem{
			p("$.tags[1]", "minLength", "must be at least 1 character(s) long"), p("$.tags[2]", "type", "expected string, got integer")}},
		{name: "open object", doc: `{"version":"1.0","sha":"00ff","count":1,"open":{"x":{"y":[]}}}`},
		{name: "oneOf: the closest alternative's problems", doc: `{"version":"1.0","sha":"00ff","count":1,"diff":{"path":""}}`, want: []Problem{
			p("$.diff.path", "minLength", "must be at least 1 character(s) long")}},
		{name: "oneOf: first alternative on a tie", doc: `{"version":"1.0","sha":"00ff","count":1,"diff":{}}`, want: []Problem{
			p("$.diff.content", "required", "required field is missing")}},
		{name: "oneOf: both shapes at once", doc: `{"version":"1.0","sha":"00ff","count":1,"diff":{"content":"c","path":"p"}}`, want: []Problem{
			p("$.diff.path", "additionalProperties", "unknown field")}},
		{name: "oneOf: more than one alternative", doc: `{"version":"1.0","sha":"00ff","count":1,"either":"x"}`, want: []Problem{
			p("$.either", "oneOf", "matches more than one alternative; it must match exactly one")}},
		{name: "hostile string cut in a message", doc: `{"version":"1.0","sha":"00ff","count":1,"mode":"` + strings.Repeat("é", 100) + `"}`, want: []Problem{
			p("$.mode", "enum", `must be one of "a", "b", 3, got "`+strings.Repeat(`\u00e9`, 80)+`..."`)}},
	}
}

// TestValidate: each keyword's verdict, path, keyword and message.
func TestValidate(t *testing.T) {
	s := mustCompile(t, testSchema, map[string]string{"^[0-9a-f]{4}$": "four hex digits"})
	for _, tt := range validateCases() {
		got := s.Validate(decode(t, tt.doc))
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: Validate(%.80s) =\n  %v\nwant\n  %v", tt.name, tt.doc, got, tt.want)
		}
	}
	if got := s.Required(); !reflect.DeepEqual(got, []string{"version", "sha", "count"}) {
		t.Errorf("Required() = %v", got)
	}
}

// TestSecondOpinion: a full draft 2020-12 validator agrees with every
// verdict of TestValidate, except where the engine is stricter on purpose.
func TestSecondOpinion(t *testing.T) {
	c := santhosh.NewCompiler()
	c.DefaultDraft(santhosh.Draft2020)
	doc, err := santhosh.UnmarshalJSON(strings.NewReader(testSchema))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.AddResource("mem:///test.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	full, err := c.Compile("mem:///test.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	ours := mustCompile(t, testSchema, nil)
	for _, tt := range validateCases() {
		inst, err := santhosh.UnmarshalJSON(strings.NewReader(tt.doc))
		if err != nil {
			t.Fatal(err)
		}
		theirs := full.Validate(inst) == nil
		mine := ours.Validate(decode(t, tt.doc)) == nil
		if (theirs != mine) != tt.draft2020Differs {
			t.Errorf("%s: ours valid=%v, draft 2020-12 valid=%v", tt.name, mine, theirs)
		}
	}
}

// TestCompileRefuses: a schema that would say more than the engine checks
// does not compile.
func TestCompileRefuses(t *testing.T) {
	for _, bad := range []string{
		`[]`, `{"$ref":"#"}`, `{"$defs":{}}`, `{"format":"date-time"}`, `{"type":"number"}`, `{"type":"null"}`,
		`{"type":["string","null"]}`, `{"additionalProperties":true}`, `{"additionalProperties":{}}`, `{"oneOf":[]}`,
		`{"anyOf":[{}]}`, `{"allOf":[{}]}`, `{"not":{}}`, `{"maxLength":1}`, `{"maxItems":1}`, `{"uniqueItems":true}`,
		`{"patternProperties":{}}`, `{"enum":[]}`, `{"enum":"a"}`, `{"minLength":-1}`, `{"minLength":1.5}`,
		`{"minimum":1.5,"type":"integer"}`, `{"minimum":0}`, `{"type":"string","maximum":3}`, `{"pattern":"("}`,
		`{"pattern":1}`, `{"required":["a","a"]}`, `{"required":[1]}`, `{"properties":{"a":{"exclusiveMinimum":0}}}`,
		`{"items":{"type":"float"}}`, `{"oneOf":[{"if":{}}]}`, `{"type":"object"} {}`, `{"a":1,"a":1}`,
	} {
		if _, err := Compile([]byte(bad), nil); err == nil {
			t.Errorf("Compile(%s) = nil error, want refused", bad)
		}
	}
	if _, err := Compile([]byte(testSchema), nil); err != nil {
		t.Errorf("Compile(testSchema) = %v", err)
	}
}

// TestHostileNumbers: long integers and huge exponents are judged in
// bounded time, and equal as Python sees them.
func TestHostileNumbers(t *testing.T) {
	s := mustCompile(t, testSchema, nil)
	huge := strings.Repeat("9", 1<<20)
	start := time.Now()
	for _, lit := range []string{huge, "-" + huge, "1e-999999999", "0." + strings.Repeat("0", 1<<20) + "5"} {
		doc := decode(t, `{"version":"1.0","sha":"00ff","count":1,"big":`+lit+`,"mode":`+lit+`}`)
		if len(s.Validate(doc)) != 2 {
			t.Errorf("Validate(big=%.12s...) = %v, want two problems", lit, s.Validate(doc))
		}
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("hostile numbers took %v", d)
	}
	for _, tt := range []struct {
		a, b any
		want bool
	}{
		{json.Number("-0"), json.Number("0"), true},
		{json.Number("1"), json.Number("1.0"), true},
		{json.Number("1E5"), json.Number("100000"), true},
		{json.Number("1"), json.Number("2"), false},
		{json.Number("1e-999999999"), json.Number("1"), false},
		{json.Number("1"), "1", false},
		{true, json.Number("1"), false},
		{nil, nil, true},
		{[]any{"a", json.Number("1")}, []any{"a", json.Number("1.0")}, true},
		{[]any{"a"}, []any{"a", "b"}, false},
		{map[string]any{"a": nil}, map[string]any{"a": nil}, true},
		{map[string]any{"a": nil}, map[string]any{"b": nil}, false},
	} {
		if got := Equal(tt.a, tt.b); got != tt.want {
			t.Errorf("Equal(%#v, %#v) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

// TestMessagesHelpers pins what messages show of a value and of a key.
func TestMessagesHelpers(t *testing.T) {
	for _, tt := range []struct {
		v    any
		want string
	}{
		{"a\"b\n\u2028", `"a\"b\n\u2028"`},
		{json.Number("-1.50"), "-1.50"},
		{json.Number(strings.Repeat("1", 100)), strings.Repeat("1", 80) + "..."},
		{true, "true"}, {nil, "null"}, {map[string]any{}, "an object"}, {[]any{}, "an array"},
	} {
		if got := Literal(tt.v); got != tt.want {
			t.Errorf("Literal(%#v) = %q, want %q", tt.v, got, tt.want)
		}
	}
	for _, tt := range []struct{ key, want string }{
		{"a_1", "$.a_1"}, {"_", "$._"}, {"1a", `$["1a"]`}, {"", `$[""]`}, {"a.b", `$["a.b"]`}, {"é", `$["\u00e9"]`}, {"a]", `$["a]"]`},
	} {
		if got := KeyPath("$", tt.key); got != tt.want {
			t.Errorf("KeyPath($, %q) = %q, want %q", tt.key, got, tt.want)
		}
	}
	if got := IndexPath("$.a", 3); got != "$.a[3]" {
		t.Errorf("IndexPath = %q", got)
	}
}

// FuzzValidate: validation never panics, is deterministic, and a valid
// document stays valid written back by encoding/json.
func FuzzValidate(f *testing.F) {
	for _, tt := range validateCases() {
		f.Add([]byte(tt.doc))
	}
	s := mustCompile(f, testSchema, nil)
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := Decode(data)
		if err != nil {
			return
		}
		got := s.Validate(v)
		if again := s.Validate(v); !reflect.DeepEqual(got, again) {
			t.Fatalf("Validate(%q) is not deterministic: %v then %v", data, got, again)
		}
		if len(got) > 0 {
			return
		}
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		w, err := Decode(b.Bytes())
		if err != nil || len(s.Validate(w)) > 0 {
			t.Fatalf("valid %q invalid once re-encoded as %q: %v %v", data, b.Bytes(), err, s.Validate(w))
		}
	})
}
