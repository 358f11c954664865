package model

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"
)

// The peer's review-suite schemas (review-packet 1.0, review-result 1.4)
// are written down here as Go values, not embedded: they are the peer's
// files, and this is our own reading of them. schema_test.go checks the
// two agree on every test vector when the peer's files are present.
//
// The subset interpreted is the one those schemas use: type, const, enum,
// minLength (in code points), pattern (whole string), minItems, items,
// required, properties, additionalProperties:false, and oneOf. JSON integers
// are not needed by either schema.

// maxDepth bounds nesting of decoded JSON; neither schema nests past 6.
const maxDepth = 32

// Problem is one schema violation at a JSON path ($.a.b[0]).
type Problem struct {
	Path string
	Msg  string
}

func (p Problem) String() string { return p.Path + ": " + p.Msg }

// SchemaError lists every problem a document has against its schema.
type SchemaError struct {
	Doc      string // "review packet", "review result", ...
	Problems []Problem
}

func (e *SchemaError) Error() string {
	const show = 3
	var b strings.Builder
	fmt.Fprintf(&b, "%s does not match its schema: ", e.Doc)
	for i, p := range e.Problems {
		if i == show {
			fmt.Fprintf(&b, "; and %d more", len(e.Problems)-show)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(p.String())
	}
	return b.String()
}

// UserFacing: a malformed document is its author's to fix.
func (e *SchemaError) UserFacing() bool { return true }

func (e *SchemaError) details() []string {
	out := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		out[i] = p.String()
	}
	return out
}

// decodeStrict decodes one JSON value, refusing duplicate object keys
// (encoding/json keeps the last silently, so two readers could see two
// documents), trailing data, invalid UTF-8 and nesting deeper than
// maxDepth. Numbers stay json.Number.
func decodeStrict(data []byte) (any, error) {
	if !utf8.Valid(data) {
		return nil, errors.New("not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec, 0, "$")
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data after the JSON value")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder, depth int, path string) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("%s: nested deeper than %d", path, maxDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		if err == io.EOF {
			return nil, errors.New("empty document")
		}
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			obj := map[string]any{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, fmt.Errorf("%s: %v", path, err)
				}
				k, ok := kt.(string)
				if !ok {
					return nil, fmt.Errorf("%s: object key is not a string", path)
				}
				if _, dup := obj[k]; dup {
					return nil, fmt.Errorf("%s: duplicate key %q", path, k)
				}
				v, err := decodeValue(dec, depth+1, path+"."+k)
				if err != nil {
					return nil, err
				}
				obj[k] = v
			}
			if _, err := dec.Token(); err != nil {
				return nil, fmt.Errorf("%s: %v", path, err)
			}
			return obj, nil
		case '[':
			arr := []any{}
			for dec.More() {
				v, err := decodeValue(dec, depth+1, fmt.Sprintf("%s[%d]", path, len(arr)))
				if err != nil {
					return nil, err
				}
				arr = append(arr, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, fmt.Errorf("%s: %v", path, err)
			}
			return arr, nil
		}
		return nil, fmt.Errorf("%s: unexpected %v", path, t)
	default:
		return t, nil
	}
}

// schema is one node of a JSON Schema in the subset above.
type schema struct {
	typ       string // "object", "array", "string", "boolean", "integer", "" (any)
	minimum   *int64
	props     map[string]*schema
	required  []string
	closed    bool // additionalProperties: false
	items     *schema
	minItems  int
	minLength int
	pattern   *regexp.Regexp
	enum      []string
	constStr  *string
	constBool *bool
	oneOf     []*schema
}

// check appends every problem of v against s to out.
func (s *schema) check(v any, path string, out *[]Problem) {
	bad := func(format string, args ...any) {
		*out = append(*out, Problem{Path: path, Msg: fmt.Sprintf(format, args...)})
	}
	if len(s.oneOf) > 0 {
		n := 0
		var first []Problem
		for i, alt := range s.oneOf {
			var p []Problem
			alt.check(v, path, &p)
			if len(p) == 0 {
				n++
			} else if i == 0 || len(p) < len(first) {
				first = p
			}
		}
		switch {
		case n == 0:
			*out = append(*out, first...)
		case n > 1:
			bad("matches more than one alternative")
		}
		return
	}
	if s.constStr != nil {
		if str, ok := v.(string); !ok || str != *s.constStr {
			bad("must be %q", *s.constStr)
		}
		return
	}
	if s.constBool != nil {
		if b, ok := v.(bool); !ok || b != *s.constBool {
			bad("must be %v", *s.constBool)
		}
		return
	}
	if s.enum != nil {
		str, ok := v.(string)
		if !ok || !contains(s.enum, str) {
			bad("must be one of %s", strings.Join(s.enum, ", "))
		}
		return
	}
	switch s.typ {
	case "string":
		str, ok := v.(string)
		if !ok {
			bad("must be a string")
			return
		}
		if utf8.RuneCountInString(str) < s.minLength {
			if s.minLength == 1 {
				bad("must not be empty")
			} else {
				bad("must be at least %d characters", s.minLength)
			}
		}
		if s.pattern != nil && !s.pattern.MatchString(str) {
			bad("must match %s", s.pattern)
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			bad("must be a boolean")
		}
	case "integer":
		// 3.0 and 1e2 are not integers: the peer's engine reads the JSON
		// number's spelling, not its value.
		n, ok := v.(json.Number)
		if !ok || strings.ContainsAny(string(n), ".eE") {
			bad("must be an integer")
			return
		}
		i, err := n.Int64()
		if err != nil {
			bad("must be an integer in range")
			return
		}
		if s.minimum != nil && i < *s.minimum {
			bad("must be at least %d", *s.minimum)
		}
	case "array":
		arr, ok := v.([]any)
		if !ok {
			bad("must be an array")
			return
		}
		if len(arr) < s.minItems {
			bad("must have at least %d item(s)", s.minItems)
		}
		if s.items != nil {
			for i, it := range arr {
				s.items.check(it, fmt.Sprintf("%s[%d]", path, i), out)
			}
		}
	case "object":
		obj, ok := v.(map[string]any)
		if !ok {
			bad("must be an object")
			return
		}
		for _, k := range s.required {
			if _, ok := obj[k]; !ok {
				*out = append(*out, Problem{Path: path + "." + k, Msg: "is required"})
			}
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			child, known := s.props[k]
			if !known {
				if s.closed {
					*out = append(*out, Problem{Path: path + "." + k, Msg: "is not allowed"})
				}
				continue
			}
			child.check(obj[k], path+"."+k, out)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Constructors keep the two schemas below short and close to their source.

func obj(required []string, props map[string]*schema) *schema {
	return &schema{typ: "object", required: required, props: props, closed: true}
}
func arr(items *schema, minItems int) *schema {
	return &schema{typ: "array", items: items, minItems: minItems}
}
func str(minLength int) *schema { return &schema{typ: "string", minLength: minLength} }
func enum(vals ...string) *schema {
	return &schema{enum: vals}
}
func constString(s string) *schema { return &schema{constStr: &s} }
func constBool(b bool) *schema     { return &schema{constBool: &b} }
func boolean() *schema             { return &schema{typ: "boolean"} }
func integer(min int64) *schema    { return &schema{typ: "integer", minimum: &min} }

// openObj is an object whose keys are not checked (a change contract or
// budget that another package owns).
func openObj() *schema { return &schema{typ: "object"} }

var shaPattern = lazyRegexp(`^[0-9a-f]{40}$`)
var idPattern = lazyRegexp(`^[a-z0-9][a-z0-9._-]*$`)

func sha() *schema { return &schema{typ: "string", pattern: shaPattern()} }
func id() *schema  { return &schema{typ: "string", pattern: idPattern()} }

// validateSchema decodes data strictly and checks it against s.
func validateSchema(doc string, s *schema, data []byte) (any, error) {
	v, err := decodeStrict(data)
	if err != nil {
		return nil, &SchemaError{Doc: doc, Problems: []Problem{{Path: "$", Msg: err.Error()}}}
	}
	var problems []Problem
	s.check(v, "$", &problems)
	if len(problems) > 0 {
		return nil, &SchemaError{Doc: doc, Problems: problems}
	}
	return v, nil
}
