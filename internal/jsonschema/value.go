package jsonschema

import (
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// Equal compares two decoded values; numbers compare by value so that 1
// and 1.0, or 0 and -0, are equal as the peer's Python sees them.
func Equal(a, b any) bool {
	switch a := a.(type) {
	case nil:
		return b == nil
	case bool:
		bb, ok := b.(bool)
		return ok && a == bb
	case string:
		bs, ok := b.(string)
		return ok && a == bs
	case json.Number:
		bn, ok := b.(json.Number)
		return ok && numbersEqual(a, bn)
	case []any:
		bb, ok := b.([]any)
		if !ok || len(a) != len(bb) {
			return false
		}
		for i := range a {
			if !Equal(a[i], bb[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		bm, ok := b.(map[string]any)
		if !ok || len(a) != len(bm) {
			return false
		}
		for k, v := range a {
			w, ok := bm[k]
			if !ok || !Equal(v, w) {
				return false
			}
		}
		return true
	}
	return false
}

// numbersEqual compares two number literals by value. Integers compare
// exactly; anything with a fraction or exponent compares as float64, as
// Python does. big.Rat is not used: its SetString expands an exponent
// such as 1e-999999999 in full, which would let a hostile document stall
// the validator.
func numbersEqual(a, b json.Number) bool {
	if IsInteger(a) && IsInteger(b) {
		// JSON integers have no leading zeros, so the digits are unique
		// once -0 is read as 0.
		return normalInt(a) == normalInt(b)
	}
	fa, err1 := strconv.ParseFloat(string(a), 64)
	fb, err2 := strconv.ParseFloat(string(b), 64)
	return err1 == nil && err2 == nil && fa == fb
}

func normalInt(n json.Number) string {
	if n == "-0" {
		return "0"
	}
	return string(n)
}

// TypeName names a decoded value's JSON type for messages, telling 3.0
// apart from 3.
func TypeName(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number:
		if IsInteger(v) {
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

// maxLiteral bounds what Literal shows of a string or a number.
const maxLiteral = 80

// Literal renders a small decoded value for a message on one ASCII line.
// Long strings and numbers are cut so a hostile value cannot flood the
// terminal; objects and arrays are named, not shown.
func Literal(v any) string {
	switch v := v.(type) {
	case string:
		if utf8.RuneCountInString(v) > maxLiteral {
			v = string([]rune(v)[:maxLiteral]) + "..."
		}
		return strconv.QuoteToASCII(v)
	case json.Number:
		if len(v) > maxLiteral {
			return string(v[:maxLiteral]) + "..."
		}
		return string(v)
	case bool:
		return strconv.FormatBool(v)
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	}
	return TypeName(v)
}

// KeyPath appends an object key to an instance path: $.a.b for plain keys
// (an ASCII letter or underscore, then letters, digits or underscores),
// $["odd key"] (ASCII-quoted) for anything else, so a hostile key can
// neither fake another path nor break the one-line-per-error output.
func KeyPath(path, key string) string {
	if plainKey(key) {
		return path + "." + key
	}
	return path + "[" + strconv.QuoteToASCII(key) + "]"
}

func plainKey(k string) bool {
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || i > 0 && '0' <= c && c <= '9' {
			continue
		}
		return false
	}
	return k != ""
}

// IndexPath appends an array index to an instance path: $.a[2].
func IndexPath(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }
