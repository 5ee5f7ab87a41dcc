package qdrant_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/retrieval/analysis"
	"github.com/adaptrag/adaptrag/retrieval/qdrant"
	"github.com/adaptrag/adaptrag/retrieval/qdrant/qdranttest"
	"github.com/adaptrag/adaptrag/retrieval/retrievaltest"
	qc "github.com/qdrant/go-client/qdrant"
)

// fakeConfig points a Config at a fake server.
func fakeConfig(srv *qdranttest.Server, collection string, dim int) qdrant.Config {
	return qdrant.Config{Host: srv.Host(), Port: srv.Port(), Collection: collection, Dim: dim}
}

// openFake opens a store on a fresh collection of srv and closes it at the
// end of the test.
func openFake(t *testing.T, srv *qdranttest.Server, dim int) *qdrant.Store {
	t.Helper()
	st, err := qdrant.Open(context.Background(), fakeConfig(srv, "kb_"+randomSuffix(t), dim))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

func randomSuffix(t testing.TB) string {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b[:])
}

func TestConformance(t *testing.T) {
	srv := qdranttest.Start(t)
	var n atomic.Int64
	retrievaltest.Run(t, func(t *testing.T, dim int) retrieval.Store {
		st, err := qdrant.Open(context.Background(), fakeConfig(srv, fmt.Sprintf("conf_%d", n.Add(1)), dim))
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		return st
	})
}

// TestLiveConformance runs the suite against a real Qdrant, on fresh
// collections that are deleted afterwards; the suite covers
// ReplaceDocument (upsert, then delete by filter with has_id) and
// Documents (Scroll) too. Example:
//
//	QDRANT_URL=qdrant://localhost:6334 go test -run Live ./retrieval/qdrant/
func TestLiveConformance(t *testing.T) {
	url := os.Getenv("QDRANT_URL")
	if url == "" {
		t.Skip("QDRANT_URL not set: skipping the live Qdrant suite (e.g. QDRANT_URL=qdrant://localhost:6334)")
	}
	base, err := qdrant.ParseURL(url)
	if err != nil {
		t.Fatalf("QDRANT_URL: %v", err)
	}
	// A client of its own deletes the collections: the suite closes each
	// store before the cleanups registered here run.
	admin, err := qc.NewClient(&qc.Config{Host: base.Host, Port: base.Port, APIKey: base.APIKey, UseTLS: base.UseTLS,
		PoolSize: 1, SkipCompatibilityCheck: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.Close() })
	prefix := "adaptrag_test_" + randomSuffix(t)
	var n atomic.Int64
	retrievaltest.Run(t, func(t *testing.T, dim int) retrieval.Store {
		cfg := base
		cfg.Collection = fmt.Sprintf("%s_%d", prefix, n.Add(1))
		cfg.Dim = dim
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		st, err := qdrant.Open(ctx, cfg)
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := admin.DeleteCollection(ctx, cfg.Collection); err != nil {
				t.Errorf("delete collection %s: %v", cfg.Collection, err)
			}
		})
		return st
	})
}

func vec(xs ...float32) []float32 { return xs }

func TestHybridRequestShape(t *testing.T) {
	srv := qdranttest.Start(t)
	st := openFake(t, srv, 3)
	ctx := context.Background()
	if err := st.Upsert(ctx, []retrieval.Chunk{{ID: "a", Text: "alpha", Vector: vec(1, 0, 0)}}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name       string
		cand, rrfk int
		wantLimit  uint64
		wantK      uint32
	}{
		{"defaults", 0, 0, retrieval.DefaultCandidates, retrieval.DefaultRRFK + 1},
		{"explicit", 7, 10, 7, 11},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := retrieval.Request{Scope: retrieval.Scope{Tenant: "t1"}, Text: "alpha", Vector: vec(1, 0, 0), K: 3,
				Candidates: tc.cand, RRFK: tc.rrfk,
				Filter: retrieval.Filter{Must: []retrieval.Condition{{Key: retrieval.KeySource, Values: []string{"hr"}}}}}
			if _, err := st.SearchHybrid(ctx, req); err != nil {
				t.Fatal(err)
			}
			qs := srv.Queries()
			q := qs[len(qs)-1]
			if len(q.GetPrefetch()) != 2 {
				t.Fatalf("got %d prefetches, want 2 (dense and sparse)", len(q.GetPrefetch()))
			}
			usings := []string{q.GetPrefetch()[0].GetUsing(), q.GetPrefetch()[1].GetUsing()}
			if !slices.Equal(usings, []string{qdrant.DenseVector, qdrant.SparseVector}) {
				t.Errorf("prefetch vectors = %v", usings)
			}
			for i, p := range q.GetPrefetch() {
				if p.Limit == nil || p.GetLimit() != tc.wantLimit {
					t.Errorf("prefetch %d limit = %v, want %d", i, p.Limit, tc.wantLimit)
				}
				if !hasTenant(p.GetFilter(), "t1") {
					t.Errorf("prefetch %d filter %v lacks the tenant condition", i, p.GetFilter())
				}
			}
			if !hasTenant(q.GetFilter(), "t1") {
				t.Errorf("root filter %v lacks the tenant condition", q.GetFilter())
			}
			if got := q.GetQuery().GetRrf(); got == nil || got.GetK() != tc.wantK {
				t.Errorf("fusion = %v, want Rrf with k %d", q.GetQuery(), tc.wantK)
			}
			if q.GetLimit() != 3 {
				t.Errorf("limit = %d, want K = 3", q.GetLimit())
			}
		})
	}
}

// hasTenant reports whether f has the must condition tenant == want.
func hasTenant(f *qc.Filter, want string) bool {
	for _, c := range f.GetMust() {
		if fc := c.GetField(); fc != nil && fc.GetKey() == "tenant" && fc.GetMatch().GetKeyword() == want {
			return true
		}
	}
	return false
}

// TestHybridMatchesFuseRRF checks that Qdrant-side fusion with k' = k+1
// gives the scores and order of the project's textbook FuseRRF over the same
// two legs, for several k.
func TestHybridMatchesFuseRRF(t *testing.T) {
	srv := qdranttest.Start(t)
	st := openFake(t, srv, 4)
	ctx := context.Background()
	// Distinct lengths and vectors: no leg has equal scores, whose order
	// Qdrant leaves unspecified.
	texts := []string{"red apple pie", "green apple", "red car wash", "blue sky over the red sea", "apple tree house old"}
	var chunks []retrieval.Chunk
	for i, txt := range texts {
		v := make([]float32, 4)
		v[i%4] = float32(i + 1)
		v[(i+1)%4] = 1
		chunks = append(chunks, retrieval.Chunk{ID: fmt.Sprintf("h%d", i), Text: txt, Vector: v})
	}
	if err := st.Upsert(ctx, chunks); err != nil {
		t.Fatal(err)
	}
	for _, rrfk := range []int{0, 1, 60} {
		req := retrieval.Request{Text: "red apple", Vector: vec(1, 0.5, 0, 0), K: 10, Candidates: 3, RRFK: rrfk}
		dense, err := st.SearchDense(ctx, retrieval.Request{Vector: req.Vector, K: req.Candidates})
		if err != nil {
			t.Fatal(err)
		}
		sparse, err := st.SearchSparse(ctx, retrieval.Request{Text: req.Text, K: req.Candidates})
		if err != nil {
			t.Fatal(err)
		}
		want := retrieval.FuseRRF(rrfk, dense, sparse)
		got, err := st.SearchHybrid(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("k=%d: hybrid has %d hits, FuseRRF %d", rrfk, len(got), len(want))
		}
		for i := range got {
			if got[i].Chunk.ID != want[i].Chunk.ID || math.Abs(got[i].Score-want[i].Score) > 1e-6 {
				t.Errorf("k=%d rank %d: got %s %.7f, want %s %.7f", rrfk, i,
					got[i].Chunk.ID, got[i].Score, want[i].Chunk.ID, want[i].Score)
			}
		}
	}
}

// TestSparseIsBM25 recomputes BM25 by hand for a tiny corpus (IDF
// ln(1+(N-n+0.5)/(n+0.5)), k1 1.2, b 0.75) and compares it with the scores
// of a sparse search.
func TestSparseIsBM25(t *testing.T) {
	srv := qdranttest.Start(t)
	cfg := fakeConfig(srv, "bm25", 2)
	cfg.AvgDocLen = 3
	cfg.Analyzer = analysis.Whitespace()
	st, err := qdrant.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	docs := map[string]string{
		"d1": "cat cat dog",
		"d2": "cat bird",
		"d3": "fish fish fish fish",
		"d4": "dog",
	}
	var chunks []retrieval.Chunk
	for id, txt := range docs {
		chunks = append(chunks, retrieval.Chunk{ID: id, Text: txt, Vector: vec(1, 0)})
	}
	if err := st.Upsert(context.Background(), chunks); err != nil {
		t.Fatal(err)
	}
	idf := func(n float64) float64 { return math.Log(1 + (4-n+0.5)/(n+0.5)) }
	tfw := func(tf, dl float64) float64 { return tf * 2.2 / (tf + 1.2*(0.25+0.75*dl/3)) }
	want := map[string]float64{
		"d1": idf(2)*tfw(2, 3) + idf(2)*tfw(1, 3), // cat twice, dog once
		"d2": idf(2) * tfw(1, 2),                  // cat
		"d4": idf(2) * tfw(1, 1),                  // dog
	}
	hits, err := st.SearchSparse(context.Background(), retrieval.Request{Text: "cat dog cat", K: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != len(want) {
		t.Fatalf("got %d hits %v, want %d", len(hits), hits, len(want))
	}
	for _, h := range hits {
		if w, ok := want[h.Chunk.ID]; !ok || math.Abs(h.Score-w) > 1e-5 {
			t.Errorf("%s: score %.6f, want %.6f", h.Chunk.ID, h.Score, w)
		}
	}
}

func TestOpen(t *testing.T) {
	srv := qdranttest.Start(t)
	ctx := context.Background()

	st, err := qdrant.Open(ctx, fakeConfig(srv, "kb", 5))
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	idx := srv.FieldIndexes("kb")
	for _, f := range []string{"tenant", "source", "doc_id", "content_type"} {
		if ft, ok := idx[f]; !ok || ft != qc.FieldType_FieldTypeKeyword {
			t.Errorf("payload index on %s = %v, %v; want a keyword index", f, ft, ok)
		}
	}

	// An existing collection gives its size when Dim is 0.
	st, err = qdrant.Open(ctx, fakeConfig(srv, "kb", 0))
	if err != nil {
		t.Fatal(err)
	}
	if st.Dim() != 5 {
		t.Errorf("Dim = %d, want the collection's 5", st.Dim())
	}
	st.Close()

	if _, err := qdrant.Open(ctx, fakeConfig(srv, "kb", 7)); !errors.Is(err, retrieval.ErrDimension) {
		t.Errorf("Open with a conflicting Dim: err = %v, want ErrDimension", err)
	}
	if _, err := qdrant.Open(ctx, fakeConfig(srv, "missing", 0)); !errors.Is(err, retrieval.ErrInvalid) {
		t.Errorf("Open of a missing collection with Dim 0: err = %v, want ErrInvalid", err)
	}
	if _, err := qdrant.Open(ctx, qdrant.Config{Dim: -1}); !errors.Is(err, retrieval.ErrInvalid) {
		t.Errorf("Open with Dim -1: err = %v, want ErrInvalid", err)
	}
}

func TestServerDown(t *testing.T) {
	srv := qdranttest.Start(t)
	st := openFake(t, srv, 2)
	cfg := st.Config()
	srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	hits, err := st.SearchDense(ctx, retrieval.Request{Vector: vec(1, 0), K: 1})
	if !errors.Is(err, retrieval.ErrUnavailable) || hits != nil {
		t.Errorf("search on a closed server = %v, %v; want ErrUnavailable", hits, err)
	}
	var oe *qdrant.OpError
	if !errors.As(err, &oe) || oe.Op != "search dense" || oe.Collection != cfg.Collection {
		t.Errorf("error %v is not an *OpError naming the operation and the collection", err)
	}
	if err := st.Upsert(ctx, []retrieval.Chunk{{ID: "x", Vector: vec(1, 0)}}); !errors.Is(err, retrieval.ErrUnavailable) {
		t.Errorf("upsert on a closed server: err = %v, want ErrUnavailable", err)
	}
	if _, err := qdrant.Open(ctx, cfg); !errors.Is(err, retrieval.ErrUnavailable) {
		t.Errorf("Open on a closed server: err = %v, want ErrUnavailable", err)
	}
}

func TestInjectedUnavailable(t *testing.T) {
	srv := qdranttest.Start(t)
	st := openFake(t, srv, 2)
	srv.SetUnavailable(true)
	if _, err := st.SearchHybrid(context.Background(), retrieval.Request{Text: "x", Vector: vec(1, 0), K: 1}); !errors.Is(err, retrieval.ErrUnavailable) {
		t.Errorf("err = %v, want ErrUnavailable", err)
	}
	srv.SetUnavailable(false)
	if _, err := st.SearchHybrid(context.Background(), retrieval.Request{Text: "x", Vector: vec(1, 0), K: 1}); err != nil {
		t.Errorf("after recovery: %v", err)
	}
}

func TestSlowServerTimesOut(t *testing.T) {
	srv := qdranttest.Start(t)
	st := openFake(t, srv, 2)
	if err := st.Upsert(context.Background(), []retrieval.Chunk{{ID: "a", Text: "alpha", Vector: vec(1, 0)}}); err != nil {
		t.Fatal(err)
	}
	srv.SetDelay(2 * time.Second)
	req := retrieval.Request{Text: "alpha", Vector: vec(1, 0), K: 1}
	for name, search := range map[string]func(context.Context, retrieval.Request) ([]retrieval.Hit, error){
		"dense": st.SearchDense, "sparse": st.SearchSparse, "hybrid": st.SearchHybrid,
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		start := time.Now()
		hits, err := search(ctx, req)
		cancel()
		if err == nil || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s on a slow server = %v, %v; want a context.DeadlineExceeded error, not an empty result", name, hits, err)
		}
		var oe *qdrant.OpError
		if !errors.As(err, &oe) || !oe.Timeout() {
			t.Errorf("%s: %v does not report Timeout()", name, err)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("%s returned after %v, not at the deadline", name, d)
		}
	}
}

func TestMissingCollection(t *testing.T) {
	srv := qdranttest.Start(t)
	st := openFake(t, srv, 2)
	if err := st.DeleteCollection(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := st.SearchDense(context.Background(), retrieval.Request{Vector: vec(1, 0), K: 1}); !errors.Is(err, retrieval.ErrNotFound) {
		t.Errorf("search of a deleted collection: err = %v, want ErrNotFound", err)
	}
}

func TestUpsertBatchesAndDuplicates(t *testing.T) {
	srv := qdranttest.Start(t)
	cfg := fakeConfig(srv, "batches", 2)
	cfg.BatchSize = 2
	st, err := qdrant.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var chunks []retrieval.Chunk
	for i := range 5 {
		chunks = append(chunks, retrieval.Chunk{ID: fmt.Sprint(i), Text: "old", Vector: vec(1, float32(i))})
	}
	// A later duplicate wins, and the same id in another tenant is another chunk.
	chunks = append(chunks,
		retrieval.Chunk{ID: "0", Text: "new", Vector: vec(1, 0)},
		retrieval.Chunk{ID: "0", Tenant: "other", Text: "theirs", Vector: vec(1, 0)})
	if err := st.Upsert(context.Background(), chunks); err != nil {
		t.Fatal(err)
	}
	hits, err := st.SearchDense(context.Background(), retrieval.Request{Vector: vec(1, 0), K: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 5 {
		t.Fatalf("default tenant has %d chunks, want 5", len(hits))
	}
	if hits[0].Chunk.ID != "0" || hits[0].Chunk.Text != "new" {
		t.Errorf("top hit = %+v, want chunk 0 with the later text", hits[0].Chunk)
	}
	other, err := st.SearchSparse(context.Background(), retrieval.Request{Scope: retrieval.Scope{Tenant: "other"}, Text: "theirs", K: 5})
	if err != nil || len(other) != 1 || other[0].Chunk.Tenant != "other" {
		t.Errorf("other tenant = %v, %v; want its own chunk 0", other, err)
	}
}

func TestFilterEdgeCases(t *testing.T) {
	srv := qdranttest.Start(t)
	st := openFake(t, srv, 2)
	ctx := context.Background()
	err := st.Upsert(ctx, []retrieval.Chunk{
		{ID: "with", Text: "doc", Meta: map[string]string{"lang": "en"}, Vector: vec(1, 0)},
		{ID: "without", Text: "doc", Vector: vec(0, 1)},
		{ID: "tenantmeta", Text: "doc", Meta: map[string]string{"tenant": "acme"}, Vector: vec(1, 1)},
	})
	if err != nil {
		t.Fatal(err)
	}
	search := func(conds ...retrieval.Condition) []string {
		t.Helper()
		hits, err := st.SearchDense(ctx, retrieval.Request{Vector: vec(1, 1), K: 10, Filter: retrieval.Filter{Must: conds}})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, h := range hits {
			ids = append(ids, h.Chunk.ID)
		}
		slices.Sort(ids)
		return ids
	}
	// As Chunk.Value says, a missing Meta key has the value "".
	if got := search(retrieval.Condition{Key: "lang", Values: []string{""}}); !slices.Equal(got, []string{"tenantmeta", "without"}) {
		t.Errorf(`lang == "" matched %v, want [tenantmeta without]`, got)
	}
	if got := search(retrieval.Condition{Key: "lang", Values: []string{"", "en"}}); len(got) != 3 {
		t.Errorf(`lang in ("", en) matched %v, want all three`, got)
	}
	// A "tenant" condition addresses Meta, never the scope.
	if got := search(retrieval.Condition{Key: "tenant", Values: []string{"acme"}}); !slices.Equal(got, []string{"tenantmeta"}) {
		t.Errorf("meta tenant == acme matched %v, want [tenantmeta]", got)
	}
	// A condition without values matches nothing.
	if got := search(retrieval.Condition{Key: "lang"}); got != nil {
		t.Errorf("empty condition matched %v", got)
	}
	_, err = st.SearchDense(ctx, retrieval.Request{Vector: vec(1, 1), K: 10,
		Filter: retrieval.Filter{Must: []retrieval.Condition{{Key: "a.b", Values: []string{"x"}}}}})
	if !errors.Is(err, retrieval.ErrInvalid) {
		t.Errorf("dotted key: err = %v, want ErrInvalid", err)
	}
}

func TestParseURL(t *testing.T) {
	cases := []struct {
		in      string
		want    qdrant.Config
		wantErr bool
	}{
		{in: "qdrant://db:6334/kb", want: qdrant.Config{Host: "db", Port: 6334, Collection: "kb"}},
		{in: "qdrant://db", want: qdrant.Config{Host: "db"}},
		{in: "https://x.cloud.qdrant.io:6334/docs?api_key=s3cret", want: qdrant.Config{Host: "x.cloud.qdrant.io", Port: 6334, Collection: "docs", APIKey: "s3cret", UseTLS: true}},
		{in: "qdrants://:pw@h/c", want: qdrant.Config{Host: "h", Collection: "c", APIKey: "pw", UseTLS: true}},
		{in: "http://h:1234/c?dim=384&batch_size=64&avg_doc_len=250", want: qdrant.Config{Host: "h", Port: 1234, Collection: "c", Dim: 384, BatchSize: 64, AvgDocLen: 250}},
		{in: "ftp://h/c", wantErr: true},
		{in: "qdrant://h:99999/c", wantErr: true},
		{in: "qdrant://h/a/b", wantErr: true},
		{in: "qdrant://h/c?dim=-3", wantErr: true},
		{in: "qdrant://h/c?avg_doc_len=x", wantErr: true},
	}
	for _, tc := range cases {
		got, err := qdrant.ParseURL(tc.in)
		if tc.wantErr {
			if !errors.Is(err, retrieval.ErrInvalid) {
				t.Errorf("ParseURL(%q) err = %v, want ErrInvalid", tc.in, err)
			}
			continue
		}
		type plain struct {
			Host, Collection, APIKey string
			Port, Dim, BatchSize     int
			UseTLS                   bool
			AvgDocLen                float64
		}
		proj := func(c qdrant.Config) plain {
			return plain{c.Host, c.Collection, c.APIKey, c.Port, c.Dim, c.BatchSize, c.UseTLS, c.AvgDocLen}
		}
		if err != nil || proj(got) != proj(tc.want) {
			t.Errorf("ParseURL(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
}

func TestConfigRedactsAPIKey(t *testing.T) {
	c := qdrant.Config{Host: "h", Port: 1, APIKey: "s3cret"}
	for _, s := range []string{c.String(), fmt.Sprint(c), fmt.Sprintf("%+v", c), c.LogValue().String()} {
		if strings.Contains(s, "s3cret") {
			t.Errorf("%q shows the API key", s)
		}
	}
}

func TestNewWithClient(t *testing.T) {
	srv := qdranttest.Start(t)
	cl, err := qc.NewClient(&qc.Config{Host: srv.Host(), Port: srv.Port(), PoolSize: 1, SkipCompatibilityCheck: true})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx := context.Background()
	if _, err := qdrant.NewWithClient(ctx, nil, qdrant.Config{Dim: 2}); !errors.Is(err, retrieval.ErrInvalid) {
		t.Errorf("nil client: err = %v, want ErrInvalid", err)
	}
	for _, name := range []string{"kb1", "kb2"} {
		st, err := qdrant.NewWithClient(ctx, cl, qdrant.Config{Collection: name, Dim: 2})
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Upsert(ctx, []retrieval.Chunk{{ID: name, Text: "shared client", Vector: vec(1, 0)}}); err != nil {
			t.Fatal(err)
		}
		hits, err := st.SearchSparse(ctx, retrieval.Request{Text: "client", K: 5})
		if err != nil || len(hits) != 1 || hits[0].Chunk.ID != name {
			t.Errorf("%s: hits %v, %v; want only its own chunk", name, hits, err)
		}
		// Close leaves the shared client open for the next store.
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestConcurrentUse(t *testing.T) {
	srv := qdranttest.Start(t)
	st := openFake(t, srv, 2)
	ctx := context.Background()
	errs := make(chan error, 16)
	for g := range 8 {
		go func() {
			c := retrieval.Chunk{ID: fmt.Sprint(g), DocID: "d", Tenant: fmt.Sprint(g % 2), Text: "parallel words", Vector: vec(1, float32(g))}
			if err := st.Upsert(ctx, []retrieval.Chunk{c}); err != nil {
				errs <- err
				return
			}
			_, err := st.SearchHybrid(ctx, retrieval.Request{Scope: retrieval.Scope{Tenant: c.Tenant}, Text: "parallel", Vector: vec(1, 0), K: 3})
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	for _, tenant := range []string{"0", "1"} {
		hits, err := st.SearchDense(ctx, retrieval.Request{Scope: retrieval.Scope{Tenant: tenant}, Vector: vec(1, 0), K: 10})
		if err != nil || len(hits) != 4 {
			t.Errorf("tenant %s: %d hits, %v; want 4", tenant, len(hits), err)
		}
	}
}

func TestHybridWithoutTerms(t *testing.T) {
	srv := qdranttest.Start(t)
	st := openFake(t, srv, 2)
	ctx := context.Background()
	if err := st.Upsert(ctx, []retrieval.Chunk{{ID: "a", Text: "alpha", Vector: vec(1, 0)}, {ID: "b", Text: "beta", Vector: vec(0, 1)}}); err != nil {
		t.Fatal(err)
	}
	hits, err := st.SearchHybrid(ctx, retrieval.Request{Text: "?!", Vector: vec(1, 0), K: 5})
	if err != nil {
		t.Fatal(err)
	}
	qs := srv.Queries()
	if n := len(qs[len(qs)-1].GetPrefetch()); n != 1 {
		t.Errorf("%d prefetches for a text without terms, want the dense one only", n)
	}
	// Dense leg only: a at rank 1, b at rank 2.
	if len(hits) != 2 || hits[0].Chunk.ID != "a" || math.Abs(hits[0].Score-1.0/61) > 1e-6 || math.Abs(hits[1].Score-1.0/62) > 1e-6 {
		t.Errorf("hits = %+v, want a (1/61) then b (1/62)", hits)
	}
	if hits, err := st.SearchSparse(ctx, retrieval.Request{Text: "?!", K: 5}); hits != nil || err != nil {
		t.Errorf("sparse search for a text without terms = %v, %v; want nil, nil", hits, err)
	}
}

func TestIPv6Host(t *testing.T) {
	srv, err := qdranttest.Listen("[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	}
	defer srv.Close()
	st, err := qdrant.Open(context.Background(), qdrant.Config{Host: "::1", Port: srv.Port(), Dim: 2})
	if err != nil {
		t.Fatalf("Open on [::1]: %v", err)
	}
	st.Close()
}
