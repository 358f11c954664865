package loopdoc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/failpass/failpass/internal/jsonschema"
)

// Canonical returns the canonical form of a JSON document: the bytes the
// peer's Python writes with json.dumps(value, sort_keys=True, indent=2)
// plus a newline. Keys are sorted by code point at every level, the indent
// is two spaces, every non-ASCII character (and DEL) is a lowercase \uXXXX
// escape with surrogate pairs above the BMP, <, > and & are left as they
// are, and empty containers are [] and {}. Numbers are written the way
// Python reads and writes them: an integer literal stays as written (-0
// becomes 0) and any literal with a fraction or exponent becomes Python's
// float repr (1E5 becomes 100000.0), so a document written by either side
// round-trips byte for byte through the other.
func Canonical(data []byte) ([]byte, error) {
	v, err := jsonschema.Decode(data)
	if err != nil {
		return nil, err
	}
	return CanonicalValue(v)
}

// CanonicalValue writes a value of the generic model (what Decode returns)
// in canonical form. Any other Go type is an error.
func CanonicalValue(v any) ([]byte, error) {
	var b bytes.Buffer
	if err := writeCanonical(&b, v, 0); err != nil {
		return nil, err
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}

func writeCanonical(b *bytes.Buffer, v any, indent int) error {
	switch v := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		if v {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case string:
		writeString(b, v)
	case json.Number:
		s, err := canonicalNumber(v)
		if err != nil {
			return err
		}
		b.WriteString(s)
	case []any:
		if len(v) == 0 {
			b.WriteString("[]")
			return nil
		}
		b.WriteString("[")
		for i, e := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			newline(b, indent+1)
			if err := writeCanonical(b, e, indent+1); err != nil {
				return err
			}
		}
		newline(b, indent)
		b.WriteString("]")
	case map[string]any:
		if len(v) == 0 {
			b.WriteString("{}")
			return nil
		}
		// Go compares strings bytewise, and UTF-8 byte order is code point
		// order, which is how Python sorts str keys.
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteString("{")
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			newline(b, indent+1)
			writeString(b, k)
			b.WriteString(": ")
			if err := writeCanonical(b, v[k], indent+1); err != nil {
				return err
			}
		}
		newline(b, indent)
		b.WriteString("}")
	default:
		return fmt.Errorf("loopdoc: cannot canonicalize Go value of type %s", reflect.TypeOf(v))
	}
	return nil
}

func newline(b *bytes.Buffer, indent int) {
	b.WriteByte('\n')
	for range indent {
		b.WriteString("  ")
	}
}

// writeString escapes like Python's ensure_ascii: only printable ASCII
// (space to ~) is written as is, apart from '"' and '\'.
func writeString(b *bytes.Buffer, s string) {
	const hex = "0123456789abcdef"
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r >= 0x20 && r <= 0x7e:
			b.WriteRune(r)
		case r > 0xffff:
			r1, r2 := utf16.EncodeRune(r)
			for _, u := range []rune{r1, r2} {
				b.WriteString(`\u`)
				b.WriteByte(hex[u>>12&0xf])
				b.WriteByte(hex[u>>8&0xf])
				b.WriteByte(hex[u>>4&0xf])
				b.WriteByte(hex[u&0xf])
			}
		default:
			b.WriteString(`\u`)
			b.WriteByte(hex[r>>12&0xf])
			b.WriteByte(hex[r>>8&0xf])
			b.WriteByte(hex[r>>4&0xf])
			b.WriteByte(hex[r&0xf])
		}
	}
	b.WriteByte('"')
}

// canonicalNumber writes a number literal the way Python re-serializes it.
func canonicalNumber(n json.Number) (string, error) {
	s := string(n)
	if jsonschema.IsInteger(n) {
		if s == "-0" {
			return "0", nil
		}
		return s, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return "", fmt.Errorf("loopdoc: number %s has no canonical form", s)
	}
	return pythonFloatRepr(f), nil
}

// pythonFloatRepr is Python's repr(float): the shortest digits that round
// trip, in positional notation when the decimal exponent is in [-4, 16),
// otherwise d.ddde±XX with at least two exponent digits.
func pythonFloatRepr(f float64) string {
	if f == 0 {
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // -d.dddde±XX
	sign := ""
	if e[0] == '-' {
		sign, e = "-", e[1:]
	}
	mant, expStr, _ := strings.Cut(e, "e")
	digits := strings.Replace(mant, ".", "", 1)
	exp, _ := strconv.Atoi(expStr)
	decpt := exp + 1 // value = 0.digits × 10^decpt
	if decpt > -4 && decpt <= 16 {
		switch {
		case decpt <= 0:
			return sign + "0." + strings.Repeat("0", -decpt) + digits
		case decpt >= len(digits):
			return sign + digits + strings.Repeat("0", decpt-len(digits)) + ".0"
		default:
			return sign + digits[:decpt] + "." + digits[decpt:]
		}
	}
	m := digits[:1]
	if len(digits) > 1 {
		m += "." + digits[1:]
	}
	es := "+"
	if exp < 0 {
		es, exp = "-", -exp
	}
	return fmt.Sprintf("%s%se%s%02d", sign, m, es, exp)
}
