package loopdoc

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/failpass/failpass/internal/jsonschema"
)

// addSeeds seeds a target with small vectors and, when withExamples, the
// example documents. The examples are kilobytes long, and the fuzzer
// spends up to a minute minimizing each new input found from one, so the
// canonical-form target, which needs no document structure, does without.
func addSeeds(f *testing.F, withExamples bool) {
	if withExamples {
		paths, _ := filepath.Glob(filepath.Join(examplesDir, "*", "*.json"))
		for _, p := range paths {
			if data, err := os.ReadFile(p); err == nil {
				f.Add(data)
			}
		}
	}
	for _, s := range []string{`{}`, `[]`, `{"a":1,"a":2}`, `"\ud83d"`, `[1E5,-0,1.50]`, `{"terminal_state":"converged"}`, "\"\xff\"",
		`{"b":[1,{"c":null}],"a":"\u00e9<&>\ud83d\ude00"}`, `[true,false,1e-7,123456789012345678901234567890,-0.0]`} {
		f.Add([]byte(s))
	}
}

// FuzzCanonical: canonical output is idempotent, decodes to the same
// value, is valid JSON for encoding/json too, and Decode never accepts what
// encoding/json rejects (a parse error returns no value).
func FuzzCanonical(f *testing.F) {
	addSeeds(f, false)
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := jsonschema.Decode(data)
		if err != nil {
			if v != nil {
				t.Fatalf("Decode error %v with a value %v", err, v)
			}
			return
		}
		if !json.Valid(data) {
			t.Fatalf("Decode accepted %q, which encoding/json rejects", data)
		}
		c, err := Canonical(data)
		if err != nil {
			t.Fatalf("Canonical(%q): %v", data, err)
		}
		if !json.Valid(c) {
			t.Fatalf("Canonical(%q) = %q, not valid JSON", data, c)
		}
		again, err := Canonical(c)
		if err != nil || !bytes.Equal(again, c) {
			t.Fatalf("Canonical not idempotent on %q: %q, %v", c, again, err)
		}
		w, err := jsonschema.Decode(c)
		if err != nil || !jsonschema.Equal(v, w) {
			t.Fatalf("jsonschema.Decode(Canonical(x)) != jsonschema.Decode(x) for %q", data)
		}
	})
}

// FuzzValidate: validation and both cross checks never panic on any
// document, and a valid document stays valid once canonicalized.
func FuzzValidate(f *testing.F) {
	addSeeds(f, true)
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := DecodeObject(data)
		if err != nil {
			return
		}
		_, _ = Infer(doc)
		for _, k := range []Kind{KindInvocation, KindCheckpoint, KindTerminalResult} {
			vs, err := ValidateDocument(k, doc)
			if err != nil {
				t.Fatal(err)
			}
			if len(vs) == 0 {
				c, err := Canonical(data)
				if err != nil {
					t.Fatal(err)
				}
				if vs2, err := Validate(k, c); err != nil || len(vs2) > 0 {
					t.Fatalf("valid %s became invalid when canonicalized: %v %v", k, vs2, err)
				}
			}
		}
		CheckCheckpointAgainstInvocation(doc, doc)
		CheckTerminalAgainstCheckpoint(doc, doc)
	})
}
