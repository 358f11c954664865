package sign

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"strings"
	"time"

	"github.com/hiddeco/sshsig"
	"golang.org/x/crypto/ssh"
)

// Reason names why a signature did not verify. Callers branch on it; the
// values are stable and appear in failpass's output.
type Reason string

// The reasons a signature is refused, in the order Verify checks them.
const (
	ReasonMalformed    Reason = "malformed"     // armor or blob does not parse, or is too large
	ReasonNamespace    Reason = "namespace"     // signed for another namespace (a git commit, a record)
	ReasonAlgorithm    Reason = "algorithm"     // key type or signature algorithm not allowed (ssh-rsa SHA-1)
	ReasonUnknownKey   Reason = "unknown-key"   // the signing key is not in allowed_signers
	ReasonPrincipal    Reason = "principal"     // the key is listed, but not for the claimed principal
	ReasonKeyNamespace Reason = "key-namespace" // allowed_signers limits the key to other namespaces
	ReasonNotYetValid  Reason = "not-yet-valid" // before the key's valid-after
	ReasonExpired      Reason = "expired"       // after the key's valid-before
	ReasonUserPresence Reason = "user-presence" // security-key signature made without a touch
	ReasonBadSignature Reason = "bad-signature" // the bytes are not what was signed
)

// VerifyError is a signature that does not verify, and why.
type VerifyError struct {
	Reason      Reason
	Principal   string // the principal the signature claims
	Fingerprint string // the signature's key, when the armor parsed
	Line        int    // the allowed_signers line consulted, when one was
	Detail      string
}

func (e *VerifyError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "signature by %q: %s", e.Principal, e.Reason)
	if e.Detail != "" {
		b.WriteString(": " + e.Detail)
	}
	return b.String()
}

// Verified is a signature that verified: who made it, with which key, and
// the allowed_signers line that trusts that key.
type Verified struct {
	Principal   string
	Fingerprint string
	KeyType     string
	Line        int
}

// Verify checks that armored is a valid SSHSIG signature of msg in
// namespace, made by a key that allowed_signers lists for principal and
// trusts at now. The key is the one found in allowed_signers by the
// signature's fingerprint; the key embedded in the signature only selects
// it. It agrees with `ssh-keygen -Y verify -f FILE -I principal -n
// namespace -s SIG < msg` except where failpass is stricter (see
// docs/trust.md). Errors are *VerifyError.
func (a *AllowedSigners) Verify(principal, namespace string, msg, armored []byte, now time.Time) (*Verified, error) {
	fail := func(r Reason, fp string, line int, format string, args ...any) (*Verified, error) {
		return nil, &VerifyError{Reason: r, Principal: principal, Fingerprint: fp, Line: line, Detail: fmt.Sprintf(format, args...)}
	}
	sig, err := ParseArmor(armored)
	if err != nil {
		return fail(ReasonMalformed, "", 0, "%v", err)
	}
	fp := ssh.FingerprintSHA256(sig.PublicKey)
	if sig.Namespace != namespace {
		return fail(ReasonNamespace, fp, 0, "made for namespace %q, not %q", sig.Namespace, namespace)
	}
	if err := checkAlgorithm(sig); err != nil {
		return fail(ReasonAlgorithm, fp, 0, "%v", err)
	}
	var byKey []*Entry
	for i := range a.Entries {
		if a.Entries[i].Fingerprint == fp {
			byKey = append(byKey, &a.Entries[i])
		}
	}
	if len(byKey) == 0 {
		return fail(ReasonUnknownKey, fp, 0, "key %s is not in %s", fp, a.File)
	}
	var cands []*Entry
	for _, e := range byKey {
		for _, p := range e.Principals {
			if p == principal {
				cands = append(cands, e)
				break
			}
		}
	}
	if len(cands) == 0 {
		return fail(ReasonPrincipal, fp, byKey[0].Line, "%s:%d lists key %s for %s, not for %q",
			a.File, byKey[0].Line, fp, strings.Join(byKey[0].Principals, ","), principal)
	}
	// The first line that trusts the key now, for this namespace, wins; if
	// none does, report the first line's objection.
	var first *VerifyError
	for _, e := range cands {
		verr := e.admits(namespace, now)
		if verr == nil {
			if err := checkUserPresence(sig); err != nil {
				return fail(ReasonUserPresence, fp, e.Line, "%v", err)
			}
			if err := sshsig.Verify(bytes.NewReader(msg), sig, e.Key, sig.HashAlgorithm, namespace); err != nil {
				return fail(ReasonBadSignature, fp, e.Line, "the signed bytes differ from these (%v)", err)
			}
			return &Verified{Principal: principal, Fingerprint: fp, KeyType: e.Key.Type(), Line: e.Line}, nil
		}
		if first == nil {
			verr.Principal, verr.Fingerprint, verr.Line = principal, fp, e.Line
			verr.Detail = fmt.Sprintf("%s:%d: %s", a.File, e.Line, verr.Detail)
			first = verr
		}
	}
	return nil, first
}

// admits says whether the entry lets its key sign in namespace at now.
func (e *Entry) admits(namespace string, now time.Time) *VerifyError {
	if e.Namespaces != nil && !matchList(namespace, e.Namespaces) {
		return &VerifyError{Reason: ReasonKeyNamespace,
			Detail: fmt.Sprintf("key limited to namespaces %q", strings.Join(e.Namespaces, ","))}
	}
	if !e.ValidAfter.IsZero() && now.Before(e.ValidAfter) {
		return &VerifyError{Reason: ReasonNotYetValid, Detail: fmt.Sprintf("key valid only after %s", e.ValidAfter.UTC().Format(time.RFC3339))}
	}
	if !e.ValidBefore.IsZero() && now.After(e.ValidBefore) {
		return &VerifyError{Reason: ReasonExpired, Detail: fmt.Sprintf("key valid only before %s", e.ValidBefore.UTC().Format(time.RFC3339))}
	}
	return nil
}

// matchList is OpenSSH's match_pattern_list for namespaces: comma-separated
// patterns with * and ?, where a matching !negation wins over any match.
func matchList(s string, patterns []string) bool {
	matched := false
	for _, p := range patterns {
		neg := strings.HasPrefix(p, "!")
		if neg {
			p = p[1:]
		}
		if matchPattern(s, p) {
			if neg {
				return false
			}
			matched = true
		}
	}
	return matched
}

func matchPattern(s, p string) bool {
	for len(p) > 0 {
		switch p[0] {
		case '*':
			for len(p) > 0 && p[0] == '*' {
				p = p[1:]
			}
			if p == "" {
				return true
			}
			for i := 0; i <= len(s); i++ {
				if matchPattern(s[i:], p) {
					return true
				}
			}
			return false
		case '?':
			if s == "" {
				return false
			}
		default:
			if s == "" || s[0] != p[0] {
				return false
			}
		}
		s, p = s[1:], p[1:]
	}
	return s == ""
}

// checkAlgorithm allow-lists the signature: the key type (and RSA size),
// and a signature algorithm that matches the key, which for RSA means
// rsa-sha2-256 or rsa-sha2-512, never SHA-1 ssh-rsa.
func checkAlgorithm(sig *sshsig.Signature) error {
	if err := checkKeyType(sig.PublicKey); err != nil {
		return err
	}
	kt, format := sig.PublicKey.Type(), sig.Signature.Format
	switch {
	case kt == ssh.KeyAlgoRSA:
		if format != ssh.KeyAlgoRSASHA256 && format != ssh.KeyAlgoRSASHA512 {
			return fmt.Errorf("RSA signature algorithm %q is not allowed (only rsa-sha2-256, rsa-sha2-512)", format)
		}
	case format != kt:
		return fmt.Errorf("signature algorithm %q does not match key type %q", format, kt)
	}
	if kt != ssh.KeyAlgoSKED25519 && kt != ssh.KeyAlgoSKECDSA256 && len(sig.Signature.Rest) > 0 {
		return fmt.Errorf("%s signature carries %d trailing bytes", kt, len(sig.Signature.Rest))
	}
	return nil
}

// skUserPresent is the FIDO "user present" flag of a security-key signature.
const skUserPresent = 0x01

// checkUserPresence refuses a security-key signature made without a touch.
// (x/crypto also checks this; failpass says so in its own words.)
func checkUserPresence(sig *sshsig.Signature) error {
	switch sig.PublicKey.Type() {
	case ssh.KeyAlgoSKED25519, ssh.KeyAlgoSKECDSA256:
	default:
		return nil
	}
	var sk struct {
		Flags   byte
		Counter uint32
	}
	if err := ssh.Unmarshal(sig.Signature.Rest, &sk); err != nil {
		return fmt.Errorf("security-key signature without flags: %v", err)
	}
	if sk.Flags&skUserPresent == 0 {
		return fmt.Errorf("security-key signature made without user presence (no touch)")
	}
	return nil
}

const (
	armorBegin = "-----BEGIN SSH SIGNATURE-----"
	armorEnd   = "-----END SSH SIGNATURE-----"
)

// ParseArmor strictly decodes an armored SSHSIG signature: the BEGIN line
// first, the END line last (trailing whitespace aside), base64 lines
// between, at most MaxArmorSize bytes, and a blob with nothing left over.
func ParseArmor(armored []byte) (*sshsig.Signature, error) {
	if len(armored) > MaxArmorSize {
		return nil, fmt.Errorf("armored signature is %d bytes, more than %d", len(armored), MaxArmorSize)
	}
	text := strings.TrimRight(strings.ReplaceAll(string(armored), "\r\n", "\n"), " \t\n")
	lines := strings.Split(text, "\n")
	if len(lines) < 3 || lines[0] != armorBegin {
		return nil, fmt.Errorf("not an armored SSH signature (want a %q line first)", armorBegin)
	}
	if lines[len(lines)-1] != armorEnd {
		return nil, fmt.Errorf("armored SSH signature is truncated (no %q line at the end)", armorEnd)
	}
	var body strings.Builder
	for _, l := range lines[1 : len(lines)-1] {
		for _, r := range l {
			if !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '+' || r == '/' || r == '=') {
				return nil, fmt.Errorf("armored SSH signature holds %q, which is not base64", r)
			}
		}
		body.WriteString(l)
	}
	blob, err := base64.StdEncoding.DecodeString(body.String())
	if err != nil {
		return nil, fmt.Errorf("armored SSH signature: %v", err)
	}
	return parseBlob(blob)
}

// parseBlob decodes an SSHSIG blob. It is sshsig.ParseSignature without
// that function's own RSA check, so that an ssh-rsa (SHA-1) signature
// reaches checkAlgorithm and is refused as an algorithm, not as garbage.
func parseBlob(b []byte) (*sshsig.Signature, error) {
	var w struct {
		Magic         [6]byte
		Version       uint32
		PublicKey     string
		Namespace     string
		Reserved      string
		HashAlgorithm string
		Signature     string
	}
	if err := ssh.Unmarshal(b, &w); err != nil {
		return nil, fmt.Errorf("SSH signature blob: %v", err)
	}
	if string(w.Magic[:]) != "SSHSIG" {
		return nil, fmt.Errorf("SSH signature blob: no SSHSIG preamble")
	}
	if w.Version != 1 {
		return nil, fmt.Errorf("SSH signature blob: version %d, want 1", w.Version)
	}
	h := sshsig.HashAlgorithm(w.HashAlgorithm)
	if h != sshsig.HashSHA256 && h != sshsig.HashSHA512 {
		return nil, fmt.Errorf("SSH signature blob: hash algorithm %q (want sha256 or sha512)", w.HashAlgorithm)
	}
	var s ssh.Signature
	if err := ssh.Unmarshal([]byte(w.Signature), &s); err != nil {
		return nil, fmt.Errorf("SSH signature blob: signature: %v", err)
	}
	pub, err := ssh.ParsePublicKey([]byte(w.PublicKey))
	if err != nil {
		return nil, fmt.Errorf("SSH signature blob: public key: %v", err)
	}
	return &sshsig.Signature{Version: w.Version, PublicKey: pub, Namespace: w.Namespace, HashAlgorithm: h, Signature: &s}, nil
}

// Claim is one signature a document carries: who it says signed, and the
// armored signature.
type Claim struct {
	Principal string
	Armored   []byte
}

// Tally is the outcome of verifying every claim on one document.
type Tally struct {
	Valid   []Verified // in claim order
	Invalid []ClaimError
	// Keys is the number of distinct keys among Valid: the same key
	// signing twice (or under two principals) counts once.
	Keys int
}

// ClaimError is a claim that did not verify.
type ClaimError struct {
	Index int // position of the claim on the document, from 0
	Err   error
}

// Duplicate reports whether the i-th valid signature's key was already
// counted by an earlier one.
func (t *Tally) Duplicate(i int) bool {
	for j := 0; j < i; j++ {
		if t.Valid[j].Fingerprint == t.Valid[i].Fingerprint {
			return true
		}
	}
	return false
}

// VerifyClaims verifies every claim over msg in namespace and counts the
// distinct keys among the valid ones, for a threshold.
func (a *AllowedSigners) VerifyClaims(namespace string, msg []byte, claims []Claim, now time.Time) *Tally {
	t := &Tally{}
	seen := map[string]bool{}
	for i, c := range claims {
		v, err := a.Verify(c.Principal, namespace, msg, c.Armored, now)
		if err != nil {
			t.Invalid = append(t.Invalid, ClaimError{Index: i, Err: err})
			continue
		}
		t.Valid = append(t.Valid, *v)
		if !seen[v.Fingerprint] {
			seen[v.Fingerprint] = true
			t.Keys++
		}
	}
	return t
}

// CheckIntegrity reports whether armored is a well-formed, allow-listed
// signature over msg in namespace by the key embedded in it, and returns
// that key's fingerprint. It says nothing about who signed: an attacker's
// own key passes. It exists to notice that signed bytes changed (a
// co-signer about to add a signature to a card edited since), never to
// decide trust; that is Verify, with allowed_signers.
func CheckIntegrity(namespace string, msg, armored []byte) (string, error) {
	sig, err := ParseArmor(armored)
	if err != nil {
		return "", &VerifyError{Reason: ReasonMalformed, Detail: err.Error()}
	}
	fp := ssh.FingerprintSHA256(sig.PublicKey)
	if sig.Namespace != namespace {
		return fp, &VerifyError{Reason: ReasonNamespace, Fingerprint: fp, Detail: fmt.Sprintf("made for namespace %q, not %q", sig.Namespace, namespace)}
	}
	if err := checkAlgorithm(sig); err != nil {
		return fp, &VerifyError{Reason: ReasonAlgorithm, Fingerprint: fp, Detail: err.Error()}
	}
	if err := sshsig.Verify(bytes.NewReader(msg), sig, sig.PublicKey, sig.HashAlgorithm, namespace); err != nil {
		return fp, &VerifyError{Reason: ReasonBadSignature, Fingerprint: fp, Detail: "the signed bytes differ from these"}
	}
	return fp, nil
}
