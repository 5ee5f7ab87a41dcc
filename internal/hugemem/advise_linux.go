//go:build linux

package hugemem

import (
	"syscall"
	"unsafe"
)

const hugePage = 2 << 20

// madvHugepage is MADV_HUGEPAGE, which package syscall does not name on
// every architecture.
const madvHugepage = 14

// advise asks for huge pages over the 2 MiB pages wholly inside the size
// bytes at p. Memory that is already touched keeps its pages.
func advise(p unsafe.Pointer, size uintptr) {
	start := uintptr(p)
	lo := (start + hugePage - 1) &^ (hugePage - 1)
	hi := (start + size) &^ (hugePage - 1)
	if lo >= hi {
		return
	}
	b := unsafe.Slice((*byte)(unsafe.Add(p, lo-start)), hi-lo)
	_ = syscall.Madvise(b, madvHugepage)
}
