package main

import (
	"cmp"
	"container/heap"
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/adaptrag/adaptrag/internal/workload"
	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/retrieval/embed"
	"github.com/adaptrag/adaptrag/retrieval/memstore"
)

// benchRetrievalUsage is the usage line of bench retrieval.
const benchRetrievalUsage = "bench retrieval --n N [--dim D] [--workload clustered|isotropic|corpus:DIR] [--batch B] [--nosync] [--queries Q] [--warm=false] [--json]"

// retrievalReport is what bench retrieval measures in one run, for the
// embedded store and for an exact scan of the same vectors. Latencies are
// over NumQueries queries run one at a time, each once, after a warm-up.
type retrievalReport struct {
	Workload string `json:"workload"`
	N        int    `json:"n"`
	Dim      int    `json:"dim"`
	// Queries is the number of queries of each kind.
	Queries int `json:"queries"`

	// Dense top-50 over the main tenant (99% of the chunks).
	DenseP50 float64 `json:"dense_p50_ms"`
	DenseP99 float64 `json:"dense_p99_ms"`
	// ExactP50 is a single-goroutine scan of every vector of the tenant
	// with a size-50 heap: the reference, and the recall ground truth.
	ExactP50 float64 `json:"exact_p50_ms"`
	Recall   float64 `json:"recall_at_50"`
	// ExactRecall checks the ground truth itself: the exact scan's top 50
	// against a float64 sort of every score, on the first queries. Below
	// 1 only through ties at rank 50.
	ExactRecall float64 `json:"exact_recall_at_50"`

	// Filtered: the same queries with a source filter that about 1% of
	// the tenant's chunks match; the exact figure scans those chunks only
	// (what a payload index would let a store do).
	FilteredP50      float64 `json:"filtered_p50_ms"`
	FilteredRecall   float64 `json:"filtered_recall_at_50"`
	ExactFilteredP50 float64 `json:"exact_filtered_p50_ms"`
	// Tenant: the same queries in the scope of a tenant holding 1% of the
	// chunks, with no filter.
	TenantP50    float64 `json:"tenant_p50_ms"`
	TenantRecall float64 `json:"tenant_recall_at_50"`

	BM25P50   float64 `json:"bm25_p50_ms"`
	HybridP50 float64 `json:"hybrid_p50_ms"`

	// Ingest: Upserts of Batch chunks into a store with a directory and
	// the default compaction, one writer, each fsynced unless NoSync.
	Batch      int     `json:"batch"`
	NoSync     bool    `json:"nosync"`
	IngestPerS float64 `json:"ingest_per_s"`
	// MaxStallMs is the longest single Upsert call; Stalls counts the
	// calls over 200 ms (compactions, mostly).
	MaxStallMs float64 `json:"max_stall_ms"`
	Stalls     int     `json:"stalls_over_200ms"`

	// ReopenS is the time Open takes on the closed directory after its
	// files were dropped from the page cache (when ReopenCold; else as
	// warm as it is), ReopenWarmS a second Open right after.
	ReopenS     float64 `json:"reopen_s"`
	ReopenWarmS float64 `json:"reopen_warm_s"`
	ReopenCold  bool    `json:"reopen_cold"`
	// VerifyS is how long after the (last) reopen the store's background
	// check of what the open left unread (memstore.Store.Verified) ended:
	// the queries wait for it, so that they time searching alone.
	VerifyS float64 `json:"verify_s"`

	// RSSMiB is the resident set of the process (/proc, 0 where absent)
	// with the reopened store and after its queries, the workload
	// released; HeapMiB the live heap after a collection, for comparison.
	RSSMiB  float64 `json:"rss_mib"`
	HeapMiB float64 `json:"heap_mib"`
	// RSSSettledMiB is the resident set once the runtime has returned
	// what the collector freed (debug.FreeOSMemory): what a long-running
	// process settles to, where RSSMiB still holds the garbage of the
	// reopen and the queries.
	RSSSettledMiB     float64 `json:"rss_settled_mib"`
	DiskBytesPerChunk float64 `json:"disk_bytes_per_chunk"`

	// CPU time of the process per query (means, milliseconds) and for
	// the ingest and the cold reopen (seconds): on a shared machine the
	// latencies above include waiting for a core, these do not.
	DenseCPU    float64 `json:"dense_cpu_ms"`
	ExactCPU    float64 `json:"exact_cpu_ms"`
	FilteredCPU float64 `json:"filtered_cpu_ms"`
	BM25CPU     float64 `json:"bm25_cpu_ms"`
	HybridCPU   float64 `json:"hybrid_cpu_ms"`
	IngestCPU   float64 `json:"ingest_cpu_s"`
	ReopenCPU   float64 `json:"reopen_cpu_s"`

	// Seconds is the wall time of the whole run; LoadAvg the machine's
	// one-minute load average at its end (0 where unknown), to read the
	// latencies by.
	Seconds float64 `json:"seconds"`
	LoadAvg float64 `json:"load_avg"`
}

// benchSet is a workload made into chunks and queries.
type benchSet struct {
	name    string
	dim     int
	chunks  []retrieval.Chunk
	flat    []float32 // the chunks' vectors, contiguous, for the exact scan
	qvec    [][]float32
	qtext   []string
	weights [2]float64 // hybrid dense and sparse weights
}

// Tenants and sources of the bench chunks: chunk i belongs to the small
// tenant when i%100 == 99 (1%), to the main one otherwise; its source is
// i%101 (101 groups of about 1% each, independent of the tenant); its
// document is i/8 (eight chunks a document).
const (
	benchMainTenant  = "main"
	benchSmallTenant = "small"
	benchSources     = 101
)

func benchTenant(i int) string {
	if i%100 == 99 {
		return benchSmallTenant
	}
	return benchMainTenant
}

func benchSource(i int) string { return "s" + strconv.Itoa(i%benchSources) }

func runBenchRetrieval(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "bench retrieval")
	n := fs.Int("n", 0, "number of chunks (required)")
	dim := fs.Int("dim", 0, "vector dimension (clustered and corpus; default 384)")
	wl := fs.String("workload", "clustered", "clustered, isotropic (the peer harness's) or corpus:DIR (a retrieval set, embedded offline)")
	batch := fs.Int("batch", 1000, "chunks per Upsert while ingesting")
	noSync := fs.Bool("nosync", false, "ingest without fsync (a bulk load that could be redone)")
	queries := fs.Int("queries", workload.NumQueries, "queries of each kind (the first Q of the workload's)")
	warm := fs.Bool("warm", true, "also time a second, warm reopen")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	if _, err := parse(fs, args); err != nil {
		return err
	}
	if *n < 1 || *batch < 1 || *dim < 0 || *queries < 1 || *queries > workload.NumQueries {
		return fmt.Errorf("%w: %s (n and batch >= 1, queries 1 to %d)", errUsage, benchRetrievalUsage, workload.NumQueries)
	}
	// A terminated run cleans its temporary folder as an interrupted one
	// does (main cancels on Ctrl-C).
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM)
	defer stop()
	progress := func(format string, a ...any) {
		fmt.Fprintf(e.stderr, "bench retrieval: "+format+"\n", a...)
	}
	rep, err := benchRetrieval(ctx, benchConfig{n: *n, dim: *dim, workload: *wl, batch: *batch, noSync: *noSync, queries: *queries, warm: *warm}, progress)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(e.stdout, rep)
	}
	printRetrievalReport(e.stdout, rep)
	return nil
}

// makeBenchSet draws or loads the workload.
func makeBenchSet(ctx context.Context, n, dim int, wl string, progress func(string, ...any)) (*benchSet, error) {
	s := &benchSet{name: wl, weights: [2]float64{1, 1}}
	var docs [][]float32
	var texts []string
	switch {
	case wl == "clustered":
		progress("drawing %d clustered vectors", n)
		c := workload.NewClustered(n, workload.ClusterOptions{Dim: dim})
		l := workload.NewLexical(n)
		docs, s.qvec, texts, s.qtext = c.Docs, c.Queries, l.Docs, l.Queries
	case wl == "isotropic":
		if dim != 0 && dim != workload.Dim {
			return nil, fmt.Errorf("%w: the isotropic workload is the peer harness's, %d dimensions", errUsage, workload.Dim)
		}
		progress("drawing %d isotropic vectors", n)
		d, l := workload.NewDense(n), workload.NewLexical(n)
		// The queries share the documents' backing array: copy them, or
		// keeping them would keep every document vector alive (and in
		// the RSS) after the workload is released.
		qvec := make([][]float32, len(d.Queries))
		for i, q := range d.Queries {
			qvec[i] = slices.Clone(q)
		}
		docs, s.qvec, texts, s.qtext = d.Docs, qvec, l.Docs, l.Queries
	case strings.HasPrefix(wl, "corpus:"):
		dir := strings.TrimPrefix(wl, "corpus:")
		c, err := workload.LoadCorpus(dir, n)
		if err != nil {
			return nil, err
		}
		s.name = "corpus:" + filepath.Base(filepath.Clean(dir))
		h := embed.NewHashing(embed.HashingConfig{Dim: dim})
		s.weights[0] = retrieval.DenseWeightOf(h)
		progress("embedding %d texts of %s offline (%d from the set itself, the rest pairs of its windows)", n, dir, min(c.Unique, n))
		last := time.Now()
		docs, err = embed.EmbedAll(ctx, h, c.Docs, 1024, func(done, total int) {
			if time.Since(last) > 5*time.Second {
				last = time.Now()
				progress("embedded %d/%d", done, total)
			}
		})
		if err != nil {
			return nil, err
		}
		if s.qvec, err = h.Embed(ctx, c.Queries); err != nil {
			return nil, err
		}
		texts, s.qtext = c.Docs, c.Queries
	default:
		return nil, fmt.Errorf("%w: unknown workload %q (clustered, isotropic or corpus:DIR)", errUsage, wl)
	}
	// Drawing cannot be interrupted; stop right after it if asked to.
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.dim = len(s.qvec[0])
	s.flat = make([]float32, 0, n*s.dim)
	s.chunks = make([]retrieval.Chunk, n)
	for i := range s.chunks {
		s.flat = append(s.flat, docs[i]...)
		s.chunks[i] = retrieval.Chunk{
			ID: "c" + strconv.Itoa(i), DocID: "d" + strconv.Itoa(i/8), Tenant: benchTenant(i), Source: benchSource(i),
			ContentType: retrieval.ContentText, Text: texts[i], Vector: s.flat[i*s.dim : (i+1)*s.dim : (i+1)*s.dim],
		}
	}
	return s, nil
}

// benchConfig is what a bench retrieval run is asked for.
type benchConfig struct {
	n, dim   int
	workload string
	batch    int
	noSync   bool
	// queries is how many of the workload's queries run (0: all);
	// warm asks for the second, warm reopen.
	queries int
	warm    bool
}

// benchRetrieval runs the whole measurement in a temporary directory,
// removed on return (also when ctx is cancelled).
func benchRetrieval(ctx context.Context, c benchConfig, progress func(string, ...any)) (retrievalReport, error) {
	start := time.Now()
	n := c.n
	set, err := makeBenchSet(ctx, n, c.dim, c.workload, progress)
	if err != nil {
		return retrievalReport{}, err
	}
	if c.queries > 0 && c.queries < len(set.qvec) {
		set.qvec, set.qtext = set.qvec[:c.queries], set.qtext[:c.queries]
	}
	rep := retrievalReport{Workload: set.name, N: n, Dim: set.dim, Queries: len(set.qvec), Batch: c.batch, NoSync: c.noSync}
	tmp, err := os.MkdirTemp("", "adaptrag-bench-retrieval-*")
	if err != nil {
		return rep, fmt.Errorf("bench retrieval: %w", err)
	}
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, "store")

	if err := benchIngest(ctx, set, dir, &rep, progress); err != nil {
		return rep, err
	}
	if rep.DiskBytesPerChunk, err = diskPerChunk(dir, n); err != nil {
		return rep, err
	}

	// The ground truth and the exact scan's latencies, while the vectors
	// are still here.
	truth, err := benchExact(ctx, set, &rep, progress)
	if err != nil {
		return rep, err
	}
	queries := benchQueries(set)
	set = nil // the store holds its own copy; release the workload
	runtime.GC()
	debug.FreeOSMemory()

	progress("reopening")
	rep.ReopenCold = evictDir(dir)
	t0, cpu0 := time.Now(), workload.CPUTime()
	st, err := memstore.Open(ctx, memstore.Options{Dir: dir})
	if err != nil {
		return rep, fmt.Errorf("bench retrieval: reopen: %w", err)
	}
	rep.ReopenS = time.Since(t0).Seconds()
	rep.ReopenCPU = (workload.CPUTime() - cpu0).Seconds()
	if c.warm {
		if err := st.Close(); err != nil {
			return rep, fmt.Errorf("bench retrieval: %w", err)
		}
		st = nil
		runtime.GC()
		debug.FreeOSMemory()
		t0 = time.Now()
		st, err = memstore.Open(ctx, memstore.Options{Dir: dir})
		if err != nil {
			return rep, fmt.Errorf("bench retrieval: reopen: %w", err)
		}
		rep.ReopenWarmS = time.Since(t0).Seconds()
	}
	defer st.Close()
	if st.Len() != n {
		return rep, fmt.Errorf("bench retrieval: reopened store holds %d chunks, want %d", st.Len(), n)
	}
	progress("waiting for the store's background check")
	if rep.VerifyS, err = waitVerified(ctx, st, t0); err != nil {
		return rep, err
	}

	if err := benchSearch(ctx, st, queries, truth, &rep, progress); err != nil {
		return rep, err
	}
	rep.RSSMiB = workload.RSSMiB()
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	rep.HeapMiB = float64(ms.HeapAlloc) / (1 << 20)
	debug.FreeOSMemory()
	rep.RSSSettledMiB = workload.RSSMiB()
	runtime.KeepAlive(queries)
	runtime.KeepAlive(st)
	rep.Seconds = time.Since(start).Seconds()
	rep.LoadAvg = loadAvg()
	return rep, nil
}

// benchIngest writes every chunk into a fresh store in dir and closes it.
func benchIngest(ctx context.Context, set *benchSet, dir string, rep *retrievalReport, progress func(string, ...any)) error {
	batch := rep.Batch
	st, err := memstore.Open(ctx, memstore.Options{Dir: dir, Dim: set.dim, NoSync: rep.NoSync})
	if err != nil {
		return fmt.Errorf("bench retrieval: %w", err)
	}
	defer st.Close()
	progress("ingesting %d chunks in batches of %d (nosync %v)", len(set.chunks), batch, rep.NoSync)
	var total, longest time.Duration
	last, cpu0 := time.Now(), workload.CPUTime()
	for i := 0; i < len(set.chunks); i += batch {
		t0 := time.Now()
		if err := st.Upsert(ctx, set.chunks[i:min(i+batch, len(set.chunks))]); err != nil {
			return fmt.Errorf("bench retrieval: ingest: %w", err)
		}
		d := time.Since(t0)
		total += d
		longest = max(longest, d)
		if d > 200*time.Millisecond {
			rep.Stalls++
		}
		if time.Since(last) > 5*time.Second {
			last = time.Now()
			progress("ingested %d/%d (%.0f chunks/s so far, longest write %.0f ms)", i+batch, len(set.chunks), float64(i+batch)/total.Seconds(), ms(longest))
		}
	}
	rep.IngestCPU = (workload.CPUTime() - cpu0).Seconds()
	rep.IngestPerS = float64(len(set.chunks)) / total.Seconds()
	rep.MaxStallMs = ms(longest)
	if err := st.Close(); err != nil {
		return fmt.Errorf("bench retrieval: %w", err)
	}
	return nil
}

// diskPerChunk is the size of every file under dir divided by n.
func diskPerChunk(dir string, n int) (float64, error) {
	var size int64
	err := filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err == nil {
			size += info.Size()
		}
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("bench retrieval: %w", err)
	}
	return float64(size) / float64(n), nil
}

// benchTruth holds the exact top 50 (chunk ids) of each query, for the
// main tenant, the main tenant with the source filter, and the small
// tenant.
type benchTruth struct{ dense, filtered, tenant [][]string }

// querySource is the source the filtered variant of query q keeps.
func querySource(q int) string { return benchSource(q) }

// benchExact computes the ground truth with an exact scan and times it.
func benchExact(ctx context.Context, set *benchSet, rep *retrievalReport, progress func(string, ...any)) (benchTruth, error) {
	var mainRows, smallRows []int32
	bySource := make([][]int32, benchSources)
	for i := range set.chunks {
		if benchTenant(i) == benchSmallTenant {
			smallRows = append(smallRows, int32(i))
			continue
		}
		mainRows = append(mainRows, int32(i))
		bySource[i%benchSources] = append(bySource[i%benchSources], int32(i))
	}
	ids := func(rows []int32) []string {
		out := make([]string, len(rows))
		for i, r := range rows {
			out[i] = set.chunks[r].ID
		}
		return out
	}
	var t benchTruth
	var dense, filtered []time.Duration
	var cpu time.Duration
	progress("exact scan of %d queries over %d vectors", len(set.qvec), len(mainRows))
	last := time.Now()
	for q, v := range set.qvec {
		if err := ctx.Err(); err != nil {
			return t, err
		}
		t0, cpu0 := time.Now(), workload.CPUTime()
		top := exactTop(set.flat, set.dim, v, mainRows, workload.TopK)
		dense = append(dense, time.Since(t0))
		cpu += workload.CPUTime() - cpu0
		t.dense = append(t.dense, ids(top))
		t0 = time.Now()
		top = exactTop(set.flat, set.dim, v, bySource[q%benchSources], workload.TopK)
		filtered = append(filtered, time.Since(t0))
		t.filtered = append(t.filtered, ids(top))
		t.tenant = append(t.tenant, ids(exactTop(set.flat, set.dim, v, smallRows, workload.TopK)))
		if time.Since(last) > 5*time.Second {
			last = time.Now()
			progress("exact scan %d/%d", q+1, len(set.qvec))
		}
	}
	rep.ExactP50 = percentile(dense, 50)
	rep.ExactCPU = ms(cpu) / float64(len(set.qvec))
	rep.ExactFilteredP50 = percentile(filtered, 50)
	// The check of the ground truth: a float64 sort of every score.
	check := min(10, len(set.qvec))
	var sorted [][]string
	for _, v := range set.qvec[:check] {
		sorted = append(sorted, ids(sortTop(set.flat, set.dim, v, mainRows, workload.TopK)))
	}
	rep.ExactRecall = workload.Recall(t.dense[:check], sorted, func(s string) string { return s })
	return t, nil
}

// scored is a row and its score.
type scored struct {
	row   int32
	score float32
}

// minHeap keeps the best k rows seen, the worst on top.
type minHeap []scored

func (h minHeap) Len() int           { return len(h) }
func (h minHeap) Less(i, j int) bool { return h[i].score < h[j].score }
func (h minHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *minHeap) Push(x any)        { *h = append(*h, x.(scored)) }
func (h *minHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// exactTop scans rows of flat (vectors of dim) with a plain float32 dot
// product and returns the k best, best first: the peer harness's exact
// scan, over a row list.
func exactTop(flat []float32, dim int, q []float32, rows []int32, k int) []int32 {
	h := make(minHeap, 0, k+1)
	for _, r := range rows {
		v := flat[int(r)*dim : int(r+1)*dim]
		var s float32
		for j, x := range v {
			s += x * q[j]
		}
		if len(h) < k {
			heap.Push(&h, scored{r, s})
		} else if s > h[0].score {
			h[0] = scored{r, s}
			heap.Fix(&h, 0)
		}
	}
	out := make([]int32, len(h))
	for i := len(h) - 1; i >= 0; i-- {
		out[i] = heap.Pop(&h).(scored).row
	}
	return out
}

// sortTop scores every row in float64 and sorts them all: slow, simple,
// and independent of exactTop.
func sortTop(flat []float32, dim int, q []float32, rows []int32, k int) []int32 {
	type s64 struct {
		row   int32
		score float64
	}
	all := make([]s64, len(rows))
	for i, r := range rows {
		var s float64
		for j, x := range flat[int(r)*dim : int(r+1)*dim] {
			s += float64(x) * float64(q[j])
		}
		all[i] = s64{r, s}
	}
	slices.SortFunc(all, func(a, b s64) int { return cmp.Compare(b.score, a.score) })
	out := make([]int32, 0, k)
	for _, a := range all[:min(k, len(all))] {
		out = append(out, a.row)
	}
	return out
}

// benchQuerySet is the requests of every kind, one per query.
type benchQuerySet struct{ dense, filtered, tenant, bm25, hybrid []retrieval.Request }

func benchQueries(set *benchSet) benchQuerySet {
	var qs benchQuerySet
	main, small := retrieval.Scope{Tenant: benchMainTenant}, retrieval.Scope{Tenant: benchSmallTenant}
	for q, v := range set.qvec {
		k := workload.TopK
		qs.dense = append(qs.dense, retrieval.Request{Scope: main, Vector: v, K: k})
		qs.filtered = append(qs.filtered, retrieval.Request{Scope: main, Vector: v, K: k,
			Filter: retrieval.Filter{Must: []retrieval.Condition{{Key: retrieval.KeySource, Values: []string{querySource(q)}}}}})
		qs.tenant = append(qs.tenant, retrieval.Request{Scope: small, Vector: v, K: k})
		qs.bm25 = append(qs.bm25, retrieval.Request{Scope: main, Text: set.qtext[q], K: k})
		qs.hybrid = append(qs.hybrid, retrieval.Request{Scope: main, Text: set.qtext[q], Vector: v, K: k,
			DenseWeight: set.weights[0], SparseWeight: set.weights[1]})
	}
	return qs
}

// benchSearch runs every kind of query on st, each query once after a
// warm-up of a tenth of them, and fills the latencies and recalls.
func benchSearch(ctx context.Context, st *memstore.Store, qs benchQuerySet, t benchTruth, rep *retrievalReport, progress func(string, ...any)) error {
	// run returns the latencies, the ids found and the mean CPU time a
	// query in milliseconds.
	run := func(name string, reqs []retrieval.Request, search func(context.Context, retrieval.Request) ([]retrieval.Hit, error)) ([]time.Duration, [][]string, float64, error) {
		progress("%s queries", name)
		for _, r := range reqs[:max(1, len(reqs)/10)] {
			if _, err := search(ctx, r); err != nil {
				return nil, nil, 0, fmt.Errorf("bench retrieval: %s: %w", name, err)
			}
		}
		lat := make([]time.Duration, 0, len(reqs))
		got := make([][]string, 0, len(reqs))
		cpu0 := workload.CPUTime()
		for _, r := range reqs {
			t0 := time.Now()
			hits, err := search(ctx, r)
			lat = append(lat, time.Since(t0))
			if err != nil {
				return nil, nil, 0, fmt.Errorf("bench retrieval: %s: %w", name, err)
			}
			ids := make([]string, len(hits))
			for i, h := range hits {
				ids[i] = h.Chunk.ID
			}
			got = append(got, ids)
		}
		return lat, got, ms(workload.CPUTime()-cpu0) / float64(len(reqs)), nil
	}
	id := func(s string) string { return s }
	lat, got, cpu, err := run("dense", qs.dense, st.SearchDense)
	if err != nil {
		return err
	}
	rep.DenseP50, rep.DenseP99 = percentile(lat, 50), percentile(lat, 99)
	rep.Recall, rep.DenseCPU = workload.Recall(got, t.dense, id), cpu
	if lat, got, cpu, err = run("filtered dense", qs.filtered, st.SearchDense); err != nil {
		return err
	}
	rep.FilteredP50, rep.FilteredRecall, rep.FilteredCPU = percentile(lat, 50), workload.Recall(got, t.filtered, id), cpu
	if lat, got, _, err = run("small-tenant dense", qs.tenant, st.SearchDense); err != nil {
		return err
	}
	rep.TenantP50, rep.TenantRecall = percentile(lat, 50), workload.Recall(got, t.tenant, id)
	if lat, _, cpu, err = run("BM25", qs.bm25, st.SearchSparse); err != nil {
		return err
	}
	rep.BM25P50, rep.BM25CPU = percentile(lat, 50), cpu
	if lat, _, cpu, err = run("hybrid", qs.hybrid, st.SearchHybrid); err != nil {
		return err
	}
	rep.HybridP50, rep.HybridCPU = percentile(lat, 50), cpu
	return nil
}

// percentile returns the p-th percentile of d in milliseconds (nearest
// rank on the sorted sample; 0 for an empty one).
func percentile(d []time.Duration, p int) float64 {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return ms(s[min(len(s)-1, len(s)*p/100)])
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// waitVerified waits until st's background check has ended and returns
// the seconds since t0, or the damage the check found.
func waitVerified(ctx context.Context, st *memstore.Store, t0 time.Time) (float64, error) {
	for {
		done, damage := st.Verified()
		if damage != nil {
			return 0, fmt.Errorf("bench retrieval: the reopened store's check: %w", damage)
		}
		if done {
			return time.Since(t0).Seconds(), nil
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// printRetrievalReport writes the human form of a report.
func printRetrievalReport(w io.Writer, r retrievalReport) {
	fmt.Fprintf(w, "workload %s, n %d, dim %d (%.0f s, load average %.1f)\n", r.Workload, r.N, r.Dim, r.Seconds, r.LoadAvg)
	fmt.Fprintf(w, "dense top-50     p50 %.2f ms  p99 %.2f ms  recall@50 %.3f   (exact scan p50 %.2f ms, its check %.3f)\n", r.DenseP50, r.DenseP99, r.Recall, r.ExactP50, r.ExactRecall)
	fmt.Fprintf(w, "filtered (1%%)    p50 %.2f ms  recall@50 %.3f   (exact scan of the matching set p50 %.2f ms)\n", r.FilteredP50, r.FilteredRecall, r.ExactFilteredP50)
	fmt.Fprintf(w, "tenant (1%%)      p50 %.2f ms  recall@50 %.3f\n", r.TenantP50, r.TenantRecall)
	fmt.Fprintf(w, "BM25             p50 %.2f ms\n", r.BM25P50)
	fmt.Fprintf(w, "hybrid           p50 %.2f ms\n", r.HybridP50)
	sync := "fsynced"
	if r.NoSync {
		sync = "no fsync"
	}
	fmt.Fprintf(w, "ingest           %.0f chunks/s (batches of %d, %s), longest write %.0f ms, %d over 200 ms\n", r.IngestPerS, r.Batch, sync, r.MaxStallMs, r.Stalls)
	cold := "cold"
	if !r.ReopenCold {
		cold = "page cache not dropped"
	}
	fmt.Fprintf(w, "reopen           %.2f s (%s), %.2f s warm; background check done after %.1f s\n", r.ReopenS, cold, r.ReopenWarmS, r.VerifyS)
	fmt.Fprintf(w, "CPU a query      dense %.2f ms, exact %.2f ms, filtered %.2f ms, BM25 %.2f ms, hybrid %.2f ms; ingest %.1f s, reopen %.2f s\n",
		r.DenseCPU, r.ExactCPU, r.FilteredCPU, r.BM25CPU, r.HybridCPU, r.IngestCPU, r.ReopenCPU)
	fmt.Fprintf(w, "memory           RSS %.0f MiB (live heap %.0f MiB; settled RSS %.0f MiB), disk %.0f bytes a chunk\n", r.RSSMiB, r.HeapMiB, r.RSSSettledMiB, r.DiskBytesPerChunk)
}
