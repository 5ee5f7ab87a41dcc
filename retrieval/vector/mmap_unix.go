//go:build linux || darwin || freebsd

package vector

import (
	"os"
	"syscall"
)

// mapFile maps n bytes of f from off, copy-on-write: the process's writes
// to them stay in its own pages and never reach the file. The second
// result unmaps them; nothing may read them after.
func mapFile(f *os.File, off int64, n int) ([]byte, func() error, error) {
	page := int64(os.Getpagesize())
	at := off &^ (page - 1)
	m, err := syscall.Mmap(int(f.Fd()), at, int(off-at)+n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE)
	if err != nil {
		return nil, nil, err
	}
	return m[off-at:], func() error { return syscall.Munmap(m) }, nil
}
