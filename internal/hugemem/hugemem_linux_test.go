//go:build linux

package hugemem

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
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
	r := Make[rec](minBytes/40 + 7)
	check("rec", uintptr(unsafe.Pointer(unsafe.SliceData(r))), unsafe.Sizeof(rec{}), minBytes/40+7, cap(r))
	if b := Make[byte](minBytes - 1); len(b) != minBytes-1 || cap(b) != minBytes-1 {
		t.Errorf("small slice: len %d cap %d", len(b), cap(b))
	}
}

// TestMakeFaultsHugePages checks what the layout is for: filling a
// slice Make returned takes about one fault a huge page, not one a
// 4 KiB page, when the kernel gives huge pages on request. It is
// skipped where it does not (transparent huge pages off, or none to be
// had just then).
func TestMakeFaultsHugePages(t *testing.T) {
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || bytes.Contains(mode, []byte("[never]")) {
		t.Skip("transparent huge pages are off")
	}
	const size = 64 << 20
	fallback := vmstat(t, "thp_fault_fallback")
	before := minorFaults()
	s := Make[byte](size)
	for i := 0; i < size; i += 4096 {
		s[i] = 1
	}
	faults := minorFaults() - before
	if faults > size/hugePage*4+64 {
		if vmstat(t, "thp_fault_fallback") > fallback {
			t.Skipf("the kernel had no huge pages to give (%d faults)", faults)
		}
		t.Errorf("filling %d MiB took %d faults; with huge pages it takes about %d", size>>20, faults, size/hugePage)
	}
}

func minorFaults() int64 {
	var r syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r)
	return r.Minflt
}

func vmstat(t *testing.T, name string) int64 {
	b, err := os.ReadFile("/proc/vmstat")
	if err != nil {
		t.Skip(err)
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		if k, v, ok := bytes.Cut(line, []byte(" ")); ok && string(k) == name {
			n, _ := strconv.ParseInt(string(v), 10, 64)
			return n
		}
	}
	return 0
}
