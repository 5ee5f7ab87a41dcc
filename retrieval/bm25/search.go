package bm25

import (
	"cmp"
	"math"
	"math/bits"
	"runtime"
	"slices"
)

// ubSlack inflates the per-term upper bounds so that float rounding in the
// partial sums can never prune a document whose exact score would tie or
// beat the threshold.
const ubSlack = 1 + 1e-9

// qterm is one distinct query term with its cursor.
type qterm struct {
	slots  []uint32
	tfs    []uint8
	big    []bigTF
	pos    int
	weight float64 // occurrences in the query × idf
	ub     float64 // upper bound of the term's contribution to any score
}

type query struct {
	sc     scorer
	terms  []qterm   // ascending ub
	prefix []float64 // prefix[i] = Σ_{j<=i} terms[j].ub
}

func (ix *Index) prepare(tokens []string) *query {
	q := &query{sc: ix.scorer(), terms: make([]qterm, 0, len(tokens))}
	ids := make([]uint32, 0, len(tokens))
	for _, tok := range tokens {
		if t, ok := ix.dict[tok]; ok && ix.terms[t].df > 0 {
			ids = append(ids, t)
		}
	}
	slices.Sort(ids)
	for i := 0; i < len(ids); {
		j := i + 1
		for j < len(ids) && ids[j] == ids[i] {
			j++
		}
		p := &ix.terms[ids[i]]
		occ := float64(j - i)
		if ix.distinct {
			occ = 1
		}
		w := occ * idf(ix.nLive, p.df)
		q.terms = append(q.terms, qterm{
			slots:  p.slots,
			tfs:    p.tfs,
			big:    p.big,
			weight: w,
			ub:     w * q.sc.bound(p.front) * ubSlack,
		})
		i = j
	}
	// Stable, and ids are sorted, so equal bounds keep term id order: the
	// summation order, hence the exact score, is fixed for the query.
	slices.SortStableFunc(q.terms, func(a, b qterm) int { return cmp.Compare(a.ub, b.ub) })
	q.prefix = make([]float64, len(q.terms))
	sum := 0.0
	for i, t := range q.terms {
		sum += t.ub
		q.prefix[i] = sum
	}
	return q
}

// accumulators is one query's scratch for run: a partial score per
// slot (zero for an untouched one, -1 for a slot known to be dead or
// rejected) and the slots touched, which are all that is reset afterwards.
// An index keeps as many as queries have run at once, up to GOMAXPROCS:
// 8 bytes a slot each, at most taatSlots.
type accumulators struct {
	acc     []float64
	touched []uint32
	top     []entry  // kthPartial's heap
	cands   []uint32 // the slots to complete
	bits    []uint64 // the same, a bit a slot, zero between queries
}

func (ix *Index) getAcc() *accumulators {
	f := &ix.accFree
	var a *accumulators
	f.mu.Lock()
	if n := len(f.list); n > 0 {
		a, f.list = f.list[n-1], f.list[:n-1]
	}
	f.mu.Unlock()
	if a == nil {
		a = &accumulators{}
	}
	if n := len(ix.lens); len(a.acc) < n {
		a.acc = make([]float64, n+n/8)
		a.bits = make([]uint64, (len(a.acc)+63)/64)
	}
	return a
}

func (ix *Index) putAcc(a *accumulators) {
	for _, s := range a.touched {
		a.acc[s] = 0
	}
	a.touched = a.touched[:0]
	f := &ix.accFree
	f.mu.Lock()
	if len(f.list) < runtime.GOMAXPROCS(0) {
		f.list = append(f.list, a)
	}
	f.mu.Unlock()
}

// taatSlots is the largest index, in slots, that run scores term at a
// time: its accumulators (8 bytes a slot) then stay within 2 MB.
const taatSlots = 1 << 18

// run is term-at-a-time MaxScore. It adds whole posting lists into
// per-slot accumulators, from the term of the highest bound down, and
// stops when the bounds of the terms left sum to less than the k-th best
// partial score of an accepted document: a document that none of the
// added lists holds can no longer enter the top k. The documents that can
// are then completed, in slot order, by skipping through the lists left,
// and pruned as soon as what is left of their bound cannot reach the k-th
// best score so far. Adding a posting costs a few nanoseconds; walking the
// lists document at a time costs a comparison with every essential
// list's cursor for each document, which for a question of twenty or
// thirty terms with long lists (a Chinese one: a term a character and a
// bigram) was about 40% slower.
//
// Scores are summed from the highest term index down, as
// SearchTokensAmong sums them, so both give bit-identical scores; ties
// go by id.
func (q *query) run(ix *Index, k int, accept func(uint32) bool) []Scored {
	k = min(k, ix.nLive)
	terms, nt := q.terms, len(q.terms)
	a := ix.getAcc()
	defer ix.putAcc(a)
	acc := a.acc
	theta := math.Inf(-1)
	j := nt - 1
	for ; j >= 0; j-- {
		t := &terms[j]
		for p, s := range t.slots {
			v := acc[s]
			if v < 0 {
				continue
			}
			if v == 0 {
				if !ix.live[s] {
					acc[s] = -1
					a.touched = append(a.touched, s)
					continue
				}
				a.touched = append(a.touched, s)
			}
			acc[s] = v + t.weight*q.sc.tfPart(tfAt(t.slots, t.tfs, t.big, p), ix.lens[s])
		}
		if j == 0 {
			break
		}
		// The k-th best partial score of an accepted document is a lower
		// bound of the k-th best score: partial sums only grow.
		if len(a.touched) >= k {
			theta = max(theta, q.kthPartial(ix, a, k, theta, accept))
		}
		if q.prefix[j-1] < theta {
			break
		}
	}
	// terms[j:] are in the accumulators; the rest are completed by skipping.
	rest := j
	h := topK{items: make([]entry, 0, k)}
	bound := 0.0 // of a score from the lists left
	if rest > 0 {
		bound = q.prefix[rest-1]
	}
	// The candidates in slot order, as the cursors of the lists left need
	// them: a bit a slot, read back word by word, costs less than a sort.
	set := a.bits
	lo, hi := len(set), 0
	for _, s := range a.touched {
		if v := acc[s]; v > 0 && v+bound >= theta {
			w := int(s >> 6)
			set[w] |= 1 << (s & 63)
			lo, hi = min(lo, w), max(hi, w)
		}
	}
	slots := a.cands[:0]
	for w := lo; w <= hi; w++ {
		for b := set[w]; b != 0; b &= b - 1 {
			slots = append(slots, uint32(w<<6+bits.TrailingZeros64(b)))
		}
		set[w] = 0
	}
	a.cands = slots
	for _, d := range slots {
		s := acc[d]
		dl := ix.lens[d]
		pruned := false
		for i := rest - 1; i >= 0; i-- {
			if s+q.prefix[i] < theta {
				pruned = true
				break
			}
			s += q.probe(i, d, dl)
		}
		if pruned {
			continue
		}
		e := entry{score: s, id: ix.ids[d]}
		if len(h.items) == k && !e.better(h.items[0]) {
			continue
		}
		if accept != nil && !accept(e.id) {
			acc[d] = -1
			continue
		}
		h.push(e, k)
		if len(h.items) == k {
			theta = max(theta, h.items[0].score)
		}
	}
	return h.sorted()
}

// kthPartial returns the k-th best accumulated partial score among the
// accepted documents, or floor when fewer than k of those beat floor.
// Only documents above floor are asked to accept, a rejected one is
// marked so that it is never asked again.
func (q *query) kthPartial(ix *Index, a *accumulators, k int, floor float64, accept func(uint32) bool) float64 {
	h := topK{items: a.top[:0]}
	for _, s := range a.touched {
		v := a.acc[s]
		if v <= floor || (len(h.items) == k && v <= h.items[0].score) {
			continue
		}
		if accept != nil && !accept(ix.ids[s]) {
			a.acc[s] = -1
			continue
		}
		h.push(entry{score: v, id: ix.ids[s]}, k)
	}
	a.top = h.items
	if len(h.items) < k {
		return floor
	}
	return h.items[0].score
}

// runDocs is document-at-a-time MaxScore (Turtle and Flood, 1995): only
// the lists whose bounds can still make a document enter the top k are
// walked, the others probed by skipping while the document can reach the
// threshold. Past taatSlots slots run's accumulators stop fitting the
// caches and its lead goes (BenchmarkBM25Walks, peer lexical workload:
// 0.19 against 0.28 ms a query at 100k, level at 1M), so a larger index
// walks the lists this way.
func (q *query) runDocs(ix *Index, k int, accept func(uint32) bool) []Scored {
	h := topK{items: make([]entry, 0, min(k, ix.nLive))}
	k = min(k, ix.nLive)
	terms, nt := q.terms, len(q.terms)
	contrib := make([]float64, nt)
	first := 0 // terms[first:] are essential
	theta := math.Inf(-1)
	for first < nt {
		d := uint32(math.MaxUint32)
		for i := first; i < nt; i++ {
			if t := &terms[i]; t.pos < len(t.slots) {
				d = min(d, t.slots[t.pos])
			}
		}
		if d == math.MaxUint32 {
			break
		}
		if !ix.live[d] {
			for i := first; i < nt; i++ {
				if t := &terms[i]; t.pos < len(t.slots) && t.slots[t.pos] == d {
					t.pos++
				}
			}
			continue
		}
		dl := ix.lens[d]
		clear(contrib)
		s := 0.0
		for i := first; i < nt; i++ {
			if t := &terms[i]; t.pos < len(t.slots) && t.slots[t.pos] == d {
				c := t.weight * q.sc.tfPart(tfAt(t.slots, t.tfs, t.big, t.pos), dl)
				contrib[i] = c
				s += c
				t.pos++
			}
		}
		pruned := false
		for i := first - 1; i >= 0; i-- {
			if s+q.prefix[i] < theta {
				pruned = true
				break
			}
			c := q.probe(i, d, dl)
			contrib[i] = c
			s += c
		}
		if pruned {
			continue
		}
		// The exact score, summed from the last term down as run sums
		// it, so that documents with the same terms get bit-identical
		// scores and ties go by id.
		score := 0.0
		for i := nt - 1; i >= 0; i-- {
			score += contrib[i]
		}
		e := entry{score: score, id: ix.ids[d]}
		if len(h.items) == k && !e.better(h.items[0]) {
			continue
		}
		if accept != nil && !accept(e.id) {
			continue
		}
		h.push(e, k)
		if len(h.items) == k {
			theta = h.items[0].score
			for first < nt && q.prefix[first] < theta {
				first++
			}
		}
	}
	return h.sorted()
}

// probe skips term i's cursor to document d and returns the term's
// contribution to its score: 0 when d does not hold the term (adding
// which leaves a sum's bits as they are).
func (q *query) probe(i int, d, dl uint32) float64 {
	t := &q.terms[i]
	t.pos = advance(t.slots, t.pos, d)
	if t.pos < len(t.slots) && t.slots[t.pos] == d {
		return t.weight * q.sc.tfPart(tfAt(t.slots, t.tfs, t.big, t.pos), dl)
	}
	return 0
}

// bound is the largest tf part over the frontier's points.
func (s scorer) bound(f frontier) float64 {
	best := 0.0
	for _, p := range f {
		best = max(best, s.tfPart(p.tf, p.dl))
	}
	return best
}

// advance returns the first position >= pos whose slot is >= target,
// galloping then bisecting so that long skips cost O(log distance).
func advance(slots []uint32, pos int, target uint32) int {
	if pos >= len(slots) || slots[pos] >= target {
		return pos
	}
	lo, step := pos, 1 // slots[lo] < target
	hi := pos + 1
	for hi < len(slots) && slots[hi] < target {
		lo = hi
		step <<= 1
		hi = lo + step
	}
	hi = min(hi, len(slots))
	// The answer is in (lo, hi].
	i, _ := slices.BinarySearch(slots[lo+1:hi], target)
	return lo + 1 + i
}

type entry struct {
	score float64
	id    uint32
}

// better reports whether e ranks before o: higher score, then lower id.
func (e entry) better(o entry) bool {
	return e.score > o.score || (e.score == o.score && e.id < o.id)
}

// topK is a min-heap of at most k entries whose root is the worst kept.
type topK struct{ items []entry }

// sorted returns the kept entries best first, ties by ascending id, or
// nil when there are none.
func (h *topK) sorted() []Scored {
	if len(h.items) == 0 {
		return nil
	}
	out := make([]Scored, len(h.items))
	for i, e := range h.items {
		out[i] = Scored{ID: e.id, Score: e.score}
	}
	slices.SortFunc(out, byScore)
	return out
}

func (h *topK) push(e entry, k int) {
	if len(h.items) < k {
		h.items = append(h.items, e)
		h.up(len(h.items) - 1)
		return
	}
	h.items[0] = e
	h.down(0)
}

func (h *topK) up(i int) {
	it := h.items
	for i > 0 {
		p := (i - 1) / 2
		if !it[p].better(it[i]) {
			break
		}
		it[p], it[i] = it[i], it[p]
		i = p
	}
}

func (h *topK) down(i int) {
	it := h.items
	n := len(it)
	for {
		w := i
		if l := 2*i + 1; l < n && it[w].better(it[l]) {
			w = l
		}
		if r := 2*i + 2; r < n && it[w].better(it[r]) {
			w = r
		}
		if w == i {
			return
		}
		it[w], it[i] = it[i], it[w]
		i = w
	}
}

// SearchAmong is Search restricted to the documents ids: it scores only
// those (in any order; repeated, absent and removed ids are ignored) and
// returns the k best, best first, ties by ascending id, with the very
// scores Search gives them. Its cost grows with len(ids) and the query's
// posting lists walked by skipping, not with the index: a caller that knows
// the few documents a filter admits (a payload index) gets their ranking
// without Search visiting every posting and asking accept about each.
func (ix *Index) SearchAmong(query string, k int, ids []uint32) []Scored {
	defer runtime.KeepAlive(ix)
	if k <= 0 || len(ids) == 0 {
		return nil
	}
	return ix.SearchTokensAmong(ix.an.Tokens(query), k, ids)
}

// SearchTokensAmong is SearchAmong for a query that is already analyzed.
func (ix *Index) SearchTokensAmong(tokens []string, k int, ids []uint32) []Scored {
	defer runtime.KeepAlive(ix)
	if k <= 0 || len(tokens) == 0 || len(ids) == 0 || ix.nLive == 0 {
		return nil
	}
	q := ix.prepare(tokens)
	if len(q.terms) == 0 {
		return nil
	}
	slots := make([]uint32, 0, len(ids))
	for _, id := range ids {
		if s, ok := ix.slotOf.Get(id); ok {
			slots = append(slots, s)
		}
	}
	slices.Sort(slots)
	slots = slices.Compact(slots)
	// contrib[i*nt+j] is term j's contribution to slots[i], filled term by
	// term and summed from the last term down as run sums it, so that
	// scores are bit-identical to Search's.
	nt := len(q.terms)
	contrib := make([]float64, len(slots)*nt)
	matched := make([]bool, len(slots))
	for j := range q.terms {
		t := &q.terms[j]
		if len(t.slots) < len(slots) {
			// A short posting list: probe the candidates for each posting.
			pos := 0
			for p, s := range t.slots {
				pos = advance(slots, pos, s)
				if pos == len(slots) {
					break
				}
				if slots[pos] == s {
					contrib[pos*nt+j] = t.weight * q.sc.tfPart(tfAt(t.slots, t.tfs, t.big, p), ix.lens[s])
					matched[pos] = true
				}
			}
			continue
		}
		pos := 0
		for i, s := range slots {
			pos = advance(t.slots, pos, s)
			if pos == len(t.slots) {
				break
			}
			if t.slots[pos] == s {
				contrib[i*nt+j] = t.weight * q.sc.tfPart(tfAt(t.slots, t.tfs, t.big, pos), ix.lens[s])
				matched[i] = true
			}
		}
	}
	k = min(k, len(slots))
	h := topK{items: make([]entry, 0, k)}
	for i, s := range slots {
		if !matched[i] || !ix.live[s] {
			continue
		}
		score := 0.0
		row := contrib[i*nt : (i+1)*nt]
		for j := nt - 1; j >= 0; j-- {
			score += row[j]
		}
		e := entry{score: score, id: ix.ids[s]}
		if len(h.items) == k && !e.better(h.items[0]) {
			continue
		}
		h.push(e, k)
	}
	return h.sorted()
}
