package loopdoc

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// peerExamples holds the peer's published example documents, copied
// byte for byte (testdata/peer/README.md says from where).
const peerExamples = "../../testdata/peer/compris-examples"

func readPeer(t *testing.T) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(peerExamples)
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string][]byte{}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(peerExamples, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		docs[strings.TrimSuffix(e.Name(), ".json")] = data
	}
	if len(docs) == 0 {
		t.Fatalf("no peer examples in %s", peerExamples)
	}
	return docs
}

// TestPeerExamplesValidAndCanonical is the interoperability promise: every
// document the peer publishes is valid under failpass's stricter rules and
// already in failpass's canonical form.
func TestPeerExamplesValidAndCanonical(t *testing.T) {
	for name, data := range readPeer(t) {
		t.Run(name, func(t *testing.T) {
			doc, err := DecodeObject(data)
			if err != nil {
				t.Fatalf("DecodeObject: %v", err)
			}
			kind, err := Infer(doc)
			if err != nil {
				t.Fatalf("Infer: %v", err)
			}
			if !strings.Contains(name, string(kind)) && !(kind == KindTerminalResult && strings.Contains(name, "terminal")) {
				t.Errorf("Infer(%s) = %s", name, kind)
			}
			vs, err := Validate(kind, data)
			if err != nil || len(vs) > 0 {
				t.Errorf("Validate(%s, %s) = %v, %v; want valid", kind, name, vs, err)
			}
			c, err := Canonical(data)
			if err != nil {
				t.Fatalf("Canonical: %v", err)
			}
			if !bytes.Equal(c, data) {
				t.Errorf("Canonical(%s) differs from the peer's bytes:\n%s", name, firstDiff(c, data))
			}
		})
	}
}

// TestPeerCrossDocuments runs every checkpoint against the invocation with
// the same invocation_id, and every terminal result against its checkpoint.
func TestPeerCrossDocuments(t *testing.T) {
	docs := readPeer(t)
	byKind := map[Kind]map[string]map[string]any{}
	names := map[string]string{}
	for name, data := range docs {
		doc, err := DecodeObject(data)
		if err != nil {
			t.Fatal(err)
		}
		kind, err := Infer(doc)
		if err != nil {
			t.Fatal(err)
		}
		id, _ := str(doc, "invocation_id")
		if byKind[kind] == nil {
			byKind[kind] = map[string]map[string]any{}
		}
		byKind[kind][id] = doc
		names[string(kind)+"/"+id] = name
	}
	pairs := 0
	for id, cp := range byKind[KindCheckpoint] {
		if inv, ok := byKind[KindInvocation][id]; ok {
			pairs++
			if vs := CheckCheckpointAgainstInvocation(inv, cp); len(vs) > 0 {
				t.Errorf("CheckCheckpointAgainstInvocation(%s, %s) = %v, want none", names["invocation/"+id], names["checkpoint/"+id], vs)
			}
		}
		if tr, ok := byKind[KindTerminalResult][id]; ok {
			pairs++
			if vs := CheckTerminalAgainstCheckpoint(cp, tr); len(vs) > 0 {
				t.Errorf("CheckTerminalAgainstCheckpoint(%s, %s) = %v, want none", names["checkpoint/"+id], names["terminal-result/"+id], vs)
			}
		}
	}
	if pairs < 4 {
		t.Errorf("found %d cross-document pairs among the peer examples, want at least the 4 of rule 113", pairs)
	}
}

func firstDiff(a, b []byte) string {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			lo := max(0, i-40)
			return "ours:   " + string(a[lo:min(len(a), i+40)]) + "\ntheirs: " + string(b[lo:min(len(b), i+40)])
		}
	}
	return "lengths differ"
}
