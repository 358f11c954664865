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

const rewriteCard = `# Contract for issue 1.
id: "ISSUE-1"   # the issue
base_ref: "main"
fail: {cmd: ["sh", "-c", "exit 1"], expect_exit: 1}
pass: {cmd: ["sh", "-c", "exit 1"], expect_exit: 0}
invariant:
  # a nearby suite
  cmd: ["true"]
  expect_exit: 0
budget: {max_files: 3, max_changed_lines: 80, deny_globs: ["docs/**"]}
annotations: []
`

// TestCardRewrite: edits keep comments and layout, and the result reads
// back as exactly the wanted card; when the node edit cannot give that,
// the card is written in Marshal's layout instead.
func TestCardRewrite(t *testing.T) {
	old, err := card.Parse("c", []byte(rewriteCard))
	if err != nil {
		t.Fatal(err)
	}
	sig := "-----BEGIN SSH SIGNATURE-----\nAAAA\n-----END SSH SIGNATURE-----\n"
	two := 2
	for _, tc := range []struct {
		name  string
		want  func(c *card.Card)
		edit  func(d *cardDoc, c *card.Card)
		kept  bool
		grep  []string
		nogrp []string
	}{
		{
			name: "sign",
			want: func(c *card.Card) {
				c.BaseSHA = strings.Repeat("a", 40)
				c.Signoff = &card.Signoff{At: "2026-01-01T00:00:00Z", Tool: "failpass test", Decision: "sign",
					Runs: []card.Run{{Role: "fail", Exit: 1, DurationMS: 5}, {Role: "invariant", Exit: 0, DurationMS: 3}}}
				c.Signatures = []card.Signature{{Principal: "m@example.org", Signature: sig}}
			},
			edit: func(d *cardDoc, c *card.Card) {
				d.set("base_sha", signYAMLStr(c.BaseSHA), "base_ref", "id")
				d.set("signoff", signoffNode(c.Signoff), "sandbox", "budget")
				d.set("signatures", signaturesNode(c.Signatures), "signoff")
			},
			kept: true,
			grep: []string{"# Contract for issue 1.\n", "# the issue", "  # a nearby suite\n",
				"base_ref: \"main\"\nbase_sha: \"" + strings.Repeat("a", 40) + "\"\n",
				"budget: {max_files: 3,", "    signature: |\n      -----BEGIN SSH SIGNATURE-----\n",
				"    - {role: \"fail\", exit: 1, duration_ms: 5}\n"},
		},
		{
			name: "annotate a flow list",
			want: func(c *card.Card) {
				c.Annotations = []card.Annotation{{By: "r", At: "2026-01-01T00:00:00Z", Note: "n",
					Tighten: &card.Tightening{MaxFiles: &two, DenyGlobs: []string{"src/vendor/**"}}}}
			},
			edit: func(d *cardDoc, c *card.Card) { d.appendAnnotation(annotationNode(c.Annotations[0])) },
			kept: true,
			grep: []string{"annotations:\n  - by: \"r\"\n", "      max_files: 2\n", "# a nearby suite"},
		},
		{
			name:  "an edit that does not give the wanted card falls back to Marshal",
			want:  func(c *card.Card) { c.BaseSHA = strings.Repeat("b", 40) },
			edit:  func(d *cardDoc, c *card.Card) { d.set("base_sha", signYAMLStr(strings.Repeat("c", 40))) },
			kept:  false,
			grep:  []string{"base_sha: \"" + strings.Repeat("b", 40) + "\"\n"},
			nogrp: []string{"# Contract", strings.Repeat("c", 40)},
		},
	} {
		want := *old
		tc.want(&want)
		data, kept, err := cardRewrite([]byte(rewriteCard), &want, func(d *cardDoc) { tc.edit(d, &want) })
		if err != nil || kept != tc.kept {
			t.Errorf("%s: cardRewrite = kept %v, %v; want kept %v", tc.name, kept, err, tc.kept)
			continue
		}
		if err := cardMatches(data, &want); err != nil {
			t.Errorf("%s: cardRewrite wrote a card that reads back differently: %v\n%s", tc.name, err, data)
		}
		for _, g := range tc.grep {
			if !strings.Contains(string(data), g) {
				t.Errorf("%s: cardRewrite output lacks %q:\n%s", tc.name, g, data)
			}
		}
		for _, g := range tc.nogrp {
			if strings.Contains(string(data), g) {
				t.Errorf("%s: cardRewrite output has %q:\n%s", tc.name, g, data)
			}
		}
	}
}

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
	c, err := card.Parse("c", []byte(rewriteCard))
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
