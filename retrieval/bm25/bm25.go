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
	"context"
	"github.com/adaptrag/adaptrag/internal/slots"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"

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
// A term frequency takes one byte: nearly all are small, and the few of
// tfBig or more are tfBig there and exact in big.
type postings struct {
	slots []uint32
	tfs   []uint8
	big   []bigTF  // the postings whose tf is tfBig or more, by slot
	df    int      // live documents among slots
	front frontier // (tf, length) pairs that bound every posting's score
}

// tfBig marks, in postings.tfs, a frequency too large for a byte.
const tfBig = math.MaxUint8

// bigTF is the exact frequency of a posting whose byte is tfBig.
type bigTF struct{ slot, tf uint32 }

// tfAt returns the frequency of posting i of the parallel slots and tfs
// whose large frequencies are big.
func tfAt(slots []uint32, tfs []uint8, big []bigTF, i int) uint32 {
	if f := tfs[i]; f != tfBig {
		return uint32(f)
	}
	return bigAt(big, slots[i])
}

// bigAt returns the exact frequency big holds for slot; the rare path of
// tfAt, kept out of line so that tfAt inlines.
func bigAt(big []bigTF, slot uint32) uint32 {
	i, _ := slices.BinarySearchFunc(big, slot, func(b bigTF, s uint32) int { return cmp.Compare(b.slot, s) })
	if i < len(big) && big[i].slot == slot {
		return big[i].tf
	}
	return tfBig // unreachable in an index kept consistent
}

// appendTF appends slot's posting of frequency tf to p.
func (p *postings) appendTF(slot, tf uint32) {
	p.slots = append(p.slots, slot)
	if tf >= tfBig {
		p.tfs = append(p.tfs, tfBig)
		p.big = append(p.big, bigTF{slot, tf})
		return
	}
	p.tfs = append(p.tfs, uint8(tf))
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
	ids  []uint32
	lens []uint32
	live []bool
	// fwd[fwdOff[s]:fwdOff[s+1]] are the distinct term ids of slot s,
	// ascending, each a uvarint delta (the first from 0) then its
	// frequency: Remove needs the terms to update the document
	// frequencies, and a read index checks the file's postings against
	// these lists, slot by slot, in one sequential pass of each; in about
	// 2.5 bytes a posting instead of 4 for a plain id.
	fwdOff  []uint32
	fwd     pagedBytes
	fwdBuf  []byte // the forward list being added, or one read across pages
	slotOf  slots.Table
	nLive   int
	sumLive uint64 // total length of live documents

	scratch []uint32 // term ids of the document being added

	// pending is what ReadIndexDeferred left for Check; nil for an index
	// built by Add or read by ReadIndex. Set once, before the index is
	// shared.
	pending *pendingCheck

	// accFree keeps run's accumulators between queries.
	accFree struct {
		mu   sync.Mutex
		list []*accumulators
	}
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
	ix.fwdOff = []uint32{0}
	return ix
}

// Grow makes room for n more documents, so that an index loaded with a
// known number of documents does not copy its per-document arrays over and
// over as they double. It changes nothing else.
func (ix *Index) Grow(n int) {
	defer runtime.KeepAlive(ix)
	if n <= 0 {
		return
	}
	ix.ids = slices.Grow(ix.ids, n)
	ix.lens = slices.Grow(ix.lens, n)
	ix.live = slices.Grow(ix.live, n)
	ix.fwdOff = slices.Grow(ix.fwdOff, n)
	ix.slotOf.Grow(len(ix.ids) + n)
}

// Len returns the number of documents in the index.
func (ix *Index) Len() int { return ix.nLive }

// Add indexes text under id, replacing the document id had, if any. A text
// without terms is still a document (of length 0) that no query matches.
func (ix *Index) Add(id uint32, text string) {
	defer runtime.KeepAlive(ix)
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
	prev := uint32(0)
	fl := ix.fwdBuf[:0]
	for i := 0; i < len(ids); {
		j := i + 1
		for j < len(ids) && ids[j] == ids[i] {
			j++
		}
		p := &ix.terms[ids[i]]
		tf := uint32(j - i)
		p.appendTF(slot, tf)
		p.df++
		p.front = p.front.add(point{tf, dl})
		fl = appendUvarints(fl, uint64(ids[i]-prev), uint64(tf))
		prev = ids[i]
		i = j
	}
	ix.scratch, ix.fwdBuf = ids, fl
	ix.fwd.append(fl)
	ix.fwdOff = append(ix.fwdOff, uint32(ix.fwd.Len()))
	ix.ids = append(ix.ids, id)
	ix.lens = append(ix.lens, dl)
	ix.live = append(ix.live, true)
	ix.slotOf.Set(id, slot, 2*int64(len(ix.ids)+denseReach))
	ix.nLive++
	ix.sumLive += uint64(dl)
}

// Remove deletes the document id; removing an absent id does nothing.
// Space is reclaimed lazily, once dead documents outnumber live ones.
func (ix *Index) Remove(id uint32) {
	defer runtime.KeepAlive(ix)
	slot, ok := ix.slotOf.Get(id)
	if !ok {
		return
	}
	// The forward lists of an index read by ReadIndexDeferred are read
	// only once checked; when the check failed, the document leaves the
	// results and the totals but not the document frequencies, and the
	// index is never compacted (its owner rebuilds it).
	damaged := ix.Check(context.Background()) != nil
	ix.slotOf.Del(id)
	ix.live[slot] = false
	ix.nLive--
	ix.sumLive -= uint64(ix.lens[slot])
	if damaged {
		return
	}
	for t := range fwdTerms(ix.fwdList(slot)) {
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
	var fwd pagedBytes
	fwdOff := make([]uint32, 1, ix.nLive+1)
	for s, alive := range ix.live {
		if !alive {
			remap[s] = math.MaxUint32
			continue
		}
		remap[s] = n
		ix.ids[n], ix.lens[n] = ix.ids[s], ix.lens[s]
		ix.slotOf.Set(ix.ids[n], n, 2*int64(len(ix.ids)+denseReach))
		fwd.append(ix.fwdList(uint32(s)))
		fwdOff = append(fwdOff, uint32(fwd.Len()))
		n++
	}
	ix.ids, ix.lens = slices.Clip(ix.ids[:n]), slices.Clip(ix.lens[:n])
	ix.live = slices.Repeat([]bool{true}, int(n))
	ix.fwd, ix.fwdOff = fwd, fwdOff
	for t := range ix.terms {
		p := &ix.terms[t]
		p.front = p.front[:0]
		w, wb, bi := 0, 0, 0
		for i, s := range p.slots {
			tf := uint32(p.tfs[i])
			if tf == tfBig {
				// big is in slot order: its next entry is this posting's,
				// and it is renumbered in place behind that cursor.
				tf = p.big[bi].tf
				bi++
			}
			r := remap[s]
			if r == math.MaxUint32 {
				continue
			}
			if p.tfs[i] == tfBig {
				p.big[wb] = bigTF{r, tf}
				wb++
			}
			p.slots[w], p.tfs[w] = r, p.tfs[i]
			p.front = p.front.add(point{tf, ix.lens[r]})
			w++
		}
		if w == 0 {
			p.slots, p.tfs, p.big, p.front = nil, nil, nil, nil
		} else {
			p.slots, p.tfs = slices.Clip(p.slots[:w]), slices.Clip(p.tfs[:w])
			p.big = slices.Clip(p.big[:wb])
			if wb == 0 {
				p.big = nil
			}
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
	// The renumbering keeps the order, so each list stays ascending; its
	// deltas change, hence a new encoding.
	var fwd pagedBytes
	var fl []byte
	for s := range len(ix.fwdOff) - 1 {
		prev := uint32(0)
		fl = fl[:0]
		for t, tf := range fwdTerms(ix.fwdList(uint32(s))) {
			fl = appendUvarints(fl, uint64(remap[t]-prev), uint64(tf))
			prev = remap[t]
		}
		// Slot s's old bounds were read above; its start is rewritten
		// now, that of s+1 only at the next turn, after its read.
		ix.fwdOff[s] = uint32(fwd.Len())
		fwd.append(fl)
	}
	ix.fwdOff[len(ix.fwdOff)-1] = uint32(fwd.Len())
	ix.fwd = fwd
}

// fwdList returns the forward list of slot s (see Index.fwd), valid until
// the next call.
func (ix *Index) fwdList(s uint32) []byte {
	return ix.fwd.slice(int(ix.fwdOff[s]), int(ix.fwdOff[s+1]), &ix.fwdBuf)
}

// fwdTerms yields the term ids and frequencies of one forward list.
func fwdTerms(b []byte) func(func(uint32, uint32) bool) {
	return func(yield func(uint32, uint32) bool) {
		t := uint32(0)
		for len(b) > 0 {
			d, f, n := forwardEntry(b)
			if n <= 0 {
				return
			}
			b = b[n:]
			t += uint32(d)
			if !yield(t, uint32(f)) {
				return
			}
		}
	}
}

// denseReach bounds the ids kept in the id table's array: below this many
// past twice the slots an index has had, an id costs at most a few wasted
// entries per slot.
const denseReach = 1 << 16

// Search analyzes query with the index's analyzer and returns the k best
// documents, best first, ties broken by ascending id. accept, when not nil,
// filters documents while scoring: a rejected document never takes one of
// the k places. It returns nil when k <= 0 or nothing matches.
func (ix *Index) Search(query string, k int, accept func(id uint32) bool) []Scored {
	defer runtime.KeepAlive(ix)
	if k <= 0 {
		return nil
	}
	return ix.SearchTokens(ix.an.Tokens(query), k, accept)
}

// SearchTokens is Search for a query that is already analyzed. A repeated
// token weighs once, unless the index was made with
// Params.CountRepeatedQueryTerms.
func (ix *Index) SearchTokens(tokens []string, k int, accept func(uint32) bool) []Scored {
	defer runtime.KeepAlive(ix)
	if k <= 0 || len(tokens) == 0 || ix.nLive == 0 {
		return nil
	}
	q := ix.prepare(tokens)
	if len(q.terms) == 0 {
		return nil
	}
	if len(ix.lens) > taatSlots {
		return q.runDocs(ix, k, accept)
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
