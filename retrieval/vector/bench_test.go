package vector

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"
)

// fingerprint is FNV-1a 64 over the little-endian float32 bits of every
// vector, as the peer README defines it.
func fingerprint(vecs ...[][]float32) uint64 {
	h := fnv.New64a()
	var b [4]byte
	for _, vs := range vecs {
		for _, v := range vs {
			for _, x := range v {
				binary.LittleEndian.PutUint32(b[:], math.Float32bits(x))
				h.Write(b[:])
			}
		}
	}
	return h.Sum64()
}

func TestWorkloadFingerprint(t *testing.T) {
	w := newDense(10_000)
	if got, want := fingerprint(w.Docs, w.Queries), uint64(0x3f1d6fb32ee51673); got != want {
		t.Errorf("dense N=10000 fingerprint %#016x, want %#016x", got, want)
	}
	h := fnv.New64a()
	docs, queries := newLexical(10_000)
	for _, s := range append(docs, queries...) {
		h.Write([]byte(s + "\n"))
	}
	if got, want := h.Sum64(), uint64(0xfbe884a192af0d42); got != want {
		t.Errorf("lexical N=10000 fingerprint %#016x, want %#016x", got, want)
	}
}

var benchSizes = []int{10_000, 100_000}

// benchData caches each size's workload, its built index and exact truth for
// the whole benchmark run, as the peers' harness does.
type benchData struct {
	w     denseWorkload
	ix    *Index
	truth [][]Scored
}

var (
	benchMu    sync.Mutex
	benchCache = map[int]*benchData{}
)

func workload(n int) *benchData {
	benchMu.Lock()
	defer benchMu.Unlock()
	if d, ok := benchCache[n]; ok {
		return d
	}
	d := &benchData{w: newDense(n)}
	benchCache[n] = d
	return d
}

func build(vecs [][]float32, o Options) *Index {
	ix := New(len(vecs[0]), o)
	for i, v := range vecs {
		if err := ix.Add(uint32(i), v); err != nil {
			panic(err)
		}
	}
	return ix
}

func (d *benchData) index() *Index {
	if d.ix == nil {
		d.ix = build(d.w.Docs, Options{})
	}
	return d.ix
}

func (d *benchData) exact() [][]Scored {
	if d.truth == nil {
		ix := d.index()
		for _, q := range d.w.Queries {
			d.truth = append(d.truth, ix.SearchExact(q, benchTopK, nil))
		}
	}
	return d.truth
}

// recallAt is the mean over queries of |got ∩ want| / len(want).
func recallAt(got, want [][]Scored) float64 {
	found, total := 0, 0
	for q := range want {
		in := map[uint32]bool{}
		for _, s := range want[q] {
			in[s.ID] = true
		}
		for _, s := range got[q] {
			if in[s.ID] {
				found++
			}
		}
		total += len(want[q])
	}
	return float64(found) / float64(total)
}

// BenchmarkDense: one op = one top-50 query, cycling over the 200 queries;
// the index is built outside the timer and recall@50 is against exact search.
func BenchmarkDense(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			d := workload(n)
			ix, truth := d.index(), d.exact()
			got := make([][]Scored, len(d.w.Queries))
			b.ReportAllocs()
			cpu0 := cpuTime()
			q := 0
			for b.Loop() {
				got[q] = ix.Search(d.w.Queries[q], benchTopK, nil)
				if q++; q == len(d.w.Queries) {
					q = 0
				}
			}
			reportCPU(b, cpu0)
			for i := range got {
				if got[i] == nil {
					got[i] = ix.Search(d.w.Queries[i], benchTopK, nil)
				}
			}
			b.ReportMetric(recallAt(got, truth), "recall@50")
		})
	}
}

// BenchmarkDenseIngest: one op = building the index of N vectors. heapMB is
// HeapAlloc after GC with the index alive minus the same before the build.
func BenchmarkDenseIngest(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			d := workload(n)
			b.ReportAllocs()
			before := liveHeap()
			var ix *Index
			for b.Loop() {
				b.StopTimer()
				ix = nil
				b.StartTimer()
				ix = build(d.w.Docs, Options{})
			}
			b.ReportMetric(float64(int64(liveHeap()-before))/(1<<20), "heapMB")
			runtime.KeepAlive(ix)
		})
	}
}

// BenchmarkCrossover compares exact and approximate top-50 search on the
// dense workload at sizes around DefaultExactThreshold, to place it.
func BenchmarkCrossover(b *testing.B) {
	d := workload(10_000)
	for _, n := range []int{500, 1000, 2000, 4000, 8000} {
		approx := build(d.w.Docs[:n], Options{ExactThreshold: -1})
		for _, mode := range []string{"exact", "approx"} {
			b.Run(fmt.Sprintf("N=%d/%s", n, mode), func(b *testing.B) {
				q := 0
				for b.Loop() {
					qv := d.w.Queries[q%benchQueries]
					if mode == "exact" {
						approx.SearchExact(qv, benchTopK, nil)
					} else {
						approx.Search(qv, benchTopK, nil)
					}
					q++
				}
			})
		}
	}
}

func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// cpuTime is the process's user+system CPU time. The machine is shared, so
// wall time per op overstates the work when other processes compete for
// the cores; cpu-ns/op shows the work itself.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func reportCPU(b *testing.B, since time.Duration) {
	if b.N > 0 {
		b.ReportMetric(float64(cpuTime()-since)/float64(b.N), "cpu-ns/op")
	}
}
