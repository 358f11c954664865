package card

import (
	"bytes"
	"os"
	"testing"
)

// TestLoadedCanonical: a loaded card answers Canonical and Digest from
// what Load computed, the very bytes a parsed card computes, and without
// parsing again; a loaded card changed since answers afresh.
func TestLoadedCanonical(t *testing.T) {
	for _, path := range []string{"testdata/seed.yml", "testdata/full.yml"} {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		parsed, err := Parse(path, data)
		if err != nil {
			t.Fatal(err)
		}
		loaded := mustLoad(t, path)
		if loaded.loaded == nil {
			t.Fatalf("Load(%s) carries no canonical form", path)
		}
		want, err := parsed.Canonical()
		if err != nil {
			t.Fatal(err)
		}
		wantDigest, _ := parsed.Digest()
		got, err := loaded.Canonical()
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("Load(%s).Canonical() = %s, %v, want %s", path, got, err, want)
		}
		if d, err := loaded.Digest(); err != nil || d != wantDigest {
			t.Errorf("Load(%s).Digest() = %s, %v, want %s", path, d, err, wantDigest)
		}
		// The caller's copy is its own.
		got[0] = 'X'
		if again, _ := loaded.Canonical(); !bytes.Equal(again, want) {
			t.Errorf("Canonical() after the caller wrote into its result = %s", again)
		}

		// Parsing is what a loaded card saves: its Digest allocates a
		// fraction of what Validate's Marshal and Parse cost.
		fresh := testing.AllocsPerRun(20, func() { parsed.Digest() })
		kept := testing.AllocsPerRun(20, func() { loaded.Digest() })
		if kept*4 > fresh {
			t.Errorf("Load(%s).Digest() allocates %.0f times, a parsed card's %.0f: it parses again", path, kept, fresh)
		}

		// Changed after Load: the digest follows the change, and a change
		// that leaves the signed bytes alone (a signature) keeps it.
		signed := *loaded
		signed.Signatures = append([]Signature{{Principal: "p@example.org", Signature: "-----BEGIN SSH SIGNATURE-----\nAAAA\n-----END SSH SIGNATURE-----\n"}}, loaded.Signatures...)
		if d, err := signed.Digest(); err != nil || d != wantDigest {
			t.Errorf("Digest() after adding a signature = %s, %v, want %s", d, err, wantDigest)
		}
		loaded.Budget.MaxChangedLines++
		parsed.Budget.MaxChangedLines++
		wantChanged, err := parsed.Digest()
		if err != nil {
			t.Fatal(err)
		}
		if d, err := loaded.Digest(); err != nil || d != wantChanged || d == wantDigest {
			t.Errorf("Digest() after raising max_changed_lines = %s, %v, want %s", d, err, wantChanged)
		}
		// A change that makes the card invalid is refused, as for any card.
		loaded.Budget.MaxFiles = -1
		if _, err := loaded.Canonical(); err == nil {
			t.Errorf("Canonical() of a loaded card changed to max_files -1 = nil error")
		}
	}
}
