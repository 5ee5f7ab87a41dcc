package bm25

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/adaptrag/adaptrag/internal/workload"
	"github.com/adaptrag/adaptrag/retrieval/analysis"
)

// oracle is a brute-force BM25 over the live documents, written straight
// from the formula in the package comment.
type oracle struct {
	k1, b    float64
	an       analysis.Analyzer
	distinct bool
	docs     map[uint32][]string
}

func newOracle(an analysis.Analyzer) *oracle {
	return &oracle{k1: DefaultK1, b: DefaultB, an: an, distinct: true, docs: map[uint32][]string{}} // the index default
}

func (o *oracle) score(query []string) map[uint32]float64 {
	n := float64(len(o.docs))
	total := 0
	df := map[string]int{}
	for _, toks := range o.docs {
		total += len(toks)
		seen := map[string]bool{}
		for _, t := range toks {
			if !seen[t] {
				seen[t] = true
				df[t]++
			}
		}
	}
	avgdl := float64(total) / n
	out := map[uint32]float64{}
	for id, toks := range o.docs {
		tf := map[string]int{}
		for _, t := range toks {
			tf[t]++
		}
		s, matched := 0.0, false
		counted := map[string]bool{}
		for _, qt := range query { // every occurrence counts, or each distinct token once
			if o.distinct && counted[qt] {
				continue
			}
			counted[qt] = true
			f := float64(tf[qt])
			if f == 0 {
				continue
			}
			matched = true
			idf := math.Log(1 + (n-float64(df[qt])+0.5)/(float64(df[qt])+0.5))
			s += idf * f * (o.k1 + 1) / (f + o.k1*(1-o.b+o.b*float64(len(toks))/avgdl))
		}
		if matched {
			out[id] = s
		}
	}
	return out
}

// check compares ix.SearchTokens with the oracle: the same score at every
// rank, each returned id scored as the oracle scores it, accepted and
// unique, and no better document left out.
func check(t *testing.T, ix *Index, o *oracle, query []string, k int, accept func(uint32) bool) {
	t.Helper()
	got := ix.SearchTokens(query, k, accept)
	// Both walks give the very same results, scores bit for bit, whichever
	// of them the index's size picks.
	if q := ix.prepare(query); len(q.terms) > 0 {
		if docs := q.runDocs(ix, k, accept); !slices.Equal(docs, got) {
			t.Fatalf("query %q k=%d: document at a time %v, term at a time %v", query, k, docs, got)
		}
	}
	all := o.score(query)
	var want []Scored
	for id, s := range all {
		if accept == nil || accept(id) {
			want = append(want, Scored{id, s})
		}
	}
	slices.SortFunc(want, byScore)
	want = want[:min(k, len(want))]
	if len(want) == 0 {
		if got != nil {
			t.Fatalf("query %q: got %v, want nil", query, got)
		}
		return
	}
	if len(got) != len(want) {
		t.Fatalf("query %q k=%d: %d results, want %d", query, k, len(got), len(want))
	}
	seen := map[uint32]bool{}
	for i, g := range got {
		if d := math.Abs(g.Score - want[i].Score); d > 1e-9 {
			t.Fatalf("query %q rank %d: score %v, want %v", query, i, g.Score, want[i].Score)
		}
		if d := math.Abs(g.Score - all[g.ID]); d > 1e-9 {
			t.Fatalf("query %q: id %d has score %v, oracle says %v", query, g.ID, g.Score, all[g.ID])
		}
		if seen[g.ID] || (accept != nil && !accept(g.ID)) {
			t.Fatalf("query %q: id %d duplicate or not accepted", query, g.ID)
		}
		seen[g.ID] = true
		if i > 0 && byScore(got[i-1], g) > 0 {
			t.Fatalf("query %q: results out of order at %d: %v", query, i, got)
		}
	}
}

func randomText(r *rand.Rand, z *rand.Zipf, maxLen int) string {
	n := r.IntN(maxLen + 1)
	var sb strings.Builder
	for i := range n {
		if i > 0 {
			sb.WriteByte(' ')
		}
		fmt.Fprintf(&sb, "w%d", z.Uint64())
	}
	return sb.String()
}

func TestAgainstBruteForce(t *testing.T) {
	an := analysis.Whitespace()
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 7))
		z := rand.NewZipf(r, 1.2, 1, uint64(20+r.IntN(300)))
		distinct := seed%2 == 1
		ix, o := New(Params{Analyzer: an, CountRepeatedQueryTerms: !distinct}), newOracle(an)
		o.distinct = distinct
		nDocs := 50 + r.IntN(600)
		for range nDocs {
			id := uint32(r.IntN(nDocs * 2)) // some ids repeat: replacement
			text := randomText(r, z, 1+r.IntN(40))
			ix.Add(id, text)
			o.docs[id] = an.Tokens(text)
		}
		for range nDocs / 3 {
			id := uint32(r.IntN(nDocs * 2))
			ix.Remove(id)
			delete(o.docs, id)
		}
		if ix.Len() != len(o.docs) {
			t.Fatalf("seed %d: Len %d, want %d", seed, ix.Len(), len(o.docs))
		}
		for qi := range 30 {
			// Long questions too: many lists, most of them completed by skipping.
			q := an.Tokens(randomText(r, z, 1+r.IntN([]int{6, 40}[qi%2])))
			k := []int{1, 3, 10, 50, 1000}[qi%5]
			var accept func(uint32) bool
			if qi%3 == 0 {
				mod := uint32(2 + r.IntN(3))
				accept = func(id uint32) bool { return id%mod != 0 }
			}
			check(t, ix, o, q, k, accept)
		}
	}
}

func TestCompaction(t *testing.T) {
	an := analysis.Whitespace()
	r := rand.New(rand.NewPCG(1, 2))
	z := rand.NewZipf(r, 1.1, 1, 200)
	ix, o := New(Params{Analyzer: an}), newOracle(an)
	for id := range uint32(5000) {
		text := randomText(r, z, 20)
		ix.Add(id, text)
		o.docs[id] = an.Tokens(text)
	}
	for id := range uint32(4000) { // crosses the compaction threshold
		ix.Remove(id)
		delete(o.docs, id)
	}
	if len(ix.ids) >= 5000 {
		t.Fatalf("no compaction: %d slots for %d documents", len(ix.ids), ix.Len())
	}
	for id := uint32(4000); id < 4100; id++ { // replace after compaction
		text := randomText(r, z, 20)
		ix.Add(id, text)
		o.docs[id] = an.Tokens(text)
	}
	for range 50 {
		check(t, ix, o, an.Tokens(randomText(r, z, 5)), 20, nil)
	}
}

// A writer that keeps replacing documents with words never seen before
// (revision numbers, dates) must not keep every word it ever saw: found by
// a 10-minute soak, where the vocabulary grew by one term per write.
func TestCompactionDropsDeadTerms(t *testing.T) {
	an := analysis.Whitespace()
	r := rand.New(rand.NewPCG(3, 4))
	z := rand.NewZipf(r, 1.1, 1, 200)
	ix, o := New(Params{Analyzer: an}), newOracle(an)
	for v := range 20000 {
		id := uint32(v % 10)
		text := fmt.Sprintf("%s revision%d", randomText(r, z, 8), v)
		ix.Add(id, text)
		o.docs[id] = an.Tokens(text)
	}
	// Live documents hold at most 10 revision words and 200 others; dead
	// slots awaiting compaction (at most 1024) hold one revision word each.
	if n := len(ix.dict); n > 10+200+1100 || len(ix.terms) != n {
		t.Fatalf("vocabulary of %d terms (%d entries) for %d live documents", n, len(ix.terms), ix.Len())
	}
	for v := 19990; v < 20000; v++ {
		check(t, ix, o, []string{fmt.Sprintf("revision%d", v)}, 3, nil)
	}
	for range 50 {
		check(t, ix, o, an.Tokens(randomText(r, z, 5)), 10, nil)
	}
}

func TestTiesByID(t *testing.T) {
	ix := New(Params{})
	for _, id := range []uint32{9, 4, 7, 1} {
		ix.Add(id, "same words here")
	}
	ix.Add(2, "other text")
	got := ix.Search("words", 3, nil)
	if len(got) != 3 || got[0].ID != 1 || got[1].ID != 4 || got[2].ID != 7 {
		t.Fatalf("got %v, want ids 1, 4, 7", got)
	}
	if got[0].Score != got[1].Score || got[1].Score != got[2].Score {
		t.Fatalf("identical documents scored differently: %v", got)
	}
}

func TestHandComputedScore(t *testing.T) {
	ix := New(Params{Analyzer: analysis.Whitespace()})
	ix.Add(1, "a b")
	ix.Add(2, "b c c d")
	// N=2, avgdl=3. For "c" in doc 2: df=1, idf=ln(1+(2-1+0.5)/1.5)=ln 2;
	// tf=2, len 4: 2·2.2/(2+1.2·(0.25+0.75·4/3)) = 4.4/3.5.
	want := math.Log(2) * 4.4 / 3.5
	got := ix.Search("c", 10, nil)
	if len(got) != 1 || got[0].ID != 2 || math.Abs(got[0].Score-want) > 1e-12 {
		t.Fatalf("got %v, want [{2 %v}]", got, want)
	}
	// A repeated query token counts once, or twice with CountRepeatedQueryTerms.
	if got2 := ix.Search("c c", 10, nil); math.Abs(got2[0].Score-want) > 1e-12 {
		t.Fatalf("distinct: got %v, want %v", got2[0].Score, want)
	}
	dx := New(Params{Analyzer: analysis.Whitespace(), CountRepeatedQueryTerms: true})
	dx.Add(1, "a b")
	dx.Add(2, "b c c d")
	if got2 := dx.Search("c c", 10, nil); math.Abs(got2[0].Score-2*want) > 1e-12 {
		t.Fatalf("repeated token: got %v, want %v", got2[0].Score, 2*want)
	}
}

func TestEdgeCases(t *testing.T) {
	ix := New(Params{})
	if got := ix.Search("anything", 10, nil); got != nil {
		t.Fatalf("empty index: %v", got)
	}
	ix.Add(1, "hello world")
	ix.Add(2, "")
	for _, tc := range []struct {
		q string
		k int
	}{{"hello", 0}, {"hello", -1}, {"", 5}, {"missing", 5}, {"!!!", 5}} {
		if got := ix.Search(tc.q, tc.k, nil); got != nil {
			t.Errorf("Search(%q, %d) = %v, want nil", tc.q, tc.k, got)
		}
	}
	if got := ix.Search("hello", 5, func(uint32) bool { return false }); got != nil {
		t.Errorf("all rejected: %v", got)
	}
	ix.Remove(1)
	ix.Remove(1)
	ix.Remove(42)
	if ix.Len() != 1 {
		t.Fatalf("Len = %d, want 1", ix.Len())
	}
	if got := ix.Search("hello", 5, nil); got != nil {
		t.Fatalf("removed document found: %v", got)
	}
	ix.Add(1, "hello again")
	if got := ix.Search("HELLO", 5, nil); len(got) != 1 || got[0].ID != 1 {
		t.Fatalf("re-added document: %v", got)
	}
}

func TestFilterDoesNotTakeSlots(t *testing.T) {
	ix := New(Params{})
	for id := range uint32(100) {
		ix.Add(id, strings.Repeat("go ", int(id%7)+1))
	}
	even := func(id uint32) bool { return id%2 == 0 }
	got := ix.Search("go", 10, even)
	if len(got) != 10 {
		t.Fatalf("got %d results, want 10", len(got))
	}
	for _, s := range got {
		if !even(s.ID) {
			t.Fatalf("rejected id %d returned", s.ID)
		}
	}
}

func TestConcurrentSearch(t *testing.T) {
	ix := New(Params{})
	r := rand.New(rand.NewPCG(3, 3))
	z := rand.NewZipf(r, 1.1, 1, 500)
	for id := range uint32(2000) {
		ix.Add(id, randomText(r, z, 30))
	}
	want := ix.Search("w1 w7 w30", 20, nil)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 50 {
				if got := ix.Search("w1 w7 w30", 20, nil); !slices.Equal(got, want) {
					t.Error("concurrent search differs")
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestAdvance(t *testing.T) {
	slots := []uint32{1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21}
	for pos := range len(slots) + 1 {
		for target := uint32(0); target < 24; target++ {
			want := pos
			for want < len(slots) && slots[want] < target {
				want++
			}
			if got := advance(slots, pos, target); got != want {
				t.Fatalf("advance(pos %d, target %d) = %d, want %d", pos, target, got, want)
			}
		}
	}
}

func TestFrontier(t *testing.T) {
	var f frontier
	for _, p := range []point{{1, 50}, {1, 40}, {3, 90}, {2, 95}, {2, 60}, {1, 45}, {5, 200}, {3, 60}} {
		f = f.add(p)
	}
	// (1,40) replaces (1,50); (3,90) dominates (2,95); (1,40) dominates
	// (1,45); (3,60) finally replaces both (2,60) and (3,90).
	want := frontier{{1, 40}, {3, 60}, {5, 200}}
	if !slices.Equal(f, want) {
		t.Fatalf("frontier %v, want %v", f, want)
	}
}

// TestBoundsWithVaryingLengths exercises the frontier bounds on documents
// of very different lengths, where a single (max tf, min length) bound
// would be loose and a wrong one would drop results.
func TestBoundsWithVaryingLengths(t *testing.T) {
	an := analysis.Whitespace()
	r := rand.New(rand.NewPCG(11, 12))
	z := rand.NewZipf(r, 1.05, 1, 60)
	ix, o := New(Params{Analyzer: an}), newOracle(an)
	for id := range uint32(3000) {
		maxLen := []int{2, 8, 200}[id%3]
		text := randomText(r, z, maxLen)
		ix.Add(id, text)
		o.docs[id] = an.Tokens(text)
	}
	for i := range 60 {
		check(t, ix, o, an.Tokens(randomText(r, z, 1+i%5)), []int{1, 10, 100}[i%3], nil)
	}
}

// TestSearchAllocations pins the allocations of a query: they depend on the
// number of query terms and k, never on the postings walked.
func TestSearchAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	ix := New(Params{})
	w := workload.NewLexical(5_000)
	for i, d := range w.Docs {
		ix.Add(uint32(i), d)
	}
	q := 0
	allocs := testing.AllocsPerRun(100, func() {
		ix.Search(w.Queries[q%len(w.Queries)], workload.TopK, nil)
		q++
	})
	// Analysis (2), query terms, bounds, contributions, heap, result.
	if allocs > 8 {
		t.Fatalf("%v allocs per query, want <= 8", allocs)
	}
}

// TestForwardListsAcrossPages: with forward lists over several pages,
// removals (which read a list to update the frequencies, those whose list
// crosses a page boundary first), a compaction that copies the lists and
// renumbers the terms keep the index equal to the oracle.
func TestForwardListsAcrossPages(t *testing.T) {
	an := analysis.Whitespace()
	r := rand.New(rand.NewPCG(5, 6))
	z := rand.NewZipf(r, 1.05, 1, 5000)
	ix, o := New(Params{Analyzer: an}), newOracle(an)
	const n = 60000
	for id := range uint32(n) {
		text := randomText(r, z, 40)
		ix.Add(id, text)
		o.docs[id] = an.Tokens(text)
	}
	if pages := len(ix.fwd.pages); pages < 3 {
		t.Fatalf("forward lists in %d pages; the test needs several", pages)
	}
	var crossing []uint32
	for s := range len(ix.ids) {
		if lo, hi := int(ix.fwdOff[s]), int(ix.fwdOff[s+1]); hi > lo && lo/pageSize != (hi-1)/pageSize {
			crossing = append(crossing, ix.ids[s])
		}
	}
	if len(crossing) == 0 {
		t.Fatal("no forward list crosses a page boundary")
	}
	remove := func(id uint32) {
		ix.Remove(id)
		delete(o.docs, id)
	}
	for _, id := range crossing {
		remove(id)
	}
	// Removal lowered the frequency of every term of those lists.
	df := map[string]int{}
	for _, toks := range o.docs {
		seen := map[string]bool{}
		for _, tok := range toks {
			if !seen[tok] {
				seen[tok] = true
				df[tok]++
			}
		}
	}
	for tok, tid := range ix.dict {
		if got := ix.terms[tid].df; got != df[tok] {
			t.Fatalf("term %q: document frequency %d, want %d", tok, got, df[tok])
		}
	}
	for id := uint32(0); id < n; id += 3 {
		remove(id)
	}
	for range 5 {
		check(t, ix, o, an.Tokens(randomText(r, z, 5)), 20, nil)
	}
	for id := range uint32(n) { // past half dead: compaction
		if id%3 != 0 && id%5 != 0 {
			remove(id)
		}
	}
	if len(ix.ids) >= n {
		t.Fatalf("no compaction: %d slots for %d documents", len(ix.ids), ix.Len())
	}
	for range 5 {
		check(t, ix, o, an.Tokens(randomText(r, z, 5)), 20, nil)
	}
}
