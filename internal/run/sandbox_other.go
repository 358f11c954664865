//go:build !linux

package run

import (
	"syscall"

	"github.com/failpass/failpass/internal/sandbox"
)

// setNamespaces does nothing: off Linux the sandbox has no helper.
func setNamespaces(attr *syscall.SysProcAttr, l *sandbox.Launch) {}
