package record

import (
	"strings"
	"testing"

	"github.com/failpass/failpass/internal/shellquote"
)

func TestNoteMarkdown(t *testing.T) {
	c := testCard(t)
	s := testStatement(t, failVerdict(c), c)
	n := &Note{CardPath: "cards/my card.yml", CardYAML: []byte(testCardYAML), Card: c,
		Record: s, RecordPath: "rec.json", RecordDigest: "sha256:" + strings.Repeat("ab", 32)}
	var b strings.Builder
	if err := n.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"## failpass contract `REC-T`",
		"| contract | `REC-T` |",
		"| base | `" + testBase + "` |",
		"| card | `cards/my card.yml` (`sha256:",
		"| record | `rec.json` (`sha256:" + strings.Repeat("ab", 32) + "`) |",
		"| patched tree | `" + testTree + "` |",
		"| verdict | **FAIL** `patch.pass`: exit 1, expected 0 |",
		"| `base.fail` | ok | 1 | 1 |",
		"| `patch.pass` | fail | 1 | 0 |",
		"| `patch.invariant` | not_run |  |  |",
		"failpass gate --card 'cards/my card.yml' --diff fix.diff --allowed-signers ALLOWED_SIGNERS\n",
		"failpass record verify --record rec.json --runners RUNNERS --card 'cards/my card.yml' --allowed-signers ALLOWED_SIGNERS --diff fix.diff --repo .\n",
		"```yaml\n" + testCardYAML + "```\n",
		"| record signature | **not checked** (--unverified)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("WriteMarkdown() lacks %q; got:\n%s", want, out)
		}
	}

	var m strings.Builder
	if err := n.WriteMerge(&m); err != nil {
		t.Fatal(err)
	}
	want := "Merge fix for REC-T (failpass gate: pass)\n\nFailpass-Contract: REC-T\nFailpass-Base: " + testBase +
		"\nFailpass-Card: cards/my card.yml\nFailpass-Record: sha256:" + strings.Repeat("ab", 32) + "\nFailpass-Record-Signature: unverified\n"
	if m.String() != want {
		t.Errorf("WriteMerge() = %q, want %q", m.String(), want)
	}
}

func TestNoteWithoutRecord(t *testing.T) {
	c := testCard(t)
	n := &Note{CardPath: "card.yml", CardYAML: []byte(testCardYAML), Card: c}
	var b strings.Builder
	if err := n.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| base | `" + testBase + "` |", "| `base.fail` | `sh check.sh` | 1 |", "--diff CANDIDATE.diff"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("WriteMarkdown(no record) lacks %q; got:\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "record verify") {
		t.Errorf("WriteMarkdown(no record) names record verify:\n%s", b.String())
	}
	if err := n.WriteMerge(&b); err == nil {
		t.Errorf("WriteMerge(no record) = nil, want an error")
	}
}

func TestMarkdownEscapes(t *testing.T) {
	tests := []struct{ fn, in, want string }{
		{"code", "a|b", "`a\\|b`"},
		{"code", "x`y", "``x`y``"},
		{"code", "`x", "`` `x ``"},
		{"code", "a\nb", "`a b`"},
		{"cell", "a | b\nc", "a \\| b c"},
		{"fence", "no ticks", "```"},
		{"fence", "a ```` b", "`````"},
		{"shell", "card.yml", "card.yml"},
		{"shell", "my card.yml", "'my card.yml'"},
		{"shell", "it's", `'it'\''s'`},
		{"shell", "", "''"},
		{"shell", "$(rm -rf /)", "'$(rm -rf /)'"},
	}
	for _, tc := range tests {
		var got string
		switch tc.fn {
		case "code":
			got = code(tc.in)
		case "cell":
			got = cell(tc.in)
		case "fence":
			got = fenceFor([]byte(tc.in))
		case "shell":
			got = shellquote.Quote(tc.in)
		}
		if got != tc.want {
			t.Errorf("%s(%q) = %q, want %q", tc.fn, tc.in, got, tc.want)
		}
	}
}

func TestNoteRepeat(t *testing.T) {
	c := testCard(t)
	v := passVerdict(c)
	for i := range v.Steps {
		if len(v.Steps[i].Runs) > 0 {
			v.Steps[i].Runs = append(v.Steps[i].Runs, v.Steps[i].Runs[0], v.Steps[i].Runs[0])
		}
	}
	n := &Note{CardPath: "card.yml", CardYAML: []byte(testCardYAML), Card: c, Record: testStatement(t, v, c), RecordPath: "r.json"}
	var b strings.Builder
	if err := n.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"--allowed-signers ALLOWED_SIGNERS --repeat 3\n", "| `base.fail` | ok | 1, 1, 1 | 1 |", "| sandbox | applied: network; missing: resources |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("WriteMarkdown(repeat 3) lacks %q; got:\n%s", want, b.String())
		}
	}
}
