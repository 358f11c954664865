// Package contract owns the review-fix loop's documents (invocation, checkpoint, terminal result): types, embedded schemas, validation rules and canonical JSON.
package contract

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"sync"
)

// Kind names one of the three loop documents.
type Kind string

// The three document kinds, named as the peer's validator and `failpass
// loop validate` take them.
const (
	KindInvocation     Kind = "invocation"
	KindCheckpoint     Kind = "checkpoint"
	KindTerminalResult Kind = "terminal-result"
)

func (k Kind) valid() bool {
	return k == KindInvocation || k == KindCheckpoint || k == KindTerminalResult
}

// ParseKind returns the Kind named s, or an error naming the three kinds.
func ParseKind(s string) (Kind, error) {
	if k := Kind(s); k.valid() {
		return k, nil
	}
	return "", fmt.Errorf("unknown document kind %q (want invocation, checkpoint or terminal-result)", s)
}

// Violation is one broken rule in a document. Path is the instance path of
// the offending node ($.review_records[2].write_isolation); Rule is a
// stable name: "schema.<keyword>" for schema rules, "<document>.<rule>" for
// the peer's cross-field rules, "cross.<field>" for cross-document
// identities and "strict.<rule>" for the rules failpass enforces beyond
// the peer.
type Violation struct {
	Path string `json:"path"`
	Rule string `json:"rule"`
	Msg  string `json:"message"`
}

// String is the CLI's one-line form: PATH: RULE: MSG.
func (v Violation) String() string { return v.Path + ": " + v.Rule + ": " + v.Msg }

// NotObjectError is a document whose top level is not a JSON object. The
// CLI maps it to exit 2 like a decode error (rule 114).
type NotObjectError struct{ Got string }

func (e *NotObjectError) Error() string {
	return "top level of a loop document must be a JSON object, got " + e.Got
}

// Hints says how to fix it.
func (e *NotObjectError) Hints() []string {
	return []string{"a loop document is one JSON object: {\"schema_version\": \"1.0\", ...}"}
}

// DecodeObject decodes data and requires a top-level object.
func DecodeObject(data []byte) (map[string]any, error) {
	v, err := Decode(data)
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, &NotObjectError{Got: typeName(v)}
	}
	return m, nil
}

// Infer names a document's kind: the kind whose schema's required
// top-level fields the document has most of. Counting all of them, not
// looking for one marker field, keeps a mutated document recognizable: an
// invocation that lost a field or gained another kind's field is still an
// invocation. A tie (including no field at all) is an error: the caller
// must name the kind.
func Infer(doc map[string]any) (Kind, error) {
	best, bestScore, tied := Kind(""), 0, false
	for _, name := range SchemaNames {
		k := Kind(name)
		score := 0
		for _, f := range compiledSchemas()[k].required {
			if _, ok := doc[f]; ok {
				score++
			}
		}
		switch {
		case score > bestScore:
			best, bestScore, tied = k, score, false
		case score == bestScore:
			tied = true
		}
	}
	if bestScore == 0 || tied {
		return "", fmt.Errorf("cannot tell the document kind: its fields fit an invocation, a checkpoint and a terminal result equally well")
	}
	return best, nil
}

// Validate decodes data and validates it as a document of kind. The error
// is for input that is not a document at all (unreadable, invalid JSON, a
// non-object top level); rule violations are the returned list, empty when
// the document is valid.
func Validate(kind Kind, data []byte) ([]Violation, error) {
	doc, err := DecodeObject(data)
	if err != nil {
		return nil, err
	}
	return ValidateDocument(kind, doc)
}

// ValidateDocument validates a decoded document: schema rules first, and
// only when they all hold, the peer's cross-field rules and failpass's
// stricter ones (rule 8: semantic checks assume the schema's shapes).
func ValidateDocument(kind Kind, doc map[string]any) ([]Violation, error) {
	if !kind.valid() {
		return nil, fmt.Errorf("contract: unknown document kind %q", string(kind))
	}
	var out []Violation
	compiledSchemas()[kind].check(doc, "$", &out)
	if len(out) > 0 {
		return out, nil
	}
	r := &report{}
	switch kind {
	case KindInvocation:
		invocationRules(r, doc)
	case KindCheckpoint:
		checkpointRules(r, doc)
	case KindTerminalResult:
		terminalRules(r, doc)
	}
	return r.out, nil
}

// report collects violations for the semantic rules.
type report struct{ out []Violation }

func (r *report) add(path, rule, format string, args ...any) {
	r.out = append(r.out, Violation{Path: path, Rule: rule, Msg: fmt.Sprintf(format, args...)})
}

var identRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })

// keyPath appends an object key to an instance path: $.a.b for plain keys,
// $["odd key"] (ASCII-quoted) for anything else, so a hostile key can
// neither fake another path nor break the one-line-per-error output.
func keyPath(path, key string) string {
	if identRE().MatchString(key) {
		return path + "." + key
	}
	return path + "[" + strconv.QuoteToASCII(key) + "]"
}

func indexPath(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

// valuesEqual compares two generic values; numbers compare by value so
// that 1 and 1.0, or 0 and -0, are equal as the peer's Python sees them.
func valuesEqual(a, b any) bool {
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
		if !ok {
			return false
		}
		return numbersEqual(a, bn)
	case []any:
		bb, ok := b.([]any)
		if !ok || len(a) != len(bb) {
			return false
		}
		for i := range a {
			if !valuesEqual(a[i], bb[i]) {
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
			if !ok || !valuesEqual(v, w) {
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
	if isIntegerLiteral(a) && isIntegerLiteral(b) {
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

// Accessors for the semantic rules. Each tolerates a missing or mistyped
// field (returning ok=false) because the cross-document checks run on
// documents that were never schema-checked (rule 110).

func field(doc any, keys ...string) (any, bool) {
	cur := doc
	for _, k := range keys {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		cur, ok = m[k]
		if !ok {
			return nil, false
		}
	}
	return cur, true
}

func str(doc any, keys ...string) (string, bool) {
	v, ok := field(doc, keys...)
	if !ok {
		return "", false
	}
	s, ok := v.(string)
	return s, ok
}

func has(doc any, keys ...string) bool {
	_, ok := field(doc, keys...)
	return ok
}

func list(doc any, keys ...string) []any {
	v, _ := field(doc, keys...)
	l, _ := v.([]any)
	return l
}

// integer reads an integer field; ok is false for anything but an integer
// literal that fits in an int.
func integer(doc any, keys ...string) (int, bool) {
	v, ok := field(doc, keys...)
	if !ok {
		return 0, false
	}
	n, ok := v.(json.Number)
	if !ok || !isIntegerLiteral(n) {
		return 0, false
	}
	i, err := strconv.Atoi(string(n))
	return i, err == nil
}

func strList(doc any, keys ...string) []string {
	var out []string
	for _, v := range list(doc, keys...) {
		s, _ := v.(string)
		out = append(out, s)
	}
	return out
}

func quote(s string) string { return literal(s) }
