//go:build linux

package hugemem

import "syscall"

// supported says that Make pads and advises here.
const supported = true

// madvHugepage is MADV_HUGEPAGE, which package syscall does not name on
// every architecture.
const madvHugepage = 14

// advise asks for huge pages over the huge pages wholly inside the
// addresses [start, end) of a live heap object, which the caller holds:
// the heap does not move objects, so the addresses stay its. Memory that
// is already touched keeps its pages.
func advise(start, end uintptr) {
	lo, hi := alignUp(start, hugePage), end&^(hugePage-1)
	if lo < hi {
		_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, lo, hi-lo, madvHugepage)
	}
}
