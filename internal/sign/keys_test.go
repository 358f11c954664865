package sign

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
)

// Test helpers that drive the real ssh-keygen: keys are made fresh per test,
// and ssh-keygen signs and verifies beside failpass as a second opinion.

func needSSHKeygen(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		t.Skip("ssh-keygen not installed")
	}
}

// keygen makes a fresh unencrypted key of typ ("ed25519", "ecdsa", "rsa")
// with bits (0: default) and returns the private key path.
func keygen(t *testing.T, dir, name, typ string, bits int, extra ...string) string {
	t.Helper()
	needSSHKeygen(t)
	path := filepath.Join(dir, name)
	args := []string{"-q", "-t", typ, "-N", "", "-C", name, "-f", path}
	if bits > 0 {
		args = append(args, "-b", itoa(bits))
	}
	args = append(args, extra...)
	if out, err := exec.Command("ssh-keygen", args...).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen %v: %v\n%s", args, err, out)
	}
	return path
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for n > 0 || i == len(b) {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}

// pubLine returns the "keytype base64" of a key file's .pub.
func pubLine(t *testing.T, key string) string {
	t.Helper()
	data, err := os.ReadFile(key + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(data))
	return f[0] + " " + f[1]
}

// keygenSign signs msg with ssh-keygen -Y sign and returns the armor.
func keygenSign(t *testing.T, key, namespace string, msg []byte) []byte {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "msg")
	if err := os.WriteFile(file, msg, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("ssh-keygen", "-Y", "sign", "-q", "-f", key, "-n", namespace, file)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen -Y sign: %v\n%s", err, out)
	}
	sig, err := os.ReadFile(file + ".sig")
	if err != nil {
		t.Fatal(err)
	}
	return sig
}

// keygenVerify is the second opinion: does `ssh-keygen -Y verify` accept
// armored as principal's signature of msg in namespace?
func keygenVerify(t *testing.T, allowed []byte, principal, namespace string, msg, armored []byte) (bool, string) {
	t.Helper()
	needSSHKeygen(t)
	dir := t.TempDir()
	as := filepath.Join(dir, "allowed_signers")
	sig := filepath.Join(dir, "sig")
	if err := os.WriteFile(as, allowed, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(sig, armored, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("ssh-keygen", "-Y", "verify", "-f", as, "-I", principal, "-n", namespace, "-s", sig)
	cmd.Stdin = bytes.NewReader(msg)
	out, err := cmd.CombinedOutput()
	return err == nil, string(out)
}

// skKey is a constructed sk-ssh-ed25519 key: ssh-keygen cannot make one
// without a FIDO token, but the signature format is plain ed25519 over
// (sha256(application) || flags || counter || sha256(data)), so a software
// key produces byte-exact security-key signatures with any flags.
type skKey struct {
	priv  ed25519.PrivateKey
	pub   ssh.PublicKey
	flags byte
}

func newSKKey(t *testing.T, flags byte) *skKey {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	wire := ssh.Marshal(struct {
		Type, Key, App string
	}{ssh.KeyAlgoSKED25519, string(pub), "ssh:"})
	pk, err := ssh.ParsePublicKey(wire)
	if err != nil {
		t.Fatal(err)
	}
	return &skKey{priv: priv, pub: pk, flags: flags}
}

func (k *skKey) PublicKey() ssh.PublicKey { return k.pub }

func (k *skKey) Sign(_ io.Reader, data []byte) (*ssh.Signature, error) {
	app := sha256.Sum256([]byte("ssh:"))
	dig := sha256.Sum256(data)
	var counter = []byte{0, 0, 0, 7}
	msg := append(append(append(app[:], k.flags), counter...), dig[:]...)
	return &ssh.Signature{
		Format: ssh.KeyAlgoSKED25519,
		Blob:   ed25519.Sign(k.priv, msg),
		Rest:   append([]byte{k.flags}, counter...),
	}, nil
}
