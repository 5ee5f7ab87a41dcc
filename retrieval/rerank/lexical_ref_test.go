package rerank

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/retrieval/analysis"
)

// referenceScore is the Lexical reranker's scoring as first written: every
// candidate analysed on every call, term matches found through a map. The
// cached, id-based scoring must give exactly its scores.
func referenceScore(an analysis.Analyzer, w Weights, query string, hits []retrieval.Hit) []scoredIdx {
	qterms := unique(an.Tokens(query))
	m := len(qterms)
	qidx := make(map[string]int, m)
	for i, t := range qterms {
		qidx[t] = i
	}
	seq := func(text string, found []bool) []int {
		if text == "" || len(qidx) == 0 {
			return nil
		}
		toks := an.Tokens(text)
		seq := make([]int, len(toks))
		matched := false
		for i, t := range toks {
			j, ok := qidx[t]
			if !ok {
				seq[i] = -1
				continue
			}
			seq[i], found[j], matched = j, true, true
		}
		if !matched {
			return nil
		}
		return seq
	}
	type doc struct {
		inTitle, inAny []bool
		matched        int
		seq            []int
	}
	docs := make([]doc, len(hits))
	df := make([]int, m)
	for i, h := range hits {
		d := doc{inTitle: make([]bool, m), inAny: make([]bool, m)}
		titleSeq := seq(h.Chunk.Title, d.inTitle)
		d.seq = seq(h.Chunk.Text, d.inAny)
		if d.seq == nil {
			d.seq = titleSeq
		}
		for j := range m {
			d.inAny[j] = d.inAny[j] || d.inTitle[j]
			if d.inAny[j] {
				df[j]++
				d.matched++
			}
		}
		docs[i] = d
	}
	n := float64(len(hits))
	idf := make([]float64, m)
	var total float64
	for j := range m {
		f := float64(df[j])
		idf[j] = math.Log(1 + (n-f+0.5)/(f+0.5))
		if stopTerms[qterms[j]] {
			idf[j] *= stopFactor
		}
		total += idf[j]
	}
	out := make([]scoredIdx, len(hits))
	for i, d := range docs {
		var cov, tit float64
		if total > 0 {
			for j := range m {
				if d.inAny[j] {
					cov += idf[j]
				}
				if d.inTitle[j] {
					tit += idf[j]
				}
			}
			cov /= total
			tit /= total
		}
		s := w.Rank*w.RankK/(w.RankK+float64(i)) + w.Coverage*cov + w.Title*tit
		if w.Proximity != 0 && d.matched >= 2 {
			s += w.Proximity * proximity(d.seq, m)
		}
		out[i] = scoredIdx{idx: i, score: s}
	}
	return out
}

// words mixes content words, function words (stopTerms) and Chinese
// characters, so that generated texts share terms in every way the scoring
// distinguishes.
var words = strings.Fields(`invoice refund travel meal hotel leave policy approve days report
	to the of and is a in for 报 销 差 旅 招 待 流 程 审 批 的 了 是 发 票`)

// randomText draws n words, Chinese ones run together as text would have them.
func randomText(r *rand.Rand, n int) string {
	var b strings.Builder
	for range n {
		w := words[r.IntN(len(words))]
		if w[0] < 0x80 {
			b.WriteByte(' ')
		}
		b.WriteString(w)
	}
	return b.String()
}

func randomHits(r *rand.Rand, n int) []retrieval.Hit {
	hits := make([]retrieval.Hit, n)
	for i := range hits {
		c := retrieval.Chunk{ID: fmt.Sprintf("c%d", r.IntN(3*n)), Text: randomText(r, r.IntN(40))}
		if r.IntN(3) > 0 {
			c.Title = randomText(r, r.IntN(5))
		}
		hits[i] = retrieval.Hit{Chunk: c}
	}
	return hits
}

func sameScores(t *testing.T, what string, got, want []scoredIdx) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d scores, want %d", what, len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s: hit %d scored %v, want %v (bit for bit)", what, i, got[i], want[i])
		}
	}
}

// TestLexicalMatchesReference checks, on generated candidate sets, that the
// reranker scores exactly as the reference, with its cache (warm and cold),
// without it, with proximity weighed, and when a chunk's text changes under
// the same ID. IDs repeat across calls (and sometimes within one), so the
// cache is both hit and invalidated.
func TestLexicalMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	an := analysis.Default()
	for _, w := range []Weights{DefaultWeights(), {Rank: 1, Coverage: 1, Proximity: 0.5, Title: 1, RankK: 30}, {Proximity: 1, RankK: 10}} {
		cached := NewLexical(LexicalConfig{Weights: w, CacheChunks: 64})
		uncached := NewLexical(LexicalConfig{Weights: w, CacheChunks: -1})
		for call := range 300 {
			hits := randomHits(r, 1+r.IntN(50))
			q := randomText(r, 1+r.IntN(8))
			want := referenceScore(an, cached.w, q, hits)
			sameScores(t, fmt.Sprintf("weights %+v, call %d, cached", w, call), cached.score(q, hits), want)
			sameScores(t, fmt.Sprintf("weights %+v, call %d, cached again", w, call), cached.score(q, hits), want)
			sameScores(t, fmt.Sprintf("weights %+v, call %d, uncached", w, call), uncached.score(q, hits), want)
		}
	}
}

// TestLexicalCacheBounded checks that the cache never holds more than its
// bound, and that a chunk whose text changed is analysed again rather than
// scored from its old text.
func TestLexicalCacheBounded(t *testing.T) {
	l := NewLexical(LexicalConfig{CacheChunks: 10})
	r := rand.New(rand.NewPCG(3, 4))
	for range 50 {
		l.score("invoice refund", randomHits(r, 8))
		tb := l.cache.cur.Load()
		tb.mu.Lock()
		n := len(tb.chunks)
		tb.mu.Unlock()
		if n > 10+8 { // a full table takes one more call's misses before it is replaced
			t.Fatalf("cache holds %d chunks, bound 10", n)
		}
	}
	hits := []retrieval.Hit{{Chunk: retrieval.Chunk{ID: "x", Text: "invoice"}}, {Chunk: retrieval.Chunk{ID: "y", Text: "travel"}}}
	before := l.score("invoice", hits)
	hits[0].Chunk.Text = "travel"
	hits[1].Chunk.Text = "invoice"
	after := l.score("invoice", hits)
	if !(before[0].score > before[1].score && after[1].score > after[0].score) {
		t.Errorf("changed texts scored from the cache: before %v, after %v", before, after)
	}
}

// TestLexicalConcurrent reranks from many goroutines over overlapping
// candidates with a small cache (so tables are replaced mid-flight) and
// checks every answer against the reference; run it with -race.
func TestLexicalConcurrent(t *testing.T) {
	l := NewLexical(LexicalConfig{CacheChunks: 16})
	an := analysis.Default()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 9))
			for call := range 100 {
				hits := randomHits(r, 1+r.IntN(30))
				q := randomText(r, 1+r.IntN(6))
				got := l.score(q, hits)
				want := referenceScore(an, l.w, q, hits)
				for i := range got {
					if got[i] != want[i] {
						t.Errorf("goroutine %d call %d hit %d: %v, want %v", g, call, i, got[i], want[i])
						return
					}
				}
			}
		})
	}
	wg.Wait()
	if _, err := l.Rerank(context.Background(), "invoice", randomHits(rand.New(rand.NewPCG(5, 6)), 5), 3); err != nil {
		t.Fatal(err)
	}
}

// Lexical never writes to the hits it reranks (Safe hands it the caller's
// slice without a copy, on that promise): after reranks with every weight
// set, cached or not, the candidates are as they were, and its answer holds
// copies, not the candidates' slice.
func TestLexicalLeavesItsInput(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, w := range []Weights{DefaultWeights(), {Rank: 1, Coverage: 1, Proximity: 0.5, Title: 1, RankK: 30}} {
		for _, cache := range []int{0, -1} {
			l := NewLexical(LexicalConfig{Weights: w, CacheChunks: cache})
			for range 50 {
				seen := map[string]bool{}
				hits := slices.DeleteFunc(randomHits(r, 1+r.IntN(50)), func(h retrieval.Hit) bool {
					dup := seen[h.Chunk.ID]
					seen[h.Chunk.ID] = true
					return dup // Safe refuses an answer with an ID twice
				})
				before := slices.Clone(hits)
				out := Safe(context.Background(), l, randomText(r, 1+r.IntN(8)), hits, 1+r.IntN(len(hits)))
				if out.Fallback || !reflect.DeepEqual(hits, before) {
					t.Fatalf("weights %+v: fallback %v (%v), or the candidates changed", w, out.Fallback, out.Cause)
				}
				out.Hits[0].Score = -1
				if hits[0].Score == -1 {
					t.Fatal("the answer shares the candidates' slice")
				}
			}
		}
	}
}
