// Package hugemem makes large slices that the kernel may back with huge
// pages. Filling a fresh slice of hundreds of megabytes, as opening a large
// store does, takes a page fault for every 4 KiB page: at a million chunks
// those faults were about half the CPU time of the first open in a
// process. Where the kernel backs the slice with 2 MiB pages on request
// (Linux with transparent huge pages in "madvise" mode), one fault covers
// 512 of them.
package hugemem

import "unsafe"

// minBytes is the size from which Make asks for huge pages.
const minBytes = 2 << 20

// hugePage is the size of the huge pages asked for.
const hugePage = 2 << 20

// Make returns a new slice of n zero values of T (as make does) and, when
// it is large and the system can back memory with huge pages, asks for
// them. The slice then starts on a huge-page boundary and owns every huge
// page it covers: where it began part-way into one, as the heap places it,
// the kernel could back neither that page nor the one it ends in with a
// huge page (their other bytes belong to other objects), and on a heap
// left fragmented by earlier work (a store reopened after a large ingest)
// those two edges took up to a thousand 4 KiB faults a slice, at about
// 11 us each on a virtual machine. The price is address space that is
// never touched (up to two huge pages a slice) and, when the last huge
// page is more than half used, its unused rest. The request is advice: it
// never fails, and changes nothing where it is not supported.
func Make[T any](n int) []T {
	var zero T
	esz := unsafe.Sizeof(zero)
	if !supported || esz == 0 || n < 0 || uintptr(n) > maxBytes/esz || uintptr(n)*esz < minBytes {
		return make([]T, n)
	}
	size := uintptr(n) * esz
	pad := int((hugePage + esz - 1) / esz) // elements spanning a huge page
	s := make([]T, n+2*pad)
	base := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
	// The first element at or after the first huge-page boundary: at the
	// boundary itself when esz divides the heap's alignment.
	first := (alignUp(base, hugePage) - base + esz - 1) / esz
	s = s[first : first+uintptr(n) : first+uintptr(n)]
	start := base + first*esz
	end := start + size
	if rest := end % hugePage; rest > hugePage/2 {
		// The last huge page is mostly the slice's: take it whole (the
		// padding behind the slice covers it).
		end = alignUp(end, hugePage)
	}
	advise(start, end)
	return s
}

// maxBytes bounds the slices Make pads, far above any it is asked for:
// 1 TiB where a pointer has 64 bits, 1 GiB where it has 32 (so that the
// padded size fits an int there too).
const maxBytes = 1 << (30 + 10*(^uintptr(0)>>63))

func alignUp(p, a uintptr) uintptr { return (p + a - 1) &^ (a - 1) }
