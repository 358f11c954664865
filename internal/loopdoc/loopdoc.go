// Package loopdoc owns the review-fix loop's documents (invocation, checkpoint, terminal result): types, embedded schemas, validation rules and canonical JSON.
package loopdoc

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/failpass/failpass/internal/jsonschema"
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

// DecodeObject decodes data strictly (jsonschema.Decode: a document that
// is not JSON every reader sees alike is a *jsonschema.DecodeError, at most
// jsonschema.MaxDocumentBytes long) and requires a top-level object.
func DecodeObject(data []byte) (map[string]any, error) {
	v, err := jsonschema.Decode(data)
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, &NotObjectError{Got: jsonschema.TypeName(v)}
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
		for _, f := range compiledSchemas()[k].Required() {
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
		return nil, fmt.Errorf("loopdoc: unknown document kind %q", string(kind))
	}
	if out := checkSchema(kind, doc); len(out) > 0 {
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
	if !ok || !jsonschema.IsInteger(n) {
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

// quote renders a string for a message on one ASCII line, cut when long.
func quote(s string) string { return jsonschema.Literal(s) }
