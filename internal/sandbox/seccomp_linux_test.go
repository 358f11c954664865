package sandbox

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// seccompProbeEnv makes this test binary, run as a sandboxed command,
// try the calls the filter denies and print what each returned.
const seccompProbeEnv = "FAILPASS_SECCOMP_PROBE"

// seccompCalls are the calls the probe tries: each must fail with the
// errno given inside a sandboxed run. Each is harmless where it works.
var seccompCalls = []struct {
	name  string
	errno syscall.Errno
	call  func() (uintptr, syscall.Errno)
}{
	{"io_uring_setup", unix.EPERM, func() (uintptr, syscall.Errno) {
		var params [120]byte
		r, _, e := unix.Syscall(unix.SYS_IO_URING_SETUP, 1, uintptr(unsafe.Pointer(&params[0])), 0)
		return r, e
	}},
	{"keyctl", unix.EPERM, func() (uintptr, syscall.Errno) {
		r, _, e := unix.Syscall(unix.SYS_KEYCTL, unix.KEYCTL_GET_KEYRING_ID, uintptr(0xfffffffd), 0) // the session keyring
		return r, e
	}},
	{"add_key", unix.EPERM, func() (uintptr, syscall.Errno) {
		typ, desc, data := []byte("user\x00"), []byte("failpass-probe\x00"), []byte("x")
		r, _, e := unix.Syscall6(unix.SYS_ADD_KEY, uintptr(unsafe.Pointer(&typ[0])), uintptr(unsafe.Pointer(&desc[0])),
			uintptr(unsafe.Pointer(&data[0])), 1, uintptr(0xfffffffe), 0) // the process keyring
		return r, e
	}},
	{"request_key", unix.EPERM, func() (uintptr, syscall.Errno) {
		typ, desc := []byte("user\x00"), []byte("failpass-probe\x00")
		r, _, e := unix.Syscall6(unix.SYS_REQUEST_KEY, uintptr(unsafe.Pointer(&typ[0])), uintptr(unsafe.Pointer(&desc[0])), 0, 0, 0, 0)
		return r, e
	}},
	{"unshare(CLONE_NEWUSER)", unix.EPERM, func() (uintptr, syscall.Errno) {
		r, _, e := unix.Syscall(unix.SYS_UNSHARE, unix.CLONE_NEWUSER, 0, 0)
		return r, e
	}},
	// CLONE_NEWUSER with CLONE_FS is invalid (EINVAL) where allowed: the
	// clone never forks.
	{"clone(CLONE_NEWUSER)", unix.EPERM, func() (uintptr, syscall.Errno) {
		r, _, e := unix.RawSyscall6(unix.SYS_CLONE, unix.CLONE_NEWUSER|unix.CLONE_FS, 0, 0, 0, 0, 0)
		return r, e
	}},
	{"clone3", unix.ENOSYS, func() (uintptr, syscall.Errno) {
		r, _, e := unix.RawSyscall(unix.SYS_CLONE3, 0, 0, 0) // EFAULT or EINVAL where allowed
		return r, e
	}},
	{"bpf", unix.EPERM, func() (uintptr, syscall.Errno) {
		r, _, e := unix.Syscall(unix.SYS_BPF, 0xffff, 0, 0)
		return r, e
	}},
	{"userfaultfd", unix.EPERM, func() (uintptr, syscall.Errno) {
		r, _, e := unix.Syscall(unix.SYS_USERFAULTFD, 0, 0, 0)
		if e == 0 {
			unix.Close(int(r))
		}
		return r, e
	}},
	{"personality(READ_IMPLIES_EXEC)", unix.EPERM, func() (uintptr, syscall.Errno) {
		r, _, e := unix.Syscall(unix.SYS_PERSONALITY, 0x0400000, 0, 0)
		return r, e
	}},
}

// runSeccompProbe is the probe's body: one line per call, and "getpid
// ok" to show the filter lets ordinary calls through.
func runSeccompProbe() {
	for _, c := range seccompCalls {
		_, e := c.call()
		fmt.Printf("%s: %d\n", c.name, int(e))
	}
	if os.Getpid() > 0 {
		fmt.Println("getpid ok")
	}
}

func TestSeccompDeniesInsideTheSandbox(t *testing.T) {
	if _, err := seccompProgram(); err != nil {
		t.Skipf("no filter here: %v", err)
	}
	_, wt := testRepo(t, map[string]string{"a.txt": "a\n"})
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(wt, "probe.test")
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "LANG=C.UTF-8", seccompProbeEnv + "=1"}
	r := contained(t, wt, nil, env, 30*time.Second, "./probe.test")
	if !r.Started || r.Exit != 0 {
		t.Fatalf("the probe did not run: exit %d, %v\n%s", r.Exit, r.Err, r.Log)
	}
	if !slices.Contains(r.Report.Features, string(FeatSeccomp)) {
		t.Fatalf("the report does not list seccomp: %+v", r.Report)
	}
	for _, c := range seccompCalls {
		want := fmt.Sprintf("%s: %d\n", c.name, int(c.errno))
		if !strings.Contains(r.Log, want) {
			t.Errorf("inside the sandbox %s did not fail with %v:\n%s", c.name, c.errno, r.Log)
		}
	}
	if !strings.Contains(r.Log, "getpid ok") {
		t.Errorf("ordinary calls fail:\n%s", r.Log)
	}
}

// seccompData is the kernel's struct seccomp_data, as the filter reads it.
func seccompData(nr int32, arch uint32, arg0 uint64) []byte {
	b := make([]byte, 64)
	binary.LittleEndian.PutUint32(b[0:], uint32(nr))
	binary.LittleEndian.PutUint32(b[4:], arch)
	binary.LittleEndian.PutUint64(b[16:], arg0)
	return b
}

// runBPF interprets the instructions the filter uses.
func runBPF(t *testing.T, prog []unix.SockFilter, data []byte) uint32 {
	var acc uint32
	for pc := 0; pc < len(prog); pc++ {
		in := prog[pc]
		switch in.Code {
		case unix.BPF_LD | unix.BPF_W | unix.BPF_ABS:
			acc = binary.LittleEndian.Uint32(data[in.K:])
		case unix.BPF_RET | unix.BPF_K:
			return in.K
		case unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K, unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K:
			var ok bool
			switch in.Code &^ (unix.BPF_JMP | unix.BPF_K) {
			case unix.BPF_JEQ:
				ok = acc == in.K
			case unix.BPF_JGE:
				ok = acc >= in.K
			default:
				ok = acc&in.K != 0
			}
			if ok {
				pc += int(in.Jt)
			} else {
				pc += int(in.Jf)
			}
		default:
			t.Fatalf("instruction %d: unknown code %#x", pc, in.Code)
		}
	}
	t.Fatal("the filter fell off its end")
	return 0
}

// The filter as the kernel would run it, on entries no test kernel may
// offer: the 32-bit table (int 0x80, whose numbers are other calls'),
// the x32 one, and every denied call.
func TestSeccompProgramTables(t *testing.T) {
	prog, err := seccompProgram()
	if err != nil {
		t.Skipf("no filter here: %v", err)
	}
	eperm := unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
	enosys := unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
	check := func(what string, data []byte, want uint32) {
		t.Helper()
		if got := runBPF(t, prog, data); got != want {
			t.Errorf("%s: filter returns %#x, want %#x", what, got, want)
		}
	}
	for _, nr := range append(append([]uintptr{}, deniedCommon...), deniedArch...) {
		check(fmt.Sprintf("call %d", nr), seccompData(int32(nr), seccompArch, 0), eperm)
	}
	for _, nr := range []uintptr{unix.SYS_READ, unix.SYS_WRITE, unix.SYS_GETPID, unix.SYS_EXECVE, unix.SYS_WAIT4} {
		check(fmt.Sprintf("ordinary call %d", nr), seccompData(int32(nr), seccompArch, 0), unix.SECCOMP_RET_ALLOW)
	}
	check("clone3", seccompData(unix.SYS_CLONE3, seccompArch, 0), enosys)
	check("clone of a thread", seccompData(unix.SYS_CLONE, seccompArch, unix.CLONE_VM|unix.CLONE_THREAD|unix.CLONE_SIGHAND), unix.SECCOMP_RET_ALLOW)
	for _, f := range []uint64{unix.CLONE_NEWUSER, unix.CLONE_NEWNS, unix.CLONE_NEWNET, unix.CLONE_NEWPID} {
		check(fmt.Sprintf("clone %#x", f), seccompData(unix.SYS_CLONE, seccompArch, f|uint64(unix.SIGCHLD)), eperm)
	}
	check("personality query", seccompData(unix.SYS_PERSONALITY, seccompArch, 0xffffffff), unix.SECCOMP_RET_ALLOW)
	check("personality READ_IMPLIES_EXEC", seccompData(unix.SYS_PERSONALITY, seccompArch, 0x0400000), eperm)
	// Another table: every call fails, the harmless ones too, so that
	// none of the 32-bit numbers (keyctl is 288 there, io_uring_setup
	// 425) reaches the kernel.
	for _, arch := range []uint32{unix.AUDIT_ARCH_I386, unix.AUDIT_ARCH_ARM, unix.AUDIT_ARCH_X86_64, unix.AUDIT_ARCH_AARCH64} {
		if arch == seccompArch {
			continue
		}
		for _, nr := range []int32{0, 1, 20, 288, 425, 310} {
			check(fmt.Sprintf("arch %#x call %d", arch, nr), seccompData(nr, arch, 0), enosys)
		}
	}
	if seccompX32Bit != 0 {
		for _, nr := range []int32{39, 250, 425} { // x32 getpid, keyctl, io_uring_setup
			check(fmt.Sprintf("x32 call %d", nr), seccompData(nr|seccompX32Bit, seccompArch, 0), enosys)
		}
	}
}

// A loop role's view runs under the same filter.
func TestSeccompInView(t *testing.T) {
	if _, err := seccompProgram(); err != nil {
		t.Skipf("no filter here: %v", err)
	}
	if _, err := ViewSupport(); err != nil {
		t.Skipf("no view here: %v", err)
	}
	v, _, snap, rw, _ := viewTree(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(rw, "probe.test")
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	out, o := inView(t, v, snap, bin, seccompProbeEnv+"=1")
	if o.Exit != 0 {
		t.Fatalf("the probe in a view exited %d:\n%s", o.Exit, out)
	}
	for _, c := range seccompCalls {
		if want := fmt.Sprintf("%s: %d\n", c.name, int(c.errno)); !strings.Contains(out, want) {
			t.Errorf("in a view %s did not fail with %v:\n%s", c.name, c.errno, out)
		}
	}
}

// Without cgroups the run's memory and tasks are still bounded where the
// kernel allows: RLIMIT_DATA per process, and RLIMIT_NPROC in the run's
// own user namespace; the report says which mechanism held.
func TestRlimitsWithoutCgroups(t *testing.T) {
	_, wt := testRepo(t, map[string]string{"a.txt": "a\n"})
	r := contained(t, wt, nil, nil, 30*time.Second, "sh", "-c", "grep -E 'Max (data size|processes)' /proc/self/limits")
	if !r.Started || r.Exit != 0 {
		t.Fatalf("exit %d: %s", r.Exit, r.Log)
	}
	t.Logf("%s features %v", strings.TrimSpace(r.Log), r.Report.Features)
	has := func(f Feature) bool { return slices.Contains(r.Report.Features, string(f)) }
	switch {
	case has(FeatRlimitData):
		if !regexp.MustCompile(fmt.Sprintf(`Max data size +%d +%d `, DefaultMemory, DefaultMemory)).MatchString(r.Log) {
			t.Errorf("rlimit-data reported, but: %s", r.Log)
		}
		// An allocation past the bound fails.
		if _, err := os.Stat("/usr/bin/python3"); err == nil {
			big := contained(t, wt, nil, nil, 30*time.Second, "/usr/bin/python3", "-c", "b = bytearray(1536 << 20); print('allocated')")
			if big.Exit == 0 || strings.Contains(big.Log, "allocated") {
				t.Errorf("1.5 GiB allocated under RLIMIT_DATA: %s", big.Log)
			}
		}
	case has(FeatCgroupMem):
	default:
		t.Errorf("memory is bounded by nothing: %v", r.Report)
	}
	switch {
	case has(FeatRlimitNproc):
		if !regexp.MustCompile(fmt.Sprintf(`Max processes +%d +%d `, DefaultPids, DefaultPids)).MatchString(r.Log) {
			t.Errorf("rlimit-nproc reported, but: %s", r.Log)
		}
	case has(FeatCgroupPids):
	default:
		if r.Report.Why[string(FeatRlimitNproc)] == "" {
			t.Errorf("tasks are unbounded and the report does not say why: %v", r.Report)
		}
	}
}
