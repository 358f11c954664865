package sign

import (
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/failpass/failpass/internal/card"
)

const trustCard = `id: "ISSUE-1"
base_ref: "main"
fail: {cmd: ["sh", "-c", "exit 1"], expect_exit: 1}
pass: {cmd: ["sh", "-c", "exit 1"], expect_exit: 0}
invariant: {cmd: ["true"], expect_exit: 0}
budget: {max_files: 3, max_changed_lines: 80}
`

// newEdSigner is an in-memory ed25519 key and its allowed_signers line.
func newEdSigner(t *testing.T, principal string) (Signer, string) {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := NewSigner(s)
	if err != nil {
		t.Fatal(err)
	}
	return signer, principal + " " + strings.TrimSpace(string(ssh.MarshalAuthorizedKey(s.PublicKey())))
}

// TestCardTrust: the card.signature check counts distinct allowed keys
// over the card's canonical bytes and says why it refuses.
func TestCardTrust(t *testing.T) {
	c, err := card.Parse("c", []byte(trustCard))
	if err != nil {
		t.Fatal(err)
	}
	canon, err := c.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	a, aLine := newEdSigner(t, "a@example.org")
	b, bLine := newEdSigner(t, "b@example.org")
	stranger, _ := newEdSigner(t, "s@example.org")
	as := mustParse(t, aLine+"\n"+bLine+"\n")
	sig := func(s Signer, who string) card.Signature {
		armored, err := s.Sign(NamespaceCard, canon)
		if err != nil {
			t.Fatal(err)
		}
		return card.Signature{Principal: who, Signature: string(armored)}
	}
	signed := func(sigs ...card.Signature) *card.Card {
		d := *c
		d.Signatures = sigs
		return &d
	}
	tampered := signed(sig(a, "a@example.org"))
	tampered.Budget.MaxFiles = 30
	now := func() time.Time { return time.Now() }
	for _, tc := range []struct {
		name      string
		c         *card.Card
		threshold int
		who       string // principals that verified, comma-joined
		problem   string // "" when trusted
		invalid   string // a substring of the refused signatures' lines
	}{
		{"one allowed key", signed(sig(a, "a@example.org")), 1, "a@example.org", "", ""},
		{"unsigned", c, 1, "", "the card is not signed", ""},
		{"tampered", tampered, 1, "", "0 distinct allowed key(s) signed, threshold 1", "signature 1 by a@example.org: bad-signature"},
		{"unknown key", signed(sig(stranger, "a@example.org")), 1, "", "0 distinct allowed key(s) signed, threshold 1", "unknown-key"},
		{"one key twice is one", signed(sig(a, "a@example.org"), sig(a, "a@example.org")), 2, "a@example.org,a@example.org", "1 distinct allowed key(s) signed, threshold 2", ""},
		{"two keys", signed(sig(a, "a@example.org"), sig(b, "b@example.org")), 2, "a@example.org,b@example.org", "", ""},
		{"one good, one stranger", signed(sig(stranger, "s@example.org"), sig(b, "b@example.org")), 1, "b@example.org", "", ""},
	} {
		who, err := CardTrust(as, tc.threshold, now)(tc.c)
		if got := strings.Join(who, ","); got != tc.who {
			t.Errorf("%s: signers = %q, want %q", tc.name, got, tc.who)
		}
		if tc.problem == "" {
			if err != nil {
				t.Errorf("%s: CardTrust = %v, want trusted", tc.name, err)
			}
			continue
		}
		var te *TrustError
		if !errors.As(err, &te) {
			t.Errorf("%s: CardTrust = %v, want *TrustError", tc.name, err)
			continue
		}
		if strings.Join(te.Problems, "; ") != tc.problem || !strings.Contains(strings.Join(te.Invalid, "; "), tc.invalid) {
			t.Errorf("%s: CardTrust = %q, want problem %q and invalid %q", tc.name, err, tc.problem, tc.invalid)
		}
	}
}

// TestCardProblems: card verify's problems name the rule they break,
// expiry included.
func TestCardProblems(t *testing.T) {
	c, err := card.Parse("c", []byte(trustCard))
	if err != nil {
		t.Fatal(err)
	}
	past := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	expired := *c
	expired.Expires = &past
	expired.Signatures = []card.Signature{{Principal: "a@example.org"}}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		c    *card.Card
		t    Tally
		n    int
		want string
	}{
		{"unsigned", c, Tally{}, 1, "card.signature: the card is not signed"},
		{"expired, below threshold", &expired, Tally{Keys: 1}, 2, "card.signature: 1 distinct allowed key(s) signed, threshold 2; card.expired: the card expired at 2020-01-01T00:00:00Z"},
		{"valid", &expired, Tally{Keys: 1}, 1, "card.expired: the card expired at 2020-01-01T00:00:00Z"},
	} {
		if got := strings.Join(CardProblems(tc.c, &tc.t, tc.n, now), "; "); got != tc.want {
			t.Errorf("%s: CardProblems = %q, want %q", tc.name, got, tc.want)
		}
	}
}
