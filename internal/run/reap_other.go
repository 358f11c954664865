//go:build unix && !linux

package run

import (
	"os/exec"
	"syscall"
)

// Without /proc and PR_SET_CHILD_SUBREAPER, only the process-group kill
// is available: a descendant that left the group survives the command.

func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

func enableReaper() {}

func killGroup(pgid int) error { return syscall.Kill(-pgid, syscall.SIGKILL) }

func startRegistered(cmd *exec.Cmd) error { return cmd.Start() }

func reap(pgid int) {}
