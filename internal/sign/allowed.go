package sign

import (
	"bytes"
	"crypto/rsa"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"
)

// AllowedSigners is a parsed allowed_signers file (the format of
// ssh-keygen(1) ALLOWED SIGNERS), restricted to what failpass trusts: exact
// principals and plain keys of allow-listed types.
type AllowedSigners struct {
	File    string
	Entries []Entry
}

// Entry is one line of an allowed_signers file.
type Entry struct {
	Line        int
	Principals  []string      // exact names; patterns are refused at parse time
	Namespaces  []string      // from namespaces="..."; nil means every namespace
	ValidAfter  time.Time     // zero: no lower bound
	ValidBefore time.Time     // zero: no upper bound
	Key         ssh.PublicKey // the trusted key; signatures are verified with this
	Fingerprint string        // SHA256:... of Key
}

// ParseError is a malformed or refused line of an allowed_signers file.
type ParseError struct {
	File  string
	Line  int
	Field string // "principals", "options", "namespaces", "valid-after", "key", ...
	Msg   string
	Hint  string
}

func (e *ParseError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s: %s", e.File, e.Line, e.Field, e.Msg)
}

// Hints says how to fix the line.
func (e *ParseError) Hints() []string {
	if e.Hint == "" {
		return nil
	}
	return []string{e.Hint}
}

// ReadAllowedSigners reads and parses the allowed_signers file at path. A
// file that lies inside one of the refused folders (the worktree a
// candidate diff patches, the diff's own tree) is refused: trust roots
// never come from the material under test. Symlinks are resolved before
// the check.
func ReadAllowedSigners(path string, refused ...string) (*AllowedSigners, error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, &ParseError{File: path, Msg: fmt.Sprintf("cannot read allowed signers: %v", err),
			Hint: "pass the maintainers' allowed_signers file with --allowed-signers"}
	}
	real, err = filepath.Abs(real)
	if err != nil {
		return nil, err
	}
	for _, dir := range refused {
		if dir == "" {
			continue
		}
		d, err := filepath.EvalSymlinks(dir)
		if err != nil {
			d = dir
		}
		d, _ = filepath.Abs(d)
		if rel, err := filepath.Rel(d, real); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return nil, &ParseError{File: path,
				Msg:  fmt.Sprintf("allowed signers file lies inside %s, the tree under test; trust roots never come from it", d),
				Hint: "keep allowed_signers outside the candidate's worktree (for example in the base checkout or ~/.config)"}
		}
	}
	data, err := readBounded(real, MaxAllowedSignersSize)
	if err != nil {
		return nil, &ParseError{File: path, Msg: fmt.Sprintf("cannot read allowed signers: %v", err),
			Hint: fmt.Sprintf("an allowed_signers file is at most %d bytes of text", MaxAllowedSignersSize)}
	}
	st, err := os.Stat(real)
	if err == nil && !st.Mode().IsRegular() {
		return nil, &ParseError{File: path, Msg: "allowed signers is not a regular file"}
	}
	return ParseAllowedSigners(path, data)
}

// ParseAllowedSigners parses an allowed_signers file. Every line must parse:
// a line failpass refuses (a wildcard principal, cert-authority, an
// unknown option, a disallowed key type) fails the whole file, with the
// line number, rather than being skipped silently.
func ParseAllowedSigners(file string, data []byte) (*AllowedSigners, error) {
	if len(data) > MaxAllowedSignersSize {
		return nil, &ParseError{File: file, Msg: fmt.Sprintf("larger than %d bytes", MaxAllowedSignersSize)}
	}
	a := &AllowedSigners{File: file}
	for i, raw := range bytes.Split(data, []byte("\n")) {
		line := strings.TrimRight(string(raw), "\r")
		trimmed := strings.TrimLeft(line, " \t")
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		e, err := parseEntry(trimmed)
		if err != nil {
			err.File, err.Line = file, i+1
			return nil, err
		}
		e.Line = i + 1
		a.Entries = append(a.Entries, *e)
	}
	return a, nil
}

func parseEntry(line string) (*Entry, *ParseError) {
	toks, perr := fields(line)
	if perr != nil {
		return nil, perr
	}
	if len(toks) < 3 {
		return nil, &ParseError{Field: "line", Msg: "want: principals [options] keytype base64-key [comment]"}
	}
	e := &Entry{}
	principals, perr := parsePrincipals(unquote(toks[0]))
	if perr != nil {
		return nil, perr
	}
	e.Principals = principals
	rest := toks[1:]
	if !isKeyTypeName(rest[0]) {
		if perr := parseOptions(rest[0], e); perr != nil {
			return nil, perr
		}
		rest = rest[1:]
	}
	if len(rest) < 2 {
		return nil, &ParseError{Field: "key", Msg: "missing key type or base64 key"}
	}
	key, perr := parseKey(rest[0], rest[1])
	if perr != nil {
		return nil, perr
	}
	e.Key = key
	e.Fingerprint = ssh.FingerprintSHA256(key)
	return e, nil
}

// fields splits a line on whitespace outside double quotes, keeping the
// quotes (options need them to tell values apart).
func fields(line string) ([]string, *ParseError) {
	var toks []string
	var cur strings.Builder
	inQuote, started := false, false
	for _, r := range line {
		switch {
		case r == '"':
			inQuote = !inQuote
			cur.WriteRune(r)
			started = true
		case !inQuote && (r == ' ' || r == '\t'):
			if started {
				toks = append(toks, cur.String())
				cur.Reset()
				started = false
			}
		default:
			cur.WriteRune(r)
			started = true
		}
	}
	if inQuote {
		return nil, &ParseError{Field: "line", Msg: "unterminated quote"}
	}
	if started {
		toks = append(toks, cur.String())
	}
	return toks, nil
}

func unquote(s string) string {
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		return s[1 : len(s)-1]
	}
	return s
}

func parsePrincipals(s string) ([]string, *ParseError) {
	if strings.Contains(s, `"`) {
		return nil, &ParseError{Field: "principals", Msg: fmt.Sprintf("stray quote in %q", s)}
	}
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p == "" {
			return nil, &ParseError{Field: "principals", Msg: fmt.Sprintf("empty principal in %q", s)}
		}
		if strings.ContainsAny(p, "*?") || strings.HasPrefix(p, "!") {
			return nil, &ParseError{Field: "principals",
				Msg:  fmt.Sprintf("wildcard principal %q is refused: failpass trusts exact principals only", p),
				Hint: "list each signer by exact name (maint@example.org), one key per line"}
		}
		out = append(out, p)
	}
	return out, nil
}

// splitOptions splits an options field on commas outside quotes.
func splitOptions(s string) []string {
	var out []string
	var cur strings.Builder
	inQuote := false
	for _, r := range s {
		switch {
		case r == '"':
			inQuote = !inQuote
			cur.WriteRune(r)
		case r == ',' && !inQuote:
			out = append(out, cur.String())
			cur.Reset()
		default:
			cur.WriteRune(r)
		}
	}
	return append(out, cur.String())
}

func parseOptions(s string, e *Entry) *ParseError {
	seen := map[string]bool{}
	for _, opt := range splitOptions(s) {
		name, value, hasValue := strings.Cut(opt, "=")
		name = strings.ToLower(name)
		if seen[name] {
			return &ParseError{Field: "options", Msg: fmt.Sprintf("option %q given twice", name)}
		}
		seen[name] = true
		switch name {
		case "cert-authority":
			return &ParseError{Field: "options",
				Msg:  "cert-authority entries are refused: failpass trusts individual keys, not certificate authorities",
				Hint: "list each signer's own public key instead of the CA key"}
		case "namespaces", "valid-after", "valid-before":
		default:
			return &ParseError{Field: "options", Msg: fmt.Sprintf("unsupported option %q", opt),
				Hint: `allowed options: namespaces="...", valid-after="YYYYMMDD[HHMM[SS]][Z]", valid-before="..."`}
		}
		if !hasValue || len(value) < 2 || value[0] != '"' || value[len(value)-1] != '"' {
			return &ParseError{Field: name, Msg: fmt.Sprintf("%s needs a quoted value", name),
				Hint: fmt.Sprintf(`write %s="..."`, name)}
		}
		value = value[1 : len(value)-1]
		switch name {
		case "namespaces":
			for _, ns := range strings.Split(value, ",") {
				if ns == "" {
					return &ParseError{Field: name, Msg: "empty namespace"}
				}
				e.Namespaces = append(e.Namespaces, ns)
			}
		case "valid-after", "valid-before":
			t, err := ParseSSHTime(value)
			if err != nil {
				return &ParseError{Field: name, Msg: err.Error(),
					Hint: "write the time as YYYYMMDD, YYYYMMDDHHMM or YYYYMMDDHHMMSS, with a Z suffix for UTC"}
			}
			if name == "valid-after" {
				e.ValidAfter = t
			} else {
				e.ValidBefore = t
			}
		}
	}
	if !e.ValidAfter.IsZero() && !e.ValidBefore.IsZero() && !e.ValidBefore.After(e.ValidAfter) {
		return &ParseError{Field: "valid-before", Msg: "valid-before is not after valid-after"}
	}
	return nil
}

// ParseSSHTime parses OpenSSH's absolute time: YYYYMMDD[HHMM[SS]][Z]. With
// a Z suffix it is UTC, without one local time, as ssh-keygen reads it.
func ParseSSHTime(s string) (time.Time, error) {
	loc := time.Local
	v := s
	if strings.HasSuffix(v, "Z") || strings.HasSuffix(v, "z") {
		loc, v = time.UTC, v[:len(v)-1]
	}
	for _, r := range v {
		if r < '0' || r > '9' {
			return time.Time{}, fmt.Errorf("time %q is not YYYYMMDD[HHMM[SS]][Z]", s)
		}
	}
	var layout string
	switch len(v) {
	case 8:
		layout = "20060102"
	case 12:
		layout = "200601021504"
	case 14:
		layout = "20060102150405"
	default:
		return time.Time{}, fmt.Errorf("time %q is not YYYYMMDD[HHMM[SS]][Z]", s)
	}
	t, err := time.ParseInLocation(layout, v, loc)
	if err != nil {
		return time.Time{}, fmt.Errorf("time %q: %v", s, err)
	}
	return t, nil
}

// allowedKeyTypes are the key types failpass verifies. DSA, certificates and
// anything newer wait until there is a reason to trust them.
var allowedKeyTypes = map[string]bool{
	ssh.KeyAlgoED25519:    true,
	ssh.KeyAlgoSKED25519:  true,
	ssh.KeyAlgoECDSA256:   true,
	ssh.KeyAlgoECDSA384:   true,
	ssh.KeyAlgoECDSA521:   true,
	ssh.KeyAlgoSKECDSA256: true,
	ssh.KeyAlgoRSA:        true,
}

// MinRSABits is the smallest RSA modulus failpass trusts. ssh-keygen
// accepts 1024 bits; failpass does not (documented in docs/trust.md).
const MinRSABits = 2048

func isKeyTypeName(s string) bool {
	if allowedKeyTypes[s] || strings.HasSuffix(s, "-cert-v01@openssh.com") {
		return true
	}
	switch s {
	case ssh.KeyAlgoDSA, ssh.KeyAlgoRSASHA256, ssh.KeyAlgoRSASHA512:
		return true
	}
	return strings.HasPrefix(s, "ssh-") || strings.HasPrefix(s, "ecdsa-") || strings.HasPrefix(s, "sk-")
}

func parseKey(typ, b64 string) (ssh.PublicKey, *ParseError) {
	if strings.HasSuffix(typ, "-cert-v01@openssh.com") {
		return nil, &ParseError{Field: "key", Msg: fmt.Sprintf("certificate key %s is refused: failpass trusts plain keys only", typ),
			Hint: "list the signer's plain public key (ssh-keygen -y -f KEY)"}
	}
	if !allowedKeyTypes[typ] {
		return nil, &ParseError{Field: "key", Msg: fmt.Sprintf("key type %q is not allowed", typ),
			Hint: "use ed25519, sk-ed25519, ECDSA or RSA (at least 2048 bits) keys"}
	}
	blob, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil, &ParseError{Field: "key", Msg: fmt.Sprintf("key is not base64: %v", err)}
	}
	key, err := ssh.ParsePublicKey(blob)
	if err != nil {
		return nil, &ParseError{Field: "key", Msg: fmt.Sprintf("cannot parse %s key: %v", typ, err)}
	}
	if key.Type() != typ {
		return nil, &ParseError{Field: "key", Msg: fmt.Sprintf("key type field says %s but the key is %s", typ, key.Type())}
	}
	if err := checkKeyType(key); err != nil {
		return nil, &ParseError{Field: "key", Msg: err.Error(),
			Hint: "use ed25519, sk-ed25519, ECDSA or RSA (at least 2048 bits) keys"}
	}
	return key, nil
}

// checkKeyType refuses key types and sizes failpass does not trust.
func checkKeyType(k ssh.PublicKey) error {
	if !allowedKeyTypes[k.Type()] {
		return fmt.Errorf("key type %s is not allowed", k.Type())
	}
	if k.Type() == ssh.KeyAlgoRSA {
		ck, ok := k.(ssh.CryptoPublicKey)
		if !ok {
			return fmt.Errorf("rsa key without a crypto key")
		}
		rk, ok := ck.CryptoPublicKey().(*rsa.PublicKey)
		if !ok {
			return fmt.Errorf("rsa key without a modulus")
		}
		if rk.N.BitLen() < MinRSABits {
			return fmt.Errorf("rsa key of %d bits is too small (minimum %d)", rk.N.BitLen(), MinRSABits)
		}
	}
	return nil
}

// Listed is the entries of a that trust the key with fingerprint fp (a
// SHA256:... fingerprint), in file order: whom a gate that trusts a
// accepts that key's signatures from.
func (a *AllowedSigners) Listed(fp string) []Entry {
	var out []Entry
	for _, e := range a.Entries {
		if e.Fingerprint == fp {
			out = append(out, e)
		}
	}
	return out
}
