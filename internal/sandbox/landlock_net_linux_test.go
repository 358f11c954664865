package sandbox

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/failpass/failpass/internal/sandbox/sandboxtest"
)

// TestLandlockTCPDenied runs TestLandlockTCP where namespace creation is
// denied: no network namespace isolates the command, and Landlock's
// network rules are what stands between it and the host's TCP services.
func TestLandlockTCPDenied(t *testing.T) {
	if os.Getenv(sandboxtest.DenyEnv) == "1" {
		t.Skip("already denied")
	}
	if abi, _ := landlockABI(); abi < minNetABI {
		t.Skipf("landlock ABI %d has no network rules", abi)
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3 to open sockets with")
	}
	sandboxtest.RunDenied(t, "^TestLandlockTCP$")
}

// TestLandlockTCP (run by TestLandlockTCPDenied): a command connects to
// no TCP service on a fixed port (one this test listens on, as a local
// database or an HTTP proxy would) and binds no fixed port, yet still
// serves itself on an ephemeral port, as test suites do. The report
// names the rules, and the network layer stays missing (UDP is open).
func TestLandlockTCP(t *testing.T) {
	if os.Getenv(sandboxtest.DenyEnv) != "1" {
		t.Skip("run by TestLandlockTCPDenied")
	}
	lo, _ := ephemeralPorts()
	var ln net.Listener
	for p := lo - 1; p > lo-2000 && ln == nil; p-- {
		ln, _ = net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
	}
	if ln == nil {
		t.Skip("no fixed port below the ephemeral range to listen on")
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	fixed := ln.Addr().(*net.TCPAddr).Port
	// Each line: what was tried, and ok or the error.
	script := fmt.Sprintf(`import socket
def attempt(name, f):
    try:
        f(); print(name, "ok")
    except OSError as e:
        print(name, "denied", e.errno)
def connect_fixed():
    socket.create_connection(("127.0.0.1", %d), timeout=5).close()
def bind_fixed():
    s = socket.socket(); s.bind(("127.0.0.1", %d)); s.close()
def serve_self():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
    socket.create_connection(s.getsockname(), timeout=5).close(); s.close()
attempt("connect-fixed", connect_fixed)
attempt("bind-fixed", bind_fixed)
attempt("serve-self", serve_self)
`, fixed, fixed-1)
	_, wt := testRepo(t, map[string]string{"a.txt": "a\n"})
	r := contained(t, wt, &Policy{}, nil, time.Minute, "python3", "-c", script)
	if r.Exit != 0 {
		t.Fatalf("the probe script: %+v\n%s", r.Outcome, r.Log)
	}
	for _, want := range []string{"connect-fixed denied 13", "bind-fixed denied 13", "serve-self ok"} {
		if !strings.Contains(r.Log, want+"\n") {
			t.Errorf("want %q; the command printed:\n%s", want, r.Log)
		}
	}
	rep := Probe()
	if !slices.Contains(rep.Features, string(FeatLandlockTCP)) || rep.Has(Network) {
		t.Errorf("report: features %v, applied %v; want %s listed and the network layer missing", rep.Features, rep.Applied, FeatLandlockTCP)
	}
	// What Landlock alone cannot keep alike between runs is named.
	for _, tell := range []string{TellAccessTimes, TellPIDs, TellCmdlines} {
		if !slices.Contains(rep.Tells, tell) {
			t.Errorf("report tells %q, want %q among them", rep.Tells, tell)
		}
	}
	if slices.Contains(rep.Tells, TellKeyrings) && slices.Contains(rep.Features, string(FeatSeccomp)) {
		t.Errorf("report tells %q although the seccomp filter denies the keyrings", rep.Tells)
	}
	// A command granted the network (a role with Network, as the card's
	// prepare command is) gets no TCP rules: it reaches the fixed port,
	// and its report does not claim them.
	r = contained(t, wt, &Policy{Role: &Role{Network: true}}, nil, time.Minute, "python3", "-c", script)
	if r.Exit != 0 || !strings.Contains(r.Log, "connect-fixed ok\n") || !strings.Contains(r.Log, "bind-fixed ok\n") {
		t.Errorf("a networked command: %+v; want connect-fixed and bind-fixed ok, it printed:\n%s", r.Outcome, r.Log)
	}
	if got := withoutNetwork(rep); slices.Contains(got.Features, string(FeatLandlockTCP)) {
		t.Errorf("a networked command's report lists %s", FeatLandlockTCP)
	}
}
