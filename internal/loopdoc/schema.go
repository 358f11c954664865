package loopdoc

import (
	"embed"
	"fmt"
	"sync"

	"github.com/failpass/failpass/internal/jsonschema"
)

// The published schemas live in internal/loopdoc/schemas/ because go:embed
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
		return nil, fmt.Errorf("loopdoc: no schema named %q", string(kind))
	}
	return schemaFS.ReadFile("schemas/" + string(kind) + ".schema.json")
}

// shaPattern is the one pattern the loop documents use; its message says
// what it asks for.
const shaPattern = `^[0-9a-f]{40}$`

// compiledSchemas compiles the embedded schemas on first use rather than
// at init: every failpass process (the sandbox helper re-executes the
// binary per command) would otherwise pay for it.
var compiledSchemas = sync.OnceValue(func() map[Kind]*jsonschema.Schema {
	explain := map[string]string{shaPattern: "a SHA is exactly 40 lowercase hex characters"}
	out := map[Kind]*jsonschema.Schema{}
	for _, name := range SchemaNames {
		data, err := Schema(Kind(name))
		if err != nil {
			panic(err)
		}
		s, err := jsonschema.Compile(data, explain)
		if err != nil {
			panic(fmt.Sprintf("loopdoc: embedded schema %s: %v", name, err))
		}
		out[Kind(name)] = s
	}
	return out
})

// checkSchema is rules 1 and 2: the schema of kind, each failed keyword a
// schema.<keyword> violation.
func checkSchema(kind Kind, doc map[string]any) []Violation {
	problems := compiledSchemas()[kind].Validate(doc)
	if len(problems) == 0 {
		return nil
	}
	out := make([]Violation, len(problems))
	for i, p := range problems {
		out[i] = Violation{Path: p.Path, Rule: "schema." + p.Keyword, Msg: p.Msg}
	}
	return out
}
