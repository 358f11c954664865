package jsonschema

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

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
		{"duplicate_key_by_escape", `{"a":1,"\u0061":2}`, 1, 8},
		{"lone_high_surrogate", `"\ud83d"`, 1, 2},
		{"lone_low_surrogate", `"\ude00x"`, 1, 2},
		{"invalid_utf8", "\"\xff\"", 1, 2},
		{"invalid_utf8_after_ascii", "\"abc\xff\"", 1, 5},
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
		{"truncated_literal", `[tru`, 1, 2},
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
			t.Errorf("Decode(%s) error at %d:%d (%v), want %d:%d", tt.name, de.Line, de.Col, de, tt.line, tt.col)
		}
	}
	if _, err := Decode(make([]byte, MaxDocumentBytes+1)); err == nil {
		t.Errorf("Decode(%d bytes) = nil error, want the size limit", MaxDocumentBytes+1)
	}
	deep := strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth)
	if _, err := Decode([]byte(deep)); err != nil {
		t.Errorf("Decode(nesting %d) = %v, want accepted", MaxDepth, err)
	}
}

// TestDecodeErrorText pins the message the CLI prints, with and without
// the file a caller fills in.
func TestDecodeErrorText(t *testing.T) {
	_, err := Decode([]byte(`{"a":1,"a":2}`))
	var de *DecodeError
	if !errors.As(err, &de) || de.Error() != `1:8: invalid JSON: duplicate object key "a"` {
		t.Fatalf("Decode(duplicate) = %v", err)
	}
	de.File = "x.json"
	if got := de.Error(); got != `x.json:1:8: invalid JSON: duplicate object key "a"` {
		t.Errorf("Error() with File = %q", got)
	}
	if len(de.Hints()) == 0 {
		t.Error("Hints() is empty")
	}
}

// TestDecodeValues: the value model, numbers kept as written.
func TestDecodeValues(t *testing.T) {
	tests := []struct {
		in   string
		want any
	}{
		{`{"a":[1,-0,1.50,1E5,true,false,null],"b":{}}`, map[string]any{
			"a": []any{json.Number("1"), json.Number("-0"), json.Number("1.50"), json.Number("1E5"), true, false, nil},
			"b": map[string]any{}}},
		{` "plain" `, "plain"},
		{`"\u00e9\ud83d\ude00\n\"\\\/é"`, "é😀\n\"\\/é"},
		{`"ab\u0063"`, "abc"},
		{`[]`, []any{}},
		{"123456789012345678901234567890", json.Number("123456789012345678901234567890")},
	}
	for _, tt := range tests {
		got, err := Decode([]byte(tt.in))
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Decode(%s) = %#v, %v; want %#v", tt.in, got, err, tt.want)
		}
	}
}

// FuzzDecode: a parse error returns no value; Decode never accepts what
// encoding/json rejects, and what it accepts encoding/json reads as the
// same value (for the documents where the two agree on numbers).
func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{}`, `[]`, `{"a":1,"a":2}`, `"\ud83d"`, `[1E5,-0,1.50]`, "\"\xff\"", "\"a\xc3\xa9\"",
		`{"b":[1,{"c":null}],"a":"\u00e9<&>\ud83d\ude00"}`, `[true,false,1e-7,123456789012345678901234567890,-0.0]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := Decode(data)
		if err != nil {
			if v != nil {
				t.Fatalf("Decode error %v with a value %v", err, v)
			}
			return
		}
		if !json.Valid(data) {
			t.Fatalf("Decode accepted %q, which encoding/json rejects", data)
		}
		dec := json.NewDecoder(strings.NewReader(string(data)))
		dec.UseNumber()
		var w any
		if err := dec.Decode(&w); err != nil || !reflect.DeepEqual(v, w) {
			t.Fatalf("Decode(%q) = %#v; encoding/json reads %#v, %v", data, v, w, err)
		}
	})
}
