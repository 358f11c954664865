package sign

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// startAgent runs a real ssh-agent on a socket in a temp folder and
// returns a getenv that points SSH_AUTH_SOCK at it.
func startAgent(t *testing.T) (sock string, getenv func(string) string) {
	t.Helper()
	if _, err := exec.LookPath("ssh-agent"); err != nil {
		t.Skip("ssh-agent not installed")
	}
	dir, err := os.MkdirTemp("", "agent")
	if err != nil {
		t.Fatal(err)
	}
	sock = filepath.Join(dir, "s")
	cmd := exec.Command("ssh-agent", "-D", "-a", sock)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		os.RemoveAll(dir)
	})
	for i := 0; i < 100; i++ {
		if _, err := os.Stat(sock); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	return sock, func(k string) string {
		if k == "SSH_AUTH_SOCK" {
			return sock
		}
		return ""
	}
}

func sshAdd(t *testing.T, sock, key string) {
	t.Helper()
	cmd := exec.Command("ssh-add", "-q", key)
	cmd.Env = append(os.Environ(), "SSH_AUTH_SOCK="+sock)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ssh-add %s: %v\n%s", key, err, out)
	}
}

func TestLoadSignerErrors(t *testing.T) {
	dir := t.TempDir()
	enc := keygen(t, dir, "enc", "ed25519", 0)
	// Re-encrypt the key with a passphrase.
	if out, err := exec.Command("ssh-keygen", "-q", "-p", "-N", "secret", "-f", enc).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen -p: %v\n%s", err, out)
	}
	plain := keygen(t, dir, "plain", "ed25519", 0)
	weak := keygen(t, dir, "weak", "rsa", 1024)
	garbage := filepath.Join(dir, "garbage")
	os.WriteFile(garbage, []byte("not a key\n"), 0o600)
	big := filepath.Join(dir, "big")
	os.WriteFile(big, []byte(strings.Repeat("x", MaxKeyFileSize+1)), 0o600)
	noenv := func(string) string { return "" }
	for _, tc := range []struct {
		name, key string
		hint      string
	}{
		{"encrypted key", enc, "ssh-add " + enc},
		{"public key without agent", plain + ".pub", "ssh-agent"},
		{"no key, no agent", "", "ssh-agent"},
		{"garbage", garbage, "ssh-keygen -t ed25519"},
		{"missing", filepath.Join(dir, "missing"), "--key"},
		{"oversized", big, "--key"},
		{"1024-bit rsa", weak, "ssh-keygen -t ed25519"},
	} {
		s, err := LoadSigner(tc.key, noenv)
		var ke *KeyError
		if !errors.As(err, &ke) || s != nil {
			t.Errorf("%s: LoadSigner(%q) = %v, %v; want *KeyError", tc.name, tc.key, s, err)
			continue
		}
		if !strings.Contains(strings.Join(ke.Hints(), "\n"), tc.hint) {
			t.Errorf("%s: LoadSigner(%q) hints = %q, want one naming %q", tc.name, tc.key, ke.Hints(), tc.hint)
		}
	}
}

// TestAgent signs through a real ssh-agent: by .pub, and the agent's only
// key; refuses to guess among several and names a key the agent lacks.
func TestAgent(t *testing.T) {
	dir := t.TempDir()
	a := keygen(t, dir, "a", "ed25519", 0)
	b := keygen(t, dir, "b", "rsa", 3072)
	c := keygen(t, dir, "c", "ecdsa", 256)
	sock, getenv := startAgent(t)
	sshAdd(t, sock, a)
	as := mustParse(t, "a@example.org "+pubLine(t, a)+"\nb@example.org "+pubLine(t, b))

	for _, key := range []string{a + ".pub", ""} {
		s, err := LoadSigner(key, getenv)
		if err != nil {
			t.Fatalf("LoadSigner(%q) via agent: %v", key, err)
		}
		armored, err := s.Sign(NamespaceCard, cardBytes)
		if err != nil {
			t.Fatalf("Sign via agent: %v", err)
		}
		if _, err := as.Verify("a@example.org", NamespaceCard, cardBytes, armored, time.Now()); err != nil {
			t.Errorf("LoadSigner(%q) via agent: Verify = %v, want valid", key, err)
		}
	}
	if s, err := LoadSigner(c+".pub", getenv); err == nil {
		t.Errorf("LoadSigner(%q) = %v, want an error: the agent does not hold it", c+".pub", s)
	}
	sshAdd(t, sock, b)
	if s, err := LoadSigner("", getenv); err == nil {
		t.Errorf("LoadSigner(\"\") with two agent keys = %v, want an error", s)
	}
	// RSA through the agent signs with SHA-2.
	s, err := LoadSigner(b+".pub", getenv)
	if err != nil {
		t.Fatal(err)
	}
	armored, err := s.Sign(NamespaceCard, cardBytes)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := as.Verify("b@example.org", NamespaceCard, cardBytes, armored, time.Now()); err != nil {
		t.Errorf("RSA via agent: Verify = %v, want valid", err)
	}
}
