package main

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/adaptrag/adaptrag/retrieval/memstore"
)

// TestReopenTimes times three opens of one store in one process, with the
// CPU time and the minor page faults of each, where `adaptrag bench
// retrieval` times one cold and one warm open in the process that built
// the store. The first open in a process pays for fresh memory; the later
// ones reuse what the collector freed. Off by default (minutes and
// gigabytes at scale):
//
//	ADAPTRAG_REOPEN_DIR=/tmp/s1m ADAPTRAG_REOPEN_N=1000000 [ADAPTRAG_REOPEN_COLD=1] \
//	  go test ./cmd/adaptrag -run TestReopenTimes -v
//
// builds the clustered store of the bench (without fsync) in the
// directory unless it holds one already, then opens it; COLD drops its
// files from the page cache before the first open.
func TestReopenTimes(t *testing.T) {
	dir := os.Getenv("ADAPTRAG_REOPEN_DIR")
	if dir == "" {
		t.Skip("set ADAPTRAG_REOPEN_DIR (and ADAPTRAG_REOPEN_N to build a store there)")
	}
	ctx := context.Background()
	n, _ := strconv.Atoi(os.Getenv("ADAPTRAG_REOPEN_N"))
	if _, err := os.Stat(filepath.Join(dir, "MANIFEST")); err != nil {
		if n <= 0 {
			t.Fatalf("%s holds no store and ADAPTRAG_REOPEN_N is not set", dir)
		}
		set, err := makeBenchSet(ctx, n, 384, "clustered", t.Logf)
		if err != nil {
			t.Fatal(err)
		}
		rep := retrievalReport{Batch: 1000, NoSync: true}
		if err := benchIngest(ctx, set, dir, &rep, t.Logf); err != nil {
			t.Fatal(err)
		}
	}
	usage := func() (user, sys time.Duration, minflt int64) {
		var r syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &r); err != nil {
			t.Fatal(err)
		}
		return time.Duration(r.Utime.Nano()), time.Duration(r.Stime.Nano()), int64(r.Minflt)
	}
	want := -1
	for i := range 3 {
		runtime.GC()
		debug.FreeOSMemory()
		if i == 0 && os.Getenv("ADAPTRAG_REOPEN_COLD") != "" && !evictDir(dir) {
			t.Log("could not drop every file from the page cache")
		}
		u0, s0, f0 := usage()
		start := time.Now()
		st, err := memstore.Open(ctx, memstore.Options{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		wall := time.Since(start)
		u1, s1, f1 := usage()
		t.Logf("open %d: %.2f s, user %.2f s, system %.2f s, %d minor faults, %d chunks",
			i, wall.Seconds(), (u1 - u0).Seconds(), (s1 - s0).Seconds(), f1-f0, st.Len())
		if want < 0 {
			want = st.Len()
		}
		if st.Len() != want || n > 0 && st.Len() != n {
			t.Fatalf("open %d holds %d chunks, want %d", i, st.Len(), max(want, n))
		}
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
