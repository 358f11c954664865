//go:build !linux

package atomicfile

import "errors"

func mountTiny(dir string) error { return errors.New("tmpfs is Linux only") }
func unmount(dir string)         {}
