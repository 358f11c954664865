package record

import (
	"crypto/ed25519"
	"crypto/rand"
	"github.com/failpass/failpass/internal/verdict"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/failpass/failpass/internal/card"
	"github.com/failpass/failpass/internal/sign"
)

const (
	testBase = "1111111111111111111111111111111111111111"
	testTree = "2222222222222222222222222222222222222222"
)

var testTime = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

const testCardYAML = `id: "REC-T"
base_ref: "main"
base_sha: "` + testBase + `"
fail: {cmd: ["sh", "check.sh"], expect_exit: 1}
pass: {cmd: ["sh", "check.sh"], expect_exit: 0}
invariant: {cmd: ["go", "test", "./..."], expect_exit: 0}
budget: {max_files: 2, max_changed_lines: 10, deny_globs: ["*.sh"]}
`

func testCard(t testing.TB) *card.Card {
	t.Helper()
	c, err := card.Parse("card.yml", []byte(testCardYAML))
	if err != nil {
		t.Fatalf("card.Parse: %v", err)
	}
	return c
}

// testKey is a fresh ed25519 signer and its allowed_signers line for who.
func testKey(t testing.TB, who string) (sign.Signer, string) {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := sign.NewSigner(s)
	if err != nil {
		t.Fatal(err)
	}
	return signer, who + " " + strings.TrimSpace(string(ssh.MarshalAuthorizedKey(s.PublicKey())))
}

func allowed(t testing.TB, name string, lines ...string) *sign.AllowedSigners {
	t.Helper()
	a, err := sign.ParseAllowedSigners(name, []byte(strings.Join(lines, "\n")+"\n"))
	if err != nil {
		t.Fatalf("ParseAllowedSigners: %v", err)
	}
	return a
}

// signCard adds a card signature by s as who.
func signCard(t testing.TB, c *card.Card, s sign.Signer, who string) {
	t.Helper()
	canon, err := c.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	armored, err := s.Sign(sign.NamespaceCard, canon)
	if err != nil {
		t.Fatal(err)
	}
	c.Signatures = append(c.Signatures, card.Signature{Principal: who, Signature: string(armored)})
}

func intp(n int) *int { return &n }

func run(argv []string, exit int) verdict.RunResult {
	return verdict.RunResult{Argv: argv, Exit: exit, DurationMS: 12}
}

// passVerdict is what the gate says of a candidate that passes testCard.
func passVerdict(c *card.Card) *verdict.Verdict {
	v := &verdict.Verdict{Verdict: verdict.Pass, Reason: "every rule held", Candidate: "fix.diff", Base: testBase,
		Sandbox: verdict.Sandbox{Applied: []string{"network"}, Missing: []string{"resources"}},
		Signers: []string{"maint@example.org"}}
	for _, r := range verdict.Rules {
		s := verdict.Step{Rule: r, Status: verdict.StatusOK}
		if role, ok := commandRole(r); ok {
			cmd := c.Command(role)
			s.Expected = intp(cmd.ExpectExit)
			s.Exit = intp(cmd.ExpectExit)
			s.Runs = []verdict.RunResult{run(cmd.Cmd, cmd.ExpectExit)}
		}
		if r == verdict.RulePatchCanary {
			s.Exit = intp(1)
			s.Runs = []verdict.RunResult{run([]string{c.Pass.Cmd[0], "canary_test.sh"}, 1)}
		}
		v.Steps = append(v.Steps, s)
	}
	return v
}

// failVerdict is the gate's answer when patch.pass exits 1.
func failVerdict(c *card.Card) *verdict.Verdict {
	v := passVerdict(c)
	rule := verdict.RulePatchPass
	v.Verdict, v.Rule, v.Reason = verdict.Fail, &rule, "exit 1, expected 0"
	for i := range v.Steps {
		switch v.Steps[i].Rule {
		case verdict.RulePatchPass:
			v.Steps[i].Status = verdict.StatusFail
			v.Steps[i].Runs = []verdict.RunResult{run(c.Pass.Cmd, 1)}
		case verdict.RulePatchInvariant, verdict.RulePatchCanary:
			v.Steps[i] = verdict.Step{Rule: v.Steps[i].Rule, Status: verdict.StatusNotRun}
		}
	}
	return v
}

var testDiff = []byte("diff --git a/value b/value\n--- a/value\n+++ b/value\n@@ -1 +1 @@\n-1\n+2\n")

func testStatement(t testing.TB, v *verdict.Verdict, c *card.Card) *Statement {
	t.Helper()
	s, err := New(v, c, testDiff, &Patched{Base: testBase, Tree: testTree, Applied: true},
		[]FileStat{{Path: "value", Added: 1, Deleted: 1}}, "failpass test", testTime)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s
}

func canonical(t testing.TB, s *Statement) []byte {
	t.Helper()
	b, err := s.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	return b
}
