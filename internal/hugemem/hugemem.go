// Package hugemem makes large slices that the kernel may back with huge
// pages. Filling a fresh slice of hundreds of megabytes, as opening a large
// store does, takes a page fault for every 4 KiB page: at a million chunks
// those faults were about half the CPU time of the first open in a
// process. Where the kernel backs the slice with 2 MiB pages on request
// (Linux with transparent huge pages in "madvise" mode), one fault covers
// 512 of them.
package hugemem

import "unsafe"

// minBytes is the size from which Make asks for huge pages: below it, the
// slice may share its pages with other objects.
const minBytes = 8 << 20

// Make returns a new slice of n zero values of T (as make does) and, when
// it is large, asks the kernel to back its page-aligned inside with huge
// pages. The request is advice: it never fails, and changes nothing where
// it is not supported.
func Make[T any](n int) []T {
	s := make([]T, n)
	var zero T
	if size := uintptr(n) * unsafe.Sizeof(zero); size >= minBytes {
		advise(unsafe.Pointer(unsafe.SliceData(s)), size)
	}
	return s
}
