package memstore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/adaptrag/adaptrag/internal/workload"
	"github.com/adaptrag/adaptrag/retrieval"
)

// TestScale is the scale harness (opt-in: ADAPTRAG_SCALE=100000,300000,
// ADAPTRAG_SCALE_TENANTS=0 skips the shared-tenant store). For each n it
// ingests the synthetic workload into a durable store in a temporary
// directory by Upserts of 1000 (default options: fsync, automatic
// compaction) and reports ingest chunks/s and the longest Upsert (the
// writer stall), then closes and reopens it and reports the reopen time and
// the process RSS, then searches it: dense top-50 unfiltered and with a
// source, a document and (in a second store where every chunk has one of
// 100 tenants) a tenant filter, each admitting 1% of the chunks, with p50
// and recall@50 against an exact filtered scan, and BM25 the same way.
func TestScale(t *testing.T) {
	env := os.Getenv("ADAPTRAG_SCALE")
	if env == "" {
		t.Skip("set ADAPTRAG_SCALE=100000[,300000,...] to run the scale harness")
	}
	for _, f := range strings.Split(env, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1000 {
			t.Fatalf("ADAPTRAG_SCALE: bad size %q", f)
		}
		scaleRun(t, n, false)
		if os.Getenv("ADAPTRAG_SCALE_TENANTS") != "0" {
			scaleRun(t, n, true)
		}
	}
}

func scaleRun(t *testing.T, n int, tenants bool) {
	ctx := context.Background()
	dir := t.TempDir()
	q := workload.NewDense(0).Queries // drawn for n = 0: independent of n
	lexQ := workload.NewLexical(0).Queries
	var upserts []time.Duration
	ingest := func() (float64, time.Duration, int) {
		d, l := workload.NewDense(n), workload.NewLexical(n)
		s, err := Open(ctx, Options{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		var worst time.Duration
		var stalls int
		t0 := time.Now()
		batch := make([]retrieval.Chunk, 0, 1000)
		for i := 0; i < n; i += 1000 {
			batch = batch[:0]
			for j := i; j < min(i+1000, n); j++ {
				batch = append(batch, scaleChunk(j, tenants, l.Docs[j], d.Docs[j]))
			}
			t1 := time.Now()
			if err := s.Upsert(ctx, batch); err != nil {
				t.Fatal(err)
			}
			el := time.Since(t1)
			upserts = append(upserts, el)
			if el > 200*time.Millisecond {
				stalls++
			}
			worst = max(worst, el)
		}
		return float64(n) / time.Since(t0).Seconds(), worst, stalls
	}
	cpu0 := workload.CPUTime()
	rate, worst, stalls := ingest()
	ingestCPU := workload.CPUTime() - cpu0
	runtime.GC()
	debug.FreeOSMemory()
	cpu0 = workload.CPUTime()
	t0 := time.Now()
	s, err := Open(ctx, Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	reopen := time.Since(t0)
	reopenCPU := workload.CPUTime() - cpu0
	runtime.GC()
	debug.FreeOSMemory()
	rss := int(workload.RSSMiB())
	disk := dirBytes(t, dir)
	name := fmt.Sprintf("n=%d", n)
	if tenants {
		name += " (100 tenants)"
	}
	// CPU times beside wall times: on a shared machine the wall time says
	// as much about the other processes as about this one.
	t.Logf("%s: ingest %.0f chunks/s (%.0f per CPU-second), Upsert of 1000 p50 %v, longest %v (%d over 200 ms), reopen %.2f s (%.2f CPU-s), RSS %d MiB, %.0f bytes on disk a chunk",
		name, rate, float64(n)/ingestCPU.Seconds(), pct(upserts, 50).Round(time.Millisecond), worst.Round(time.Millisecond), stalls,
		reopen.Seconds(), reopenCPU.Seconds(), rss, float64(disk)/float64(n))

	type filt struct {
		name   string
		scope  string
		filter retrieval.Filter
	}
	var fs []filt
	if tenants {
		fs = append(fs, filt{"tenant 1%", "t7", retrieval.Filter{}})
	} else {
		var docs []string
		for d := 0; d < (n+7)/8; d += 100 {
			docs = append(docs, "d"+strconv.Itoa(d))
		}
		fs = append(fs,
			filt{"none", "bench", retrieval.Filter{}},
			filt{"source 1%", "bench", retrieval.Filter{Must: []retrieval.Condition{{Key: retrieval.KeySource, Values: []string{"s7"}}}}},
			filt{"documents 1%", "bench", retrieval.Filter{Must: []retrieval.Condition{{Key: retrieval.KeyDocID, Values: docs}}}},
		)
	}
	for _, f := range fs {
		var dense, sparse []time.Duration
		var denseCPU time.Duration
		var got, want [][]string
		for i := range q {
			req := retrieval.Request{Scope: retrieval.Scope{Tenant: f.scope}, Filter: f.filter, Vector: q[i], Text: lexQ[i], K: workload.TopK}
			c1, t1 := workload.CPUTime(), time.Now()
			hits, err := s.SearchDense(ctx, req)
			dense = append(dense, time.Since(t1))
			denseCPU += workload.CPUTime() - c1
			if err != nil {
				t.Fatal(err)
			}
			t1 = time.Now()
			if _, err := s.SearchSparse(ctx, req); err != nil {
				t.Fatal(err)
			}
			sparse = append(sparse, time.Since(t1))
			s.mu.RLock()
			exact := s.vec.SearchExact(q[i], workload.TopK, naiveAccept(s, &req))
			var w []string
			for _, e := range exact {
				w = append(w, s.recs[e.ID].ID)
			}
			s.mu.RUnlock()
			var g []string
			for _, h := range hits {
				g = append(g, h.Chunk.ID)
			}
			got, want = append(got, g), append(want, w)
		}
		t.Logf("%s, filter %s: dense p50 %.2f ms p99 %.2f ms (mean %.2f CPU-ms) recall@50 %.3f; BM25 p50 %.2f ms",
			name, f.name, ms(pct(dense, 50)), ms(pct(dense, 99)), ms(denseCPU)/float64(len(q)), workload.Recall(got, want, func(x string) string { return x }), ms(pct(sparse, 50)))
	}
}

// scaleChunk is workload document j: 100 sources (1% each), documents of 8
// chunks, and with tenants one of 100 tenants (1% each) instead of one.
func scaleChunk(j int, tenants bool, text string, v []float32) retrieval.Chunk {
	c := retrieval.Chunk{
		ID: "c" + strconv.Itoa(j), DocID: "d" + strconv.Itoa(j/8), Tenant: "bench", Source: "s" + strconv.Itoa(j%100),
		ContentType: retrieval.ContentText, Text: text, Vector: v,
	}
	if tenants {
		c.Tenant = "t" + strconv.Itoa((j/8)%100)
	}
	return c
}

func pct(d []time.Duration, p int) time.Duration {
	d = slices.Clone(d)
	slices.Sort(d)
	return d[min(len(d)-1, len(d)*p/100)]
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

func dirBytes(t *testing.T, dir string) int64 {
	var total int64
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if info, err := os.Stat(filepath.Join(dir, e.Name())); err == nil {
			total += info.Size()
		}
	}
	return total
}
