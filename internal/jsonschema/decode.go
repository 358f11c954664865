package jsonschema

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Bounds on what Decode accepts. failpass's documents are a few kilobytes
// (a review packet with its diff inline, a little more); the limits only
// keep a hostile file from costing memory or stack.
const (
	// MaxDocumentBytes is the largest document Decode reads.
	MaxDocumentBytes = 16 << 20
	// MaxDepth is the deepest nesting of arrays and objects Decode accepts.
	MaxDepth = 200
)

// DecodeError is a document that is not JSON failpass can read: malformed
// syntax, a duplicate object key, invalid UTF-8, a lone surrogate escape, a
// number beyond float64, or a document over the size or depth bounds. The
// CLI maps it to exit 2. Line and Col are 1-based; Col counts bytes. File
// is empty until a caller that knows the file sets it.
type DecodeError struct {
	File   string
	Line   int
	Col    int
	Offset int
	Msg    string
}

func (e *DecodeError) Error() string {
	loc := fmt.Sprintf("%d:%d", e.Line, e.Col)
	if e.File != "" {
		loc = e.File + ":" + loc
	}
	return fmt.Sprintf("%s: invalid JSON: %s", loc, e.Msg)
}

// Hints says how to fix a decode error.
func (e *DecodeError) Hints() []string {
	return []string{"failpass reads strict JSON (RFC 8259) in UTF-8 with no duplicate keys; fix the file at that position"}
}

// Decode parses one JSON document into the generic value model a Schema
// checks: map[string]any, []any, string, json.Number, bool
// and nil. It is stricter than encoding/json so that a document means the
// same thing to every reader: duplicate keys (encoding/json keeps the last,
// so a reviewer and a tool could see different values), invalid UTF-8 and
// lone surrogates (silently replaced by encoding/json) and numbers that
// overflow float64 (Python reads them as infinity and writes invalid JSON)
// are errors rather than guesses.
func Decode(data []byte) (any, error) {
	if len(data) > MaxDocumentBytes {
		return nil, &DecodeError{Line: 1, Col: 1, Msg: fmt.Sprintf("document is over the %d byte limit", MaxDocumentBytes)}
	}
	p := &parser{data: data}
	p.skipSpace()
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos < len(p.data) {
		return nil, p.errorf("unexpected data after the top-level value")
	}
	return v, nil
}

type parser struct {
	data []byte
	pos  int
}

func (p *parser) errorf(format string, args ...any) *DecodeError {
	line, col := 1, 1
	for i := 0; i < p.pos && i < len(p.data); i++ {
		if p.data[i] == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return &DecodeError{Line: line, Col: col, Offset: p.pos, Msg: fmt.Sprintf(format, args...)}
}

func (p *parser) skipSpace() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) value(depth int) (any, error) {
	if p.pos >= len(p.data) {
		return nil, p.errorf("unexpected end of input")
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.object(depth + 1)
	case c == '[':
		return p.array(depth + 1)
	case c == '"':
		return p.str()
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case p.literal("true"):
		return true, nil
	case p.literal("false"):
		return false, nil
	case p.literal("null"):
		return nil, nil
	default:
		return nil, p.errorf("unexpected character %q", rune(c))
	}
}

func (p *parser) literal(word string) bool {
	if len(p.data)-p.pos >= len(word) && string(p.data[p.pos:p.pos+len(word)]) == word {
		p.pos += len(word)
		return true
	}
	return false
}

func (p *parser) object(depth int) (any, error) {
	if depth > MaxDepth {
		return nil, p.errorf("nesting deeper than %d", MaxDepth)
	}
	p.pos++ // {
	obj := map[string]any{}
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		return obj, nil
	}
	for {
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return nil, p.errorf("expected a string object key")
		}
		keyPos := p.pos
		key, err := p.str()
		if err != nil {
			return nil, err
		}
		if _, dup := obj[key]; dup {
			p.pos = keyPos
			return nil, p.errorf("duplicate object key %s", strconv.QuoteToASCII(key))
		}
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return nil, p.errorf("expected ':' after object key")
		}
		p.pos++
		p.skipSpace()
		v, err := p.value(depth)
		if err != nil {
			return nil, err
		}
		obj[key] = v
		p.skipSpace()
		if p.pos >= len(p.data) {
			return nil, p.errorf("unexpected end of input in object")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case '}':
			p.pos++
			return obj, nil
		default:
			return nil, p.errorf("expected ',' or '}' in object")
		}
	}
}

func (p *parser) array(depth int) (any, error) {
	if depth > MaxDepth {
		return nil, p.errorf("nesting deeper than %d", MaxDepth)
	}
	p.pos++ // [
	arr := []any{}
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		return arr, nil
	}
	for {
		p.skipSpace()
		v, err := p.value(depth)
		if err != nil {
			return nil, err
		}
		arr = append(arr, v)
		p.skipSpace()
		if p.pos >= len(p.data) {
			return nil, p.errorf("unexpected end of input in array")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case ']':
			p.pos++
			return arr, nil
		default:
			return nil, p.errorf("expected ',' or ']' in array")
		}
	}
}

func (p *parser) str() (string, error) {
	p.pos++ // opening quote
	// Most strings are printable ASCII without escapes: one copy.
	start := p.pos
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		if c == '"' {
			p.pos++
			return string(p.data[start : p.pos-1]), nil
		}
		if c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			break
		}
		p.pos++
	}
	var b strings.Builder
	b.Write(p.data[start:p.pos])
	for {
		if p.pos >= len(p.data) {
			return "", p.errorf("unterminated string")
		}
		c := p.data[p.pos]
		switch {
		case c == '"':
			p.pos++
			return b.String(), nil
		case c == '\\':
			r, err := p.escape()
			if err != nil {
				return "", err
			}
			b.WriteRune(r)
		case c < 0x20:
			return "", p.errorf("control character %#02x in string must be escaped", c)
		case c < utf8.RuneSelf:
			b.WriteByte(c)
			p.pos++
		default:
			r, size := utf8.DecodeRune(p.data[p.pos:])
			if r == utf8.RuneError && size <= 1 {
				return "", p.errorf("invalid UTF-8 in string")
			}
			b.WriteRune(r)
			p.pos += size
		}
	}
}

var simpleEscapes = map[byte]rune{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// escape reads one backslash escape; a \u surrogate must come as a valid
// high-low pair, because a lone surrogate has no UTF-8 form to keep.
func (p *parser) escape() (rune, error) {
	if p.pos+1 >= len(p.data) {
		return 0, p.errorf("unterminated escape")
	}
	c := p.data[p.pos+1]
	if r, ok := simpleEscapes[c]; ok {
		p.pos += 2
		return r, nil
	}
	if c != 'u' {
		return 0, p.errorf("invalid escape \\%c", c)
	}
	r1, err := p.hex4(p.pos + 2)
	if err != nil {
		return 0, err
	}
	if !utf16.IsSurrogate(r1) {
		p.pos += 6
		return r1, nil
	}
	if r1 >= 0xDC00 {
		return 0, p.errorf("lone low surrogate \\u%04x", r1)
	}
	if p.pos+7 < len(p.data) && p.data[p.pos+6] == '\\' && p.data[p.pos+7] == 'u' {
		r2, err := p.hex4(p.pos + 8)
		if err != nil {
			return 0, err
		}
		if r2 >= 0xDC00 && r2 <= 0xDFFF {
			p.pos += 12
			return utf16.DecodeRune(r1, r2), nil
		}
	}
	return 0, p.errorf("lone high surrogate \\u%04x", r1)
}

func (p *parser) hex4(at int) (rune, error) {
	if at+4 > len(p.data) {
		return 0, p.errorf("truncated \\u escape")
	}
	n, err := strconv.ParseUint(string(p.data[at:at+4]), 16, 32)
	if err != nil {
		return 0, p.errorf("invalid \\u escape %q", p.data[at:at+4])
	}
	return rune(n), nil
}

// number reads the RFC 8259 number grammar exactly and keeps the literal as
// a json.Number, so that 3 and 3.0 stay apart (see IsInteger).
func (p *parser) number() (any, error) {
	start := p.pos
	if p.data[p.pos] == '-' {
		p.pos++
	}
	digits := func() int {
		n := 0
		for p.pos < len(p.data) && p.data[p.pos] >= '0' && p.data[p.pos] <= '9' {
			p.pos++
			n++
		}
		return n
	}
	if p.pos < len(p.data) && p.data[p.pos] == '0' {
		p.pos++
	} else if digits() == 0 {
		return nil, p.errorf("invalid number")
	}
	isFloat := false
	if p.pos < len(p.data) && p.data[p.pos] == '.' {
		isFloat = true
		p.pos++
		if digits() == 0 {
			return nil, p.errorf("invalid number: digit expected after '.'")
		}
	}
	if p.pos < len(p.data) && (p.data[p.pos] == 'e' || p.data[p.pos] == 'E') {
		isFloat = true
		p.pos++
		if p.pos < len(p.data) && (p.data[p.pos] == '+' || p.data[p.pos] == '-') {
			p.pos++
		}
		if digits() == 0 {
			return nil, p.errorf("invalid number: digit expected in exponent")
		}
	}
	lit := string(p.data[start:p.pos])
	if isFloat {
		if _, err := strconv.ParseFloat(lit, 64); err != nil {
			p.pos = start
			return nil, p.errorf("number %s is out of range for a 64-bit float", lit)
		}
	}
	return json.Number(lit), nil
}

// IsInteger says whether a number literal is an integer in failpass's (and
// the peer's Python) sense: no fraction and no exponent, so 3.0 and 3e0
// are not integers even though JSON Schema 2020-12 says they are. The
// judgement is by spelling, so it needs no arithmetic on hostile input.
func IsInteger(n json.Number) bool {
	return !strings.ContainsAny(string(n), ".eE")
}
