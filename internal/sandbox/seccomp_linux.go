package sandbox

import (
	"errors"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The seccomp filter. Every contained command (card commands, the loop's
// validations, the roles' views) runs under a seccomp filter that denies
// at least what Docker's default profile denies a process without
// CAP_SYS_ADMIN: the kernel's attack surface a test has no use for
// (io_uring, the keyring, BPF, perf events, userfaultfd, kernel modules,
// kexec, mounts, namespaces, clock and system settings, another
// process's memory). The calls fail with EPERM (clone3 with ENOSYS, so
// glibc falls back to clone, whose flags the filter can read), as they
// do under Docker, so programs that probe for them fall back.
//
// The filter checks the architecture first: a 64-bit process can enter
// the kernel through the 32-bit table (int 0x80 on x86-64) or the x32
// one (numbers with bit 30 set), whose numbers differ, so a filter of
// 64-bit numbers alone would let those reach what it denies. Every call
// through another table fails with ENOSYS: a 32-bit program cannot run
// in the sandbox.
//
// It is installed last on the thread the command is forked from (after
// Landlock, no_new_privs and the bounding set), and passes to every
// child. It cannot be removed, only stacked upon, which a filter of the
// command's own cannot loosen.

// deniedCommon are the calls denied on every architecture the filter
// knows (the arch files add those only their table has).
var deniedCommon = []uintptr{
	unix.SYS_ACCT, unix.SYS_ADD_KEY, unix.SYS_BPF, unix.SYS_CLOCK_ADJTIME, unix.SYS_CLOCK_SETTIME,
	unix.SYS_DELETE_MODULE, unix.SYS_FINIT_MODULE, unix.SYS_INIT_MODULE, unix.SYS_GET_MEMPOLICY,
	unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER,
	unix.SYS_KCMP, unix.SYS_KEXEC_FILE_LOAD, unix.SYS_KEXEC_LOAD, unix.SYS_KEYCTL, unix.SYS_REQUEST_KEY,
	unix.SYS_LOOKUP_DCOOKIE, unix.SYS_MBIND, unix.SYS_MOUNT, unix.SYS_MOUNT_SETATTR, unix.SYS_MOVE_MOUNT,
	unix.SYS_OPEN_TREE, unix.SYS_FSOPEN, unix.SYS_FSCONFIG, unix.SYS_FSMOUNT, unix.SYS_FSPICK,
	unix.SYS_MOVE_PAGES, unix.SYS_NAME_TO_HANDLE_AT, unix.SYS_OPEN_BY_HANDLE_AT, unix.SYS_PERF_EVENT_OPEN,
	unix.SYS_PIVOT_ROOT, unix.SYS_PROCESS_VM_READV, unix.SYS_PROCESS_VM_WRITEV, unix.SYS_QUOTACTL,
	unix.SYS_QUOTACTL_FD, unix.SYS_REBOOT, unix.SYS_SET_MEMPOLICY, unix.SYS_SETNS, unix.SYS_SETTIMEOFDAY,
	unix.SYS_SWAPON, unix.SYS_SWAPOFF, unix.SYS_SYSLOG, unix.SYS_UMOUNT2, unix.SYS_UNSHARE,
	unix.SYS_USERFAULTFD, unix.SYS_FANOTIFY_INIT, unix.SYS_VHANGUP, unix.SYS_PIDFD_GETFD,
	unix.SYS_PROCESS_MADVISE, unix.SYS_NFSSERVCTL,
}

// cloneNamespaces are the clone flags that ask for a namespace: clone
// with any of them is denied (a user namespace would give the command
// every capability inside it, and its kernel surface).
const cloneNamespaces = unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWPID | unix.CLONE_NEWNET |
	unix.CLONE_NEWIPC | unix.CLONE_NEWUTS | unix.CLONE_NEWCGROUP | unix.CLONE_NEWTIME

// personalityAllowed are the personality(2) values Docker lets through:
// the query and the plain Linux personalities.
var personalityAllowed = []uint32{0x0, 0x8, 0x20000, 0x20008, 0xffffffff}

// errNoSeccomp says the filter has no table for this architecture.
var errNoSeccomp = errors.New("no seccomp filter for this architecture")

// seccompProgram assembles the filter for this architecture.
func seccompProgram() ([]unix.SockFilter, error) {
	if seccompArch == 0 {
		return nil, errNoSeccomp
	}
	const (
		offNr   = 0
		offArch = 4
		offArg0 = 16 // args[0], its low half on a little-endian machine
	)
	eperm := unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
	enosys := unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
	var a asm
	a.ld(offArch)
	a.jeq(seccompArch, "", "enosys")
	a.ld(offNr)
	if seccompX32Bit != 0 {
		a.jge(seccompX32Bit, "enosys", "")
	}
	a.jeq(unix.SYS_CLONE3, "enosys", "")
	a.jeq(unix.SYS_CLONE, "", "notclone")
	a.ld(offArg0)
	a.jset(cloneNamespaces, "eperm", "allow")
	a.label("notclone")
	a.jeq(unix.SYS_PERSONALITY, "", "list")
	a.ld(offArg0)
	for _, v := range personalityAllowed {
		a.jeq(v, "allow", "")
	}
	a.ret(eperm)
	a.label("list")
	for _, nr := range append(append([]uintptr{}, deniedCommon...), deniedArch...) {
		a.jeq(uint32(nr), "eperm", "")
	}
	a.label("allow")
	a.ret(unix.SECCOMP_RET_ALLOW)
	a.label("eperm")
	a.ret(eperm)
	a.label("enosys")
	a.ret(enosys)
	return a.assemble()
}

// installSeccomp installs the filter on the calling thread (and what it
// forks). no_new_privs must be set already (it is, by Landlock or the
// helper).
func installSeccomp() error {
	prog, err := seccompProgram()
	if err != nil {
		return err
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return err
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if _, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fprog))); errno != 0 {
		return errno
	}
	return nil
}

// asm is a tiny BPF assembler with forward labels, so the filter reads
// as its rules.
type asm struct {
	ins    []unix.SockFilter
	jumps  []jump
	labels map[string]int
}

type jump struct {
	at     int
	jt, jf string
}

func (a *asm) ld(off uint32) {
	a.ins = append(a.ins, unix.SockFilter{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: off})
}

func (a *asm) ret(v uint32) {
	a.ins = append(a.ins, unix.SockFilter{Code: unix.BPF_RET | unix.BPF_K, K: v})
}

func (a *asm) cond(op uint16, k uint32, jt, jf string) {
	a.jumps = append(a.jumps, jump{at: len(a.ins), jt: jt, jf: jf})
	a.ins = append(a.ins, unix.SockFilter{Code: unix.BPF_JMP | op | unix.BPF_K, K: k})
}

func (a *asm) jeq(k uint32, jt, jf string)  { a.cond(unix.BPF_JEQ, k, jt, jf) }
func (a *asm) jge(k uint32, jt, jf string)  { a.cond(unix.BPF_JGE, k, jt, jf) }
func (a *asm) jset(k uint32, jt, jf string) { a.cond(unix.BPF_JSET, k, jt, jf) }

func (a *asm) label(name string) {
	if a.labels == nil {
		a.labels = map[string]int{}
	}
	a.labels[name] = len(a.ins)
}

// assemble resolves the labels: "" is the next instruction. A jump
// farther than 255 instructions is an error (BPF's offsets are a byte).
func (a *asm) assemble() ([]unix.SockFilter, error) {
	off := func(from int, to string) (uint8, error) {
		if to == "" {
			return 0, nil
		}
		t, ok := a.labels[to]
		if !ok || t <= from || t-from-1 > 255 {
			return 0, errors.New("seccomp: bad jump to " + to)
		}
		return uint8(t - from - 1), nil
	}
	for _, j := range a.jumps {
		var err error
		if a.ins[j.at].Jt, err = off(j.at, j.jt); err != nil {
			return nil, err
		}
		if a.ins[j.at].Jf, err = off(j.at, j.jf); err != nil {
			return nil, err
		}
	}
	return a.ins, nil
}
