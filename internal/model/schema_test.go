package model

import (
	"bytes"
	"errors"
	"io/fs"
	"reflect"
	"strings"
	"testing"

	"github.com/failpass/failpass/internal/jsonschema"
	santhosh "github.com/santhosh-tekuri/jsonschema/v6"
)

// TestEmbeddedSchemas: every schema in schemas/ compiles under our engine
// and under a full draft 2020-12 validator, and is one the package uses.
func TestEmbeddedSchemas(t *testing.T) {
	used := map[string]*jsonschema.Schema{
		"review-packet": packetSchema(), "review-result": resultSchema(), "draft-request": draftRequestSchema(),
		"fix-request": fixRequestSchema(), "decide-request": decideRequestSchema(), "decide-reply": decideReplySchema(),
	}
	names, err := fs.Glob(schemaFS, "schemas/*.schema.json")
	if err != nil || len(names) != len(used) {
		t.Fatalf("schemas/ holds %v (%v); want the %d the package uses", names, err, len(used))
	}
	c := santhosh.NewCompiler()
	c.DefaultDraft(santhosh.Draft2020)
	for _, name := range names {
		base := strings.TrimSuffix(strings.TrimPrefix(name, "schemas/"), ".schema.json")
		if used[base] == nil {
			t.Errorf("%s is embedded but not used", name)
		}
		data, _ := schemaFS.ReadFile(name)
		doc, err := santhosh.UnmarshalJSON(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		url := "mem:///" + base + ".schema.json"
		if err := c.AddResource(url, doc); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Compile(url); err != nil {
			t.Errorf("draft 2020-12 refuses %s: %v", name, err)
		}
	}
	// The versions the schemas pin are the ones the Go code writes.
	for name, want := range map[string]string{"review-packet": PacketSchemaVersion, "review-result": ResultSchemaVersion,
		"draft-request": RequestSchemaVersion, "fix-request": RequestSchemaVersion, "decide-request": RequestSchemaVersion} {
		data, _ := schemaFS.ReadFile("schemas/" + name + ".schema.json")
		v, err := jsonschema.Decode(data)
		if err != nil {
			t.Fatal(err)
		}
		got := v.(map[string]any)["properties"].(map[string]any)["schema_version"].(map[string]any)["const"]
		if got != want {
			t.Errorf("%s pins schema_version %v, want %q", name, got, want)
		}
	}
}

// TestFindingSchemaShared: a fix or decide request carries findings as the
// reviewer wrote them, so its copy of the finding schema (there is no $ref)
// must be the review result's.
func TestFindingSchemaShared(t *testing.T) {
	items := func(name string) any {
		data, err := schemaFS.ReadFile("schemas/" + name + ".schema.json")
		if err != nil {
			t.Fatal(err)
		}
		v, err := jsonschema.Decode(data)
		if err != nil {
			t.Fatal(err)
		}
		return v.(map[string]any)["properties"].(map[string]any)["findings"].(map[string]any)["items"]
	}
	want := items("review-result")
	for _, name := range []string{"fix-request", "decide-request"} {
		if got := items(name); !jsonschema.Equal(got, want) {
			t.Errorf("%s: findings.items differs from review-result's", name)
		}
	}
}

// TestSchemaProblems pins what a refused document is told: the JSON path
// and what the value must be.
func TestSchemaProblems(t *testing.T) {
	changes := goodResult("changes_required", finding("todo-1", "blocking"))
	packet, err := testPacket().Marshal()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, doc string
		data      []byte
		want      []Problem
	}{
		{"sha", "review result", edit(t, mustJSON(t, changes), func(m map[string]any) { sub(m, "candidate")["head_sha"] = "ABC" }),
			[]Problem{{"$.candidate.head_sha", "must match ^[0-9a-f]{40}$ (a SHA is exactly 40 lowercase hex characters)"}}},
		{"id", "review result", mustJSON(t, goodResult("changes_required", finding("Bad_ID", "blocking"))),
			[]Problem{{"$.findings[0].id", "must match ^[a-z0-9][a-z0-9._-]*$ (an id is lowercase letters, digits, '.', '_' and '-', starting with a letter or digit)"}}},
		{"missing and unknown", "review result", edit(t, mustJSON(t, changes), func(m map[string]any) {
			delete(m, "findings")
			m["score"] = 3
		}), []Problem{{"$.findings", "required field is missing"}, {"$.score", "unknown field"}}},
		{"enum and type", "review result", edit(t, mustJSON(t, changes), func(m map[string]any) {
			m["verdict"] = "ok"
			m["blocking_reasons"] = "none"
		}), []Problem{{"$.blocking_reasons", "expected array, got string"},
			{"$.verdict", `must be one of "clean", "changes_required", "blocked", got "ok"`}}},
		{"empty string", "review result", edit(t, mustJSON(t, changes), func(m map[string]any) {
			m["findings"].([]any)[0].(map[string]any)["concern"] = ""
		}), []Problem{{"$.findings[0].concern", "must be at least 1 character(s) long"}}},
		{"oneOf: the closest shape", "review packet", edit(t, packet, func(m map[string]any) { sub(sub(m, "candidate"), "diff")["content"] = "" }),
			[]Problem{{"$.candidate.diff.content", "must be at least 1 character(s) long"}}},
		{"oneOf: both shapes", "review packet", edit(t, packet, func(m map[string]any) { sub(sub(m, "candidate"), "diff")["path"] = "/tmp/x" }),
			[]Problem{{"$.candidate.diff.path", "unknown field"}}},
		{"duplicate key", "review result", []byte(`{"schema_version":"1.4","schema_version":"1.4"}`),
			[]Problem{{"$", `1:25: invalid JSON: duplicate object key "schema_version"`}}},
		{"trailing data", "review result", []byte(`{} {}`), []Problem{{"$", "1:4: invalid JSON: unexpected data after the top-level value"}}},
	}
	schemas := map[string]*jsonschema.Schema{"review result": resultSchema(), "review packet": packetSchema()}
	for _, tt := range tests {
		err := validateSchema(tt.doc, schemas[tt.doc], tt.data)
		var se *SchemaError
		if !errors.As(err, &se) || !reflect.DeepEqual(se.Problems, tt.want) {
			t.Errorf("%s: validateSchema(%s) = %v, want %v", tt.name, tt.data, err, tt.want)
		}
	}
}

// TestRequestIntegers: request integers are read into Go ints, so the
// schemas judge them by spelling and bound them to int64.
func TestRequestIntegers(t *testing.T) {
	good, err := fixRequest(t).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		cycle string
		ok    bool
	}{
		{"1", true}, {"9223372036854775807", true}, {"9223372036854775808", false}, {"1.0", false}, {"1e0", false}, {"0", false}, {"true", false},
	} {
		doc := bytes.Replace(good, []byte(`"cycle":1,`), []byte(`"cycle":`+tt.cycle+`,`), 1)
		_, err := PromptFor(RoleFixer, doc)
		if (err == nil) != tt.ok {
			t.Errorf("PromptFor(fixer, cycle %s) = %v, want ok=%v", tt.cycle, err, tt.ok)
		}
	}
}
