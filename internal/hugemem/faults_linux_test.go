//go:build linux && !race

// The race detector's shadow memory takes 4 KiB faults of its own for
// every page the test fills.

package hugemem

import (
	"bytes"
	"os"
	"runtime/debug"
	"strconv"
	"syscall"
	"testing"
)

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

// BenchmarkFill fills a fresh 64 MiB slice, one byte a page, made by
// make (4 KiB pages where transparent huge pages are "madvise") and by
// Make: what a page fault costs here, per 4 KiB page and per huge page.
// The heap is returned to the system between ops, off the clock, so
// that every op faults its memory in.
//
//	go test -run '^$' -bench Fill -count 3 ./internal/hugemem/
func BenchmarkFill(b *testing.B) {
	const size = 64 << 20
	for _, m := range []struct {
		name string
		make func(int) []byte
	}{{"make", func(n int) []byte { return make([]byte, n) }}, {"Make", Make[byte]}} {
		b.Run(m.name, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				debug.FreeOSMemory()
				b.StartTimer()
				s := m.make(size)
				for i := 0; i < size; i += 4096 {
					s[i] = 1
				}
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N)/64, "ms/MiB")
		})
	}
}
