//go:build linux

// Package sandboxtest lets tests see the machine as many users do: with
// namespace creation denied (AppArmor's restriction of unprivileged user
// namespaces on Ubuntu 23.10 and later, or a container's seccomp
// profile). Tests only.
package sandboxtest

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// DenyEnv is the variable that makes RunDenied's child call
// DenyNamespaces first (from the test package's TestMain).
const DenyEnv = "FAILPASS_TEST_DENY_NAMESPACES"

// nsFlags are every namespace a clone or unshare may ask for.
const nsFlags = unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWPID | unix.CLONE_NEWNET |
	unix.CLONE_NEWIPC | unix.CLONE_NEWUTS | unix.CLONE_NEWCGROUP

// DenyNamespaces installs, on every thread of the process and everything
// it starts, a seccomp filter under which unshare and clone fail with
// EPERM when they ask for a namespace, and clone3 (whose flags a filter
// cannot read) fails with ENOSYS, so callers fall back to clone. It sets
// no_new_privs, as seccomp requires of an unprivileged process.
func DenyNamespaces() error {
	var arch uint32
	switch runtime.GOARCH {
	case "amd64":
		arch = unix.AUDIT_ARCH_X86_64
	case "arm64":
		arch = unix.AUDIT_ARCH_AARCH64
	default:
		return errors.New("sandboxtest: no seccomp filter for " + runtime.GOARCH)
	}
	const (
		offNr   = 0
		offArch = 4
		offArg0 = 16 // args[0], its low half on a little-endian machine
	)
	ret := func(v uint32) unix.SockFilter { return unix.SockFilter{Code: unix.BPF_RET | unix.BPF_K, K: v} }
	eperm := unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
	enosys := unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
	prog := []unix.SockFilter{
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: offArch},
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, Jt: 1, Jf: 0, K: arch},
		ret(unix.SECCOMP_RET_ALLOW), // another ABI: not ours to judge
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: offNr},
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, Jt: 0, Jf: 1, K: unix.SYS_CLONE3},
		ret(enosys),
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, Jt: 1, Jf: 0, K: unix.SYS_UNSHARE},
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, Jt: 0, Jf: 3, K: unix.SYS_CLONE},
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: offArg0},
		{Code: unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K, Jt: 0, Jf: 1, K: nsFlags},
		ret(eperm),
		ret(unix.SECCOMP_RET_ALLOW),
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return err
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if _, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC,
		uintptr(unsafe.Pointer(&fprog))); errno != 0 {
		return errno
	}
	// The filter is in force: a namespace request fails.
	if err := unix.Unshare(unix.CLONE_NEWUSER); !errors.Is(err, unix.EPERM) {
		return errors.New("sandboxtest: the seccomp filter does not deny unshare: " + errString(err))
	}
	return nil
}

func errString(err error) string {
	if err == nil {
		return "it succeeded"
	}
	return err.Error()
}

// RunDenied runs the tests of this package that match pattern again, in
// a child test process with namespace creation denied (its TestMain
// must call DenyNamespaces when DenyEnv is set) and a sandbox probe cache
// of its own, and fails t with the child's output if they fail.
func RunDenied(t *testing.T, pattern string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run="+pattern, "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), DenyEnv+"=1", "XDG_CACHE_HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("with namespaces denied: %v\n%s", err, out)
	}
	if !bytes.Contains(out, []byte("--- PASS")) || bytes.Contains(out, []byte("--- SKIP")) {
		t.Fatalf("with namespaces denied, %s did not all run:\n%s", pattern, out)
	}
	t.Logf("with namespaces denied:\n%s", out)
}
