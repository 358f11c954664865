package cli

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/failpass/failpass/internal/card"
	"github.com/failpass/failpass/internal/sign"
)

// signCard is a small valid card.
const signCard = `id: "ISSUE-1"
base_ref: "main"
fail: {cmd: ["sh", "-c", "exit 1"], expect_exit: 1}
pass: {cmd: ["true"], expect_exit: 0}
invariant: {cmd: ["true"], expect_exit: 0}
budget: {max_files: 3, max_changed_lines: 80}
`

func TestParseTightenFlags(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want string // "" for an error
	}{
		{nil, "<nil>"},
		{[]string{"max_files=2"}, "files=2 lines=- globs=[]"},
		{[]string{"max_changed_lines=0", "deny_glob=a/**", "deny_glob=b"}, "files=- lines=0 globs=[a/** b]"},
		{[]string{"max_files=2", "max_files=2"}, "files=2 lines=- globs=[]"},
		{[]string{"max_files=2", "max_files=3"}, ""},
		{[]string{"max_files=-1"}, ""},
		{[]string{"max_files=02"}, ""},
		{[]string{"max_files="}, ""},
		{[]string{"max_files"}, ""},
		{[]string{"fail.cmd=true"}, ""},
		{[]string{"budget.max_files=9"}, ""},
	} {
		got, err := parseTightenFlags(tc.in)
		s := "<nil>"
		if got != nil {
			f, l := "-", "-"
			if got.MaxFiles != nil {
				f = strconv.Itoa(*got.MaxFiles)
			}
			if got.MaxChangedLines != nil {
				l = strconv.Itoa(*got.MaxChangedLines)
			}
			s = "files=" + f + " lines=" + l + " globs=[" + strings.Join(got.DenyGlobs, " ") + "]"
		}
		if tc.want == "" {
			if err == nil {
				t.Errorf("parseTightenFlags(%q) = %s, want an error", tc.in, s)
			}
			continue
		}
		if err != nil || s != tc.want {
			t.Errorf("parseTightenFlags(%q) = %s, %v; want %s", tc.in, s, err, tc.want)
		}
	}
}

// TestCardTrustFromFile checks the gate's card.signature hook end to end
// with a real key: valid, unsigned, tampered, and a trust file refused
// because it lies in the tree under test.
func TestCardTrustFromFile(t *testing.T) {
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		t.Skip("ssh-keygen not installed")
	}
	dir := t.TempDir()
	key := filepath.Join(dir, "k")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", key).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	pub, _ := os.ReadFile(key + ".pub")
	as := filepath.Join(dir, "allowed_signers")
	os.WriteFile(as, []byte("m@example.org "+string(pub)), 0o644)
	c, err := card.Parse("c", []byte(signCard))
	if err != nil {
		t.Fatal(err)
	}
	signer, err := sign.LoadSigner(key, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	canon, _ := c.Canonical()
	armored, err := signer.Sign(sign.NamespaceCard, canon)
	if err != nil {
		t.Fatal(err)
	}
	signed := *c
	signed.Signatures = []card.Signature{{Principal: "m@example.org", Signature: string(armored)}}
	tampered := signed
	tampered.Budget.MaxFiles = 30

	check, err := sign.LoadTrust(as)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		c    *card.Card
		ok   bool
	}{
		{"signed", &signed, true},
		{"unsigned", c, false},
		{"tampered", &tampered, false},
	} {
		who, err := check(tc.c)
		var te *sign.TrustError
		switch {
		case tc.ok && (err != nil || strings.Join(who, ",") != "m@example.org"):
			t.Errorf("%s: check = %v, %v; want m@example.org", tc.name, who, err)
		case !tc.ok && !errors.As(err, &te):
			t.Errorf("%s: check = %v, %v; want *sign.TrustError", tc.name, who, err)
		}
	}
	if _, err := sign.LoadTrust(as, dir); err == nil {
		t.Errorf("LoadTrust(%q, %q) = nil error, want the trust file refused", as, dir)
	}
}
