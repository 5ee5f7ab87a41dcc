//go:build linux

package hugemem

import (
	"strconv"
	"testing"
	"unsafe"
)

// TestMakeStartsOnHugePage checks the layout Make promises where huge
// pages can be asked for: the slice starts at a huge-page boundary (or
// within one element of it, for an element size that does not divide
// it), holds exactly n elements and cannot grow into its padding.
func TestMakeStartsOnHugePage(t *testing.T) {
	check := func(name string, start uintptr, esz uintptr, n, c int) {
		t.Helper()
		if off := start % hugePage; off >= esz {
			t.Errorf("%s: starts %d bytes past a huge-page boundary", name, off)
		}
		if c != n {
			t.Errorf("%s: cap %d, want %d", name, c, n)
		}
	}
	for _, n := range []int{minBytes / 8, minBytes/8 + 1, 5 << 20 / 8, 3 * minBytes} {
		s := Make[uint64](n)
		check("uint64 "+strconv.Itoa(n), uintptr(unsafe.Pointer(unsafe.SliceData(s))), 8, n, cap(s))
		s[0], s[n-1] = 1, 2
	}
	type rec struct {
		p *int
		s string
		b [13]byte
	}
	nr := minBytes/int(unsafe.Sizeof(rec{})) + 7 // 40 bytes a rec on 64-bit, 28 on 32-bit
	r := Make[rec](nr)
	check("rec", uintptr(unsafe.Pointer(unsafe.SliceData(r))), unsafe.Sizeof(rec{}), nr, cap(r))
	if b := Make[byte](minBytes - 1); len(b) != minBytes-1 || cap(b) != minBytes-1 {
		t.Errorf("small slice: len %d cap %d", len(b), cap(b))
	}
}
