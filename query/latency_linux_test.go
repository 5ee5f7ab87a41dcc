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

// BenchmarkUnderstandPercentiles measures the offline understanding of a
// follow-up with a six-turn history (Rewrite, then Entities, Split and
// ShapeOf of the standalone query), like BenchmarkUnderstand, and reports
// per call the median and 99th percentile of wall time and of the calling
// thread's CPU time (which, unlike wall time, does not grow when other
// processes compete for the cores). It asserts nothing: the figures are
// for docs/benchmarks.md.
//
//	go test -run '^$' -bench UnderstandPercentiles -benchtime 3000x ./query
func BenchmarkUnderstandPercentiles(b *testing.B) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	ctx := context.Background()
	var off query.Offline
	for range 200 { // warm-up
		r, _ := off.Rewrite(ctx, benchQuestion, benchHistory)
		_ = query.Entities(r.Text)
	}
	wall := make([]time.Duration, 0, b.N)
	cpu := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	for b.Loop() {
		c0, w0 := threadCPU(), time.Now()
		r, _ := off.Rewrite(ctx, benchQuestion, benchHistory)
		_ = query.Entities(r.Text)
		_ = query.Split(r.Text)
		_ = query.ShapeOf(r.Text)
		wall = append(wall, time.Since(w0))
		cpu = append(cpu, threadCPU()-c0)
	}
	slices.Sort(wall)
	slices.Sort(cpu)
	p := func(xs []time.Duration, q float64) float64 { return float64(xs[int(q*float64(len(xs)-1))]) / 1e3 }
	b.ReportMetric(p(wall, 0.5), "wall-p50-µs")
	b.ReportMetric(p(wall, 0.99), "wall-p99-µs")
	b.ReportMetric(p(cpu, 0.5), "cpu-p50-µs")
	b.ReportMetric(p(cpu, 0.99), "cpu-p99-µs")
}
