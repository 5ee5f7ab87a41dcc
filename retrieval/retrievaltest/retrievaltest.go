// Package retrievaltest is a behaviour suite that every retrieval.Store must
// pass, in the spirit of testing/slogtest: a backend's own test calls Run with
// a constructor for fresh, empty stores.
//
// The fixtures are tiny and hand-made (dimension 8, one-hot and two-hot
// vectors, short texts with disjoint vocabularies), so every expected result
// follows from the data by inspection rather than from a recorded run.
package retrievaltest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/retrieval/analysis"
)

// Dim is the dense dimension the suite asks open for.
const Dim = 8

// Run runs the conformance suite against stores made by open. open returns a
// fresh, empty store whose dense dimension is dim; Run closes each store it
// opens. Each subtest uses its own store, so open may be called many times.
func Run(t *testing.T, open func(t *testing.T, dim int) retrieval.Store) {
	t.Helper()
	s := &suite{open: open}
	tests := []struct {
		name string
		fn   func(t *testing.T)
	}{
		{"EmptyStore", s.emptyStore},
		{"Dim", s.dim},
		{"DenseFindsNearest", s.denseFindsNearest},
		{"SparseFindsTerm", s.sparseFindsTerm},
		{"HybridFindsBoth", s.hybridFindsBoth},
		{"HybridKeepsSingleLegHits", s.hybridKeepsSingleLegHits},
		{"RoundTrip", s.roundTrip},
		{"UpsertIdempotent", s.upsertIdempotent},
		{"UpsertReplaces", s.upsertReplaces},
		{"DeleteDocument", s.deleteDocument},
		{"ReplaceDocument", s.replaceDocument},
		{"ReplaceDocumentInvalid", s.replaceDocumentInvalid},
		{"Documents", s.documents},
		{"TenantIsolation", s.tenantIsolation},
		{"Filter", s.filter},
		{"KRespected", s.kRespected},
		{"OrderedByScore", s.orderedByScore},
		{"DimensionMismatch", s.dimensionMismatch},
		{"Invalid", s.invalid},
		{"Cancelled", s.cancelled},
		{"Chinese", s.chinese},
	}
	for _, tc := range tests {
		t.Run(tc.name, tc.fn)
	}
}

type suite struct {
	open func(t *testing.T, dim int) retrieval.Store
}

// store opens a fresh store, registers its Close and upserts chunks.
func (s *suite) store(t *testing.T, chunks ...retrieval.Chunk) retrieval.Store {
	t.Helper()
	st := s.open(t, Dim)
	if st == nil {
		t.Fatal("open returned a nil store")
	}
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	if len(chunks) > 0 {
		if err := st.Upsert(context.Background(), chunks); err != nil {
			t.Fatalf("Upsert: %v", err)
		}
	}
	return st
}

// oneHot returns the unit vector along axis i (i mod Dim).
func oneHot(i int) []float32 {
	v := make([]float32, Dim)
	v[i%Dim] = 1
	return v
}

// mix returns the normalized vector a*e_i + b*e_j.
func mix(i int, a float32, j int, b float32) []float32 {
	v := make([]float32, Dim)
	v[i] += a
	v[j] += b
	n := float32(math.Sqrt(float64(a*a + b*b)))
	for k := range v {
		v[k] /= n
	}
	return v
}

// chunk builds a text chunk of the default tenant.
func chunk(id, doc, text string, vec []float32) retrieval.Chunk {
	return retrieval.Chunk{ID: id, DocID: doc, Source: "test", ContentType: retrieval.ContentText, Text: text, Vector: vec}
}

// Corpus returns the suite's basic fixture: five chunks of the default
// tenant with disjoint vocabularies (bar the word "company" in c1, c3 and
// c4), chunk ci lying on axis i of a Dim-dimensional space. Backends can use
// it in their own tests; each call returns fresh values.
func Corpus() []retrieval.Chunk {
	return []retrieval.Chunk{
		chunk("c0", "d0", "the quick brown fox jumps", oneHot(0)),
		chunk("c1", "d0", "quarterly revenue report company finance", oneHot(1)),
		chunk("c2", "d1", "kubernetes cluster upgrade procedure", oneHot(2)),
		chunk("c3", "d1", "holiday leave policy company employees", oneHot(3)),
		chunk("c4", "d2", "password reset instructions company laptops", oneHot(4)),
	}
}

type searchFn func(context.Context, retrieval.Request) ([]retrieval.Hit, error)

// kinds lists the three search methods of st.
func kinds(st retrieval.Store) []struct {
	name   string
	search searchFn
} {
	return []struct {
		name   string
		search searchFn
	}{
		{"dense", st.SearchDense},
		{"sparse", st.SearchSparse},
		{"hybrid", st.SearchHybrid},
	}
}

func ids(hits []retrieval.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Chunk.ID
	}
	return out
}

func sortedIDs(hits []retrieval.Hit) []string {
	out := ids(hits)
	sort.Strings(out)
	return out
}

func search(t *testing.T, fn searchFn, req retrieval.Request) []retrieval.Hit {
	t.Helper()
	hits, err := fn(context.Background(), req)
	if err != nil {
		t.Fatalf("search %+v: %v", req, err)
	}
	return hits
}

func (s *suite) emptyStore(t *testing.T) {
	st := s.store(t)
	for _, k := range kinds(st) {
		hits, err := k.search(context.Background(), retrieval.Request{Text: "fox", Vector: oneHot(0), K: 5})
		if err != nil || len(hits) != 0 {
			t.Errorf("%s on an empty store = %v, %v; want no hits and a nil error", k.name, ids(hits), err)
		}
	}
}

func (s *suite) dim(t *testing.T) {
	st := s.store(t)
	if d := st.Dim(); d != 0 && d != Dim {
		t.Errorf("Dim of an empty store = %d, want 0 or %d", d, Dim)
	}
	if err := st.Upsert(context.Background(), Corpus()); err != nil {
		t.Fatal(err)
	}
	if d := st.Dim(); d != Dim {
		t.Errorf("Dim after Upsert = %d, want %d", d, Dim)
	}
}

func (s *suite) denseFindsNearest(t *testing.T) {
	st := s.store(t, Corpus()...)
	// The query leans to axis 2 and a little to axis 3: c2 then c3, the rest at 0.
	q := mix(2, 0.9, 3, 0.3)
	hits := search(t, st.SearchDense, retrieval.Request{Vector: q, K: 2})
	if got := ids(hits); !slices.Equal(got, []string{"c2", "c3"}) {
		t.Fatalf("dense ids = %v, want [c2 c3]", got)
	}
	want := 0.9 / math.Sqrt(0.9*0.9+0.3*0.3) // cosine of q with e2
	if math.Abs(hits[0].Score-want) > 1e-3 {
		t.Errorf("dense score = %v, want cosine %v", hits[0].Score, want)
	}
	if hits[0].Method != "dense" {
		t.Errorf("Method = %q, want dense", hits[0].Method)
	}
	// An exact match scores cosine 1.
	hits = search(t, st.SearchDense, retrieval.Request{Vector: oneHot(4), K: 1})
	if len(hits) != 1 || hits[0].Chunk.ID != "c4" || math.Abs(hits[0].Score-1) > 1e-3 {
		t.Errorf("exact dense match = %+v, want c4 with score 1", hits)
	}
}

func (s *suite) sparseFindsTerm(t *testing.T) {
	st := s.store(t, Corpus()...)
	hits := search(t, st.SearchSparse, retrieval.Request{Text: "Revenue", K: 5})
	if got := ids(hits); !slices.Equal(got, []string{"c1"}) {
		t.Fatalf("sparse ids for Revenue = %v, want [c1] (only c1 has the word)", got)
	}
	if hits[0].Score <= 0 || hits[0].Method != "bm25" {
		t.Errorf("sparse hit = score %v method %q, want a positive bm25 score", hits[0].Score, hits[0].Method)
	}
	// A word no chunk has finds nothing, without an error.
	hits = search(t, st.SearchSparse, retrieval.Request{Text: "zeppelin", K: 5})
	if len(hits) != 0 {
		t.Errorf("sparse ids for an unknown word = %v, want none", ids(hits))
	}
}

func (s *suite) hybridFindsBoth(t *testing.T) {
	st := s.store(t, Corpus()...)
	// Both legs put c3 first, so fusion must too.
	hits := search(t, st.SearchHybrid, retrieval.Request{Text: "leave policy", Vector: oneHot(3), K: 3})
	if len(hits) == 0 || hits[0].Chunk.ID != "c3" {
		t.Fatalf("hybrid ids = %v, want c3 first", ids(hits))
	}
	if hits[0].Method != "hybrid" || hits[0].Score <= 0 {
		t.Errorf("hybrid hit = score %v method %q, want a positive hybrid score", hits[0].Score, hits[0].Method)
	}
}

func (s *suite) hybridKeepsSingleLegHits(t *testing.T) {
	st := s.store(t, Corpus()...)
	// With one candidate per leg, dense alone finds c0 (the vector) and sparse
	// alone finds c2 (the text): each is found by one leg only.
	hits := search(t, st.SearchHybrid, retrieval.Request{Text: "kubernetes", Vector: oneHot(0), K: 5, Candidates: 1})
	if got := sortedIDs(hits); !slices.Equal(got, []string{"c0", "c2"}) {
		t.Fatalf("hybrid ids = %v, want [c0 c2]", got)
	}
	// With every candidate, c2 is in both legs and so outranks c0.
	hits = search(t, st.SearchHybrid, retrieval.Request{Text: "kubernetes", Vector: mix(0, 1, 2, 0.5), K: 5})
	if len(hits) == 0 || hits[0].Chunk.ID != "c2" {
		t.Errorf("hybrid ids = %v, want c2 first", ids(hits))
	}
}

func (s *suite) roundTrip(t *testing.T) {
	in := retrieval.Chunk{
		ID: "rt", DocID: "doc-rt", Tenant: "acme", Source: "hr", Title: "Handbook",
		ContentType: retrieval.ContentFAQ, Position: 7, Text: "vacation days carry over",
		Meta: map[string]string{"lang": "en", "year": "2024"}, Vector: oneHot(5),
	}
	st := s.store(t, in)
	hits := search(t, st.SearchDense, retrieval.Request{Scope: retrieval.Scope{Tenant: "acme"}, Vector: oneHot(5), K: 1})
	if len(hits) != 1 {
		t.Fatalf("got %d hits, want 1", len(hits))
	}
	got := hits[0].Chunk
	got.Vector = nil
	in.Vector = nil
	if fmt.Sprint(got) != fmt.Sprint(in) {
		t.Errorf("chunk round trip:\n got %+v\nwant %+v", got, in)
	}
}

func (s *suite) upsertIdempotent(t *testing.T) {
	st := s.store(t, Corpus()...)
	req := retrieval.Request{Text: "company", Vector: mix(1, 1, 4, 1), K: 10}
	var before [3][]retrieval.Hit
	for i, k := range kinds(st) {
		before[i] = search(t, k.search, req)
	}
	if err := st.Upsert(context.Background(), Corpus()); err != nil {
		t.Fatal(err)
	}
	for i, k := range kinds(st) {
		after := search(t, k.search, req)
		if !slices.Equal(ids(after), ids(before[i])) {
			t.Errorf("%s after a second Upsert = %v, want %v", k.name, ids(after), ids(before[i]))
		}
		for j := range after {
			if j < len(before[i]) && math.Abs(after[j].Score-before[i][j].Score) > 1e-6 {
				t.Errorf("%s score of %s changed from %v to %v", k.name, after[j].Chunk.ID, before[i][j].Score, after[j].Score)
			}
		}
	}
	// Dense sees every chunk exactly once.
	hits := search(t, st.SearchDense, retrieval.Request{Vector: oneHot(0), K: 100})
	if got := sortedIDs(hits); !slices.Equal(got, []string{"c0", "c1", "c2", "c3", "c4"}) {
		t.Errorf("dense ids after two upserts = %v, want each chunk once", got)
	}
}

func (s *suite) upsertReplaces(t *testing.T) {
	st := s.store(t, Corpus()...)
	c := chunk("c1", "d0", "annual budget forecast", oneHot(6))
	if err := st.Upsert(context.Background(), []retrieval.Chunk{c}); err != nil {
		t.Fatal(err)
	}
	if hits := search(t, st.SearchSparse, retrieval.Request{Text: "revenue", K: 5}); len(hits) != 0 {
		t.Errorf("old text still found: %v", ids(hits))
	}
	hits := search(t, st.SearchSparse, retrieval.Request{Text: "budget", K: 5})
	if len(hits) != 1 || hits[0].Chunk.ID != "c1" || hits[0].Chunk.Text != c.Text {
		t.Errorf("new text search = %+v, want c1 with the new text", hits)
	}
	hits = search(t, st.SearchDense, retrieval.Request{Vector: oneHot(6), K: 1})
	if len(hits) != 1 || hits[0].Chunk.ID != "c1" || math.Abs(hits[0].Score-1) > 1e-3 {
		t.Errorf("new vector search = %+v, want c1 with score 1", hits)
	}
	hits = search(t, st.SearchDense, retrieval.Request{Vector: oneHot(0), K: 100})
	if len(hits) != 5 {
		t.Errorf("dense sees %d chunks after a replace, want 5", len(hits))
	}
}

func (s *suite) deleteDocument(t *testing.T) {
	a, b := retrieval.Scope{Tenant: "a"}, retrieval.Scope{Tenant: "b"}
	mk := func(id, tenant, doc string, axis int) retrieval.Chunk {
		c := chunk(id, doc, "shared manual text", oneHot(axis))
		c.Tenant = tenant
		return c
	}
	st := s.store(t,
		mk("a1", "a", "d1", 0), mk("a2", "a", "d1", 1), mk("a3", "a", "d2", 2),
		mk("b1", "b", "d1", 3),
	)
	if err := st.DeleteDocument(context.Background(), a, "d1"); err != nil {
		t.Fatalf("DeleteDocument: %v", err)
	}
	for _, k := range kinds(st) {
		req := retrieval.Request{Text: "manual", Vector: oneHot(0), K: 10}
		req.Scope = a
		if got := sortedIDs(search(t, k.search, req)); !slices.Equal(got, []string{"a3"}) {
			t.Errorf("%s in tenant a after delete = %v, want [a3]", k.name, got)
		}
		req.Scope = b
		if got := sortedIDs(search(t, k.search, req)); !slices.Equal(got, []string{"b1"}) {
			t.Errorf("%s in tenant b after deleting a's d1 = %v, want [b1]", k.name, got)
		}
	}
	// Re-inserting a deleted chunk brings it back.
	if err := st.Upsert(context.Background(), []retrieval.Chunk{mk("a1", "a", "d1", 0)}); err != nil {
		t.Fatal(err)
	}
	hits := search(t, st.SearchDense, retrieval.Request{Scope: a, Vector: oneHot(0), K: 1})
	if len(hits) != 1 || hits[0].Chunk.ID != "a1" {
		t.Errorf("re-inserted chunk search = %v, want [a1]", ids(hits))
	}
}

func (s *suite) tenantIsolation(t *testing.T) {
	var chunks []retrieval.Chunk
	tenants := []string{"", "a", "b"}
	for ti, tenant := range tenants {
		for i := range 3 {
			c := chunk(fmt.Sprintf("%s-%d", tenant, i), "d", "common onboarding guide", oneHot(ti*3+i))
			c.Tenant = tenant
			chunks = append(chunks, c)
		}
	}
	st := s.store(t, chunks...)
	for ti, tenant := range tenants {
		want := []string{tenant + "-0", tenant + "-1", tenant + "-2"}
		for _, k := range kinds(st) {
			// The vector points at another tenant's chunk: it must still not leak.
			req := retrieval.Request{Scope: retrieval.Scope{Tenant: tenant}, Text: "onboarding", Vector: oneHot((ti*3 + 3) % 9), K: 20}
			hits := search(t, k.search, req)
			if got := sortedIDs(hits); !slices.Equal(got, want) {
				t.Errorf("%s for tenant %q = %v, want %v", k.name, tenant, got, want)
			}
			for _, h := range hits {
				if h.Chunk.Tenant != tenant {
					t.Errorf("%s for tenant %q returned a chunk of tenant %q", k.name, tenant, h.Chunk.Tenant)
				}
			}
		}
	}
	// A tenant with no chunks sees nothing.
	for _, k := range kinds(st) {
		hits := search(t, k.search, retrieval.Request{Scope: retrieval.Scope{Tenant: "c"}, Text: "onboarding", Vector: oneHot(0), K: 20})
		if len(hits) != 0 {
			t.Errorf("%s for an unknown tenant = %v, want none", k.name, ids(hits))
		}
	}
}

func (s *suite) filter(t *testing.T) {
	mk := func(id, source, ctype, doc, lang string, axis int) retrieval.Chunk {
		return retrieval.Chunk{ID: id, DocID: doc, Source: source, ContentType: ctype, Text: "policy text " + id,
			Meta: map[string]string{"lang": lang}, Vector: oneHot(axis)}
	}
	st := s.store(t,
		mk("f1", "hr", retrieval.ContentText, "d1", "en", 0),
		mk("f2", "hr", retrieval.ContentFAQ, "d1", "de", 1),
		mk("f3", "it", retrieval.ContentText, "d2", "en", 2),
		mk("f4", "it", retrieval.ContentTableRow, "d3", "fr", 3),
		mk("f5", "legal", retrieval.ContentText, "d4", "en", 4),
	)
	cond := func(key string, vals ...string) retrieval.Condition {
		return retrieval.Condition{Key: key, Values: vals}
	}
	cases := []struct {
		name string
		must []retrieval.Condition
		want []string
	}{
		{"source", []retrieval.Condition{cond(retrieval.KeySource, "hr")}, []string{"f1", "f2"}},
		{"source one-of", []retrieval.Condition{cond(retrieval.KeySource, "hr", "legal")}, []string{"f1", "f2", "f5"}},
		{"content_type", []retrieval.Condition{cond(retrieval.KeyContentType, retrieval.ContentText)}, []string{"f1", "f3", "f5"}},
		{"content_type one-of", []retrieval.Condition{cond(retrieval.KeyContentType, retrieval.ContentFAQ, retrieval.ContentTableRow)}, []string{"f2", "f4"}},
		{"doc_id", []retrieval.Condition{cond(retrieval.KeyDocID, "d1")}, []string{"f1", "f2"}},
		{"doc_id one-of", []retrieval.Condition{cond(retrieval.KeyDocID, "d2", "d3")}, []string{"f3", "f4"}},
		{"meta", []retrieval.Condition{cond("lang", "en")}, []string{"f1", "f3", "f5"}},
		{"meta one-of", []retrieval.Condition{cond("lang", "de", "fr")}, []string{"f2", "f4"}},
		{"conjunction", []retrieval.Condition{cond(retrieval.KeySource, "it"), cond("lang", "en")}, []string{"f3"}},
		{"no match", []retrieval.Condition{cond(retrieval.KeySource, "sales")}, nil},
	}
	for _, tc := range cases {
		for _, k := range kinds(st) {
			req := retrieval.Request{Filter: retrieval.Filter{Must: tc.must}, Text: "policy", Vector: oneHot(4), K: 10}
			got := sortedIDs(search(t, k.search, req))
			if len(got) == 0 {
				got = nil
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("%s %s = %v, want %v", tc.name, k.name, got, tc.want)
			}
		}
	}
}

func (s *suite) kRespected(t *testing.T) {
	st := s.store(t, Corpus()...)
	for _, k := range kinds(st) {
		for _, n := range []int{1, 2, 4} {
			hits := search(t, k.search, retrieval.Request{Text: "company", Vector: mix(1, 1, 3, 1), K: n})
			// "company" is in three texts; dense and hybrid see all five chunks.
			want := n
			if k.name == "sparse" {
				want = min(n, 3)
			}
			if len(hits) != want {
				t.Errorf("%s with K=%d returned %d hits, want %d", k.name, n, len(hits), want)
			}
		}
	}
}

func (s *suite) orderedByScore(t *testing.T) {
	// Texts repeat the query word a different number of times and vectors
	// lie at different angles, so the scores differ.
	var chunks []retrieval.Chunk
	for i := range 6 {
		text := "report"
		for range i {
			text += " report"
		}
		text += " padding words here"
		chunks = append(chunks, chunk(fmt.Sprintf("o%d", i), "d", text, mix(0, float32(i+1), 1, 3)))
	}
	st := s.store(t, chunks...)
	for _, k := range kinds(st) {
		hits := search(t, k.search, retrieval.Request{Text: "report", Vector: oneHot(0), K: 6})
		if len(hits) != 6 {
			t.Errorf("%s returned %d hits, want 6", k.name, len(hits))
		}
		for i := 1; i < len(hits); i++ {
			if hits[i].Score > hits[i-1].Score {
				t.Errorf("%s hits not ordered by score: %v > %v at %d", k.name, hits[i].Score, hits[i-1].Score, i)
			}
		}
	}
	// Dense order is fully derivable: a larger weight on axis 0 is closer.
	hits := search(t, st.SearchDense, retrieval.Request{Vector: oneHot(0), K: 6})
	if got := ids(hits); !slices.Equal(got, []string{"o5", "o4", "o3", "o2", "o1", "o0"}) {
		t.Errorf("dense order = %v, want o5..o0", got)
	}
}

func (s *suite) dimensionMismatch(t *testing.T) {
	st := s.store(t, Corpus()...)
	bad := chunk("x", "dx", "wrong size", make([]float32, Dim+1))
	bad.Vector[0] = 1
	if err := st.Upsert(context.Background(), []retrieval.Chunk{bad}); !errors.Is(err, retrieval.ErrDimension) {
		t.Errorf("Upsert of a %d-d vector: err = %v, want ErrDimension", Dim+1, err)
	}
	short := []float32{1, 0, 0}
	if _, err := st.SearchDense(context.Background(), retrieval.Request{Vector: short, K: 1}); !errors.Is(err, retrieval.ErrDimension) {
		t.Errorf("SearchDense with a 3-d vector: err = %v, want ErrDimension", err)
	}
	if _, err := st.SearchHybrid(context.Background(), retrieval.Request{Text: "fox", Vector: short, K: 1}); !errors.Is(err, retrieval.ErrDimension) {
		t.Errorf("SearchHybrid with a 3-d vector: err = %v, want ErrDimension", err)
	}
	// The failed Upsert left the store as it was.
	hits := search(t, st.SearchDense, retrieval.Request{Vector: oneHot(0), K: 100})
	if len(hits) != 5 {
		t.Errorf("store has %d chunks after a rejected Upsert, want 5", len(hits))
	}
}

func (s *suite) invalid(t *testing.T) {
	st := s.store(t, Corpus()...)
	for _, k := range kinds(st) {
		for _, n := range []int{0, -1} {
			_, err := k.search(context.Background(), retrieval.Request{Text: "fox", Vector: oneHot(0), K: n})
			if !errors.Is(err, retrieval.ErrInvalid) {
				t.Errorf("%s with K=%d: err = %v, want ErrInvalid", k.name, n, err)
			}
		}
	}
	if _, err := st.SearchSparse(context.Background(), retrieval.Request{K: 3}); !errors.Is(err, retrieval.ErrInvalid) {
		t.Errorf("SearchSparse with empty text: err = %v, want ErrInvalid", err)
	}
	if err := st.Upsert(context.Background(), []retrieval.Chunk{chunk("", "d", "no id", oneHot(0))}); !errors.Is(err, retrieval.ErrInvalid) {
		t.Errorf("Upsert of a chunk without ID: err = %v, want ErrInvalid", err)
	}
}

func (s *suite) cancelled(t *testing.T) {
	st := s.store(t, Corpus()...)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, k := range kinds(st) {
		hits, err := k.search(ctx, retrieval.Request{Text: "fox", Vector: oneHot(0), K: 3})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled context = %v, %v; want context.Canceled", k.name, ids(hits), err)
		}
	}
	if err := st.Upsert(ctx, []retrieval.Chunk{chunk("z", "dz", "late", oneHot(7))}); !errors.Is(err, context.Canceled) {
		t.Errorf("Upsert with a cancelled context: err = %v, want context.Canceled", err)
	}
	if err := st.DeleteDocument(ctx, retrieval.Scope{}, "d0"); !errors.Is(err, context.Canceled) {
		t.Errorf("DeleteDocument with a cancelled context: err = %v, want context.Canceled", err)
	}
	if err := st.ReplaceDocument(ctx, retrieval.Scope{}, "d0", []retrieval.Chunk{chunk("z", "d0", "late", oneHot(7))}); !errors.Is(err, context.Canceled) {
		t.Errorf("ReplaceDocument with a cancelled context: err = %v, want context.Canceled", err)
	}
	// Nothing of the cancelled writes happened.
	hits := search(t, st.SearchDense, retrieval.Request{Vector: oneHot(0), K: 100})
	if got := sortedIDs(hits); !slices.Equal(got, []string{"c0", "c1", "c2", "c3", "c4"}) {
		t.Errorf("after cancelled writes the store holds %v", got)
	}
}

func (s *suite) chinese(t *testing.T) {
	fixtures := []retrieval.Chunk{
		chunk("zh1", "dz", "北京是中华人民共和国的首都", oneHot(0)),
		chunk("zh2", "dz", "上海是中国最大的城市", oneHot(1)),
		chunk("zh3", "dz", "机器学习是人工智能的一个分支", oneHot(2)),
		chunk("en1", "de", "the capital city of france is paris", oneHot(3)),
	}
	texts := map[string]string{}
	for _, c := range fixtures {
		texts[c.ID] = c.Text
	}
	st := s.store(t, fixtures...)
	cases := []struct{ query, want string }{
		{"首都", "zh1"},
		{"中国的首都在哪里", "zh1"},
		{"人工智能", "zh3"},
		{"上海", "zh2"},
		{"Paris", "en1"},
	}
	for _, tc := range cases {
		// Check the fixture itself: the analyzer must find a term the query
		// and the wanted text share, or the expectation would be unfounded.
		q := analysis.Default().Tokens(tc.query)
		shared := false
		for _, term := range analysis.Default().Tokens(texts[tc.want]) {
			shared = shared || slices.Contains(q, term)
		}
		if !shared {
			t.Fatalf("the analyzer finds no term shared by %q and %q", tc.query, texts[tc.want])
		}
		hits := search(t, st.SearchSparse, retrieval.Request{Text: tc.query, K: 3})
		if len(hits) == 0 || hits[0].Chunk.ID != tc.want {
			t.Errorf("sparse %q = %v, want %s first", tc.query, ids(hits), tc.want)
		}
		// The dense leg ties every chunk at cosine 0, so only membership is derivable.
		hits = search(t, st.SearchHybrid, retrieval.Request{Text: tc.query, Vector: oneHot(7), K: 4})
		if !slices.Contains(ids(hits), tc.want) {
			t.Errorf("hybrid %q = %v, want it to contain %s", tc.query, ids(hits), tc.want)
		}
	}
}

// scoped builds a chunk of a tenant with a position.
func scoped(id, tenant, doc, text string, axis, pos int) retrieval.Chunk {
	c := chunk(id, doc, text, oneHot(axis))
	c.Tenant, c.Position = tenant, pos
	return c
}

// all lists the ids of every chunk of scope (a dense search for more than
// the store holds, since every chunk has a cosine with any query).
func all(t *testing.T, st retrieval.Store, scope retrieval.Scope) []string {
	t.Helper()
	got := sortedIDs(search(t, st.SearchDense, retrieval.Request{Scope: scope, Vector: oneHot(0), K: 100}))
	if len(got) == 0 {
		return nil
	}
	return got
}

func (s *suite) replaceDocument(t *testing.T) {
	ctx := context.Background()
	def, x := retrieval.Scope{}, retrieval.Scope{Tenant: "x"}
	st := s.store(t,
		scoped("r1", "", "d1", "alpha manual first", 0, 0),
		scoped("r2", "", "d1", "alpha manual second", 1, 1),
		scoped("r3", "", "d2", "beta manual", 2, 0),
		scoped("r1", "x", "d1", "alpha manual of tenant x", 3, 0),
	)
	// The new version keeps one id (r2, new text), drops r1 and adds r4.
	err := st.ReplaceDocument(ctx, def, "d1", []retrieval.Chunk{
		scoped("r2", "", "d1", "gamma revised", 4, 0),
		scoped("r4", "", "d1", "gamma appendix", 5, 1),
	})
	if err != nil {
		t.Fatalf("ReplaceDocument: %v", err)
	}
	if got := all(t, st, def); !slices.Equal(got, []string{"r2", "r3", "r4"}) {
		t.Errorf("tenant \"\" after replacing d1 = %v, want [r2 r3 r4]", got)
	}
	for _, k := range kinds(st) {
		req := retrieval.Request{Text: "alpha", Vector: oneHot(0), K: 10}
		if k.name != "dense" {
			// The old text is gone from the sparse index.
			if hits := search(t, k.search, req); slices.Contains(ids(hits), "r1") || (k.name == "sparse" && len(hits) != 0) {
				t.Errorf("%s for the old text after the replacement = %v", k.name, ids(hits))
			}
		}
		req = retrieval.Request{Text: "gamma", Vector: oneHot(4), K: 10}
		if got := sortedIDs(search(t, k.search, req)); !slices.Contains(got, "r2") || !slices.Contains(got, "r4") {
			t.Errorf("%s for the new text = %v, want r2 and r4", k.name, got)
		}
	}
	hits := search(t, st.SearchDense, retrieval.Request{Vector: oneHot(4), K: 1})
	if len(hits) != 1 || hits[0].Chunk.ID != "r2" || hits[0].Chunk.Text != "gamma revised" || math.Abs(hits[0].Score-1) > 1e-3 {
		t.Errorf("the kept id r2 = %+v, want its new text and vector", hits)
	}
	// The other tenant's document of the same id is untouched.
	hits = search(t, st.SearchSparse, retrieval.Request{Scope: x, Text: "alpha", K: 10})
	if len(hits) != 1 || hits[0].Chunk.ID != "r1" || hits[0].Chunk.Text != "alpha manual of tenant x" {
		t.Errorf("tenant x after replacing d1 of tenant \"\" = %+v", hits)
	}
	// No chunks: the document is deleted.
	if err := st.ReplaceDocument(ctx, def, "d2", nil); err != nil {
		t.Fatalf("ReplaceDocument with no chunks: %v", err)
	}
	if got := all(t, st, def); !slices.Equal(got, []string{"r2", "r4"}) {
		t.Errorf("after replacing d2 by nothing = %v, want [r2 r4]", got)
	}
	// A document that does not exist yet is created.
	if err := st.ReplaceDocument(ctx, x, "d9", []retrieval.Chunk{scoped("r9", "x", "d9", "delta", 6, 0)}); err != nil {
		t.Fatalf("ReplaceDocument of a new document: %v", err)
	}
	if got := all(t, st, x); !slices.Equal(got, []string{"r1", "r9"}) {
		t.Errorf("tenant x after creating d9 = %v, want [r1 r9]", got)
	}
	if got := all(t, st, def); !slices.Equal(got, []string{"r2", "r4"}) {
		t.Errorf("tenant \"\" after creating x's d9 = %v, want [r2 r4]", got)
	}
	// Replacing with the same chunks again changes nothing.
	same := []retrieval.Chunk{scoped("r9", "x", "d9", "delta", 6, 0)}
	if err := st.ReplaceDocument(ctx, x, "d9", same); err != nil {
		t.Fatal(err)
	}
	if got := all(t, st, x); !slices.Equal(got, []string{"r1", "r9"}) {
		t.Errorf("tenant x after the same replacement again = %v", got)
	}
}

func (s *suite) replaceDocumentInvalid(t *testing.T) {
	ctx := context.Background()
	x := retrieval.Scope{Tenant: "x"}
	st := s.store(t,
		scoped("a1", "x", "d1", "first text", 0, 0),
		scoped("a2", "x", "d1", "second text", 1, 1),
	)
	wrongDim := scoped("n2", "x", "d1", "new", 2, 1)
	wrongDim.Vector = make([]float32, Dim+1)
	wrongDim.Vector[0] = 1
	cases := []struct {
		name   string
		doc    string
		chunks []retrieval.Chunk
		want   error
	}{
		{"another document's chunk", "d1", []retrieval.Chunk{scoped("n1", "x", "d1", "new", 2, 0), scoped("n2", "x", "d2", "new", 3, 1)}, retrieval.ErrInvalid},
		{"another tenant's chunk", "d1", []retrieval.Chunk{scoped("n1", "x", "d1", "new", 2, 0), scoped("n2", "y", "d1", "new", 3, 1)}, retrieval.ErrInvalid},
		{"empty document id", "", []retrieval.Chunk{scoped("n1", "x", "", "new", 2, 0)}, retrieval.ErrInvalid},
		{"chunk without id", "d1", []retrieval.Chunk{scoped("", "x", "d1", "new", 2, 0)}, retrieval.ErrInvalid},
		{"wrong dimension", "d1", []retrieval.Chunk{scoped("n1", "x", "d1", "new", 2, 0), wrongDim}, retrieval.ErrDimension},
	}
	for _, tc := range cases {
		if err := st.ReplaceDocument(ctx, x, tc.doc, tc.chunks); !errors.Is(err, tc.want) {
			t.Errorf("%s: err = %v, want %v", tc.name, err, tc.want)
		}
		// The whole batch is refused: the old version is still there.
		if got := all(t, st, x); !slices.Equal(got, []string{"a1", "a2"}) {
			t.Errorf("%s: store holds %v after a refused replacement, want [a1 a2]", tc.name, got)
		}
		if got := all(t, st, retrieval.Scope{Tenant: "y"}); got != nil {
			t.Errorf("%s: tenant y holds %v", tc.name, got)
		}
	}
}

func (s *suite) documents(t *testing.T) {
	ctx := context.Background()
	probe := s.store(t)
	if _, ok := probe.(retrieval.Lister); !ok {
		t.Skip("the store does not implement retrieval.Lister")
	}
	meta := func(c retrieval.Chunk, origin, hash, at string) retrieval.Chunk {
		c.Meta = map[string]string{retrieval.MetaOrigin: origin, retrieval.MetaContentHash: hash, retrieval.MetaIngestedAt: at}
		c.Source, c.Title = "hr", "Guide"
		return c
	}
	// Ids sort against positions, so "first chunk" must mean position.
	g0 := meta(scoped("g-c", "", "guide", "guide intro", 0, 0), "handbook/guide.md", "h1", "2024-05-01T10:00:00Z")
	g1 := meta(scoped("g-b", "", "guide", "guide table", 1, 1), "handbook/guide.md", "h1", "2024-05-01T10:00:00Z")
	g2 := meta(scoped("g-a", "", "guide", "guide more", 2, 2), "handbook/guide.md", "h1", "2024-05-01T10:00:00Z")
	g1.ContentType, g2.ContentType = retrieval.ContentTableRow, retrieval.ContentTableRow
	o0 := meta(scoped("o-0", "", "other", "other one", 3, 0), "a/other.md", "h2", "2024-06-01T00:00:00Z")
	o1 := meta(scoped("o-1", "", "other", "other two", 4, 1), "a/other.md", "h2", "2024-06-01T00:00:00Z")
	f0 := scoped("f-0", "", "faq1", "faq entry", 5, 0) // no metadata at all
	x0 := meta(scoped("g-c", "x", "guide", "x guide", 6, 0), "x/guide.md", "hx", "2025-01-02T03:04:05Z")
	st := s.store(t, g2, g1, o1, x0, f0, o0, g0)
	l := st.(retrieval.Lister)
	list := func(scope retrieval.Scope) []retrieval.DocInfo {
		t.Helper()
		docs, err := l.Documents(ctx, scope)
		if err != nil {
			t.Fatalf("Documents(%+v): %v", scope, err)
		}
		return docs
	}
	at := func(s string) time.Time {
		tm, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	check := func(what string, got, want []retrieval.DocInfo) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: %d documents %+v, want %d %+v", what, len(got), got, len(want), want)
		}
		for i := range want {
			g, w := got[i], want[i]
			if !g.IngestedAt.Equal(w.IngestedAt) {
				t.Errorf("%s: document %d IngestedAt = %v, want %v", what, i, g.IngestedAt, w.IngestedAt)
			}
			g.IngestedAt, w.IngestedAt = time.Time{}, time.Time{}
			if g != w {
				t.Errorf("%s: document %d =\n %+v\nwant\n %+v", what, i, g, w)
			}
		}
	}
	// Ordered by origin (the faq has none), then document id.
	check("tenant \"\"", list(retrieval.Scope{}), []retrieval.DocInfo{
		{DocID: "faq1", Source: "test", ContentType: retrieval.ContentText, Chunks: 1},
		{DocID: "other", Origin: "a/other.md", Source: "hr", Title: "Guide", ContentType: retrieval.ContentText, Chunks: 2, Hash: "h2", IngestedAt: at("2024-06-01T00:00:00Z")},
		{DocID: "guide", Origin: "handbook/guide.md", Source: "hr", Title: "Guide", ContentType: retrieval.ContentText, Chunks: 3, Hash: "h1", IngestedAt: at("2024-05-01T10:00:00Z")},
	})
	check("tenant x", list(retrieval.Scope{Tenant: "x"}), []retrieval.DocInfo{
		{DocID: "guide", Origin: "x/guide.md", Source: "hr", Title: "Guide", ContentType: retrieval.ContentText, Chunks: 1, Hash: "hx", IngestedAt: at("2025-01-02T03:04:05Z")},
	})
	if docs := list(retrieval.Scope{Tenant: "nobody"}); len(docs) != 0 {
		t.Errorf("a tenant without chunks lists %+v", docs)
	}
	// Listings follow replacements and deletions.
	n0 := meta(scoped("g-new", "", "guide", "guide rewritten", 7, 0), "handbook/guide.md", "h3", "2024-07-01T00:00:00Z")
	if err := st.ReplaceDocument(ctx, retrieval.Scope{}, "guide", []retrieval.Chunk{n0}); err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteDocument(ctx, retrieval.Scope{}, "other"); err != nil {
		t.Fatal(err)
	}
	check("tenant \"\" after a replacement and a deletion", list(retrieval.Scope{}), []retrieval.DocInfo{
		{DocID: "faq1", Source: "test", ContentType: retrieval.ContentText, Chunks: 1},
		{DocID: "guide", Origin: "handbook/guide.md", Source: "hr", Title: "Guide", ContentType: retrieval.ContentText, Chunks: 1, Hash: "h3", IngestedAt: at("2024-07-01T00:00:00Z")},
	})
	check("tenant x after changes to tenant \"\"", list(retrieval.Scope{Tenant: "x"}), []retrieval.DocInfo{
		{DocID: "guide", Origin: "x/guide.md", Source: "hr", Title: "Guide", ContentType: retrieval.ContentText, Chunks: 1, Hash: "hx", IngestedAt: at("2025-01-02T03:04:05Z")},
	})
}
