package main

import "golang.org/x/sys/unix"

// undumpable makes failpass's own process non-dumpable. Its
// /proc/<pid>/environ, mem and fd are then readable by no process
// without CAP_SYS_PTRACE: where a contained command or role has no PID
// namespace of its own (user namespaces denied, Landlock alone) it can
// still see failpass in /proc, and would otherwise read its environment
// (tokens, keys) there, as the same user.
func undumpable() { unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0) }
