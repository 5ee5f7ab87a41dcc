//go:build linux

package memstore

import (
	"os"
	"syscall"
	"unsafe"
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

// releaseMapped drops the pages of b, a page-aligned part of a mapping
// made by mapFile that will not be read again, from the process's
// resident set (they stay in the page cache): a load reading a large
// snapshot through its mapping does not hold all of it resident.
func releaseMapped(b []byte) { _ = syscall.Madvise(b, syscall.MADV_DONTNEED) }

// hugeBytes returns n zero bytes that the kernel backs with huge pages
// where it can (MADV_HUGEPAGE on the page-aligned inside of a fresh
// allocation, which a large one is, untouched yet): filling 300 MB of 4 KiB
// pages took some 75,000 page faults.
func hugeBytes(n int) []byte {
	b := make([]byte, n)
	const huge = 2 << 20
	if n < 2*huge {
		return b
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo := int((p+huge-1)&^(huge-1) - p)
	hi := int((p+uintptr(n))&^(huge-1) - p)
	if lo < hi {
		_ = syscall.Madvise(b[lo:hi], madvHugepage)
	}
	return b
}

// madvHugepage is MADV_HUGEPAGE, which package syscall does not name on
// every architecture.
const madvHugepage = 14
