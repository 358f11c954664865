package card

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
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

const rewriteHeldOutCard = `id: "ISSUE-2"
base_ref: "main"
fail: {cmd: ["true"], expect_exit: 1}
pass: {cmd: ["true"], expect_exit: 0}
invariant: {cmd: ["true"], expect_exit: 0}
budget: {max_files: 3, max_changed_lines: 80}
held_out:
  # kept outside the repository
  dest: "tests"
  cmd: ["python3", "-m", "pytest", "{held_out}"]
  expect_exit: 0
`

// topKeys is the card's top-level keys in file order.
func topKeys(data string) []string {
	var keys []string
	for _, m := range regexp.MustCompile(`(?m)^([a-z_]+):`).FindAllStringSubmatch(data, -1) {
		keys = append(keys, m[1])
	}
	return keys
}

// TestRewrite: an edit keeps the file's comments and key order (new keys
// go where Marshal puts them), and the result re-parses to exactly the
// wanted card. An edit that would give anything else (a wrong value, a
// change the edit does not make, a file that is not one mapping) is
// refused: the card is written in Marshal's layout instead, which reads
// back as the wanted card.
func TestRewrite(t *testing.T) {
	sig := "-----BEGIN SSH SIGNATURE-----\nAAAA\n-----END SSH SIGNATURE-----\n"
	digest := "sha256:" + strings.Repeat("d", 64)
	a40, b40, c40 := strings.Repeat("a", 40), strings.Repeat("b", 40), strings.Repeat("c", 40)
	two := 2
	signoff := &Signoff{At: "2026-01-01T00:00:00Z", Tool: "failpass test", Decision: "sign",
		Runs: []Run{{Role: "fail", Exit: 1, DurationMS: 5}, {Role: "invariant", Exit: 0, DurationMS: 3}}}
	for _, tc := range []struct {
		name  string
		orig  string
		want  func(c *Card)
		edit  func(d *Doc, c *Card)
		kept  bool
		keys  []string // top-level keys in order, when kept
		grep  []string
		nogrp []string
	}{
		{
			name: "sign",
			orig: rewriteCard,
			want: func(c *Card) {
				c.BaseSHA = a40
				c.Signoff = signoff
				c.Signatures = []Signature{{Principal: "m@example.org", Signature: sig}}
			},
			edit: func(d *Doc, c *Card) {
				d.SetBaseSHA(c.BaseSHA)
				d.SetSignoff(c.Signoff)
				d.SetSignatures(c.Signatures)
			},
			kept: true,
			keys: []string{"id", "base_ref", "base_sha", "fail", "pass", "invariant", "budget", "signoff", "signatures", "annotations"},
			grep: []string{"# Contract for issue 1.\n", "# the issue", "  # a nearby suite\n",
				"base_ref: \"main\"\nbase_sha: \"" + a40 + "\"\n",
				"budget: {max_files: 3,", "    signature: |\n      -----BEGIN SSH SIGNATURE-----\n",
				"    - {role: \"fail\", exit: 1, duration_ms: 5}\n"},
		},
		{
			name: "re-sign replaces values in place",
			orig: rewriteCard + "signoff: {at: \"2025-01-01T00:00:00Z\", tool: \"t\", decision: \"sign\", runs: [{role: \"fail\", exit: 1, duration_ms: 1}]}\nbase_sha: \"" + c40 + "\" # old base\n",
			want: func(c *Card) { c.BaseSHA = a40; c.Signoff = signoff },
			edit: func(d *Doc, c *Card) { d.SetBaseSHA(c.BaseSHA); d.SetSignoff(c.Signoff) },
			kept: true,
			keys: []string{"id", "base_ref", "fail", "pass", "invariant", "budget", "annotations", "signoff", "base_sha"},
			grep: []string{"base_sha: \"" + a40 + "\" # old base\n"},
		},
		{
			name: "held-out digest written first in its block",
			orig: rewriteHeldOutCard,
			want: func(c *Card) {
				h := *c.HeldOut
				h.Digest = digest
				c.HeldOut = &h
				c.Signoff = signoff
			},
			edit: func(d *Doc, c *Card) { d.SetHeldOutDigest(c.HeldOut.Digest); d.SetSignoff(c.Signoff) },
			kept: true,
			keys: []string{"id", "base_ref", "fail", "pass", "invariant", "budget", "held_out", "signoff"},
			grep: []string{"held_out:\n  digest: \"" + digest + "\"\n  # kept outside the repository\n  dest: \"tests\"\n"},
		},
		{
			name: "held-out digest replaced",
			orig: strings.Replace(rewriteHeldOutCard, "  dest:", "  digest: \"sha256:"+strings.Repeat("0", 64)+"\" # old\n  dest:", 1),
			want: func(c *Card) { h := *c.HeldOut; h.Digest = digest; c.HeldOut = &h },
			edit: func(d *Doc, c *Card) { d.SetHeldOutDigest(c.HeldOut.Digest) },
			kept: true,
			grep: []string{"  digest: \"" + digest + "\" # old\n"},
		},
		{
			name: "annotate a flow list",
			orig: rewriteCard,
			want: func(c *Card) {
				c.Annotations = []Annotation{{By: "r", At: "2026-01-01T00:00:00Z", Note: "n",
					Tighten: &Tightening{MaxFiles: &two, DenyGlobs: []string{"src/vendor/**"}, AllowHarness: []string{}}}}
			},
			edit: func(d *Doc, c *Card) { d.AppendAnnotation(c.Annotations[0]) },
			kept: true,
			grep: []string{"annotations:\n  - by: \"r\"\n", "      max_files: 2\n", "      allow_harness: []\n", "# a nearby suite"},
		},
		{
			name: "annotate a card without annotations",
			orig: strings.Replace(rewriteCard, "annotations: []\n", "", 1),
			want: func(c *Card) { c.Annotations = []Annotation{{By: "r", At: "2026-01-01T00:00:00Z", Note: "n"}} },
			edit: func(d *Doc, c *Card) { d.AppendAnnotation(c.Annotations[0]) },
			kept: true,
			keys: []string{"id", "base_ref", "fail", "pass", "invariant", "budget", "annotations"},
			grep: []string{"# Contract for issue 1.\n", "annotations:\n  - by: \"r\"\n"},
		},
		{
			name:  "an edit that writes another value is refused",
			orig:  rewriteCard,
			want:  func(c *Card) { c.BaseSHA = b40 },
			edit:  func(d *Doc, c *Card) { d.SetBaseSHA(c40) },
			grep:  []string{"base_sha: \"" + b40 + "\"\n"},
			nogrp: []string{"# Contract", c40},
		},
		{
			name:  "a change the edit does not make is refused",
			orig:  rewriteCard,
			want:  func(c *Card) { c.Budget.MaxFiles = 30; c.Signatures = []Signature{{Principal: "m", Signature: sig}} },
			edit:  func(d *Doc, c *Card) { d.SetSignatures(c.Signatures) },
			grep:  []string{"  max_files: 30\n"},
			nogrp: []string{"# Contract"},
		},
		{
			name:  "a digest for a card without held_out is refused",
			orig:  rewriteHeldOutCard,
			want:  func(c *Card) { c.HeldOut = nil },
			edit:  func(d *Doc, c *Card) { d.SetHeldOutDigest(digest) },
			nogrp: []string{"held_out", digest},
		},
	} {
		old, err := Parse("c", []byte(tc.orig))
		if err != nil {
			t.Fatalf("%s: Parse = %v", tc.name, err)
		}
		want := *old
		tc.want(&want)
		data, kept, err := Rewrite([]byte(tc.orig), &want, func(d *Doc) { tc.edit(d, &want) })
		if err != nil || kept != tc.kept {
			t.Errorf("%s: Rewrite = kept %v, %v; want kept %v\n%s", tc.name, kept, err, tc.kept, data)
			continue
		}
		if err := matches(data, &want); err != nil {
			t.Errorf("%s: Rewrite wrote a card that reads back differently: %v\n%s", tc.name, err, data)
		}
		if !kept {
			if m, _ := Marshal(&want); string(m) != string(data) {
				t.Errorf("%s: a refused edit wrote\n%s\nwant Marshal's layout\n%s", tc.name, data, m)
			}
		}
		if tc.keys != nil && !slices.Equal(topKeys(string(data)), tc.keys) {
			t.Errorf("%s: Rewrite key order = %q, want %q", tc.name, topKeys(string(data)), tc.keys)
		}
		for _, g := range tc.grep {
			if !strings.Contains(string(data), g) {
				t.Errorf("%s: Rewrite output lacks %q:\n%s", tc.name, g, data)
			}
		}
		for _, g := range tc.nogrp {
			if strings.Contains(string(data), g) {
				t.Errorf("%s: Rewrite output has %q:\n%s", tc.name, g, data)
			}
		}
	}
}

// TestRewriteNotAMapping: a file that is not one YAML mapping cannot be
// edited; the card is written in Marshal's layout.
func TestRewriteNotAMapping(t *testing.T) {
	want, err := Parse("c", []byte(rewriteCard))
	if err != nil {
		t.Fatal(err)
	}
	for _, orig := range []string{"- a\n- b\n", "", "a: [\n", "'just a string'\n"} {
		called := false
		data, kept, err := Rewrite([]byte(orig), want, func(*Doc) { called = true })
		m, _ := Marshal(want)
		if err != nil || kept || called || string(data) != string(m) {
			t.Errorf("Rewrite(%q) = %q, kept %v, %v (edit called %v); want Marshal's layout", orig, data, kept, err, called)
		}
	}
}

// FuzzRewrite: whatever card file it starts from, a signing rewrite
// reads back as exactly the wanted card, in the file's layout or in
// Marshal's; it never writes anything else.
func FuzzRewrite(f *testing.F) {
	for _, p := range []string{"testdata/seed.yml", "testdata/full.yml"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, "m@example.org", "note")
	}
	f.Add([]byte(rewriteCard), "a\nb", "#x: y")
	f.Add([]byte(rewriteHeldOutCard), "'", "\"")
	f.Fuzz(func(t *testing.T, orig []byte, principal, note string) {
		c, err := Parse("f.yml", orig)
		if err != nil {
			return
		}
		want := *c
		want.BaseSHA = strings.Repeat("a", 40)
		want.Signatures = append(slices.Clone(c.Signatures), Signature{Principal: principal, Signature: "-----BEGIN SSH SIGNATURE-----\nAAAA\n-----END SSH SIGNATURE-----\n"})
		a := Annotation{By: "r", At: "2026-01-01T00:00:00Z", Note: note}
		want.Annotations = append(slices.Clone(c.Annotations), a)
		if want.Validate() != nil {
			return
		}
		data, _, err := Rewrite(orig, &want, func(d *Doc) {
			d.SetBaseSHA(want.BaseSHA)
			d.SetSignatures(want.Signatures)
			d.AppendAnnotation(a)
		})
		if err != nil {
			t.Fatalf("Rewrite = %v", err)
		}
		if err := matches(data, &want); err != nil {
			t.Fatalf("Rewrite wrote a card that reads back differently: %v\n%s", err, data)
		}
	})
}
