package qdrant_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/adaptrag/adaptrag/internal/workload"
	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/retrieval/qdrant"
	"github.com/adaptrag/adaptrag/retrieval/qdrant/qdranttest"
	qc "github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
)

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// loadShape sizes a load run.
type loadShape struct {
	points, dim, tenants int
	writers, readers     int // concurrent upserting and searching goroutines
	searches             int // per kind (dense, sparse, hybrid)
	faults               int // Unavailable faults injected into upserts while they run
}

// TestLoad drives the store through the real go-client against the
// in-process fake: writers upsert chunks of several tenants in batches
// (with Unavailable faults injected on the way, which the retries absorb)
// while nothing else runs, then readers run dense, sparse and hybrid
// searches scoped to random tenants. It reports upserted points/s and
// searches/s with p50/p99 latency and the process's CPU time per point
// and per search (client and fake together, which unlike the rates does
// not depend on what else shares the cores), then the CPU time of one call
// on a 16-point collection (the cost of the call itself), and fails if a point is missing, a
// search errs or returns another tenant's chunk. The figures measure this
// client, gRPC over loopback and the fake's linear scan: they bound the
// store's own overhead per call, not what a Qdrant server does (its HNSW
// search does not scan).
//
// By default it runs a short shape (1,000 points, 32 dimensions); with
// ADAPTRAG_LOADTEST=1 a long one (ADAPTRAG_LOAD_POINTS, default 10,000
// points of ADAPTRAG_LOAD_DIM = 384 dimensions and ADAPTRAG_LOAD_TENANTS =
// 20 tenants; ADAPTRAG_LOAD_SEARCHES per kind, default 300;
// ADAPTRAG_LOAD_READERS and ADAPTRAG_LOAD_WRITERS, default 8 and 4):
//
//	ADAPTRAG_LOADTEST=1 go test -run TestLoad -v ./retrieval/qdrant/
func TestLoad(t *testing.T) {
	shape := loadShape{points: 1000, dim: 32, tenants: 8, writers: 2, readers: 2, searches: 30, faults: 3}
	if os.Getenv("ADAPTRAG_LOADTEST") != "" {
		shape = loadShape{
			points:   envInt("ADAPTRAG_LOAD_POINTS", 10000),
			dim:      envInt("ADAPTRAG_LOAD_DIM", 384),
			tenants:  envInt("ADAPTRAG_LOAD_TENANTS", 20),
			writers:  envInt("ADAPTRAG_LOAD_WRITERS", 4),
			readers:  envInt("ADAPTRAG_LOAD_READERS", 8),
			searches: envInt("ADAPTRAG_LOAD_SEARCHES", 300),
			faults:   10,
		}
	}
	runLoad(t, shape)
}

var loadWords = []string{"leave", "policy", "vpn", "laptop", "invoice", "refund", "password", "holiday",
	"salary", "printer", "badge", "travel", "expense", "shift", "payroll", "contract"}

func loadChunk(rng *rand.Rand, i, dim, tenants int) retrieval.Chunk {
	v := make([]float32, dim)
	for j := range v {
		v[j] = float32(rng.NormFloat64())
	}
	text := make([]byte, 0, 160)
	for range 20 {
		text = append(text, loadWords[rng.IntN(len(loadWords))]...)
		text = append(text, ' ')
	}
	return retrieval.Chunk{ID: fmt.Sprint("c", i), DocID: fmt.Sprint("d", i/8), Position: i % 8,
		Tenant: fmt.Sprint("t", i%tenants), Source: fmt.Sprint("s", i%3), Text: string(text), Vector: v}
}

func runLoad(t *testing.T, sh loadShape) {
	srv := qdranttest.Start(t)
	ctx := context.Background()
	cfg := fakeConfig(srv, "load", sh.dim)
	cfg.PoolSize = uint(max(1, sh.readers/4))
	cfg.RetryBase, cfg.RetryMax = 5*time.Millisecond, 50*time.Millisecond
	st, err := qdrant.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	// Writers: each takes a contiguous share, upserting 2.5 batches at a
	// time as an ingester would.
	rng := rand.New(rand.NewPCG(7, 11))
	chunks := make([]retrieval.Chunk, sh.points)
	for i := range chunks {
		chunks[i] = loadChunk(rng, i, sh.dim, sh.tenants)
	}
	srv.FailNext("Upsert", codes.Unavailable, sh.faults)
	step := qdrant.DefaultBatchSize * 5 / 2
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, sh.writers+sh.readers)
	start, cpu0 := time.Now(), workload.CPUTime()
	for range sh.writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				lo := int(next.Add(int64(step))) - step
				if lo >= len(chunks) {
					return
				}
				if err := st.Upsert(ctx, chunks[lo:min(lo+step, len(chunks))]); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	upsertTime, upsertCPU := time.Since(start), workload.CPUTime()-cpu0
	select {
	case err := <-errs:
		t.Fatalf("upsert under load: %v", err)
	default:
	}
	admin, err := qc.NewClient(&qc.Config{Host: srv.Host(), Port: srv.Port(), PoolSize: 1, SkipCompatibilityCheck: true})
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if n, err := admin.Count(ctx, &qc.CountPoints{CollectionName: "load"}); err != nil || int(n) != sh.points {
		t.Fatalf("%d points stored (%v), want %d", n, err, sh.points)
	}
	t.Logf("upsert: %d points of %d dims, %d writers, batches of %d, %d faults retried: %.0f points/s (%v); CPU %.1f µs a point",
		sh.points, sh.dim, sh.writers, qdrant.DefaultBatchSize, sh.faults, float64(sh.points)/upsertTime.Seconds(), upsertTime.Round(time.Millisecond),
		float64(upsertCPU.Microseconds())/float64(sh.points))

	for _, kind := range []struct {
		name string
		fn   func(context.Context, retrieval.Request) ([]retrieval.Hit, error)
	}{{"dense", st.SearchDense}, {"sparse", st.SearchSparse}, {"hybrid", st.SearchHybrid}} {
		lat := make([]time.Duration, sh.searches)
		var n atomic.Int64
		start, cpu0 := time.Now(), workload.CPUTime()
		for r := range sh.readers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(uint64(r), 3))
				for {
					i := int(n.Add(1)) - 1
					if i >= sh.searches {
						return
					}
					q := loadChunk(rng, 0, sh.dim, 1)
					tenant := fmt.Sprint("t", rng.IntN(sh.tenants))
					t0 := time.Now()
					hits, err := kind.fn(ctx, retrieval.Request{Scope: retrieval.Scope{Tenant: tenant}, Text: q.Text, Vector: q.Vector, K: 10})
					lat[i] = time.Since(t0)
					if err != nil {
						errs <- fmt.Errorf("%s search: %w", kind.name, err)
						return
					}
					if len(hits) != 10 {
						errs <- fmt.Errorf("%s search of %s: %d hits, want 10", kind.name, tenant, len(hits))
						return
					}
					for _, h := range hits {
						if h.Chunk.Tenant != tenant {
							errs <- fmt.Errorf("%s search of %s returned a chunk of %s", kind.name, tenant, h.Chunk.Tenant)
							return
						}
					}
				}
			}()
		}
		wg.Wait()
		elapsed, cpu := time.Since(start), workload.CPUTime()-cpu0
		select {
		case err := <-errs:
			t.Fatal(err)
		default:
		}
		slices.Sort(lat)
		t.Logf("%-6s: %d searches, %d readers, top 10 of ~%d points a tenant: %.0f searches/s, p50 %v, p99 %v; CPU %v a search",
			kind.name, sh.searches, sh.readers, sh.points/sh.tenants, float64(sh.searches)/elapsed.Seconds(),
			lat[len(lat)/2].Round(time.Microsecond), lat[len(lat)*99/100].Round(time.Microsecond),
			(cpu / time.Duration(sh.searches)).Round(time.Microsecond))
	}
	dense, hybrid := callOverhead(t, srv, sh.dim, max(50, sh.searches))
	t.Logf("per call on a 16-point collection (client, gRPC, request handling): CPU %v a dense search, %v a hybrid one",
		dense.Round(time.Microsecond), hybrid.Round(time.Microsecond))
}

// callOverhead returns the process's CPU time per dense and per hybrid
// search on a collection of 16 points, where the fake's scan costs next to
// nothing: what one call costs the client, gRPC over loopback and the
// server's request handling.
func callOverhead(t *testing.T, srv *qdranttest.Server, dim, n int) (dense, hybrid time.Duration) {
	t.Helper()
	ctx := context.Background()
	st, err := qdrant.Open(ctx, fakeConfig(srv, "tiny", dim))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rng := rand.New(rand.NewPCG(5, 5))
	chunks := make([]retrieval.Chunk, 16)
	for i := range chunks {
		chunks[i] = loadChunk(rng, i, dim, 1)
	}
	if err := st.Upsert(ctx, chunks); err != nil {
		t.Fatal(err)
	}
	q := loadChunk(rng, 0, dim, 1)
	req := retrieval.Request{Scope: retrieval.Scope{Tenant: chunks[0].Tenant}, Text: q.Text, Vector: q.Vector, K: 10}
	measure := func(fn func(context.Context, retrieval.Request) ([]retrieval.Hit, error)) time.Duration {
		cpu0 := workload.CPUTime()
		for range n {
			if hits, err := fn(ctx, req); err != nil || len(hits) != 10 {
				t.Fatalf("search of the small collection = %d hits, %v", len(hits), err)
			}
		}
		return (workload.CPUTime() - cpu0) / time.Duration(n)
	}
	return measure(st.SearchDense), measure(st.SearchHybrid)
}

// BenchmarkUpsertBatch measures upserting 4,096 chunks of 384 dimensions
// through the go-client and the fake, by batch size: per-call overhead
// against message size, which is what Config.BatchSize trades.
//
//	go test -run '^$' -bench UpsertBatch -benchtime 3x ./retrieval/qdrant/
func BenchmarkUpsertBatch(b *testing.B) {
	const n, dim = 4096, 384
	rng := rand.New(rand.NewPCG(1, 2))
	chunks := make([]retrieval.Chunk, n)
	for i := range chunks {
		chunks[i] = loadChunk(rng, i, dim, 4)
	}
	for _, size := range []int{16, 64, 256, 1024} {
		b.Run(fmt.Sprint("batch=", size), func(b *testing.B) {
			srv := qdranttest.Start(b)
			cfg := fakeConfig(srv, "bench", dim)
			cfg.BatchSize = size
			st, err := qdrant.Open(context.Background(), cfg)
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			for b.Loop() {
				if err := st.Upsert(context.Background(), chunks); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "points/s")
		})
	}
}
