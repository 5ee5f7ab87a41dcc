package retrievaltest

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

	"github.com/adaptrag/adaptrag/retrieval"
)

// RoundsEnv names the environment variable that raises the number of
// random corpora TenantIsolation tries (and the callers that read it).
const RoundsEnv = "ADAPTRAG_TENANT_ROUNDS"

// Rounds returns $ADAPTRAG_TENANT_ROUNDS when it is a positive number,
// else def.
func Rounds(def int) int {
	if n, err := strconv.Atoi(os.Getenv(RoundsEnv)); err == nil && n > 0 {
		return n
	}
	return def
}

// TenantConfig tunes TenantIsolation; zero fields take the defaults.
type TenantConfig struct {
	Seed    uint64 // of the random corpora, tenants and queries (default 1)
	Rounds  int    // random corpora tried (default Rounds(10))
	Queries int    // searches per tenant and mode in each check (default 6)
	Writers int    // goroutines writing during the concurrent phase, one tenant each (default 3)
	Readers int    // goroutines searching meanwhile (default 3)
}

// TenantStats counts what TenantIsolation checked.
type TenantStats struct {
	Rounds, Searches, Hits, Writes int
}

// tenantNames are the tenants corpora draw from: names that differ only
// by case, a trailing space, a NUL, a prefix, or that look like patterns.
var tenantNames = []string{"", "acme", "Acme", "acme ", "acme\x00", "ac", "globex", "t/1", "*", "租户甲", "%", "initech"}

var tenantWords = []string{"leave", "refund", "travel", "claim", "vpn", "password", "salary", "policy", "invoice", "laptop",
	"onboarding", "holiday", "expense", "approval", "contract", "secret", "报销", "年假", "审批", "发票"}

// tenantWorld is the model of a store under test: every tenant's chunks.
type tenantWorld struct {
	mu      sync.Mutex
	tenants []string
	chunks  map[string]map[string]retrieval.Chunk // tenant -> chunk id -> chunk
}

func (w *tenantWorld) other(r *rand.Rand, t string) string {
	for {
		if o := w.tenants[r.IntN(len(w.tenants))]; o != t || len(w.tenants) == 1 {
			return o
		}
	}
}

// doc makes a version of document doc of tenant: 1 to 4 chunks whose ids
// (doc#pos) and words every tenant shares, with metadata that names
// another tenant to tempt a filter.
func (w *tenantWorld) doc(r *rand.Rand, tenant, doc string, dim int) []retrieval.Chunk {
	cs := make([]retrieval.Chunk, 1+r.IntN(4))
	for i := range cs {
		words := make([]string, 3+r.IntN(6))
		for j := range words {
			words[j] = tenantWords[r.IntN(len(tenantWords))]
		}
		v := make([]float32, dim)
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		v[r.IntN(dim)] += 3 // never all zero
		text := ""
		for j, wd := range words {
			if j > 0 {
				text += " "
			}
			text += wd
		}
		cs[i] = retrieval.Chunk{ID: doc + "#" + strconv.Itoa(i), DocID: doc, Tenant: tenant, Source: []string{"hr", "it"}[r.IntN(2)],
			Title: doc, ContentType: retrieval.ContentText, Position: i, Text: text, Vector: v,
			Meta: map[string]string{"owner": tenant, "tenant": w.other(r, tenant)}}
	}
	return cs
}

// write replaces or deletes a random document of tenant, in the store and
// the model.
func (w *tenantWorld) write(ctx context.Context, r *rand.Rand, st retrieval.Store, tenant string, dim int) error {
	doc := "d" + strconv.Itoa(r.IntN(6))
	scope := retrieval.Scope{Tenant: tenant}
	var cs []retrieval.Chunk
	if r.IntN(4) > 0 {
		cs = w.doc(r, tenant, doc, dim)
	}
	var err error
	if cs == nil {
		err = st.DeleteDocument(ctx, scope, doc)
	} else {
		err = st.ReplaceDocument(ctx, scope, doc, cs)
	}
	if err != nil {
		return fmt.Errorf("tenant %q, document %s: %w", tenant, doc, err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	m := w.chunks[tenant]
	for id, c := range m {
		if c.DocID == doc {
			delete(m, id)
		}
	}
	for _, c := range cs {
		m[c.ID] = c
	}
	return nil
}

// search runs a random search of a random mode for tenant and checks that
// every hit is the tenant's own. exact additionally checks, with a dense
// search for more than the store holds, that the tenant sees exactly the
// chunks the model says it has.
func (w *tenantWorld) search(ctx context.Context, r *rand.Rand, st retrieval.Store, tenant string, dim int, exact bool, stats *atomic.Int64, hits *atomic.Int64) error {
	req := retrieval.Request{Scope: retrieval.Scope{Tenant: tenant}, K: 1 + r.IntN(40)}
	for range 1 + r.IntN(3) {
		if req.Text != "" {
			req.Text += " "
		}
		req.Text += tenantWords[r.IntN(len(tenantWords))]
	}
	req.Vector = make([]float32, dim)
	for j := range req.Vector {
		req.Vector[j] = float32(r.NormFloat64())
	}
	req.Vector[0] += 3
	switch r.IntN(4) {
	case 0: // a filter naming another tenant cannot widen the scope
		req.Filter = retrieval.Filter{Must: []retrieval.Condition{{Key: "tenant", Values: []string{w.other(r, tenant), tenant}}}}
	case 1:
		req.Filter = retrieval.Filter{Must: []retrieval.Condition{{Key: "owner", Values: w.tenants}}}
	case 2:
		req.Filter = retrieval.Filter{Must: []retrieval.Condition{{Key: retrieval.KeySource, Values: []string{"hr"}}}}
	}
	mode := []string{"dense", "sparse", "hybrid"}[r.IntN(3)]
	fn := map[string]func(context.Context, retrieval.Request) ([]retrieval.Hit, error){"dense": st.SearchDense, "sparse": st.SearchSparse, "hybrid": st.SearchHybrid}[mode]
	if exact {
		mode, fn, req.K, req.Filter = "dense", st.SearchDense, 1000, retrieval.Filter{}
	}
	got, err := fn(ctx, req)
	stats.Add(1)
	hits.Add(int64(len(got)))
	if err != nil {
		return fmt.Errorf("%s search for tenant %q: %w", mode, tenant, err)
	}
	for _, h := range got {
		if h.Chunk.Tenant != tenant || h.Chunk.Meta["owner"] != tenant {
			return fmt.Errorf("%s search for tenant %q (%q, filter %v) returned chunk %s of tenant %q (owner %q)",
				mode, tenant, req.Text, req.Filter, h.Chunk.ID, h.Chunk.Tenant, h.Chunk.Meta["owner"])
		}
	}
	if !exact {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	want := make([]string, 0, len(w.chunks[tenant]))
	for id := range w.chunks[tenant] {
		want = append(want, id)
	}
	slices.Sort(want)
	if ids := sortedIDs(got); !slices.Equal(ids, want) && !(len(ids) == 0 && len(want) == 0) {
		return fmt.Errorf("tenant %q holds %v, want %v: a write of another tenant reached it", tenant, ids, want)
	}
	return nil
}

// TenantIsolation checks, over random corpora, tenants and queries, that
// no search of any mode (dense, sparse, hybrid; with or without filters,
// some naming another tenant) ever returns a chunk of another tenant, and
// that a tenant's writes (replacements and deletions of document ids that
// other tenants use too) never touch another tenant's chunks. Each round
// fills a fresh store from open, checks, then runs writers (one tenant
// each) and readers concurrently, and checks again once they are done.
// The corpora follow from cfg.Seed, so a failure replays exactly.
func TenantIsolation(t *testing.T, open func(t *testing.T, dim int) retrieval.Store, cfg TenantConfig) TenantStats {
	t.Helper()
	if cfg.Seed == 0 {
		cfg.Seed = 1
	}
	if cfg.Rounds <= 0 {
		cfg.Rounds = Rounds(10)
	}
	if cfg.Queries <= 0 {
		cfg.Queries = 6
	}
	if cfg.Writers <= 0 {
		cfg.Writers = 3
	}
	if cfg.Readers <= 0 {
		cfg.Readers = 3
	}
	const dim = 16
	ctx := context.Background()
	var searches, hits, writes atomic.Int64
	for round := range cfg.Rounds {
		r := rand.New(rand.NewPCG(cfg.Seed, uint64(round)))
		names := slices.Clone(tenantNames)
		r.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
		w := &tenantWorld{tenants: names[:2+r.IntN(4)], chunks: map[string]map[string]retrieval.Chunk{}}
		for _, tn := range w.tenants {
			w.chunks[tn] = map[string]retrieval.Chunk{}
		}
		st := open(t, dim)
		fail := func(format string, args ...any) {
			t.Helper()
			st.Close()
			t.Fatalf("round %d (seed %d): "+format, append([]any{round, cfg.Seed}, args...)...)
		}
		for range 10 + r.IntN(30) {
			if err := w.write(ctx, r, st, w.tenants[r.IntN(len(w.tenants))], dim); err != nil {
				fail("%v", err)
			}
			writes.Add(1)
		}
		check := func() {
			t.Helper()
			for _, tn := range append(slices.Clone(w.tenants), "ghost") {
				if err := w.search(ctx, r, st, tn, dim, true, &searches, &hits); err != nil {
					fail("%v", err)
				}
				for range cfg.Queries * 3 {
					if err := w.search(ctx, r, st, tn, dim, false, &searches, &hits); err != nil {
						fail("%v", err)
					}
				}
			}
		}
		check()
		// Concurrently: writers, one tenant each, and readers of any tenant.
		var wg sync.WaitGroup
		errs := make(chan error, cfg.Writers+cfg.Readers)
		stop := make(chan struct{})
		for i := range min(cfg.Writers, len(w.tenants)) {
			wr := rand.New(rand.NewPCG(cfg.Seed, uint64(round)<<8|uint64(i)+1))
			tenant := w.tenants[i]
			wg.Go(func() {
				for range 20 {
					if err := w.write(ctx, wr, st, tenant, dim); err != nil {
						errs <- err
						return
					}
					writes.Add(1)
				}
			})
		}
		var readers sync.WaitGroup
		for i := range cfg.Readers {
			rr := rand.New(rand.NewPCG(cfg.Seed, uint64(round)<<8|uint64(i)+128))
			readers.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					if err := w.search(ctx, rr, st, w.tenants[rr.IntN(len(w.tenants))], dim, false, &searches, &hits); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(stop)
		readers.Wait()
		close(errs)
		for err := range errs {
			fail("concurrently: %v", err)
		}
		check()
		if err := st.Close(); err != nil {
			t.Fatalf("round %d: close: %v", round, err)
		}
	}
	s := TenantStats{Rounds: cfg.Rounds, Searches: int(searches.Load()), Hits: int(hits.Load()), Writes: int(writes.Load())}
	if s.Hits == 0 {
		t.Errorf("no search found anything: the property was never tested")
	}
	return s
}
