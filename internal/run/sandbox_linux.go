package run

import (
	"syscall"

	"github.com/failpass/failpass/internal/sandbox"
)

// setNamespaces adds the helper's namespaces (and user-namespace id maps
// when failpass is not root) to the process group and Pdeathsig Run sets.
func setNamespaces(attr *syscall.SysProcAttr, l *sandbox.Launch) {
	attr.Cloneflags |= l.Cloneflags
	attr.UidMappings, attr.GidMappings = l.UidMappings, l.GidMappings
	attr.GidMappingsEnableSetgroups = false
}
