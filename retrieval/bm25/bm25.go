// Package bm25 is an in-memory inverted index that ranks documents by
// Okapi BM25 and finds the top k with MaxScore dynamic pruning.
//
// Scoring is textbook BM25 with Lucene's always-positive idf:
//
//	score(d, q) = Σ_{t in q} idf(t) · tf·(k1+1) / (tf + k1·(1 − b + b·|d|/avgdl))
//	idf(t)      = ln(1 + (N − df + 0.5) / (df + 0.5))
//
// where N is the number of live documents, df the number of live documents
// containing t, |d| the document's length in tokens and avgdl the mean
// length of the live documents. By default the sum runs over distinct query
// tokens, which is how Qdrant weighs a sparse BM25 query (1 per unique
// token), so both stores rank alike, and how the reference figures of the
// evaluation data were computed. With Params.CountRepeatedQueryTerms a token
// that appears twice in the query counts twice instead.
//
// An Index is not safe for concurrent writes. Concurrent Search calls are
// safe as long as no Add or Remove runs at the same time; callers share an
// index behind a sync.RWMutex.
package bm25

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"github.com/adaptrag/adaptrag/retrieval/analysis"
)

// Defaults used for the zero Params.
const (
	DefaultK1 = 1.2
	DefaultB  = 0.75
)

// Params configures an Index. Each zero field takes its default: K1 =
// DefaultK1, B = DefaultB, Analyzer = analysis.Default(), and repeated query
// tokens count once per occurrence. (B = 0 cannot be asked for; a tiny B
// such as 1e-9 is equivalent.)
type Params struct {
	K1, B    float64
	Analyzer analysis.Analyzer
	// CountRepeatedQueryTerms makes a token repeated in a query count once
	// per occurrence; by default it counts once, as in Qdrant's sparse BM25.
	CountRepeatedQueryTerms bool
}

// Scored is a document id with its BM25 score.
type Scored struct {
	ID    uint32
	Score float64
}

// posting lists are parallel arrays ordered by slot. Slots only grow (a
// replaced document gets a new slot), so appending keeps them sorted.
type postings struct {
	slots []uint32
	tfs   []uint32
	df    int      // live documents among slots
	front frontier // (tf, length) pairs that bound every posting's score
}

// point is the term frequency and length of one posting.
type point struct{ tf, dl uint32 }

// frontier is the Pareto frontier of a term's postings (dead ones
// included): no posting has both a higher tf and a shorter document than
// some point of it. Since a posting's BM25 contribution grows with tf and
// falls with length whatever avgdl is, the best point of the frontier is the
// term's exact maximum contribution at search time. It is sorted by tf, and
// then dl increases strictly; it stays tiny (at most one point per distinct
// tf), and is a single point when all documents have the same length.
type frontier []point

// add inserts p unless a point dominates it, dropping the points p
// dominates.
func (f frontier) add(p point) frontier {
	for _, q := range f {
		if q.tf >= p.tf && q.dl <= p.dl {
			return f
		}
	}
	out := f[:0]
	for _, q := range f {
		if !(p.tf >= q.tf && p.dl <= q.dl) {
			out = append(out, q)
		}
	}
	i, _ := slices.BinarySearchFunc(out, p, func(a, b point) int { return cmp.Compare(a.tf, b.tf) })
	return slices.Insert(out, i, p)
}

// Index is an inverted index over documents identified by uint32 ids. The
// zero Index is not usable; call New.
type Index struct {
	k1, b    float64
	an       analysis.Analyzer
	distinct bool

	dict  map[string]uint32 // term -> term id
	terms []postings        // by term id

	// Per slot. A slot is dead when its document was removed or replaced;
	// dead slots stay in the postings until compaction.
	ids     []uint32
	lens    []uint32
	live    []bool
	fwdOff  []uint32 // fwd[fwdOff[s]:fwdOff[s+1]] are the distinct term ids of slot s
	fwd     []uint32
	slotOf  map[uint32]uint32
	nLive   int
	sumLive uint64 // total length of live documents

	scratch []uint32 // term ids of the document being added
}

// New returns an empty index.
func New(p Params) *Index {
	ix := &Index{k1: p.K1, b: p.B, an: p.Analyzer, distinct: !p.CountRepeatedQueryTerms}
	if ix.k1 == 0 {
		ix.k1 = DefaultK1
	}
	if ix.b == 0 {
		ix.b = DefaultB
	}
	if ix.an == nil {
		ix.an = analysis.Default()
	}
	ix.dict = make(map[string]uint32)
	ix.slotOf = make(map[uint32]uint32)
	ix.fwdOff = []uint32{0}
	return ix
}

// Grow makes room for n more documents, so that an index loaded with a
// known number of documents does not copy its per-document arrays over and
// over as they double. It changes nothing else.
func (ix *Index) Grow(n int) {
	if n <= 0 {
		return
	}
	ix.ids = slices.Grow(ix.ids, n)
	ix.lens = slices.Grow(ix.lens, n)
	ix.live = slices.Grow(ix.live, n)
	ix.fwdOff = slices.Grow(ix.fwdOff, n)
	if len(ix.slotOf) == 0 {
		ix.slotOf = make(map[uint32]uint32, n)
	}
}

// Len returns the number of documents in the index.
func (ix *Index) Len() int { return ix.nLive }

// Add indexes text under id, replacing the document id had, if any. A text
// without terms is still a document (of length 0) that no query matches.
func (ix *Index) Add(id uint32, text string) {
	ix.Remove(id)
	toks := ix.an.Tokens(text)
	ids := ix.scratch[:0]
	for _, tok := range toks {
		t, ok := ix.dict[tok]
		if !ok {
			t = uint32(len(ix.terms))
			// Clone: analyzer terms may be substrings of the whole text.
			ix.dict[strings.Clone(tok)] = t
			ix.terms = append(ix.terms, postings{})
		}
		ids = append(ids, t)
	}
	slices.Sort(ids)
	slot := uint32(len(ix.ids))
	dl := uint32(len(toks))
	for i := 0; i < len(ids); {
		j := i + 1
		for j < len(ids) && ids[j] == ids[i] {
			j++
		}
		p := &ix.terms[ids[i]]
		tf := uint32(j - i)
		p.slots = append(p.slots, slot)
		p.tfs = append(p.tfs, tf)
		p.df++
		p.front = p.front.add(point{tf, dl})
		ix.fwd = append(ix.fwd, ids[i])
		i = j
	}
	ix.scratch = ids
	ix.fwdOff = append(ix.fwdOff, uint32(len(ix.fwd)))
	ix.ids = append(ix.ids, id)
	ix.lens = append(ix.lens, dl)
	ix.live = append(ix.live, true)
	ix.slotOf[id] = slot
	ix.nLive++
	ix.sumLive += uint64(dl)
}

// Remove deletes the document id; removing an absent id does nothing.
// Space is reclaimed lazily, once dead documents outnumber live ones.
func (ix *Index) Remove(id uint32) {
	slot, ok := ix.slotOf[id]
	if !ok {
		return
	}
	delete(ix.slotOf, id)
	ix.live[slot] = false
	ix.nLive--
	ix.sumLive -= uint64(ix.lens[slot])
	for _, t := range ix.fwd[ix.fwdOff[slot]:ix.fwdOff[slot+1]] {
		ix.terms[t].df--
	}
	if dead := len(ix.ids) - ix.nLive; dead > 1024 && dead > ix.nLive {
		ix.compact()
	}
}

// compact drops dead slots, renumbering the live ones in order, and
// recomputes the per-term bounds. Terms left without live postings are
// dropped too and the rest renumbered in order, so a writer that keeps
// replacing documents with new words (revision numbers, dates, ids) does
// not grow its vocabulary forever; the order of term ids, which fixes the
// summation order of scores, is kept.
func (ix *Index) compact() {
	remap := make([]uint32, len(ix.ids))
	n := uint32(0)
	fwd := make([]uint32, 0, len(ix.fwd))
	fwdOff := make([]uint32, 1, ix.nLive+1)
	for s, alive := range ix.live {
		if !alive {
			remap[s] = math.MaxUint32
			continue
		}
		remap[s] = n
		ix.ids[n], ix.lens[n] = ix.ids[s], ix.lens[s]
		ix.slotOf[ix.ids[n]] = n
		fwd = append(fwd, ix.fwd[ix.fwdOff[s]:ix.fwdOff[s+1]]...)
		fwdOff = append(fwdOff, uint32(len(fwd)))
		n++
	}
	ix.ids, ix.lens = slices.Clip(ix.ids[:n]), slices.Clip(ix.lens[:n])
	ix.live = slices.Repeat([]bool{true}, int(n))
	ix.fwd, ix.fwdOff = fwd, fwdOff
	for t := range ix.terms {
		p := &ix.terms[t]
		p.front = p.front[:0]
		w := 0
		for i, s := range p.slots {
			if r := remap[s]; r != math.MaxUint32 {
				p.slots[w], p.tfs[w] = r, p.tfs[i]
				p.front = p.front.add(point{p.tfs[i], ix.lens[r]})
				w++
			}
		}
		if w == 0 {
			p.slots, p.tfs, p.front = nil, nil, nil
		} else {
			p.slots, p.tfs = slices.Clip(p.slots[:w]), slices.Clip(p.tfs[:w])
		}
	}
	ix.dropEmptyTerms()
}

// dropEmptyTerms removes the terms without postings and renumbers the rest
// in their old order. A new dictionary is built because Go maps do not
// shrink when keys are deleted.
func (ix *Index) dropEmptyTerms() {
	remap := make([]uint32, len(ix.terms))
	n := uint32(0)
	for t := range ix.terms {
		if len(ix.terms[t].slots) == 0 {
			remap[t] = math.MaxUint32
			continue
		}
		remap[t] = n
		ix.terms[n] = ix.terms[t]
		n++
	}
	if int(n) == len(ix.terms) {
		return
	}
	clear(ix.terms[n:])
	ix.terms = slices.Clip(ix.terms[:n])
	dict := make(map[string]uint32, n)
	for tok, t := range ix.dict {
		if r := remap[t]; r != math.MaxUint32 {
			dict[tok] = r
		}
	}
	ix.dict = dict
	for i, t := range ix.fwd {
		ix.fwd[i] = remap[t]
	}
}

// Search analyzes query with the index's analyzer and returns the k best
// documents, best first, ties broken by ascending id. accept, when not nil,
// filters documents while scoring: a rejected document never takes one of
// the k places. It returns nil when k <= 0 or nothing matches.
func (ix *Index) Search(query string, k int, accept func(id uint32) bool) []Scored {
	if k <= 0 {
		return nil
	}
	return ix.SearchTokens(ix.an.Tokens(query), k, accept)
}

// SearchTokens is Search for a query that is already analyzed. A repeated
// token weighs once, unless the index was made with
// Params.CountRepeatedQueryTerms.
func (ix *Index) SearchTokens(tokens []string, k int, accept func(uint32) bool) []Scored {
	if k <= 0 || len(tokens) == 0 || ix.nLive == 0 {
		return nil
	}
	q := ix.prepare(tokens)
	if len(q.terms) == 0 {
		return nil
	}
	return q.run(ix, k, accept)
}

// scorer holds the per-query constants of the BM25 formula.
type scorer struct {
	k1p1, normA, normB float64 // tf part = tf·k1p1 / (tf + normA + normB·len)
}

func (ix *Index) scorer() scorer {
	avgdl := float64(ix.sumLive) / float64(ix.nLive)
	s := scorer{k1p1: ix.k1 + 1, normA: ix.k1 * (1 - ix.b)}
	if avgdl > 0 {
		s.normB = ix.k1 * ix.b / avgdl
	}
	return s
}

func (s scorer) tfPart(tf, dl uint32) float64 {
	f := float64(tf)
	return f * s.k1p1 / (f + s.normA + s.normB*float64(dl))
}

// idf is Lucene's BM25 idf.
func idf(n, df int) float64 {
	return math.Log(1 + (float64(n)-float64(df)+0.5)/(float64(df)+0.5))
}

// byScore orders results best first, ties by ascending id.
func byScore(a, b Scored) int {
	if c := cmp.Compare(b.Score, a.Score); c != 0 {
		return c
	}
	return cmp.Compare(a.ID, b.ID)
}
