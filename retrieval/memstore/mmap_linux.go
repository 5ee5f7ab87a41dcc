//go:build linux

package memstore

import (
	"os"
	"syscall"
)

// mapFile maps the first size bytes of f for reading, so that a load
// reads the snapshot where the page cache holds it instead of copying it
// out; unmap releases the mapping, after which nothing of it may be used.
func mapFile(f *os.File, size int64) (data []byte, unmap func() error, err error) {
	if size <= 0 || int64(int(size)) != size {
		return nil, nil, syscall.EINVAL
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	return b, func() error { return syscall.Munmap(b) }, nil
}

// mapPrivate maps the first size bytes of f copy-on-write, readable and
// writable: the process's writes stay in its own copies of the pages and
// never reach the file. unmap releases the mapping.
func mapPrivate(f *os.File, size int64) (data []byte, unmap func() error, err error) {
	if size <= 0 || int64(int(size)) != size {
		return nil, nil, syscall.EINVAL
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE)
	if err != nil {
		return nil, nil, err
	}
	return b, func() error { return syscall.Munmap(b) }, nil
}

// releaseMapped drops the pages of b, a page-aligned part of a mapping
// made by mapFile that will not be read again, from the process's
// resident set (they stay in the page cache): a load reading a large
// snapshot through its mapping does not hold all of it resident.
func releaseMapped(b []byte) { _ = syscall.Madvise(b, syscall.MADV_DONTNEED) }
