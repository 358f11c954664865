//go:build linux

package sandbox

import "golang.org/x/sys/unix"

// The x86-64 table: its audit architecture, the x32 bit (an x32 call is
// a 64-bit one with bit 30 set in its number), and the calls only this
// table has.
const (
	seccompArch   = unix.AUDIT_ARCH_X86_64
	seccompX32Bit = 0x40000000
)

var deniedArch = []uintptr{
	unix.SYS_IOPERM, unix.SYS_IOPL, unix.SYS_CREATE_MODULE, unix.SYS_GET_KERNEL_SYMS, unix.SYS_QUERY_MODULE,
	unix.SYS_USELIB, unix.SYS_USTAT, unix.SYS_SYSFS, unix.SYS__SYSCTL, unix.SYS_MODIFY_LDT,
}
