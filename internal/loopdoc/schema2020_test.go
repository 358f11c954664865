package loopdoc

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// TestSchemasAreDraft2020 is a second opinion from a full draft 2020-12
// implementation: the published schemas compile, every example is valid
// under them, and a schema-level break our engine reports is also an
// error there (apart from 3.0 as an integer, which 2020-12 allows; the
// schemas' $comment says so).
func TestSchemasAreDraft2020(t *testing.T) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	// No loader for remote URLs: the schemas reference nothing outside.
	schemas := map[Kind]*jsonschema.Schema{}
	for _, name := range SchemaNames {
		data, _ := Schema(Kind(name))
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		url := "mem:///" + name + ".schema.json"
		if err := c.AddResource(url, doc); err != nil {
			t.Fatal(err)
		}
		s, err := c.Compile(url)
		if err != nil {
			t.Fatalf("compile %s: %v", name, err)
		}
		schemas[Kind(name)] = s
	}
	check := func(kind Kind, data []byte) error {
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		return schemas[kind].Validate(inst)
	}
	paths, _ := filepath.Glob(filepath.Join(examplesDir, "*", "*.json"))
	peer, _ := filepath.Glob(filepath.Join(peerExamples, "*.json"))
	for _, p := range append(paths, peer...) {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		doc, _ := DecodeObject(data)
		kind, err := Infer(doc)
		if err != nil {
			t.Fatal(err)
		}
		if err := check(kind, data); err != nil {
			t.Errorf("draft 2020-12 rejects %s: %v", p, err)
		}
	}
	// Breaks both engines must see.
	for _, tc := range []struct {
		base string
		ops  []op
	}{
		{invLocal, []op{set("candidate.head_sha", `"ABC"`)}},
		{invLocal, []op{set("fix_cycle_budget.max_fix_cycles", `11`)}},
		{invLocal, []op{set("fix_cycle_budget.max_fix_cycles", `true`)}},
		{invLocal, []op{set("candidate.all_changes_committed", `1`)}},
		{cpLocal, []op{set("extra", `1`)}},
		{cpLocal, []op{del("review_records[0].reviewer_identity")}},
		{trLocal, []op{set("reason", `"nope"`)}},
		{trLocal, []op{set("head_history", `[]`)}},
	} {
		doc := example(t, tc.base)
		apply(t, doc, tc.ops...)
		data, _ := json.Marshal(doc)
		ours, _ := ValidateDocument(kindOf(tc.base), doc)
		if len(ours) == 0 || check(kindOf(tc.base), data) == nil {
			t.Errorf("%s with %v: ours %v, draft 2020-12 must reject too", tc.base, tc.ops, ours)
		}
	}
}
