package sandbox

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Landlock, straight from the three system calls. The helper restricts
// only its own locked thread, the one it forks the command from: a
// Landlock domain, like no_new_privs and the capability bounding set,
// belongs to a thread and passes to the children it starts. Restricting
// every thread of a Go process would need a signal round to each of them
// (libpsx, which also makes the binary link C); the command gains nothing
// from it.

// Access rights, grouped as the rules grant them.
const (
	llRead = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR
	// llWrite is every right that creates, changes or removes something,
	// renames and links across folders (refer) included.
	llWrite = unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_REMOVE_DIR | unix.LANDLOCK_ACCESS_FS_REMOVE_FILE |
		unix.LANDLOCK_ACCESS_FS_MAKE_CHAR | unix.LANDLOCK_ACCESS_FS_MAKE_DIR | unix.LANDLOCK_ACCESS_FS_MAKE_REG |
		unix.LANDLOCK_ACCESS_FS_MAKE_SOCK | unix.LANDLOCK_ACCESS_FS_MAKE_FIFO | unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK |
		unix.LANDLOCK_ACCESS_FS_MAKE_SYM | unix.LANDLOCK_ACCESS_FS_REFER | unix.LANDLOCK_ACCESS_FS_TRUNCATE
	// llFileOnly are the rights a rule on a file (not a folder) may carry.
	llFileOnly = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_READ_FILE |
		unix.LANDLOCK_ACCESS_FS_TRUNCATE | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	// llDevice is what a command may do with the harmless device files.
	llDevice = unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE |
		unix.LANDLOCK_ACCESS_FS_TRUNCATE | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
)

// minLandlockABI is the oldest Landlock failpass uses. ABI 1 cannot allow
// a rename or link between folders at all (refer came with ABI 2), which
// breaks ordinary builds; such a kernel reports the layer missing.
const minLandlockABI = 2

// landlockABI asks the kernel which Landlock ABI it speaks (0: none).
func landlockABI() (int, error) {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		return 0, errno
	}
	return int(v), nil
}

// handledFS is every filesystem right the kernel's ABI knows: each is
// denied unless a rule grants it.
func handledFS(abi int) uint64 {
	h := uint64(llRead | llWrite | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV)
	if abi < 3 {
		h &^= unix.LANDLOCK_ACCESS_FS_TRUNCATE
	}
	if abi < 5 {
		h &^= unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	}
	return h
}

// scopes keeps the command from signalling, or connecting to an abstract
// unix socket of, any process outside its own domain (ABI 6).
func scopes(abi int) uint64 {
	if abi < 6 {
		return 0
	}
	return unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | unix.LANDLOCK_SCOPE_SIGNAL
}

// Landlock's network rules (ABI 4), which x/sys/unix names only in part.
const (
	llBindTCP    = unix.LANDLOCK_ACCESS_NET_BIND_TCP
	llConnectTCP = 0x2 // LANDLOCK_ACCESS_NET_CONNECT_TCP
	llRuleNet    = 2   // LANDLOCK_RULE_NET_PORT
	minNetABI    = 4
)

// landlockNetPort is struct landlock_net_port_attr.
type landlockNetPort struct {
	allowed uint64
	port    uint64
}

// ephemeralPorts is the range the kernel picks a port from when a socket
// binds port 0 (net.ipv4.ip_local_port_range), and so the ports a
// command's own test server listens on. Its default where it cannot be
// read.
func ephemeralPorts() (lo, hi int) {
	lo, hi = 32768, 60999
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return lo, hi
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return lo, hi
	}
	l, err1 := strconv.Atoi(f[0])
	h, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil || l < 1 || h > 65535 || l > h {
		return lo, hi
	}
	return l, h
}

// landlockRules are the paths a command may use, by the access it gets.
type landlockRules struct {
	read    []string // read and execute: folders or files
	write   []string // read, execute and change anything below
	devices []string // read, write and ioctl on these device files
	// denyTCP, where the kernel has network rules, denies TCP bind but
	// to port 0 (the kernel picks an ephemeral port) and TCP connect but
	// to the ephemeral ports: a test may still serve itself on loopback,
	// and reaches no service on a fixed port, local or remote (ssh,
	// HTTP(S), a database). For a command without a network namespace.
	denyTCP bool
	// writesOnly restricts writing alone: what may be read and run
	// stays as the domain above allows (a domain beneath the command's,
	// see testExec).
	writesOnly bool
}

// restrictThread confines the calling thread (and every process it
// starts afterwards) to rules. A path that does not exist is skipped. It
// sets no_new_privs on the thread, which Landlock requires.
func restrictThread(rules landlockRules) error {
	abi, err := landlockABI()
	if err != nil {
		return fmt.Errorf("landlock unavailable: %w", err)
	}
	if abi < minLandlockABI {
		return fmt.Errorf("landlock ABI %d is older than %d", abi, minLandlockABI)
	}
	handled := handledFS(abi)
	if rules.writesOnly {
		handled &= llWrite
	}
	// The first three fields are all failpass sets; the kernel takes a
	// shorter structure from older callers.
	attr := unix.LandlockRulesetAttr{Handled_access_fs: handled, Scoped: scopes(abi)}
	var tcp int // a ruleset of TCP rules alone, stacked on the filesystem's
	if rules.denyTCP && abi >= minNetABI {
		if tcp, err = tcpRuleset(); err != nil {
			return err
		}
	}
	size := unsafe.Offsetof(attr.Scoped) + unsafe.Sizeof(attr.Scoped)
	if abi < 6 {
		size = unsafe.Offsetof(attr.Handled_access_net) + unsafe.Sizeof(attr.Handled_access_net)
	}
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), size, 0)
	if errno != 0 {
		return fmt.Errorf("landlock_create_ruleset: %w", errno)
	}
	defer unix.Close(int(fd))
	for _, g := range []struct {
		paths  []string
		access uint64
	}{
		{rules.read, llRead},
		{rules.write, llRead | llWrite},
		{rules.devices, llDevice},
	} {
		for _, p := range g.paths {
			if err := addPathRule(int(fd), p, g.access&handled); err != nil {
				return err
			}
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, fd, 0, 0); errno != 0 {
		return fmt.Errorf("landlock_restrict_self: %w", errno)
	}
	if tcp != 0 {
		if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(tcp), 0, 0); errno != 0 {
			return fmt.Errorf("landlock_restrict_self (TCP rules): %w", errno)
		}
	}
	return nil
}

// tcpRuleset is a ruleset that handles TCP bind and connect and allows
// only addTCPRules's: built once per helper process, since its ~28,000
// port rules cost ~45 ms, and a session helper restricts a thread for
// every command. Its descriptor stays open for the process's life.
var tcpRuleset = sync.OnceValues(func() (int, error) {
	attr := unix.LandlockRulesetAttr{Handled_access_net: llBindTCP | llConnectTCP}
	size := unsafe.Offsetof(attr.Handled_access_net) + unsafe.Sizeof(attr.Handled_access_net)
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), size, 0) // always close-on-exec
	if errno != 0 {
		return 0, fmt.Errorf("landlock_create_ruleset (TCP rules): %w", errno)
	}
	if err := addTCPRules(int(fd)); err != nil {
		unix.Close(int(fd))
		return 0, err
	}
	return int(fd), nil
})

// addTCPRules grants a bind of port 0 and a connect to each ephemeral
// port: every other TCP bind and connect the ruleset handles is denied.
func addTCPRules(ruleset int) error {
	add := func(access uint64, port int) error {
		rule := landlockNetPort{allowed: access, port: uint64(port)}
		if _, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(ruleset), llRuleNet,
			uintptr(unsafe.Pointer(&rule)), 0, 0, 0); errno != 0 {
			return fmt.Errorf("landlock: rule for TCP port %d: %w", port, errno)
		}
		return nil
	}
	if err := add(llBindTCP, 0); err != nil {
		return err
	}
	lo, hi := ephemeralPorts()
	for p := lo; p <= hi; p++ {
		if err := add(llConnectTCP, p); err != nil {
			return err
		}
	}
	return nil
}

// addPathRule grants access below path (on a file: the file rights of
// access). A missing path needs no rule, nor does one the user cannot
// reach (a folder on PATH below another user's home, as su leaves root's
// PATH to a user): the command could not use it anyway.
func addPathRule(ruleset int, path string, access uint64) error {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.EACCES) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("landlock: %s: %w", path, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("landlock: %s: %w", path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		access &= llFileOnly
	}
	rule := unix.LandlockPathBeneathAttr{Allowed_access: access, Parent_fd: int32(fd)}
	if _, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(ruleset), unix.LANDLOCK_RULE_PATH_BENEATH,
		uintptr(unsafe.Pointer(&rule)), 0, 0, 0); errno != 0 {
		return fmt.Errorf("landlock: rule for %s: %w", path, errno)
	}
	return nil
}
