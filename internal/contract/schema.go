package contract

import (
	"embed"
	"encoding/json"
	"fmt"
	"math/big"
	"regexp"
	"sort"
	"strconv"
	"sync"
	"unicode/utf8"
)

// The published schemas live in internal/contract/schemas/ because go:embed
// only reaches files under the package directory; docs/loop-contracts.md
// points there.
//
//go:embed schemas/*.schema.json
var schemaFS embed.FS

// SchemaNames lists the embedded schemas by the names `failpass loop
// schema` takes, which are the document kinds.
var SchemaNames = []string{string(KindInvocation), string(KindCheckpoint), string(KindTerminalResult)}

// Schema returns the embedded JSON Schema (draft 2020-12) for a document
// kind, byte for byte as published in the repository.
func Schema(kind Kind) ([]byte, error) {
	if !kind.valid() {
		return nil, fmt.Errorf("contract: no schema named %q", string(kind))
	}
	return schemaFS.ReadFile("schemas/" + string(kind) + ".schema.json")
}

// schemaNode is one compiled schema object of the subset the peer's engine
// interprets (rule 1): type, const, enum, minLength, pattern, minimum,
// maximum, minItems, items, required, properties and
// additionalProperties:false. Annotations ($schema, $id, $comment, title,
// description) are allowed and ignored; anything else fails compilation so
// that a schema can never say more than the engine checks.
type schemaNode struct {
	typ        string
	constVal   any
	hasConst   bool
	enum       []any
	minLength  *int
	pattern    *regexp.Regexp
	patternSrc string
	minimum    *big.Int
	maximum    *big.Int
	minItems   *int
	items      *schemaNode
	required   []string
	properties map[string]*schemaNode
	closed     bool // additionalProperties: false
}

// compiledSchemas compiles the embedded schemas on first use rather than
// at init: every failpass process (the sandbox helper re-executes the
// binary per command) would otherwise pay for it.
var compiledSchemas = sync.OnceValue(func() map[Kind]*schemaNode {
	out := map[Kind]*schemaNode{}
	for _, name := range SchemaNames {
		data, err := Schema(Kind(name))
		if err != nil {
			panic(err)
		}
		v, err := Decode(data)
		if err != nil {
			panic(fmt.Sprintf("contract: embedded schema %s: %v", name, err))
		}
		n, err := compileSchema(v, "#")
		if err != nil {
			panic(fmt.Sprintf("contract: embedded schema %s: %v", name, err))
		}
		out[Kind(name)] = n
	}
	return out
})

func compileSchema(v any, at string) (*schemaNode, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: schema is not an object", at)
	}
	n := &schemaNode{}
	for k, kv := range m {
		switch k {
		case "$schema", "$id", "$comment", "title", "description":
		case "type":
			s, ok := kv.(string)
			if !ok || !map[string]bool{"object": true, "array": true, "string": true, "boolean": true, "integer": true}[s] {
				return nil, fmt.Errorf("%s: unsupported type %v", at, kv)
			}
			n.typ = s
		case "const":
			n.constVal, n.hasConst = kv, true
		case "enum":
			e, ok := kv.([]any)
			if !ok {
				return nil, fmt.Errorf("%s: enum is not an array", at)
			}
			n.enum = e
		case "minLength", "minItems":
			num, ok := kv.(json.Number)
			i, err := strconv.Atoi(string(num))
			if !ok || err != nil || i < 0 {
				return nil, fmt.Errorf("%s: %s is not a non-negative integer", at, k)
			}
			if k == "minLength" {
				n.minLength = &i
			} else {
				n.minItems = &i
			}
		case "minimum", "maximum":
			num, ok := kv.(json.Number)
			b, ok2 := new(big.Int).SetString(string(num), 10)
			if !ok || !ok2 {
				return nil, fmt.Errorf("%s: %s is not an integer", at, k)
			}
			if k == "minimum" {
				n.minimum = b
			} else {
				n.maximum = b
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
			n.pattern, n.patternSrc = re, s
		case "items":
			c, err := compileSchema(kv, at+"/items")
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
				if !ok {
					return nil, fmt.Errorf("%s: required holds a non-string", at)
				}
				n.required = append(n.required, s)
			}
		case "properties":
			pm, ok := kv.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("%s: properties is not an object", at)
			}
			n.properties = map[string]*schemaNode{}
			for pk, pv := range pm {
				c, err := compileSchema(pv, at+"/properties/"+pk)
				if err != nil {
					return nil, err
				}
				n.properties[pk] = c
			}
		case "additionalProperties":
			if kv != false {
				return nil, fmt.Errorf("%s: only additionalProperties: false is supported", at)
			}
			n.closed = true
		default:
			return nil, fmt.Errorf("%s: unsupported keyword %q", at, k)
		}
	}
	return n, nil
}

// typeMatches reports whether v has the schema type t. Integers follow
// rule 3: a json.Number without fraction or exponent, never a boolean.
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
		return ok && isIntegerLiteral(n)
	}
	return false
}

// typeName names a value's JSON type for messages, telling 3.0 apart from 3.
func typeName(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number:
		if isIntegerLiteral(v) {
			return "integer"
		}
		return "number with a fraction or exponent"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// check validates v against n, appending one violation per failed keyword.
// A type mismatch is the only error reported for its node (rule 2).
func (n *schemaNode) check(v any, path string, out *[]Violation) {
	add := func(p, rule, format string, args ...any) {
		*out = append(*out, Violation{Path: p, Rule: rule, Msg: fmt.Sprintf(format, args...)})
	}
	if n.typ != "" && !typeMatches(n.typ, v) {
		add(path, "schema.type", "expected %s, got %s", n.typ, typeName(v))
		return
	}
	if n.hasConst && !valuesEqual(n.constVal, v) {
		add(path, "schema.const", "must be %s", literal(n.constVal))
	}
	if n.enum != nil {
		found := false
		for _, e := range n.enum {
			if valuesEqual(e, v) {
				found = true
				break
			}
		}
		if !found {
			add(path, "schema.enum", "must be one of %s, got %s", enumList(n.enum), literal(v))
		}
	}
	if s, ok := v.(string); ok {
		if n.minLength != nil && utf8.RuneCountInString(s) < *n.minLength {
			add(path, "schema.minLength", "must be at least %d character(s) long", *n.minLength)
		}
		if n.pattern != nil && !n.pattern.MatchString(s) {
			add(path, "schema.pattern", "must match %s (a SHA is exactly 40 lowercase hex characters)", n.patternSrc)
		}
	}
	// Bounds are small; a literal of more than 30 digits is out of any of
	// them by its sign alone, and is not parsed (big.Int parsing is
	// superlinear, and a hostile document may hold millions of digits).
	if num, ok := v.(json.Number); ok && isIntegerLiteral(num) && len(num) > 30 {
		if num[0] == '-' && n.minimum != nil {
			add(path, "schema.minimum", "must be at least %s, got a %d-digit negative integer", n.minimum, len(num)-1)
		}
		if num[0] != '-' && n.maximum != nil {
			add(path, "schema.maximum", "must be at most %s, got a %d-digit integer", n.maximum, len(num))
		}
	} else if num, ok := v.(json.Number); ok && isIntegerLiteral(num) {
		if b, ok := new(big.Int).SetString(string(num), 10); ok {
			if n.minimum != nil && b.Cmp(n.minimum) < 0 {
				add(path, "schema.minimum", "must be at least %s, got %s", n.minimum, num)
			}
			if n.maximum != nil && b.Cmp(n.maximum) > 0 {
				add(path, "schema.maximum", "must be at most %s, got %s", n.maximum, num)
			}
		}
	}
	if arr, ok := v.([]any); ok {
		if n.minItems != nil && len(arr) < *n.minItems {
			add(path, "schema.minItems", "must have at least %d item(s)", *n.minItems)
		}
		if n.items != nil {
			for i, e := range arr {
				n.items.check(e, indexPath(path, i), out)
			}
		}
	}
	if obj, ok := v.(map[string]any); ok {
		for _, r := range n.required {
			if _, ok := obj[r]; !ok {
				add(keyPath(path, r), "schema.required", "required field is missing")
			}
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			child, known := n.properties[k]
			switch {
			case known:
				child.check(obj[k], keyPath(path, k), out)
			case n.closed:
				add(keyPath(path, k), "schema.additionalProperties", "unknown field")
			}
		}
	}
}

func enumList(vals []any) string {
	s := ""
	for i, v := range vals {
		if i > 0 {
			s += ", "
		}
		s += literal(v)
	}
	return s
}

// literal renders a small value for a message on one ASCII line; long
// strings are cut so a hostile value cannot flood the terminal.
func literal(v any) string {
	switch v := v.(type) {
	case string:
		if utf8.RuneCountInString(v) > 80 {
			v = string([]rune(v)[:80]) + "..."
		}
		return strconv.QuoteToASCII(v)
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	}
	b, err := CanonicalValue(v)
	if err != nil {
		return typeName(v)
	}
	return string(b[:len(b)-1])
}
