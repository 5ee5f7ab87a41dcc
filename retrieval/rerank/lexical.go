package rerank

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/retrieval/analysis"
)

// Weights blends the signals of the Lexical reranker. Each signal lies in
// [0, 1]; a hit's score is the weighted sum.
type Weights struct {
	// Rank weighs the incoming rank r (1-based) as RankK/(RankK+r-1): 1 for
	// the first hit, 0.5 at rank RankK+1. It keeps the fused order's
	// evidence (dense similarity included), which lexical signals cannot see.
	Rank float64
	// Coverage weighs the idf-weighted share of the query's terms found in
	// the hit's title or text, idf computed over the candidate set.
	Coverage float64
	// Proximity weighs how tightly the matched terms sit together: the
	// number of distinct matched terms over the length of the smallest
	// token window holding them all (0 with fewer than two matched terms).
	Proximity float64
	// Title weighs the idf-weighted share of the query's terms found in the
	// hit's title.
	Title float64
	// RankK is the rank constant of the Rank signal; zero means
	// DefaultWeights().RankK (30).
	RankK float64
}

// DefaultWeights returns the Lexical reranker's weights when none are given:
// Rank 1, Coverage 1, Proximity 0, Title 1, RankK 30. They come from a grid
// search on the first half of each evaluation set's queries, reranking the
// BM25 top-50 (see TestMeasureLexical, which reports the held-out halves).
// Proximity got no weight there because FAQ entries are too short for it and
// BM25 already orders the xquad paragraphs well; it stays available for
// longer chunks.
func DefaultWeights() Weights {
	return Weights{Rank: 1, Coverage: 1, Proximity: 0, Title: 1, RankK: 30}
}

// LexicalConfig configures NewLexical. The zero value means the defaults.
type LexicalConfig struct {
	// Analyzer splits query, titles and texts into terms; nil means
	// analysis.Default() (the terms BM25 indexes).
	Analyzer analysis.Analyzer
	// Weights of the signals; the zero Weights means DefaultWeights(). A
	// non-zero Weights is used as given (a zero field switches that signal
	// off), except that a zero RankK means DefaultWeights().RankK.
	Weights Weights
	// CacheChunks bounds how many analysed chunks the reranker keeps, so
	// that a chunk seen by an earlier rerank is not analysed again; zero
	// means DefaultCacheChunks, a negative value keeps none (every call
	// analyses its candidates).
	CacheChunks int
}

// DefaultCacheChunks is how many analysed chunks a Lexical reranker keeps
// when LexicalConfig.CacheChunks is zero. A chunk costs about 5 bytes per
// distinct term, and the vocabulary they share is bounded at 64 terms a
// chunk, so the cache stays under about 20 MB.
const DefaultCacheChunks = 4096

// Lexical is the offline reranker: no model, no network, deterministic. It
// suits a hybrid pipeline without a cross-encoder, where it nudges hits that
// cover more of the query, more tightly, up the fused order. It cannot
// recognise a paraphrase that shares no terms with the query.
//
// Analysing the candidates' texts is most of a rerank's cost, so a Lexical
// keeps the terms of the chunks it has seen (see LexicalConfig.CacheChunks),
// keyed by chunk ID and checked against the chunk's title and text, so that a
// changed chunk is analysed again. The cache never changes a score: a cached
// chunk scores exactly as a freshly analysed one.
//
// A Lexical is safe for concurrent use; its configuration is immutable.
type Lexical struct {
	an    analysis.Analyzer
	w     Weights
	cache *termCache // nil when caching is off
}

// NewLexical returns the offline reranker configured by cfg.
func NewLexical(cfg LexicalConfig) *Lexical {
	l := &Lexical{an: cfg.Analyzer, w: cfg.Weights}
	if l.an == nil {
		l.an = analysis.Default()
	}
	if l.w == (Weights{}) {
		l.w = DefaultWeights()
	}
	if l.w.RankK <= 0 {
		l.w.RankK = DefaultWeights().RankK
	}
	switch n := cfg.CacheChunks; {
	case n == 0:
		l.cache = newTermCache(DefaultCacheChunks)
	case n > 0:
		l.cache = newTermCache(n)
	}
	return l
}

// Name returns "lexical".
func (l *Lexical) Name() string { return "lexical" }

// readsOnly marks Lexical as never writing to the hits it reranks (see Safe).
func (l *Lexical) readsOnly() {}

// Rerank scores every hit and returns the best topN (topN <= 0 means all)
// with Method "rerank" and the blended score. Ties keep the incoming order.
// No hits give nil, nil.
func (l *Lexical) Rerank(ctx context.Context, query string, hits []retrieval.Hit, topN int) ([]retrieval.Hit, error) {
	if len(hits) == 0 {
		return nil, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("rerank: lexical: %w", err)
	}
	scores := l.score(query, hits)
	return order(hits, scores, topN), nil
}

// Flags of a chunk's distinct term: where it occurs.
const (
	inTitle uint8 = 1 << iota
	inText
)

// analysed is a chunk as the reranker sees it: its distinct terms, as ids
// of a termTable, sorted, each with where it occurs; and, when proximity
// weighs, its title's and text's token sequences. It is immutable once
// built.
type analysed struct {
	title, text string // what was analysed: a cached entry is valid only for these
	terms       []uint32
	flags       []uint8 // flags[i] for terms[i]
	titleSeq    []uint32
	textSeq     []uint32
}

// flagsOf returns where term id occurs in the chunk (0: nowhere).
func (a *analysed) flagsOf(id uint32) uint8 {
	if i, ok := slices.BinarySearch(a.terms, id); ok {
		return a.flags[i]
	}
	return 0
}

// queryTerm is a query term's id and its index among the query's terms.
type queryTerm struct {
	id uint32
	j  int
}

// presentTerms returns the query terms some candidate holds, by id.
func presentTerms(qids []uint32) []queryTerm {
	out := make([]queryTerm, 0, len(qids))
	for j, id := range qids {
		if id != absent {
			out = append(out, queryTerm{id, j})
		}
	}
	slices.SortFunc(out, func(a, b queryTerm) int { return cmp.Compare(a.id, b.id) })
	return out
}

// flagsInto sets f[q.j] to where each term q of qs (sorted by id) occurs in
// the chunk, leaving the others alone. A chunk with up to eight times as
// many terms as qs is merged with qs in one pass; a longer one is searched
// term by term (see flagsOf).
func (a *analysed) flagsInto(f []uint8, qs []queryTerm) {
	if len(a.terms) > 8*len(qs) {
		for _, q := range qs {
			f[q.j] = a.flagsOf(q.id)
		}
		return
	}
	i := 0
	for _, q := range qs {
		for i < len(a.terms) && a.terms[i] < q.id {
			i++
		}
		if i == len(a.terms) {
			return
		}
		if a.terms[i] == q.id {
			f[q.j] = a.flags[i]
		}
	}
}

// termTable interns terms as ids and holds analysed chunks by chunk ID.
// Every id an analysed chunk holds comes from its table, so a rerank works
// against one table from start to end.
type termTable struct {
	mu     sync.Mutex
	ids    map[string]uint32
	chunks map[string]*analysed
}

func newTermTable() *termTable {
	return &termTable{ids: map[string]uint32{}, chunks: map[string]*analysed{}}
}

// lookup returns the chunk's analysis if the table holds it for the same
// title and text. t.mu must be held.
func (t *termTable) lookup(c *retrieval.Chunk) *analysed {
	if a := t.chunks[c.ID]; a != nil && a.title == c.Title && a.text == c.Text {
		return a
	}
	return nil
}

// add interns the tokens of c's title and text and returns its analysis,
// keeping it under c.ID when cache is set. t.mu must be held.
func (t *termTable) add(c *retrieval.Chunk, titleToks, textToks []string, seqs, cache bool) *analysed {
	if a := t.lookup(c); a != nil {
		return a // the same chunk twice in one call, or another call won
	}
	a := &analysed{title: c.Title, text: c.Text}
	flags := map[uint32]uint8{}
	intern := func(toks []string, f uint8) []uint32 {
		var seq []uint32
		if seqs {
			seq = make([]uint32, len(toks))
		}
		for i, tok := range toks {
			id, ok := t.ids[tok]
			if !ok {
				id = uint32(len(t.ids))
				t.ids[tok] = id
			}
			flags[id] |= f
			if seqs {
				seq[i] = id
			}
		}
		return seq
	}
	a.titleSeq = intern(titleToks, inTitle)
	a.textSeq = intern(textToks, inText)
	a.terms = make([]uint32, 0, len(flags))
	for id := range flags {
		a.terms = append(a.terms, id)
	}
	slices.Sort(a.terms)
	a.flags = make([]uint8, len(a.terms))
	for i, id := range a.terms {
		a.flags[i] = flags[id]
	}
	if cache && c.ID != "" {
		t.chunks[c.ID] = a
	}
	return a
}

// termCache is the Lexical reranker's memory of analysed chunks: one
// termTable at a time, replaced by an empty one when it holds maxChunks
// chunks or maxTerms distinct terms (a simple bound; the chunks still asked
// about are analysed again into the new table).
type termCache struct {
	cur                 atomic.Pointer[termTable]
	maxChunks, maxTerms int
}

func newTermCache(maxChunks int) *termCache {
	c := &termCache{maxChunks: maxChunks, maxTerms: 64 * maxChunks}
	c.cur.Store(newTermTable())
	return c
}

// table returns the current table, locked, replacing a full one.
func (c *termCache) table() *termTable {
	for {
		t := c.cur.Load()
		t.mu.Lock()
		if len(t.chunks) < c.maxChunks && len(t.ids) < c.maxTerms {
			return t
		}
		t.mu.Unlock()
		c.cur.CompareAndSwap(t, newTermTable())
	}
}

// absent is the id of a query term that no candidate holds.
const absent = math.MaxUint32

// analyse returns each hit's analysis and the ids of qterms (absent for a
// term no hit holds), all from one termTable. Cached chunks are looked up
// under the table's lock; the others are analysed outside it (the costly
// part), then interned.
func (l *Lexical) analyse(qterms []string, hits []retrieval.Hit) ([]*analysed, []uint32) {
	var t *termTable
	if l.cache != nil {
		t = l.cache.table()
	} else {
		t = newTermTable()
		t.mu.Lock()
	}
	docs := make([]*analysed, len(hits))
	var miss []int
	for i := range hits {
		if docs[i] = t.lookup(&hits[i].Chunk); docs[i] == nil {
			miss = append(miss, i)
		}
	}
	if len(miss) > 0 {
		t.mu.Unlock()
		toks := make([][2][]string, len(miss))
		for k, i := range miss {
			c := &hits[i].Chunk
			if c.Title != "" {
				toks[k][0] = l.an.Tokens(c.Title)
			}
			if c.Text != "" {
				toks[k][1] = l.an.Tokens(c.Text)
			}
		}
		t.mu.Lock()
		seqs := l.w.Proximity != 0
		for k, i := range miss {
			docs[i] = t.add(&hits[i].Chunk, toks[k][0], toks[k][1], seqs, l.cache != nil)
		}
	}
	qids := make([]uint32, len(qterms))
	for j, q := range qterms {
		id, ok := t.ids[q]
		if !ok {
			id = absent
		}
		qids[j] = id
	}
	t.mu.Unlock()
	return docs, qids
}

// score computes the blended score of each hit. Query terms are numbered,
// and each chunk's distinct terms are a sorted list of ids, so per-hit
// bookkeeping is a few binary searches, not maps or token scans.
func (l *Lexical) score(query string, hits []retrieval.Hit) []scoredIdx {
	qterms := unique(l.an.Tokens(query))
	m := len(qterms)
	docs, qids := l.analyse(qterms, hits)
	// flags[i*m+j]: where query term j occurs in hit i.
	flags := make([]uint8, len(hits)*m)
	df := make([]int, m)
	present := presentTerms(qids)
	for i, d := range docs {
		f := flags[i*m : (i+1)*m]
		d.flagsInto(f, present)
		for j := range f {
			if f[j] != 0 {
				df[j]++
			}
		}
	}
	n := float64(len(hits))
	idf := make([]float64, m)
	var total float64
	for j := range m {
		f := float64(df[j])
		idf[j] = math.Log(1 + (n-f+0.5)/(f+0.5))
		if stopTerms[qterms[j]] {
			// Over a handful of candidates "to" can look as rare as
			// "invoice"; a function word must not decide the order.
			idf[j] *= stopFactor
		}
		total += idf[j]
	}
	var qpos map[uint32]int
	if l.w.Proximity != 0 {
		qpos = make(map[uint32]int, m)
		for j, id := range qids {
			if id != absent {
				qpos[id] = j
			}
		}
	}
	out := make([]scoredIdx, len(hits))
	for i, d := range docs {
		f := flags[i*m : (i+1)*m]
		var cov, tit float64
		matched, textMatched := 0, false
		for j := range m {
			if f[j] != 0 {
				matched++
				cov += idf[j]
			}
			if f[j]&inTitle != 0 {
				tit += idf[j]
			}
			textMatched = textMatched || f[j]&inText != 0
		}
		if total > 0 {
			cov /= total
			tit /= total
		} else {
			cov, tit = 0, 0
		}
		prior := l.w.RankK / (l.w.RankK + float64(i))
		s := l.w.Rank*prior + l.w.Coverage*cov + l.w.Title*tit
		if l.w.Proximity != 0 && matched >= 2 {
			// Proximity is measured on the text, or on the title when the
			// text has no match (a FAQ whose question is the title).
			seq := d.titleSeq
			if textMatched {
				seq = d.textSeq
			}
			s += l.w.Proximity * proximity(querySeq(seq, qpos), m)
		}
		out[i] = scoredIdx{idx: i, score: s}
	}
	return out
}

// querySeq maps a token sequence of term ids to query-term indices (-1 for
// tokens that are not query terms).
func querySeq(seq []uint32, qpos map[uint32]int) []int {
	out := make([]int, len(seq))
	for i, id := range seq {
		j, ok := qpos[id]
		if !ok {
			j = -1
		}
		out[i] = j
	}
	return out
}

// proximity returns k/w where k is the number of distinct query terms in
// seq (query-term indices below m, -1 elsewhere) and w the length of the
// smallest window of seq containing all of them: 1 when they are adjacent,
// 0 with fewer than two distinct terms.
func proximity(seq []int, m int) float64 {
	count := make([]int, m)
	want := 0
	for _, j := range seq {
		if j >= 0 && count[j] == 0 {
			want++
		}
		if j >= 0 {
			count[j]++
		}
	}
	if want < 2 {
		return 0
	}
	clear(count)
	// Classic minimum-window scan.
	have, best, lo := 0, len(seq)+1, 0
	for hi, j := range seq {
		if j < 0 {
			continue
		}
		if count[j] == 0 {
			have++
		}
		count[j]++
		for have == want {
			for seq[lo] < 0 {
				lo++
			}
			if w := hi - lo + 1; w < best {
				best = w
			}
			count[seq[lo]]--
			if count[seq[lo]] == 0 {
				have--
			}
			lo++
		}
	}
	return float64(want) / float64(best)
}

func unique(ts []string) []string {
	seen := make(map[string]bool, len(ts))
	out := ts[:0:0]
	for _, t := range ts {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

// stopFactor scales the idf of function words (stopTerms).
const stopFactor = 0.1

// stopTerms lists English function words and Chinese particles. It is read
// only.
var stopTerms = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an the and or but of to in on at by for with from as into about
		is are was were be been being am do does did has have had it its this that these those there
		then than so if s t d ll re ve m can could would should will shall may might just very please
		的 了 吗 呢 吧 啊 呀 么 嘛 哦 着 得 地 之 也 就 都 还 是`) {
		m[w] = true
	}
	return m
}()
