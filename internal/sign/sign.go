// Package sign owns SSH signatures (SSHSIG) over failpass's canonical bytes, the allowed_signers trust file, and the decision table that gates card signing.
package sign

// Design note. Signatures are the format of `ssh-keygen -Y sign`, so any
// card or record failpass signs can be checked with stock OpenSSH, and any
// signature ssh-keygen makes in the right namespace is accepted here.
// Verification is deliberately narrower than the sshsig library it builds
// on: the key is looked up by fingerprint in allowed_signers (never trusted
// from the signature itself), the algorithm is allow-listed (no SHA-1 RSA),
// and patterns and certificate authorities in allowed_signers are refused.

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"

	"github.com/hiddeco/sshsig"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
)

// SSHSIG namespaces. A signature made for one never verifies as the other,
// nor as a git commit signature (namespace "git").
const (
	NamespaceCard   = "failpass-card-v1"
	NamespaceRecord = "failpass-record-v1"
)

// Input bounds. An armored SSHSIG of a 16384-bit RSA key is under 6 KiB; an
// allowed_signers file of a few thousand maintainers fits in 1 MiB.
const (
	MaxArmorSize          = 16 << 10
	MaxAllowedSignersSize = 1 << 20
	MaxKeyFileSize        = 64 << 10
)

// Signer makes armored SSHSIG signatures with one key.
type Signer interface {
	// Sign returns the armored signature ("-----BEGIN SSH SIGNATURE-----")
	// of msg in namespace, hashed with SHA-512 as ssh-keygen does.
	Sign(namespace string, msg []byte) (armored []byte, err error)
	// PublicKey is the key a verifier must find in allowed_signers.
	PublicKey() ssh.PublicKey
}

// KeyError is a signing key that cannot be used: unreadable, encrypted,
// hardware-backed without an agent, missing from the agent.
type KeyError struct {
	Path string // the --key value, "" for the agent's only key
	Msg  string
	Hint []string
	Err  error
}

func (e *KeyError) Error() string {
	where := e.Path
	if where == "" {
		where = "ssh-agent"
	}
	if e.Err != nil {
		return fmt.Sprintf("signing key %s: %s: %v", where, e.Msg, e.Err)
	}
	return fmt.Sprintf("signing key %s: %s", where, e.Msg)
}

func (e *KeyError) Unwrap() error { return e.Err }

// Hints says how to fix the key.
func (e *KeyError) Hints() []string { return e.Hint }

// NewSigner wraps an ssh.Signer (a parsed private key, or one of an agent's
// keys). Only allow-listed key types can sign: a signature that failpass
// would refuse to verify is not worth making.
func NewSigner(s ssh.Signer) (Signer, error) {
	if err := checkKeyType(s.PublicKey()); err != nil {
		return nil, err
	}
	return &sshSigner{s: s}, nil
}

type sshSigner struct{ s ssh.Signer }

func (k *sshSigner) PublicKey() ssh.PublicKey { return k.s.PublicKey() }

func (k *sshSigner) Sign(namespace string, msg []byte) ([]byte, error) {
	sig, err := sshsig.SignWithRand(bytes.NewReader(msg), rand.Reader, k.s, sshsig.HashSHA512, namespace)
	if err != nil {
		return nil, fmt.Errorf("sign with %s key %s: %w", k.s.PublicKey().Type(), ssh.FingerprintSHA256(k.s.PublicKey()), err)
	}
	return sshsig.Armor(sig), nil
}

// LoadSigner finds the signing key named by keyPath:
//
//   - a private key file (OpenSSH, PEM or PKCS#8), unencrypted: an
//     encrypted key is refused with a hint to load it into ssh-agent, since
//     failpass never prompts for a passphrase;
//   - a public key file (KEY.pub, or any file holding one authorized_keys
//     line): the matching key in ssh-agent, as `ssh-keygen -Y sign -f
//     KEY.pub` does;
//   - "": the only key in ssh-agent (an error when the agent holds several).
//
// The agent is found through SSH_AUTH_SOCK read with getenv.
func LoadSigner(keyPath string, getenv func(string) string) (Signer, error) {
	if keyPath == "" {
		return agentSigner("", nil, getenv)
	}
	data, err := readBounded(keyPath, MaxKeyFileSize)
	if err != nil {
		return nil, &KeyError{Path: keyPath, Msg: "cannot read", Err: err,
			Hint: []string{"pass a private key file or KEY.pub of a key loaded in ssh-agent with --key"}}
	}
	if pub, _, _, _, perr := ssh.ParseAuthorizedKey(data); perr == nil {
		return agentSigner(keyPath, pub, getenv)
	}
	raw, err := ssh.ParseRawPrivateKey(data)
	if err != nil {
		var pm *ssh.PassphraseMissingError
		if errors.As(err, &pm) {
			return nil, &KeyError{Path: keyPath, Msg: "the private key is encrypted; failpass never asks for a passphrase",
				Hint: []string{
					fmt.Sprintf("load it into ssh-agent: ssh-add %s", keyPath),
					fmt.Sprintf("then sign with the agent: --key %s.pub", strings.TrimSuffix(keyPath, ".pub")),
				}}
		}
		if strings.Contains(err.Error(), "sk-") || bytes.Contains(data, []byte("sk-ssh-ed25519")) {
			return nil, &KeyError{Path: keyPath, Msg: "a security-key (sk-) private key can only sign through ssh-agent",
				Hint: []string{fmt.Sprintf("ssh-add %s, then pass --key %s.pub", keyPath, keyPath)}}
		}
		return nil, &KeyError{Path: keyPath, Msg: "not an SSH private or public key", Err: err,
			Hint: []string{"pass an OpenSSH private key (ssh-keygen -t ed25519) or the .pub of a key in ssh-agent"}}
	}
	s, err := ssh.NewSignerFromKey(raw)
	if err != nil {
		return nil, &KeyError{Path: keyPath, Msg: "unsupported private key", Err: err}
	}
	signer, err := NewSigner(s)
	if err != nil {
		return nil, &KeyError{Path: keyPath, Msg: "key type not allowed", Err: err,
			Hint: []string{"use an ed25519, ECDSA or RSA key: ssh-keygen -t ed25519"}}
	}
	return signer, nil
}

// agentSigner returns the agent's key equal to want (by fingerprint), or its
// only key when want is nil.
func agentSigner(keyPath string, want ssh.PublicKey, getenv func(string) string) (Signer, error) {
	sock := getenv("SSH_AUTH_SOCK")
	if sock == "" {
		msg := "no private key given and SSH_AUTH_SOCK is not set"
		if want != nil {
			msg = "a public key names an ssh-agent key, but SSH_AUTH_SOCK is not set"
		}
		return nil, &KeyError{Path: keyPath, Msg: msg,
			Hint: []string{"pass a private key file with --key, or start ssh-agent and ssh-add your key"}}
	}
	list, err := agentKeys(sock)
	if err != nil {
		return nil, &KeyError{Path: keyPath, Msg: "cannot talk to ssh-agent at " + sock, Err: err,
			Hint: []string{"check SSH_AUTH_SOCK, or pass a private key file with --key"}}
	}
	var match []ssh.PublicKey
	for _, k := range list {
		if want == nil || ssh.FingerprintSHA256(k) == ssh.FingerprintSHA256(want) {
			match = append(match, k)
		}
	}
	switch {
	case len(match) == 0 && want != nil:
		return nil, &KeyError{Path: keyPath, Msg: fmt.Sprintf("ssh-agent does not hold key %s", ssh.FingerprintSHA256(want)),
			Hint: []string{fmt.Sprintf("ssh-add %s", strings.TrimSuffix(keyPath, ".pub"))}}
	case len(match) == 0:
		return nil, &KeyError{Msg: "ssh-agent holds no keys", Hint: []string{"ssh-add KEY, or pass --key KEY"}}
	case len(match) > 1:
		return nil, &KeyError{Msg: fmt.Sprintf("ssh-agent holds %d keys; failpass will not guess which one signs", len(match)),
			Hint: []string{"name the key: --key KEY.pub"}}
	}
	if err := checkKeyType(match[0]); err != nil {
		return nil, &KeyError{Path: keyPath, Msg: "key type not allowed", Err: err}
	}
	return &agentKeySigner{sock: sock, pub: match[0]}, nil
}

func agentKeys(sock string) ([]ssh.PublicKey, error) {
	conn, err := net.Dial("unix", sock)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	keys, err := agent.NewClient(conn).List()
	if err != nil {
		return nil, err
	}
	out := make([]ssh.PublicKey, 0, len(keys))
	for _, k := range keys {
		pub, err := ssh.ParsePublicKey(k.Marshal())
		if err != nil {
			continue // a key type x/crypto cannot parse cannot sign here either
		}
		out = append(out, pub)
	}
	return out, nil
}

// agentKeySigner signs through ssh-agent; it dials for every signature so
// it holds no connection between uses.
type agentKeySigner struct {
	sock string
	pub  ssh.PublicKey
}

func (a *agentKeySigner) PublicKey() ssh.PublicKey { return a.pub }

func (a *agentKeySigner) Sign(namespace string, msg []byte) ([]byte, error) {
	conn, err := net.Dial("unix", a.sock)
	if err != nil {
		return nil, fmt.Errorf("ssh-agent: %w", err)
	}
	defer conn.Close()
	signers, err := agent.NewClient(conn).Signers()
	if err != nil {
		return nil, fmt.Errorf("ssh-agent: %w", err)
	}
	for _, s := range signers {
		if ssh.FingerprintSHA256(s.PublicKey()) == ssh.FingerprintSHA256(a.pub) {
			return (&sshSigner{s: s}).Sign(namespace, msg)
		}
	}
	return nil, fmt.Errorf("ssh-agent no longer holds key %s", ssh.FingerprintSHA256(a.pub))
}

// readBounded reads at most limit bytes of path; a longer file is an error,
// never a silent truncation.
func readBounded(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("larger than %d bytes", limit)
	}
	return data, nil
}
