package bm25

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/adaptrag/adaptrag/retrieval/analysis"
)

// SearchAmong must give exactly what Search gives with an accept func that
// admits the same ids: the same ids in the same order with bit-identical
// scores, over random corpora with replacements, removals (some past the
// compaction threshold), repeated and unknown candidate ids, and sets from
// a handful of ids to most of the corpus.
func TestSearchAmongEqualsFilteredSearch(t *testing.T) {
	an := analysis.Whitespace()
	for seed := range uint64(12) {
		r := rand.New(rand.NewPCG(seed, 11))
		z := rand.NewZipf(r, 1.2, 1, uint64(30+r.IntN(300)))
		ix := New(Params{Analyzer: an, CountRepeatedQueryTerms: seed%2 == 1})
		nDocs := 200 + r.IntN(3000)
		for range nDocs {
			ix.Add(uint32(r.IntN(nDocs*2)), randomText(r, z, 1+r.IntN(40)))
		}
		for range nDocs * 2 / 3 {
			ix.Remove(uint32(r.IntN(nDocs * 2)))
		}
		for qi := range 40 {
			q := an.Tokens(randomText(r, z, 1+r.IntN(6)))
			k := []int{1, 5, 10, 50, 5000}[qi%5]
			frac := []float64{0.001, 0.01, 0.1, 0.5, 1}[qi%5]
			var ids []uint32
			in := map[uint32]bool{}
			for range int(frac*float64(nDocs*2)) + 1 {
				id := uint32(r.IntN(nDocs*2 + 50)) // some never stored
				ids = append(ids, id)
				in[id] = true
			}
			if len(ids) > 1 {
				ids = append(ids, ids[0]) // a repeat
			}
			want := ix.SearchTokens(q, k, func(id uint32) bool { return in[id] })
			got := ix.SearchTokensAmong(q, k, ids)
			if !slices.Equal(got, want) {
				t.Fatalf("seed %d query %v k %d over %d ids:\n got %v\nwant %v", seed, q, k, len(ids), got, want)
			}
		}
	}
}

func TestSearchAmongEdgeCases(t *testing.T) {
	ix := New(Params{Analyzer: analysis.Whitespace()})
	if got := ix.SearchAmong("a", 3, []uint32{1}); got != nil {
		t.Fatalf("empty index: %v", got)
	}
	ix.Add(1, "a b")
	ix.Add(2, "b c")
	for _, tc := range []struct {
		q   string
		k   int
		ids []uint32
	}{{"a", 0, []uint32{1}}, {"a", 3, nil}, {"", 3, []uint32{1}}, {"zzz", 3, []uint32{1, 2}}, {"a", 3, []uint32{2, 9}}} {
		if got := ix.SearchAmong(tc.q, tc.k, tc.ids); got != nil {
			t.Errorf("SearchAmong(%q, %d, %v) = %v, want nil", tc.q, tc.k, tc.ids, got)
		}
	}
	if got := ix.SearchAmong("b", 3, []uint32{2}); len(got) != 1 || got[0].ID != 2 {
		t.Fatalf("got %v, want id 2 only", got)
	}
}

// Grow only makes room: an index grown first ranks as one that was not.
func TestGrowChangesNothing(t *testing.T) {
	an := analysis.Whitespace()
	r := rand.New(rand.NewPCG(5, 6))
	z := rand.NewZipf(r, 1.2, 1, 100)
	a, b := New(Params{Analyzer: an}), New(Params{Analyzer: an})
	b.Grow(5000)
	b.Grow(-1)
	for id := range uint32(3000) {
		text := randomText(r, z, 20)
		a.Add(id%2000, text)
		b.Add(id%2000, text)
	}
	if cap(b.lens) < 5000 {
		t.Errorf("Grow(5000) left room for %d documents", cap(b.lens))
	}
	for range 50 {
		q := an.Tokens(randomText(r, z, 4))
		if got, want := b.SearchTokens(q, 10, nil), a.SearchTokens(q, 10, nil); !slices.Equal(got, want) {
			t.Fatalf("query %v: %v, want %v", q, got, want)
		}
	}
}
