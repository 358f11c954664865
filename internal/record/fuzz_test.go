package record

import (
	"bytes"
	"testing"
)

// FuzzParse: a parse error returns no statement; an accepted record is
// canonical, so encoding it again gives back exactly its bytes.
func FuzzParse(f *testing.F) {
	c := testCard(f)
	f.Add(canonical(f, testStatement(f, passVerdict(c), c)))
	f.Add(canonical(f, testStatement(f, failVerdict(c), c)))
	f.Add([]byte(`{"_type":"https://in-toto.io/Statement/v1"}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse(data)
		if err != nil {
			if s != nil {
				t.Fatalf("Parse(%q) = %v with an error: %v", data, s, err)
			}
			return
		}
		again, err := s.Canonical()
		if err != nil {
			t.Fatalf("Canonical(Parse(%q)) = %v", data, err)
		}
		if !bytes.Equal(again, data) {
			t.Fatalf("Canonical(Parse(%q)) = %q, want the input", data, again)
		}
		if _, err := Parse(again); err != nil {
			t.Fatalf("Parse(Canonical(Parse(%q))) = %v", data, err)
		}
	})
}
