package atomicfile

import "golang.org/x/sys/unix"

func mountTiny(dir string) error { return unix.Mount("tmpfs", dir, "tmpfs", 0, "size=16k") }
func unmount(dir string)         { unix.Unmount(dir, unix.MNT_DETACH) }
