package atomicfile

import "golang.org/x/sys/unix"

// renameExchange swaps two paths in one step (Linux 3.15 and later;
// EINVAL where the filesystem cannot).
func renameExchange(a, b string) error {
	return unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
}
