package feature

import "math"

// qtok is one query token.
type qtok struct {
	key    uint64
	w      float64
	unit   int32
	r      rune // the character of a CJK token
	cjk    bool
	joined bool // a CJK character right after another
	single bool // a CJK character without a content character beside it in its run
}

// MaxQueryTokens bounds the query tokens that count: a longer query is
// cut, so that the cost per passage stays bounded whatever is pasted in.
const MaxQueryTokens = 256

// Query is a query prepared for feature extraction. It is immutable once
// built and safe for concurrent use.
type Query struct {
	toks   []qtok
	tokPos table // token key -> positions in toks
	bigPos table // CJK bigram key -> position of its first character
	unitW  []float64
	totalW float64    // sum of unit weights
	tokW   float64    // sum of token weights
	cjkW   float64    // unit weight held by CJK characters
	qlen   float64    // the QLen feature
	runes  [64]uint64 // a filter of the query's CJK characters (no false negatives)
	words  [64]uint64 // a filter of the query's word keys
}

// Units returns the number of units of q; a query without any (empty, or
// punctuation only) has no features.
func (q *Query) Units() int { return len(q.unitW) }

// Prepare analyses query (its first MaxQueryTokens tokens).
func Prepare(query string) *Query {
	q := &Query{}
	var buf [32]qtok // on the stack: most queries fit, and toks is copied out once
	toks := buf[:0]
	lastEnd := -1 // end of the last CJK token
	for i := 0; len(toks) < MaxQueryTokens; {
		start, end, r, kind := next(query, i)
		if kind == sep {
			break
		}
		i = end
		if kind == word {
			k := wordKey(query[start:end])
			toks = append(toks, qtok{key: k, w: wordWeight(k)})
			q.words[(k>>6)&63] |= 1 << (k & 63)
			continue
		}
		toks = append(toks, qtok{key: runeKey(r), w: runeWeight(r), r: r, cjk: true, joined: start == lastEnd})
		q.runes[(r>>6)&63] |= 1 << (uint(r) & 63)
		lastEnd = end
	}
	q.toks = append(make([]qtok, 0, len(toks)), toks...)
	for p := 1; p < len(q.toks); p++ {
		if a, b := &q.toks[p-1], &q.toks[p]; b.joined && questionBigram(a.r, b.r) {
			a.w, b.w = WeightStop, WeightStop
		}
	}
	// One array holds the entries of both tables: tokens, then bigrams.
	es := make([]entry, 0, 2*len(q.toks))
	for p, t := range q.toks {
		es = append(es, entry{t.key, int32(p)})
	}
	nt := len(es)
	for p := 0; p+1 < len(q.toks); p++ {
		if a, b := q.toks[p], q.toks[p+1]; a.cjk && b.cjk && b.joined {
			es = append(es, entry{bigramKey(a.r, b.r), int32(p)})
		}
	}
	q.tokPos, q.bigPos = newTables(es[:nt], es[nt:])
	q.unitW = make([]float64, 0, len(q.toks))
	for p := range q.toks {
		t := &q.toks[p]
		q.tokW += t.w
		if t.cjk {
			// A character with no content character beside it in its run
			// (alone, or between stop and question characters: 退 in 可以退,
			// 钱 in 要钱吗) is a word of one character: it is found by
			// itself, not by a bigram.
			prev := t.joined && q.toks[p-1].w == WeightContent
			next := p+1 < len(q.toks) && q.toks[p+1].joined && q.toks[p+1].w == WeightContent
			t.single = !prev && !next
		} else if ps, _ := q.tokPos.get(t.key); int(ps[0]) < p {
			t.unit = q.toks[ps[0]].unit // a word seen before
			continue
		}
		t.unit = int32(len(q.unitW))
		q.unitW = append(q.unitW, t.w)
		q.totalW += t.w
		if t.cjk {
			q.cjkW += t.w
		}
	}
	q.qlen = math.Log1p(q.totalW)
	return q
}

// twinFound reports whether another unit of u's character is found: the
// passage's occurrences of the character are then explained by that word
// (公 of 公司 for the 公 of 办公室), not evidence for u.
func (q *Query) twinFound(s *Scratch, r rune, u int32) bool {
	ps, _ := q.tokPos.get(runeKey(r))
	for _, p := range ps {
		if o := q.toks[p].unit; o != u && s.found[o] {
			return true
		}
	}
	return false
}

// Extract returns the features of a passage whose searchable fields are
// fields: for a document its heading path (or title) first, then its
// text; for an FAQ entry (faq) its question alone, which also sets Rev
// and Both. Runs do not cross fields. A query without units gives the
// zero Vector. It is s.Load followed by q.Match.
func (q *Query) Extract(s *Scratch, faq bool, fields ...string) Vector {
	s.Load(faq, fields...)
	return q.Match(s)
}

// Match returns the features of the passage last loaded into s (see
// Scratch.Load); one passage loaded once can be matched against several
// queries.
func (q *Query) Match(s *Scratch) Vector {
	var v Vector
	if len(q.unitW) == 0 {
		return v
	}
	s.reset(q)
	faq := s.faq
	head := 0.0
	start := int32(0)
	sb := 0 // the next sentence start in s.sents
	for fi, end := range s.fields {
		// The field is read a sentence [a, b) at a time, so that the loop
		// over its tokens stays tight.
		for a := start; a < end; {
			b := end
			if sb < len(s.sents) && s.sents[sb] < end {
				b = s.sents[sb]
				sb++
			}
			q.sentence(s, s.toks[a:b], faq)
			s.endSentence()
			a = b
		}
		for sb < len(s.sents) && s.sents[sb] <= end { // an end at the field's end
			sb++
		}
		s.endRun(faq)
		s.k += 2
		start = end
		if fi == 0 && !faq && len(s.fields) > 1 {
			for u, ok := range s.seen {
				if ok {
					head += q.unitW[u]
				}
			}
		}
	}
	var found, chars float64
	for u, ok := range s.found {
		if ok {
			found += q.unitW[u]
		}
	}
	// A unit seen but not found is a CJK character (a word seen is found),
	// one unit per position.
	for _, t := range q.toks {
		if t.cjk && !s.found[t.unit] && s.seen[t.unit] && !q.twinFound(s, t.r, t.unit) {
			chars += q.unitW[t.unit]
		}
	}
	v[Cov] = found / q.totalW
	v[Run] = s.best / q.tokW
	v[Miss] = math.Log1p(q.totalW - found)
	v[QLen] = q.qlen
	v[PLen] = s.plen
	v[CJK] = q.cjkW / q.totalW
	v[Chr] = chars / q.totalW
	v[Head] = head / q.totalW
	if !faq {
		v[Sent] = s.bestSent / q.totalW
	}
	if faq && s.revW > 0 {
		v[Rev] = s.revFound / s.revW
		v[Both] = min(v[Cov], v[Rev])
	}
	return v
}

// sentence matches the tokens of one sentence of the passage.
func (q *Query) sentence(s *Scratch, toks []uint64, faq bool) {
	for _, k := range toks {
		if k&spaceMask == spaceRune {
			r := rune(k & runeMask)
			if k&joinedBit == 0 {
				s.endRun(faq)
			}
			if !faq && q.runes[(r>>6)&63]&(1<<(uint(r)&63)) == 0 {
				// The common case, inline: a character the query does
				// not hold.
				s.prevIn = false
				s.runLen++
				s.k++
				continue
			}
			q.char(s, r, faq)
			continue
		}
		s.endRun(faq)
		if !faq && q.words[(k>>6)&63]&(1<<(k&63)) == 0 {
			s.k++ // likewise, a word the query does not hold
			continue
		}
		q.word(s, k, faq)
	}
}

// match records that passage token number s.k equals the query tokens at
// positions ps, extending the runs that ended at the previous token.
func (q *Query) match(s *Scratch, ps []int32) {
	for i := len(ps) - 1; i >= 0; i-- { // descending: p-1 is read before it is written
		p := ps[i]
		t := &q.toks[p]
		run := t.w
		if p > 0 && s.lastIdx[p-1] == s.k-1 {
			run += s.lastRun[p-1]
		}
		s.lastIdx[p], s.lastRun[p] = s.k, run
		if run > s.best {
			s.best = run
		}
		s.seen[t.unit] = true
		if !t.cjk || t.single {
			s.find(t.unit, q.unitW[t.unit])
		}
	}
}

// word handles a word token of the passage with key k.
func (q *Query) word(s *Scratch, k uint64, faq bool) {
	var ps []int32
	ok := q.words[(k>>6)&63]&(1<<(k&63)) != 0
	if ok {
		ps, ok = q.tokPos.get(k)
	}
	if ok {
		q.match(s, ps)
	}
	if faq {
		w := wordWeight(k)
		s.revW += w
		if ok {
			s.revFound += w
		}
	}
	s.k++
}

// char handles a CJK character of the passage, the next of the current
// run (s.runLen characters so far).
func (q *Query) char(s *Scratch, r rune, faq bool) {
	in := q.runes[(r>>6)&63]&(1<<(uint(r)&63)) != 0
	if !in && !faq { // the common case: a character the query does not hold
		s.prevIn = false
		s.runLen++
		s.k++
		return
	}
	var ps []int32
	if in {
		ps, in = q.tokPos.get(runeKey(r))
	}
	if in {
		q.match(s, ps)
	}
	hit := false
	if in && s.prevIn && s.runLen > 0 {
		if bp, ok := q.bigPos.get(bigramKey(s.prev, r)); ok {
			hit = true
			for _, p := range bp {
				a, b := q.toks[p].unit, q.toks[p+1].unit
				s.find(a, q.unitW[a])
				s.find(b, q.unitW[b])
			}
		}
	}
	if faq {
		w := runeWeight(r)
		if s.runLen > 0 && questionBigram(s.prev, r) {
			s.revW -= s.prevW - WeightStop
			s.prevW, w = WeightStop, WeightStop
		}
		s.revW += w
		if s.runLen > 0 && (s.prevFound || hit) {
			s.revFound += s.prevW
		}
		s.prevFound, s.prevW = hit, w
	}
	s.prev, s.prevIn = r, in
	s.runLen++
	s.k++
}
