package loopdoc

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/failpass/failpass/internal/jsonschema"
)

// examplesDir holds failpass's own example documents: one invocation,
// checkpoint and terminal result for each publication policy and terminal
// state, written from the design.
const examplesDir = "../../testdata/loop"

type exampleSet struct {
	name                        string
	invocation, checkpoint, trm []byte
}

func readExamples(t *testing.T) []exampleSet {
	t.Helper()
	dirs, err := os.ReadDir(examplesDir)
	if err != nil {
		t.Fatal(err)
	}
	var sets []exampleSet
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		read := func(f string) []byte {
			b, err := os.ReadFile(filepath.Join(examplesDir, d.Name(), f))
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
		sets = append(sets, exampleSet{d.Name(), read("invocation.json"), read("checkpoint.json"), read("terminal-result.json")})
	}
	return sets
}

// TestExamplesCoverPoliciesAndStates checks the example set is complete:
// every publication policy meets every terminal state.
func TestExamplesCoverPoliciesAndStates(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range readExamples(t) {
		tr, err := DecodeObject(s.trm)
		if err != nil {
			t.Fatal(err)
		}
		policy, _ := str(tr, "publication", "policy")
		state, _ := str(tr, "terminal_state")
		seen[policy+"/"+state] = true
	}
	for _, p := range []string{"local_commit", "update_pr"} {
		for _, st := range []string{"converged", "changes_remaining", "blocked"} {
			if !seen[p+"/"+st] {
				t.Errorf("no example for %s/%s", p, st)
			}
		}
	}
}

// TestExamples: every example is valid, of the kind Infer says, consistent
// across its three documents, canonical, and independent of key order; its
// Go type reads and writes it byte for byte.
func TestExamples(t *testing.T) {
	for _, s := range readExamples(t) {
		docs := map[Kind][]byte{KindInvocation: s.invocation, KindCheckpoint: s.checkpoint, KindTerminalResult: s.trm}
		values := map[Kind]map[string]any{}
		for kind, data := range docs {
			t.Run(s.name+"/"+string(kind), func(t *testing.T) {
				vs, err := Validate(kind, data)
				if err != nil || len(vs) > 0 {
					t.Fatalf("Validate(%s) = %v, %v; want valid", kind, vs, err)
				}
				doc, _ := DecodeObject(data)
				values[kind] = doc
				if got, err := Infer(doc); got != kind {
					t.Errorf("Infer = %s, %v; want %s", got, err, kind)
				}
				c, err := Canonical(data)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(c, data) {
					t.Errorf("example is not canonical:\n%s", firstDiff(c, data))
				}
				again, err := jsonschema.Decode(c)
				if err != nil || !jsonschema.Equal(again, any(doc)) {
					t.Errorf("jsonschema.Decode(Canonical(x)) != x: %v", err)
				}
				shuffled := reorderedJSON(doc)
				if c2, err := Canonical(shuffled); err != nil || !bytes.Equal(c2, data) {
					t.Errorf("Canonical depends on input key order: %v", err)
				}
				var out []byte
				switch kind {
				case KindInvocation:
					v, err := ParseInvocation(data)
					if err != nil {
						t.Fatal(err)
					}
					out, err = Marshal(v)
				case KindCheckpoint:
					v, err := ParseCheckpoint(data)
					if err != nil {
						t.Fatal(err)
					}
					out, err = Marshal(v)
				case KindTerminalResult:
					v, err := ParseTerminalResult(data)
					if err != nil {
						t.Fatal(err)
					}
					out, err = Marshal(v)
				}
				if !bytes.Equal(out, data) {
					t.Errorf("Marshal(Parse(x)) != x:\n%s", firstDiff(out, data))
				}
			})
		}
		if vs := CheckCheckpointAgainstInvocation(values[KindInvocation], values[KindCheckpoint]); len(vs) > 0 {
			t.Errorf("%s: CheckCheckpointAgainstInvocation = %v, want none", s.name, vs)
		}
		if vs := CheckTerminalAgainstCheckpoint(values[KindCheckpoint], values[KindTerminalResult]); len(vs) > 0 {
			t.Errorf("%s: CheckTerminalAgainstCheckpoint = %v, want none", s.name, vs)
		}
	}
}

// reorderedJSON writes a generic value compactly with object keys in
// reverse order, to show canonical output does not depend on input order.
func reorderedJSON(v any) []byte {
	var b strings.Builder
	var w func(v any)
	w = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			keys := sortedKeys(v)
			sort.Sort(sort.Reverse(sort.StringSlice(keys)))
			b.WriteString("{")
			for i, k := range keys {
				if i > 0 {
					b.WriteString(",")
				}
				var kb bytes.Buffer
				writeString(&kb, k)
				b.Write(kb.Bytes())
				b.WriteString(":")
				w(v[k])
			}
			b.WriteString("}")
		case []any:
			b.WriteString("[")
			for i, e := range v {
				if i > 0 {
					b.WriteString(",")
				}
				w(e)
			}
			b.WriteString("]")
		default:
			c, _ := CanonicalValue(v)
			b.Write(bytes.TrimSuffix(c, []byte("\n")))
		}
	}
	w(v)
	return []byte(b.String())
}

// TestMarshalNilListsAsEmpty: a Go value with nil required lists still
// writes [] (no schema allows null), and omits empty optional fields.
func TestMarshalNilListsAsEmpty(t *testing.T) {
	out, err := Marshal(&Checkpoint{SchemaVersion: SchemaVersion})
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	for _, want := range []string{`"cycle_attempts": []`, `"head_history": []`, `"tracked": []`, `"review_records": []`} {
		if !strings.Contains(s, want) {
			t.Errorf("Marshal(empty checkpoint) lacks %s", want)
		}
	}
	for _, unwanted := range []string{"null", `"pull_request"`, `"ahead_by"`, `"last_verified_head"`} {
		if strings.Contains(s, unwanted) {
			t.Errorf("Marshal(empty checkpoint) contains %s", unwanted)
		}
	}
	zero := 0
	out, _ = Marshal(CheckpointSource{Status: "bound", AheadBy: &zero, BehindBy: &zero})
	if !strings.Contains(string(out), `"ahead_by": 0`) {
		t.Errorf("Marshal(source with ahead_by 0) = %s, want ahead_by kept", out)
	}
}

// TestToDocument: a parsed Go document converts back to the same value.
func TestToDocument(t *testing.T) {
	for _, s := range readExamples(t) {
		v, err := ParseCheckpoint(s.checkpoint)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := ToDocument(v)
		want, _ := DecodeObject(s.checkpoint)
		if err != nil || !jsonschema.Equal(doc, want) {
			t.Errorf("ToDocument(ParseCheckpoint(%s)) = %v; want the decoded file", s.name, err)
		}
	}
	if _, err := ParseCheckpoint([]byte(`{"current_phase":"x"}`)); err == nil {
		t.Error("ParseCheckpoint(invalid) = nil error")
	} else if v, _ := ParseCheckpoint([]byte(`{}`)); v != nil {
		t.Error("ParseCheckpoint(invalid) returned a value")
	}
}

// TestMarshalKeepsEmptySummary: the one optional string that may be empty
// survives Parse then Marshal.
func TestMarshalKeepsEmptySummary(t *testing.T) {
	doc := example(t, invLocal)
	apply(t, doc, set("change_contract.sources.nearby_patterns[0].summary", `""`))
	data, _ := CanonicalValue(doc)
	v, err := ParseInvocation(data)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Marshal(v)
	if err != nil || !bytes.Equal(out, data) {
		t.Errorf("Marshal(ParseInvocation(x)) != x: %v\n%s", err, firstDiff(out, data))
	}
}
