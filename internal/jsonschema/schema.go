// Package jsonschema owns failpass's one JSON Schema engine: a strict JSON decoder and a checker of the draft 2020-12 subset failpass's schemas use.
package jsonschema

import (
	"encoding/json"
	"fmt"
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"unicode/utf8"
)

// Schema is a compiled schema. It interprets the keyword subset that both
// the loop documents (internal/loopdoc) and the peer's review-suite
// documents (internal/model) use: type (object, array, string, boolean,
// integer), const, enum, minLength (in code points), pattern (Go's RE2,
// unanchored as in JSON Schema: a schema anchors with ^ and $, and $
// matches only at the very end, never before a final newline), minimum
// and maximum (integers, on "type": "integer"), minItems, items, required,
// properties, additionalProperties: false, and oneOf. Annotations ($schema,
// $id, $comment, title, description) are allowed and ignored; anything
// else fails compilation, so a schema can never say more than the engine
// checks. There is no $ref: a schema spells everything out.
//
// Integers are judged by spelling (IsInteger): 3.0 and 1e2 are not
// integers here, whatever draft 2020-12 says. A Schema is immutable and
// safe for concurrent use.
type Schema struct{ root *node }

// Problem is one keyword a value fails. Path is the instance path of the
// offending value ($, $.a.b, $["odd key"], $.a[2]); Keyword names the
// failing keyword (type, const, enum, minLength, pattern, minimum,
// maximum, minItems, required, additionalProperties, oneOf); Msg says
// what the value must be, on one ASCII-safe line.
type Problem struct {
	Path    string
	Keyword string
	Msg     string
}

// Compile decodes and compiles a schema document. explain says in words
// what a pattern asks for (keyed by the pattern as the schema spells it),
// for the message of a string that does not match it; it may be nil.
func Compile(data []byte, explain map[string]string) (*Schema, error) {
	v, err := Decode(data)
	if err != nil {
		return nil, fmt.Errorf("jsonschema: %w", err)
	}
	root, err := compile(v, "#", explain)
	if err != nil {
		return nil, fmt.Errorf("jsonschema: %w", err)
	}
	return &Schema{root: root}, nil
}

// Required returns the fields the top-level object requires, in the
// schema's order.
func (s *Schema) Required() []string { return slices.Clone(s.root.required) }

// Validate checks a decoded value (as Decode returns it) and returns every
// problem, nil when there is none. A value of the wrong type is one problem
// and is not examined further; every missing required field and every
// unknown field of a closed object is a problem. Problems come in a fixed
// order: required fields in the schema's order, then fields by name.
func (s *Schema) Validate(v any) []Problem {
	var out []Problem
	s.root.check(v, "$", &out)
	return out
}

// node is one compiled schema object.
type node struct {
	typ        string
	constVal   any
	hasConst   bool
	enum       []any
	minLength  int // 0: none
	pattern    *regexp.Regexp
	patternMsg string
	minimum    *bound
	maximum    *bound
	minItems   int // 0: none
	items      *node
	required   []string
	properties map[string]*node
	names      []string // the properties' names, sorted
	closed     bool     // additionalProperties: false
	oneOf      []*node
}

// bound is an integer minimum or maximum. Most bounds and values fit in
// an int64 and compare without big.Int.
type bound struct {
	big   *big.Int
	small int64
	fits  bool
}

var schemaTypes = map[string]bool{"object": true, "array": true, "string": true, "boolean": true, "integer": true}

func compile(v any, at string, explain map[string]string) (*node, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: schema is not an object", at)
	}
	n := &node{}
	for k, kv := range m {
		switch k {
		case "$schema", "$id", "$comment", "title", "description":
		case "type":
			s, ok := kv.(string)
			if !ok || !schemaTypes[s] {
				return nil, fmt.Errorf("%s: unsupported type %s", at, Literal(kv))
			}
			n.typ = s
		case "const":
			n.constVal, n.hasConst = kv, true
		case "enum":
			e, ok := kv.([]any)
			if !ok || len(e) == 0 {
				return nil, fmt.Errorf("%s: enum is not a non-empty array", at)
			}
			n.enum = e
		case "minLength", "minItems":
			num, ok := kv.(json.Number)
			i, err := strconv.Atoi(string(num))
			if !ok || err != nil || i < 0 {
				return nil, fmt.Errorf("%s: %s is not a non-negative integer", at, k)
			}
			if k == "minLength" {
				n.minLength = i
			} else {
				n.minItems = i
			}
		case "minimum", "maximum":
			num, ok := kv.(json.Number)
			b, ok2 := new(big.Int).SetString(string(num), 10)
			if !ok || !ok2 {
				return nil, fmt.Errorf("%s: %s is not an integer", at, k)
			}
			bd := &bound{big: b, small: b.Int64(), fits: b.IsInt64()}
			if k == "minimum" {
				n.minimum = bd
			} else {
				n.maximum = bd
			}
		case "pattern":
			s, ok := kv.(string)
			if !ok {
				return nil, fmt.Errorf("%s: pattern is not a string", at)
			}
			re, err := regexp.Compile(s)
			if err != nil {
				return nil, fmt.Errorf("%s: pattern: %v", at, err)
			}
			n.pattern, n.patternMsg = re, "must match "+s
			if why := explain[s]; why != "" {
				n.patternMsg += " (" + why + ")"
			}
		case "items":
			c, err := compile(kv, at+"/items", explain)
			if err != nil {
				return nil, err
			}
			n.items = c
		case "required":
			r, ok := kv.([]any)
			if !ok {
				return nil, fmt.Errorf("%s: required is not an array", at)
			}
			for _, x := range r {
				s, ok := x.(string)
				if !ok || slices.Contains(n.required, s) {
					return nil, fmt.Errorf("%s: required holds a non-string or a repeated name", at)
				}
				n.required = append(n.required, s)
			}
		case "properties":
			pm, ok := kv.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("%s: properties is not an object", at)
			}
			n.properties = map[string]*node{}
			for pk, pv := range pm {
				c, err := compile(pv, at+"/properties/"+pk, explain)
				if err != nil {
					return nil, err
				}
				n.properties[pk] = c
				n.names = append(n.names, pk)
			}
			slices.Sort(n.names)
		case "additionalProperties":
			if kv != false {
				return nil, fmt.Errorf("%s: only additionalProperties: false is supported", at)
			}
			n.closed = true
		case "oneOf":
			alts, ok := kv.([]any)
			if !ok || len(alts) == 0 {
				return nil, fmt.Errorf("%s: oneOf is not a non-empty array", at)
			}
			for i, a := range alts {
				c, err := compile(a, at+"/oneOf/"+strconv.Itoa(i), explain)
				if err != nil {
					return nil, err
				}
				n.oneOf = append(n.oneOf, c)
			}
		default:
			return nil, fmt.Errorf("%s: unsupported keyword %q", at, k)
		}
	}
	// The engine compares bounds with integers only; on any other value a
	// bound would say more than it checks.
	if (n.minimum != nil || n.maximum != nil) && n.typ != "integer" {
		return nil, fmt.Errorf("%s: minimum and maximum need \"type\": \"integer\"", at)
	}
	return n, nil
}

// typeMatches reports whether v has the schema type t. An integer is a
// json.Number without fraction or exponent, never a boolean.
func typeMatches(t string, v any) bool {
	switch t {
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "integer":
		n, ok := v.(json.Number)
		return ok && IsInteger(n)
	}
	return false
}

// check appends one problem per failed keyword of v against n.
func (n *node) check(v any, path string, out *[]Problem) {
	add := func(p, keyword, format string, args ...any) {
		*out = append(*out, Problem{Path: p, Keyword: keyword, Msg: fmt.Sprintf(format, args...)})
	}
	if n.typ != "" && !typeMatches(n.typ, v) {
		add(path, "type", "expected %s, got %s", n.typ, TypeName(v))
		return
	}
	if n.hasConst && !Equal(n.constVal, v) {
		add(path, "const", "must be %s", Literal(n.constVal))
	}
	if n.enum != nil && !slices.ContainsFunc(n.enum, func(e any) bool { return Equal(e, v) }) {
		add(path, "enum", "must be one of %s, got %s", enumList(n.enum), Literal(v))
	}
	switch v := v.(type) {
	case string:
		if n.minLength > 0 && utf8.RuneCountInString(v) < n.minLength {
			add(path, "minLength", "must be at least %d character(s) long", n.minLength)
		}
		if n.pattern != nil && !n.pattern.MatchString(v) {
			add(path, "pattern", "%s", n.patternMsg)
		}
	case json.Number:
		if n.minimum != nil && n.minimum.above(v) {
			add(path, "minimum", "must be at least %s, got %s", n.minimum.big, sized(v))
		}
		if n.maximum != nil && n.maximum.below(v) {
			add(path, "maximum", "must be at most %s, got %s", n.maximum.big, sized(v))
		}
	case []any:
		if len(v) < n.minItems {
			add(path, "minItems", "must have at least %d item(s)", n.minItems)
		}
		if n.items != nil {
			for i, e := range v {
				n.items.check(e, IndexPath(path, i), out)
			}
		}
	case map[string]any:
		n.checkObject(v, path, out)
	}
	if n.oneOf != nil {
		n.checkOneOf(v, path, out)
	}
}

// checkObject reports missing required fields in the schema's order, then
// the fields by name: a known one's own problems, an unknown one in a
// closed object.
func (n *node) checkObject(obj map[string]any, path string, out *[]Problem) {
	for _, r := range n.required {
		if _, ok := obj[r]; !ok {
			*out = append(*out, Problem{Path: KeyPath(path, r), Keyword: "required", Msg: "required field is missing"})
		}
	}
	unknown := 0
	for k := range obj {
		if _, ok := n.properties[k]; !ok {
			unknown++
		}
	}
	names := n.names // sorted already: the common case allocates nothing
	if unknown > 0 {
		names = make([]string, 0, len(obj))
		for k := range obj {
			names = append(names, k)
		}
		slices.Sort(names)
	}
	for _, k := range names {
		val, present := obj[k]
		if !present {
			continue
		}
		child, known := n.properties[k]
		switch {
		case known:
			child.check(val, KeyPath(path, k), out)
		case n.closed:
			*out = append(*out, Problem{Path: KeyPath(path, k), Keyword: "additionalProperties", Msg: "unknown field"})
		}
	}
}

// checkOneOf requires exactly one alternative to hold. When none does, the
// problems reported are the closest alternative's (the fewest, the first
// on a tie), which names what to fix far better than "matches none".
func (n *node) checkOneOf(v any, path string, out *[]Problem) {
	matched := 0
	var closest []Problem
	for _, alt := range n.oneOf {
		var p []Problem
		alt.check(v, path, &p)
		if len(p) == 0 {
			matched++
		} else if closest == nil || len(p) < len(closest) {
			closest = p
		}
	}
	switch {
	case matched == 0:
		*out = append(*out, closest...)
	case matched > 1:
		*out = append(*out, Problem{Path: path, Keyword: "oneOf", Msg: "matches more than one alternative; it must match exactly one"})
	}
}

// above reports whether the integer literal n is below the minimum b.
func (b *bound) above(n json.Number) bool { return cmpBound(n, b) < 0 }

// below reports whether the integer literal n is above the maximum b.
func (b *bound) below(n json.Number) bool { return cmpBound(n, b) > 0 }

// cmpBound compares an integer literal with a bound (-1, 0, +1). Bounds are
// small; a literal of more than 30 digits is out of any of them by its sign
// alone and is not parsed (big.Int parsing is superlinear, and a hostile
// document may hold millions of digits).
func cmpBound(n json.Number, b *bound) int {
	if len(n) <= 18 && b.fits {
		i, err := strconv.ParseInt(string(n), 10, 64)
		if err == nil {
			return cmpInt(i, b.small)
		}
	}
	if len(n) > 30 {
		if n[0] == '-' {
			return -1
		}
		return 1
	}
	x, ok := new(big.Int).SetString(string(n), 10)
	if !ok {
		return 0
	}
	return x.Cmp(b.big)
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// sized renders an out-of-bounds integer: as written, or by its length
// when it is too long to show.
func sized(n json.Number) string {
	switch {
	case len(n) <= 30:
		return string(n)
	case n[0] == '-':
		return fmt.Sprintf("a %d-digit negative integer", len(n)-1)
	}
	return fmt.Sprintf("a %d-digit integer", len(n))
}

func enumList(vals []any) string {
	s := ""
	for i, v := range vals {
		if i > 0 {
			s += ", "
		}
		s += Literal(v)
	}
	return s
}
