package sign

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hiddeco/sshsig"
	"golang.org/x/crypto/ssh"
)

// A fixed ed25519 key so parser tables need no ssh-keygen.
const edKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBqqF7HrbGGW7yWN3RpfbCHVEItIApYbZ7yt/aWGcsKS"

func TestParseAllowedSigners(t *testing.T) {
	for _, tc := range []struct {
		in         string
		principals []string
		namespaces []string
		after      string // RFC 3339 UTC, "" for none
		before     string
		errLine    int
		errField   string
	}{
		{in: "a@example.org " + edKey, principals: []string{"a@example.org"}},
		{in: "a@example.org " + edKey + " a comment with spaces", principals: []string{"a@example.org"}},
		{in: "  \t a@example.org,b@example.org " + edKey, principals: []string{"a@example.org", "b@example.org"}},
		{in: `"a b@example.org" ` + edKey, principals: []string{"a b@example.org"}},
		{in: "# comment\n\n" + "a@example.org " + edKey + "\r\n", principals: []string{"a@example.org"}},
		{in: `a@example.org namespaces="git,failpass-card-v1" ` + edKey, principals: []string{"a@example.org"},
			namespaces: []string{"git", "failpass-card-v1"}},
		{in: `a@example.org NAMESPACES="git" ` + edKey, principals: []string{"a@example.org"}, namespaces: []string{"git"}},
		{in: `a@example.org valid-after="20240102Z",valid-before="20250102030405Z" ` + edKey, principals: []string{"a@example.org"},
			after: "2024-01-02T00:00:00Z", before: "2025-01-02T03:04:05Z"},
		{in: `a@example.org valid-after="202401020304Z" ` + edKey, principals: []string{"a@example.org"}, after: "2024-01-02T03:04:00Z"},

		{in: "*@example.org " + edKey, errLine: 1, errField: "principals"},
		{in: "a@example.org,b?@example.org " + edKey, errLine: 1, errField: "principals"},
		{in: "!a@example.org " + edKey, errLine: 1, errField: "principals"},
		{in: "a@example.org,," + " " + edKey, errLine: 1, errField: "principals"},
		{in: "# c\na@example.org cert-authority " + edKey, errLine: 2, errField: "options"},
		{in: "a@example.org no-touch-required " + edKey, errLine: 1, errField: "options"},
		{in: "a@example.org namespaces=git " + edKey, errLine: 1, errField: "namespaces"},
		{in: `a@example.org namespaces="" ` + edKey, errLine: 1, errField: "namespaces"},
		{in: `a@example.org namespaces="a",namespaces="b" ` + edKey, errLine: 1, errField: "options"},
		{in: `a@example.org valid-after="2024" ` + edKey, errLine: 1, errField: "valid-after"},
		{in: `a@example.org valid-after="20241340Z" ` + edKey, errLine: 1, errField: "valid-after"},
		{in: `a@example.org valid-after="20250101Z",valid-before="20240101Z" ` + edKey, errLine: 1, errField: "valid-before"},
		{in: `a@example.org namespaces="git ` + edKey, errLine: 1, errField: "line"},
		{in: "a@example.org", errLine: 1, errField: "line"},
		{in: "a@example.org ssh-ed25519", errLine: 1, errField: "line"},
		{in: "a@example.org ssh-ed25519 !!!notbase64", errLine: 1, errField: "key"},
		{in: "a@example.org ssh-ed25519 AAAA", errLine: 1, errField: "key"},
		{in: "a@example.org ecdsa-sha2-nistp256 " + strings.Fields(edKey)[1], errLine: 1, errField: "key"},
		{in: "a@example.org ssh-dss AAAAB3NzaC1kc3MAAACBAP", errLine: 1, errField: "key"},
		{in: "a@example.org ssh-ed25519-cert-v01@openssh.com AAAA", errLine: 1, errField: "key"},
		{in: "a@example.org bogus-option ssh-ed25519", errLine: 1, errField: "options"},
	} {
		as, err := ParseAllowedSigners("as", []byte(tc.in))
		if tc.errLine != 0 {
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Line != tc.errLine || pe.Field != tc.errField || as != nil {
				t.Errorf("ParseAllowedSigners(%q) = %v, %v; want *ParseError line %d field %s", tc.in, as, err, tc.errLine, tc.errField)
			}
			continue
		}
		if err != nil || len(as.Entries) != 1 {
			t.Errorf("ParseAllowedSigners(%q) = %v, %v; want one entry", tc.in, as, err)
			continue
		}
		e := as.Entries[0]
		if strings.Join(e.Principals, "|") != strings.Join(tc.principals, "|") ||
			strings.Join(e.Namespaces, "|") != strings.Join(tc.namespaces, "|") ||
			fmtTime(e.ValidAfter) != tc.after || fmtTime(e.ValidBefore) != tc.before {
			t.Errorf("ParseAllowedSigners(%q) = %+v, want principals %v namespaces %v after %q before %q",
				tc.in, e, tc.principals, tc.namespaces, tc.after, tc.before)
		}
		if !strings.HasPrefix(e.Fingerprint, "SHA256:") {
			t.Errorf("ParseAllowedSigners(%q) fingerprint = %q", tc.in, e.Fingerprint)
		}
	}
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

func TestParseAllowedSignersTooLarge(t *testing.T) {
	big := strings.Repeat("# padding\n", MaxAllowedSignersSize/10+1)
	if as, err := ParseAllowedSigners("as", []byte(big)); err == nil || as != nil {
		t.Errorf("ParseAllowedSigners(%d bytes) = %v, %v; want a size error", len(big), as, err)
	}
}

func TestParseSSHTime(t *testing.T) {
	for _, tc := range []struct {
		in, want string
	}{
		{"20240102Z", "2024-01-02T00:00:00Z"},
		{"202401020304Z", "2024-01-02T03:04:00Z"},
		{"20240102030405Z", "2024-01-02T03:04:05Z"},
		{"20240102030405z", "2024-01-02T03:04:05Z"},
		{"2024010", ""},
		{"2024-01-02", ""},
		{"20240102T", ""},
		{"", ""},
		{"Z", ""},
		{"20241301Z", ""},
	} {
		got, err := ParseSSHTime(tc.in)
		if tc.want == "" {
			if err == nil {
				t.Errorf("ParseSSHTime(%q) = %v, want an error", tc.in, got)
			}
			continue
		}
		if err != nil || got.UTC().Format(time.RFC3339) != tc.want {
			t.Errorf("ParseSSHTime(%q) = %v, %v; want %s", tc.in, got, err, tc.want)
		}
	}
	// Without Z the time is local, as ssh-keygen reads it.
	got, err := ParseSSHTime("20240102")
	if err != nil || got.Location() != time.Local {
		t.Errorf("ParseSSHTime(%q) = %v, %v; want local midnight", "20240102", got, err)
	}
}

func TestMatchList(t *testing.T) {
	for _, tc := range []struct {
		s        string
		patterns []string
		want     bool
	}{
		{"failpass-card-v1", []string{"failpass-card-v1"}, true},
		{"failpass-card-v1", []string{"git"}, false},
		{"failpass-card-v1", []string{"failpass-*"}, true},
		{"failpass-card-v1", []string{"failpass-????-v1"}, true},
		{"failpass-card-v1", []string{"failpass-?-v1"}, false},
		{"failpass-card-v1", []string{"*", "!failpass-card-v1"}, false},
		{"failpass-record-v1", []string{"*", "!failpass-card-v1"}, true},
		{"", []string{"*"}, true},
		{"a", []string{""}, false},
	} {
		if got := matchList(tc.s, tc.patterns); got != tc.want {
			t.Errorf("matchList(%q, %q) = %v, want %v", tc.s, tc.patterns, got, tc.want)
		}
	}
}

func TestParseArmor(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
	}{
		{"empty", ""},
		{"only begin", armorBegin + "\n"},
		{"no end", armorBegin + "\nAAAA\n"},
		{"wrong type", "-----BEGIN PGP SIGNATURE-----\nAAAA\n-----END PGP SIGNATURE-----\n"},
		{"header line", armorBegin + "\nComment: x\n" + armorEnd},
		{"bad base64", armorBegin + "\nA===\n" + armorEnd},
		{"not sshsig", armorBegin + "\nQUFBQUFBQUFBQUFB\n" + armorEnd},
		{"trailing prose", armorBegin + "\nAAAA\n" + armorEnd + "\nmore"},
	} {
		if sig, err := ParseArmor([]byte(tc.in)); err == nil || sig != nil {
			t.Errorf("ParseArmor(%s %q) = %v, %v; want an error", tc.name, tc.in, sig, err)
		}
	}
}

// FuzzParseAllowedSigners: a parse error returns no value; an accepted file
// yields one entry per non-comment line, each with a fingerprint and
// exact principals.
func FuzzParseAllowedSigners(f *testing.F) {
	for _, s := range []string{
		"a@example.org " + edKey,
		`a@example.org namespaces="git,x",valid-after="20240102Z" ` + edKey,
		"*@x " + edKey, "a cert-authority " + edKey, `"a b" ` + edKey + " c", "# x\n\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		as, err := ParseAllowedSigners("fuzz", data)
		if err != nil {
			if as != nil {
				t.Fatalf("ParseAllowedSigners(%q) returned a value with error %v", data, err)
			}
			return
		}
		for _, e := range as.Entries {
			if e.Key == nil || e.Fingerprint == "" || len(e.Principals) == 0 {
				t.Fatalf("ParseAllowedSigners(%q) entry %+v is incomplete", data, e)
			}
			for _, p := range e.Principals {
				if p == "" || strings.ContainsAny(p, "*?") {
					t.Fatalf("ParseAllowedSigners(%q) accepted principal %q", data, p)
				}
			}
		}
	})
}

// FuzzParseArmor: a parse error returns no value; an accepted armor
// re-armors to a canonical form that parses back to the same blob.
func FuzzParseArmor(f *testing.F) {
	s, err := ssh.NewSignerFromKey(ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize)))
	if err != nil {
		f.Fatal(err)
	}
	signer, err := NewSigner(s)
	if err != nil {
		f.Fatal(err)
	}
	good, err := signer.Sign(NamespaceCard, []byte("msg"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte(armorBegin + "\nAAAA\n" + armorEnd))
	f.Add([]byte("garbage"))
	f.Fuzz(func(t *testing.T, data []byte) {
		sig, err := ParseArmor(data)
		if err != nil {
			if sig != nil {
				t.Fatalf("ParseArmor(%q) returned a value with error %v", data, err)
			}
			return
		}
		if sig.PublicKey == nil || sig.Signature == nil {
			t.Fatalf("ParseArmor(%q) = %+v, incomplete", data, sig)
		}
		again, err := ParseArmor(sshsig.Armor(sig))
		if err != nil || !bytes.Equal(again.Marshal(), sig.Marshal()) {
			t.Fatalf("ParseArmor(Armor(ParseArmor(%q))) = %v, %v; want the same signature", data, again, err)
		}
	})
}

// TestReadAllowedSignersRefusesTreeUnderTest: a trust file inside the
// worktree a diff patches (directly or through a symlink from outside) is
// refused; one outside is read.
func TestReadAllowedSignersRefusesTreeUnderTest(t *testing.T) {
	dir := t.TempDir()
	wt := filepath.Join(dir, "worktree")
	if err := os.MkdirAll(filepath.Join(wt, ".github"), 0o755); err != nil {
		t.Fatal(err)
	}
	line := []byte("a@example.org " + edKey + "\n")
	inside := filepath.Join(wt, ".github", "allowed_signers")
	outside := filepath.Join(dir, "allowed_signers")
	link := filepath.Join(dir, "link_signers")
	for _, p := range []string{inside, outside} {
		if err := os.WriteFile(p, line, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(inside, link); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path string
		ok   bool
	}{
		{outside, true},
		{inside, false},
		{link, false},
		{filepath.Join(wt, "..", "worktree", ".github", "allowed_signers"), false},
		{filepath.Join(dir, "missing"), false},
		{wt, false},
	} {
		as, err := ReadAllowedSigners(tc.path, wt)
		var pe *ParseError
		if tc.ok && (err != nil || len(as.Entries) != 1) {
			t.Errorf("ReadAllowedSigners(%q, %q) = %v, %v; want one entry", tc.path, wt, as, err)
		}
		if !tc.ok && (!errors.As(err, &pe) || as != nil) {
			t.Errorf("ReadAllowedSigners(%q, %q) = %v, %v; want *ParseError", tc.path, wt, as, err)
		}
	}
}

// FuzzParseSSHTime: an error returns the zero time; an accepted UTC time
// formats back to a string that parses to the same instant.
func FuzzParseSSHTime(f *testing.F) {
	for _, s := range []string{"20240102Z", "202401020304Z", "20240102030405Z", "20240102", "2024", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseSSHTime(s)
		if err != nil {
			if !got.IsZero() {
				t.Fatalf("ParseSSHTime(%q) = %v with error %v", s, got, err)
			}
			return
		}
		again, err := ParseSSHTime(got.UTC().Format("20060102150405") + "Z")
		if err != nil || !again.Equal(got) {
			t.Fatalf("ParseSSHTime(%q) = %v; reparsed %v, %v", s, got, again, err)
		}
	})
}
