package query_test

import (
	"context"
	"runtime"
	"slices"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/adaptrag/adaptrag/query"
)

// threadCPU returns the CPU time the calling thread has used
// (clock_gettime(CLOCK_THREAD_CPUTIME_ID)): unlike wall time, it does not
// grow when other processes compete for the machine's cores.
func threadCPU() time.Duration {
	var ts syscall.Timespec
	const clockThreadCPUTimeID = 3
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTimeID, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return 0
	}
	return time.Duration(ts.Nano())
}

// TestUnderstandLatency measures the offline understanding of a follow-up
// with a six-turn history (Rewrite, then Entities, Split and ShapeOf of the
// standalone query), per call: the median and 99th percentile of wall time
// and of the calling thread's CPU time. The budget is a median under 100 µs
// of CPU time; wall time is reported, as it depends on the machine's load.
func TestUnderstandLatency(t *testing.T) {
	if raceEnabled {
		t.Skip("timing is meaningless under the race detector")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	ctx := context.Background()
	var off query.Offline
	const n = 3000
	wall := make([]time.Duration, 0, n)
	cpu := make([]time.Duration, 0, n)
	for i := 0; i < n+200; i++ {
		c0, w0 := threadCPU(), time.Now()
		r, _ := off.Rewrite(ctx, benchQuestion, benchHistory)
		_ = query.Entities(r.Text)
		_ = query.Split(r.Text)
		_ = query.ShapeOf(r.Text)
		w, c := time.Since(w0), threadCPU()-c0
		if i >= 200 { // warm-up
			wall = append(wall, w)
			cpu = append(cpu, c)
		}
	}
	slices.Sort(wall)
	slices.Sort(cpu)
	p := func(xs []time.Duration, q float64) time.Duration { return xs[int(q*float64(len(xs)-1))] }
	t.Logf("understand (rewrite+entities+split+shape, 6-turn history): wall p50 %v p99 %v; thread CPU p50 %v p99 %v",
		p(wall, 0.5), p(wall, 0.99), p(cpu, 0.5), p(cpu, 0.99))
	if p(cpu, 0.5) > 100*time.Microsecond {
		t.Errorf("CPU p50 %v over the 100 µs budget", p(cpu, 0.5))
	}
}
