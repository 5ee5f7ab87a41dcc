package memstore

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/retrieval/bm25"
	"github.com/adaptrag/adaptrag/retrieval/vector"
)

// naiveAccept is the filter without the payload index: the tenant, then
// Filter.Match on the chunk.
func naiveAccept(s *Store, req *retrieval.Request) func(uint32) bool {
	return func(iid uint32) bool {
		r := &s.recs[iid]
		return r.live && r.Tenant == req.Scope.Tenant && req.Filter.Match(&r.Chunk)
	}
}

// checkPayload rebuilds the payload index from the records and compares it
// with the one the store maintained.
func checkPayload(t *testing.T, s *Store, when string) {
	t.Helper()
	tenants := map[uint32][]uint32{}
	sources := map[srcKey][]uint32{}
	docs := map[docKey][]uint32{}
	for iid := range s.recs {
		r := &s.recs[iid]
		if !r.live {
			continue
		}
		tid := s.tenants[r.Tenant]
		tenants[tid] = append(tenants[tid], uint32(iid))
		sources[srcKey{tid, r.Source}] = append(sources[srcKey{tid, r.Source}], uint32(iid))
		docs[docKey{r.Tenant, r.DocID}] = append(docs[docKey{r.Tenant, r.DocID}], uint32(iid))
	}
	same := func(name string, want map[any][]uint32, got map[any]*idSet) {
		if len(want) != len(got) {
			t.Fatalf("%s: %s index has %d lists, want %d", when, name, len(got), len(want))
		}
		for k, ids := range want {
			if g := got[k].appendTo(nil); !slices.Equal(g, ids) || got[k].len() != len(ids) {
				t.Fatalf("%s: %s list %v = %v, want %v", when, name, k, g, ids)
			}
		}
	}
	w1, g1 := map[any][]uint32{}, map[any]*idSet{}
	for k, v := range tenants {
		w1[k] = v
	}
	for k, v := range s.byTenant {
		g1[k] = v
	}
	same("tenant", w1, g1)
	w2, g2 := map[any][]uint32{}, map[any]*idSet{}
	for k, v := range sources {
		w2[k] = v
	}
	for k, v := range s.bySource {
		g2[k] = v
	}
	same("source", w2, g2)
	w3, g3 := map[any][]uint32{}, map[any]*idSet{}
	for k, v := range docs {
		w3[k] = v
	}
	for k, v := range s.byDoc {
		g3[k] = v
	}
	same("document", w3, g3)
}

// randomFilter draws a request filter over the corpus's keys: sources and
// documents (indexed), content types and a metadata key (not), alone or
// combined, with values that exist and values that do not.
func randomFilter(r *rand.Rand, nSrc, nDoc int) retrieval.Filter {
	var f retrieval.Filter
	pick := func(prefix string, n, most int) []string {
		var vs []string
		for range 1 + r.IntN(most) {
			vs = append(vs, fmt.Sprintf("%s%d", prefix, r.IntN(n+1))) // n: absent
		}
		return vs
	}
	switch r.IntN(7) {
	case 0: // none: the tenant alone
	case 1:
		f.Must = append(f.Must, retrieval.Condition{Key: retrieval.KeySource, Values: pick("s", nSrc, 3)})
	case 2:
		f.Must = append(f.Must, retrieval.Condition{Key: retrieval.KeyDocID, Values: pick("d", nDoc, 4)})
	case 3:
		f.Must = append(f.Must, retrieval.Condition{Key: retrieval.KeySource, Values: pick("s", nSrc, 2)},
			retrieval.Condition{Key: retrieval.KeyDocID, Values: pick("d", nDoc, 20)})
	case 4:
		f.Must = append(f.Must, retrieval.Condition{Key: "lang", Values: []string{"en"}})
	case 5:
		f.Must = append(f.Must, retrieval.Condition{Key: retrieval.KeySource, Values: pick("s", nSrc, 2)},
			retrieval.Condition{Key: "lang", Values: []string{"zh"}})
	case 6:
		f.Must = append(f.Must, retrieval.Condition{Key: retrieval.KeySource, Values: nil}) // matches nothing
	}
	return f
}

// The planned search (payload index, exact path or index path) returns
// exactly what an exact scan filtered chunk by chunk returns: same ids,
// same order, same scores, for dense and BM25, with random writes
// (upserts that move chunks between documents and sources, deletes,
// replacements), compactions and reopens in between, and the payload
// index equal to one rebuilt from the records after every step.
func TestPlannedEqualsExactFilteredScan(t *testing.T) {
	const dim = 16
	for seed := range uint64(4) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 77))
			dir := t.TempDir()
			o := Options{Dir: dir, Dim: dim, NoSync: true, CompactBytes: 64 << 10, Vector: vector.Options{Exact: true}}
			s := mustOpen(t, o)
			defer func() { s.Close() }()
			ctx := context.Background()
			tenants := []string{"", "a", "b"}
			nSrc, nDoc := 6, 40
			chunk := func(tenant string, id int) retrieval.Chunk {
				v := make([]float32, dim)
				for i := range v {
					v[i] = float32(r.NormFloat64())
				}
				v[0] = float32(id % 3) // exact ties happen
				c := retrieval.Chunk{
					ID: fmt.Sprint("c", id), Tenant: tenant, DocID: fmt.Sprint("d", r.IntN(nDoc)), Source: fmt.Sprint("s", r.IntN(nSrc)),
					Text: fmt.Sprintf("w%d w%d w%d common", r.IntN(30), r.IntN(30), r.IntN(8)), Vector: v,
				}
				if r.IntN(2) == 0 {
					c.Meta = map[string]string{"lang": []string{"en", "zh"}[r.IntN(2)]}
				}
				return c
			}
			for step := range 60 {
				tenant := tenants[r.IntN(len(tenants))]
				switch op := r.IntN(10); {
				case op < 6:
					var cs []retrieval.Chunk
					for range 1 + r.IntN(60) {
						cs = append(cs, chunk(tenant, r.IntN(400)))
					}
					if err := s.Upsert(ctx, cs); err != nil {
						t.Fatal(err)
					}
				case op < 8:
					if err := s.DeleteDocument(ctx, retrieval.Scope{Tenant: tenant}, fmt.Sprint("d", r.IntN(nDoc))); err != nil {
						t.Fatal(err)
					}
				case op < 9:
					doc := fmt.Sprint("d", r.IntN(nDoc))
					var cs []retrieval.Chunk
					for range r.IntN(8) {
						c := chunk(tenant, r.IntN(400))
						c.ID, c.DocID = c.ID+"r", doc
						cs = append(cs, c)
					}
					if err := s.ReplaceDocument(ctx, retrieval.Scope{Tenant: tenant}, doc, cs); err != nil {
						t.Fatal(err)
					}
				default:
					s.Close()
					s = mustOpen(t, o)
				}
				checkPayload(t, s, fmt.Sprintf("step %d", step))
				for qi := range 12 {
					req := retrieval.Request{
						Scope: retrieval.Scope{Tenant: tenants[r.IntN(len(tenants))]}, Filter: randomFilter(r, nSrc, nDoc),
						Text: fmt.Sprintf("w%d w%d common", r.IntN(30), r.IntN(8)), K: 1 + r.IntN(30),
					}
					req.Vector = chunk("", 0).Vector
					s.mu.RLock()
					wantD := s.vec.SearchExact(req.Vector, req.K, naiveAccept(s, &req))
					wantS := s.lex.Search(req.Text, req.K, naiveAccept(s, &req))
					s.mu.RUnlock()
					for _, lim := range []int{0, -1, 1 << 30} { // planned, index only, exact only
						s.exactLimit = lim
						gotD, err := s.SearchDense(ctx, req)
						if err != nil {
							t.Fatal(err)
						}
						gotS, err := s.SearchSparse(ctx, req)
						if err != nil {
							t.Fatal(err)
						}
						if err := sameHits(gotD, wantD, s, func(x vector.Scored) (uint32, float64) { return x.ID, float64(x.Score) }); err != nil {
							t.Fatalf("step %d query %d limit %d dense %+v: %v", step, qi, lim, req.Filter, err)
						}
						if err := sameHits(gotS, wantS, s, func(x bm25.Scored) (uint32, float64) { return x.ID, x.Score }); err != nil {
							t.Fatalf("step %d query %d limit %d sparse %+v: %v", step, qi, lim, req.Filter, err)
						}
					}
					s.exactLimit = 0
				}
			}
			// A reader of the same directory builds the same index.
			ro := mustOpen(t, Options{Dir: dir, ReadOnly: true})
			defer ro.Close()
			checkPayload(t, ro, "reader")
		})
	}
}

func sameHits[T any](got []retrieval.Hit, want []T, s *Store, f func(T) (uint32, float64)) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d hits, want %d", len(got), len(want))
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	for i, h := range got {
		id, score := f(want[i])
		w := s.recs[id].Chunk
		if h.Chunk.ID != w.ID || h.Chunk.Tenant != w.Tenant || h.Score != score {
			return fmt.Errorf("hit %d is %s/%s %v, want %s/%s %v", i, h.Chunk.Tenant, h.Chunk.ID, h.Score, w.Tenant, w.ID, score)
		}
		if !maps.Equal(h.Chunk.Meta, w.Meta) {
			return fmt.Errorf("hit %d meta differs", i)
		}
	}
	return nil
}

// TestWideFilter: a filter whose driver holds nearly the whole store runs
// as an unfiltered search and a post-check (denseWide); when the other
// conditions reject more than the slack covers it falls back to the
// filtered search. Either way the answer is the exact filtered one.
func TestWideFilter(t *testing.T) {
	const dim, n = 16, 2000
	r := rand.New(rand.NewPCG(5, 55))
	s := mustOpen(t, Options{Dim: dim, Vector: vector.Options{Exact: true}})
	defer s.Close()
	ctx := context.Background()
	var cs []retrieval.Chunk
	for i := range n {
		v := make([]float32, dim)
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		tenant := "big"
		if i%20 == 0 {
			tenant = "small" // 5%: "big" holds 95% of the store
		}
		lang := "en"
		if i%3 == 0 {
			lang = "zh" // a third: a condition the payload index does not answer
		}
		cs = append(cs, retrieval.Chunk{ID: fmt.Sprint("c", i), Tenant: tenant, DocID: fmt.Sprint("d", i%50),
			Text: "w", Vector: v, Meta: map[string]string{"lang": lang}})
	}
	if err := s.Upsert(ctx, cs); err != nil {
		t.Fatal(err)
	}
	for qi := range 20 {
		q := make([]float32, dim)
		for j := range q {
			q[j] = float32(r.NormFloat64())
		}
		for _, f := range []retrieval.Filter{
			{},
			{Must: []retrieval.Condition{{Key: "lang", Values: []string{"en"}}}}, // 2/3 pass: falls back for large k
			{Must: []retrieval.Condition{{Key: "lang", Values: []string{"zh"}}}}, // 1/3 pass: falls back
		} {
			for _, k := range []int{1, 10, 50, 1500, 2000} {
				req := retrieval.Request{Scope: retrieval.Scope{Tenant: "big"}, Filter: f, Vector: q, K: k}
				s.mu.RLock()
				want := s.vec.SearchExact(q, k, naiveAccept(s, &req))
				s.mu.RUnlock()
				for _, noWide := range []bool{false, true} {
					s.noWide = noWide
					got, err := s.SearchDense(ctx, req)
					if err != nil {
						t.Fatal(err)
					}
					if err := sameHits(got, want, s, func(x vector.Scored) (uint32, float64) { return x.ID, float64(x.Score) }); err != nil {
						t.Fatalf("query %d filter %+v k %d noWide %v: %v", qi, f, k, noWide, err)
					}
				}
				s.noWide = false
			}
		}
	}
}

// TestDriverAloneOrNot: the exact plan skips the per-id check only when the
// driving list is the whole filter; whichever list drives, the answer is
// the exact filtered one.
func TestDriverAloneOrNot(t *testing.T) {
	const dim = 8
	s := mustOpen(t, Options{Dim: dim, Vector: vector.Options{Exact: true}})
	defer s.Close()
	ctx := context.Background()
	r := rand.New(rand.NewPCG(9, 99))
	var cs []retrieval.Chunk
	for i := range 400 {
		v := make([]float32, dim)
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		tenant := "big"
		if i%10 == 0 {
			tenant = "small" // 40 chunks
		}
		cs = append(cs, retrieval.Chunk{ID: fmt.Sprint("c", i), Tenant: tenant, DocID: "d", Source: fmt.Sprint("s", i%3), Text: "w", Vector: v})
	}
	if err := s.Upsert(ctx, cs); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		tenant string
		vals   []string
	}{
		{"small", []string{"s0", "s1"}},       // the condition drives, alone
		{"small", []string{"s0", "s1", "s2"}}, // as large as the tenant: the tenant drives, the condition is checked
		{"big", []string{"s2"}},               // the condition drives, alone
		{"small", nil},                        // the tenant alone
	} {
		req := retrieval.Request{Scope: retrieval.Scope{Tenant: tc.tenant}, Vector: cs[0].Vector, K: 400}
		if tc.vals != nil {
			req.Filter = retrieval.Filter{Must: []retrieval.Condition{{Key: retrieval.KeySource, Values: tc.vals}}}
		}
		s.mu.RLock()
		want := s.vec.SearchExact(req.Vector, req.K, naiveAccept(s, &req))
		s.mu.RUnlock()
		got, err := s.SearchDense(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if err := sameHits(got, want, s, func(x vector.Scored) (uint32, float64) { return x.ID, float64(x.Score) }); err != nil {
			t.Fatalf("tenant %s, sources %v: %v", tc.tenant, tc.vals, err)
		}
	}
}
