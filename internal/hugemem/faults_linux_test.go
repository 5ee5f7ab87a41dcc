//go:build linux && !race

// The race detector's shadow memory takes 4 KiB faults of its own for
// every page the test fills.

package hugemem

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// TestMakeFaultsHugePages checks what the layout is for: filling a
// slice Make returned takes about one fault a huge page, not one a
// 4 KiB page, when the kernel gives huge pages on request. It is
// skipped where it does not (transparent huge pages off, or none to be
// had just then).
//
// The fill runs in a fresh child process, on one locked thread with the
// collector off, and only that thread's faults are counted: the whole
// process's count also holds the runtime's other threads (over a
// hundred faults beside the fill in one CI run), and heap memory an
// earlier test or -count run freed comes back with its huge pages split
// into 4 KiB ones, whatever Make does. The best of three fills is kept;
// a layout that shares its huge pages takes hundreds more on every one.
func TestMakeFaultsHugePages(t *testing.T) {
	const size = 64 << 20
	if os.Getenv(faultsChild) == "1" {
		fillFaults(size)
		return
	}
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || bytes.Contains(mode, []byte("[never]")) {
		t.Skip("transparent huge pages are off")
	}
	fallback := vmstat(t, "thp_fault_fallback")
	cmd := exec.Command(os.Args[0], "-test.run=^TestMakeFaultsHugePages$", "-test.count=1")
	cmd.Env = append(os.Environ(), faultsChild+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	_, after, ok := bytes.Cut(out, []byte("faults "))
	if !ok {
		t.Fatalf("child printed no fault count:\n%s", out)
	}
	best, err := strconv.ParseInt(string(bytes.Fields(after)[0]), 10, 64)
	if err != nil {
		t.Fatalf("child's fault count: %v\n%s", err, out)
	}
	if best > size/hugePage*4+64 {
		if vmstat(t, "thp_fault_fallback") > fallback {
			t.Skipf("the kernel had no huge pages to give (%d faults)", best)
		}
		t.Errorf("filling %d MiB took at best %d faults; with huge pages it takes about %d", size>>20, best, size/hugePage)
	}
}

// faultsChild marks the child process of TestMakeFaultsHugePages.
const faultsChild = "ADAPTRAG_HUGEMEM_FAULTS_CHILD"

// fillFaults fills three slices of size bytes from Make, one byte a
// page, and prints the fewest faults a fill took.
func fillFaults(size int) {
	debug.SetGCPercent(-1)
	runtime.LockOSThread()
	best := int64(-1)
	for range 3 {
		before := threadFaults()
		s := Make[byte](size)
		for i := 0; i < size; i += 4096 {
			s[i] = 1
		}
		if f := threadFaults() - before; best < 0 || f < best {
			best = f
		}
		runtime.KeepAlive(s)
	}
	fmt.Printf("faults %d\n", best)
}

// threadFaults is the calling thread's minor page faults so far.
func threadFaults() int64 {
	var r unix.Rusage
	_ = unix.Getrusage(unix.RUSAGE_THREAD, &r)
	return int64(r.Minflt) // int32 on 32-bit
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
