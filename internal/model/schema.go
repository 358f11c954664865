package model

import (
	"embed"
	"fmt"
	"strings"
	"sync"

	"github.com/failpass/failpass/internal/jsonschema"
)

// The documents a role reads and writes have JSON Schemas in schemas/,
// embedded and checked by internal/jsonschema, the engine that also checks
// the loop documents. review-packet and review-result are failpass's own
// reading of the peer's review-suite schemas (packet 1.0, result 1.4), not
// the peer's files: review_test.go checks on every test vector that they
// accept exactly what the peer's files (testdata/peer/review-suite) accept
// under a full draft 2020-12 validator. The request and reply schemas are
// failpass's (docs/models.md).
//
//go:embed schemas/*.schema.json
var schemaFS embed.FS

// patternMeanings says in words what the schemas' patterns ask for, so a
// message names the fix, not only the expression.
var patternMeanings = map[string]string{
	`^[0-9a-f]{40}$`:         "a SHA is exactly 40 lowercase hex characters",
	`^[a-z0-9][a-z0-9._-]*$`: "an id is lowercase letters, digits, '.', '_' and '-', starting with a letter or digit",
}

// embeddedSchema compiles schemas/<name>.schema.json when first used:
// every failpass process (the sandbox helper re-executes the binary per
// command) would otherwise pay for it at init. A schema that does not
// compile is a defect of the build, which the tests catch.
func embeddedSchema(name string) func() *jsonschema.Schema {
	return sync.OnceValue(func() *jsonschema.Schema {
		data, err := schemaFS.ReadFile("schemas/" + name + ".schema.json")
		if err != nil {
			panic(err)
		}
		s, err := jsonschema.Compile(data, patternMeanings)
		if err != nil {
			panic(fmt.Sprintf("model: embedded schema %s: %v", name, err))
		}
		return s
	})
}

var (
	packetSchema        = embeddedSchema("review-packet")
	resultSchema        = embeddedSchema("review-result")
	draftRequestSchema  = embeddedSchema("draft-request")
	fixRequestSchema    = embeddedSchema("fix-request")
	decideRequestSchema = embeddedSchema("decide-request")
	decideReplySchema   = embeddedSchema("decide-reply")
)

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

// validateSchema decodes data strictly (duplicate keys, trailing data,
// invalid UTF-8 and the rest of jsonschema.Decode's refusals are problems
// at $) and checks it against s.
func validateSchema(doc string, s *jsonschema.Schema, data []byte) error {
	v, err := jsonschema.Decode(data)
	if err != nil {
		return &SchemaError{Doc: doc, Problems: []Problem{{Path: "$", Msg: err.Error()}}}
	}
	found := s.Validate(v)
	if len(found) == 0 {
		return nil
	}
	problems := make([]Problem, len(found))
	for i, p := range found {
		problems[i] = Problem{Path: p.Path, Msg: p.Msg}
	}
	return &SchemaError{Doc: doc, Problems: problems}
}
