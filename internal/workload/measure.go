package workload

import "runtime"

// HeapMB runs build and returns how much the live heap grew over it, in
// MiB, as the peer harness defines heapMB: runtime.ReadMemStats HeapAlloc
// after a runtime.GC, taken after build with what it built still
// reachable, minus the same figure taken just before. build must store
// what it builds somewhere that outlives the call (a variable of the
// caller, kept alive with runtime.KeepAlive after HeapMB returns), or the
// collector frees it before it is measured. The result is negative when
// the heap shrank.
func HeapMB(build func()) float64 {
	before := liveHeap()
	build()
	return float64(int64(liveHeap()-before)) / (1 << 20)
}

// liveHeap is HeapAlloc right after a collection: the live heap.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// Recall is recall@k over a batch of queries: the fraction of all wanted
// results (want[q], usually the exact top k of query q) that appear in
// got[q], with id giving a result's identity. When every want[q] holds k
// results this is the mean over queries of |got[q] ∩ want[q]| / k, the
// peer harness's recall@50. A result repeated in got[q] counts once, a
// missing got[q] finds nothing, and an empty want gives 1: nothing was
// missed.
func Recall[T any, K comparable](got, want [][]T, id func(T) K) float64 {
	found, total := 0, 0
	for q := range want {
		in := make(map[K]bool, len(want[q]))
		for _, w := range want[q] {
			in[id(w)] = true
		}
		total += len(in)
		if q >= len(got) {
			continue
		}
		for _, g := range got[q] {
			if k := id(g); in[k] {
				found++
				delete(in, k)
			}
		}
	}
	if total == 0 {
		return 1
	}
	return float64(found) / float64(total)
}
