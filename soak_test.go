package adaptrag_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/adaptrag/adaptrag"
	"github.com/adaptrag/adaptrag/ingest"
	"github.com/adaptrag/adaptrag/kb"
	"github.com/adaptrag/adaptrag/plan"
	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/retrieval/embed"
	"github.com/adaptrag/adaptrag/retrieval/memstore"
)

// soakEnv sets the soak's duration (a Go duration, e.g. 10m).
const soakEnv = "ADAPTRAG_SOAK"

var soakTopics = []string{"annual leave", "travel claims", "vpn access", "laptop refresh", "expense approval", "parental leave"}

// soakDoc writes version v of document i.
func soakDoc(dir string, i, v int) (string, error) {
	r := rand.New(rand.NewPCG(uint64(i), uint64(v)))
	topic := soakTopics[i%len(soakTopics)]
	var b strings.Builder
	fmt.Fprintf(&b, "# %s %d\n\n", topic, i)
	for p := range 1 + r.IntN(5) {
		fmt.Fprintf(&b, "## %s rule %d\n\nRevision %d of the %s rules: requests take %d days, approved by the %s desk. %s\n\n",
			topic, p, v, topic, 1+r.IntN(30), []string{"hr", "it", "finance"}[r.IntN(3)], strings.Repeat("More detail follows here. ", 5+r.IntN(10)))
	}
	path := filepath.Join(dir, fmt.Sprintf("doc%02d.md", i))
	return path, os.WriteFile(path, []byte(b.String()), 0o644)
}

// soakState is what the writer has acknowledged.
type soakState struct {
	mu      sync.Mutex
	acked   map[string]int    // document id -> last acknowledged version
	version map[string]int    // content hash -> version
	chunks  map[string]int    // content hash -> chunk count
	hashOf  map[string]string // document id -> hash of the last acknowledged version
}

func (s *soakState) snapshot() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.acked))
	for k, v := range s.acked {
		out[k] = v
	}
	return out
}

// The soak: a writer edits and re-ingests documents into an embedded store
// on disk (compacting often) while readers ask and search through a
// pipeline on read-only opens of the same store, refreshed as they go. No
// request fails, every version the writer acknowledged is visible after
// the next Refresh (never an older one, never half of one), and afterwards
// neither goroutines nor the heap have grown. The duration is 3s;
// ADAPTRAG_SOAK=10m runs longer.
func TestSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("soak skipped in -short mode")
	}
	d := 3 * time.Second
	if v := os.Getenv(soakEnv); v != "" {
		var err error
		if d, err = time.ParseDuration(v); err != nil || d <= 0 {
			t.Fatalf("%s=%q: want a duration", soakEnv, v)
		}
	}
	ctx := context.Background()
	root := t.TempDir()
	src := filepath.Join(root, "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	emb := embed.NewHashing(embed.HashingConfig{})
	goroutines0 := runtime.NumGoroutine()

	// The writer's stores, compacting every 256 KiB so that readers meet
	// compactions too.
	open := func(name string) *memstore.Store {
		s, err := memstore.Open(ctx, memstore.Options{Dir: filepath.Join(root, "kb", name), Dim: emb.Dim(), CompactBytes: 256 << 10})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	wdocs, wfaq := open("docs"), open("faq")
	target := ingest.Target{Docs: wdocs, FAQ: wfaq}
	st := &soakState{acked: map[string]int{}, version: map[string]int{}, chunks: map[string]int{}, hashOf: map[string]string{}}
	const nDocs = 12
	versions := make([]int, nDocs)
	write := func(i int) error {
		versions[i]++
		path, err := soakDoc(src, i, versions[i])
		if err != nil {
			return err
		}
		rep, err := ingest.Ingest(ctx, target, []string{path}, ingest.Options{Embedder: emb})
		if err == nil {
			err = rep.Err()
		}
		if err != nil {
			return fmt.Errorf("ingest %s: %w", path, err)
		}
		abs, _ := filepath.EvalSymlinks(path)
		id := ingest.FileDocID(abs)
		hash := contentHashOf(t, path)
		st.mu.Lock()
		st.acked[id], st.version[hash], st.chunks[hash], st.hashOf[id] = versions[i], versions[i], rep.Chunks, hash
		st.mu.Unlock()
		return nil
	}
	for i := range nDocs {
		if err := write(i); err != nil {
			t.Fatal(err)
		}
	}

	// The readers' knowledge base: opened read-only, as ask and serve do.
	rk, err := kb.Open(ctx, "embedded:"+filepath.Join(root, "kb"), kb.Options{Dim: emb.Dim()})
	if err != nil {
		t.Fatal(err)
	}
	rdocs := rk.Docs.(*memstore.Store)
	p, err := adaptrag.New(ctx, adaptrag.Deps{Docs: rk.Docs, FAQ: rk.FAQ, Embedder: emb}, adaptrag.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Warm up, so that what is built once is not taken for growth.
	for _, q := range []string{"How many days do annual leave requests take?", "Compare travel claims and vpn access"} {
		if _, err := p.Ask(ctx, adaptrag.Request{Question: q}); err != nil {
			t.Fatal(err)
		}
	}
	heap1, goroutines1 := liveHeap(), runtime.NumGoroutine()

	deadline := time.Now().Add(d)
	var served, refreshes, writes, checks atomic.Int64
	errs := make(chan error, 16)
	var failures atomic.Int64
	report := func(err error) {
		failures.Add(1)
		select {
		case errs <- err:
		default:
		}
	}
	var wg sync.WaitGroup
	// The writer: edits a random document, or re-ingests the whole folder.
	wg.Go(func() {
		r := rand.New(rand.NewPCG(1, 1))
		for time.Now().Before(deadline) {
			if r.IntN(10) == 0 {
				rep, err := ingest.Ingest(ctx, target, []string{src}, ingest.Options{Embedder: emb})
				if err == nil {
					err = rep.Err()
				}
				if err != nil {
					report(fmt.Errorf("re-ingest: %w", err))
					return
				}
			} else if err := write(r.IntN(nDocs)); err != nil {
				report(err)
				return
			}
			writes.Add(1)
		}
	})
	// The refresher: after each Refresh, every version acknowledged before
	// it is visible, whole.
	wg.Go(func() {
		for time.Now().Before(deadline) {
			before := st.snapshot()
			if err := rdocs.Refresh(ctx); err != nil {
				report(fmt.Errorf("refresh: %w", err))
				return
			}
			refreshes.Add(1)
			if err := checkVisible(ctx, rdocs, emb, st, before); err != nil {
				report(err)
				return
			}
			checks.Add(1)
		}
	})
	// The readers: asks and searches of every kind.
	for i := range 4 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(2, uint64(i)))
			for time.Now().Before(deadline) {
				topic := soakTopics[r.IntN(len(soakTopics))]
				var res *adaptrag.Result
				var err error
				switch r.IntN(3) {
				case 0:
					res, err = p.Ask(ctx, adaptrag.Request{Question: fmt.Sprintf("How many days do %s requests take?", topic)})
				case 1:
					res, err = p.Ask(ctx, adaptrag.Request{Question: fmt.Sprintf("Compare the %s rules and the travel claims rules", topic)})
				default:
					res, err = p.Search(ctx, adaptrag.SearchRequest{Query: topic + " approval desk", K: 1 + r.IntN(10), Mode: []plan.Mode{plan.ModeDense, plan.ModeHybrid}[r.IntN(2)]})
				}
				if err == nil {
					_, err = json.Marshal(res)
				}
				if err != nil {
					report(fmt.Errorf("reader: %w", err))
					return
				}
				served.Add(1)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// Every acknowledged write is visible after a last Refresh.
	if err := rdocs.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if err := checkVisible(ctx, rdocs, emb, st, st.snapshot()); err != nil {
		t.Error(err)
	}
	st.mu.Lock()
	for id, h := range st.hashOf {
		if err := checkExact(ctx, rdocs, emb, id, h, st.chunks[h]); err != nil {
			t.Error(err)
		}
	}
	// The test's own record of every version it wrote (two map entries
	// per write) grows with the writes; drop it so that only what the
	// store, the pipeline and the requests left behind is measured.
	st.version, st.chunks = nil, nil
	st.mu.Unlock()

	// A write may have left a compaction or a table's growth running in the
	// background; those end on their own, a leak does not.
	goroutines2 := settledGoroutines(goroutines1)
	heap2 := liveHeap()
	if goroutines2 > goroutines1 {
		t.Errorf("goroutines grew from %d to %d", goroutines1, goroutines2)
	}
	// The stores hold as many documents as before; what a request or a
	// write leaves behind would add up over thousands of them.
	if grow := int64(heap2) - int64(heap1); grow > 2<<20 && float64(heap2) > 1.5*float64(heap1) {
		t.Errorf("the live heap grew from %d to %d bytes", heap1, heap2)
	}
	for _, c := range []func() error{rk.Close, wdocs.Close, wfaq.Close} {
		if err := c(); err != nil {
			t.Error(err)
		}
	}
	p = nil
	if g := settledGoroutines(goroutines0); g > goroutines0 {
		t.Errorf("%d goroutines after closing everything, %d before opening", g, goroutines0)
	}
	t.Logf("soak: %v, %d asks and searches served, %d writes acknowledged, %d refreshes (%d visibility checks), %d errors; live heap %d -> %d KiB, goroutines %d -> %d",
		d, served.Load(), writes.Load(), refreshes.Load(), checks.Load(), failures.Load(), heap1>>10, heap2>>10, goroutines1, goroutines2)
}

// settledGoroutines returns the number of goroutines once it is at most
// want, or after two seconds of waiting for it to get there.
func settledGoroutines(want int) int {
	deadline := time.Now().Add(2 * time.Second)
	for {
		g := runtime.NumGoroutine()
		if g <= want || time.Now().After(deadline) {
			return g
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// liveHeap returns the bytes of live heap after a full collection.
func liveHeap() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// contentHashOf is the MetaContentHash ingest gives the file at path:
// the SHA-256 of its bytes.
func contentHashOf(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("sha256:%x", sha256.Sum256(b))
}

// visible returns each document's chunks as the reader sees them, by
// content hash: a document with two hashes is half-replaced.
func visible(ctx context.Context, s retrieval.Searcher, emb retrieval.Embedder) (map[string]map[string]int, error) {
	vs, err := emb.Embed(ctx, []string{"any"})
	if err != nil {
		return nil, err
	}
	hits, err := s.SearchDense(ctx, retrieval.Request{Vector: vs[0], K: 100000})
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]int{}
	seen := map[string]bool{}
	for _, h := range hits {
		if seen[h.Chunk.ID] {
			return nil, fmt.Errorf("chunk %s seen twice", h.Chunk.ID)
		}
		seen[h.Chunk.ID] = true
		if out[h.Chunk.DocID] == nil {
			out[h.Chunk.DocID] = map[string]int{}
		}
		out[h.Chunk.DocID][h.Chunk.Meta[retrieval.MetaContentHash]]++
	}
	return out, nil
}

// checkVisible checks that every document shows one whole version, no
// older than the one acknowledged before the Refresh (before).
func checkVisible(ctx context.Context, s retrieval.Searcher, emb retrieval.Embedder, st *soakState, before map[string]int) error {
	docs, err := visible(ctx, s, emb)
	if err != nil {
		return err
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	for id, want := range before {
		hashes := docs[id]
		if len(hashes) != 1 {
			return fmt.Errorf("%s shows %d versions after Refresh (%v), want one", id, len(hashes), hashes)
		}
		for h, n := range hashes {
			v, known := st.version[h]
			if known && v < want {
				return fmt.Errorf("%s shows version %d after Refresh, but version %d was acknowledged before it", id, v, want)
			}
			if c, ok := st.chunks[h]; ok && c != n {
				return fmt.Errorf("%s shows %d chunks of version %d, which has %d", id, n, v, c)
			}
		}
	}
	return nil
}

func checkExact(ctx context.Context, s retrieval.Searcher, emb retrieval.Embedder, id, hash string, chunks int) error {
	docs, err := visible(ctx, s, emb)
	if err != nil {
		return err
	}
	if got := docs[id]; len(got) != 1 || got[hash] != chunks {
		return fmt.Errorf("%s shows %v after the last Refresh, want %d chunks of %s", id, got, chunks, hash)
	}
	return nil
}
