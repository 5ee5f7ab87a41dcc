package rerank

import (
	"context"
	"fmt"
	"math"
	"strings"

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
}

// Lexical is the offline reranker: no model, no network, deterministic. It
// suits a hybrid pipeline without a cross-encoder, where it nudges hits that
// cover more of the query, more tightly, up the fused order. It cannot
// recognise a paraphrase that shares no terms with the query.
//
// A Lexical is immutable and safe for concurrent use.
type Lexical struct {
	an analysis.Analyzer
	w  Weights
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
	return l
}

// Name returns "lexical".
func (l *Lexical) Name() string { return "lexical" }

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

// score computes the blended score of each hit. Query terms are numbered
// so that per-hit bookkeeping is a few small slices, not maps: a rerank call
// analyses every candidate's text and must stay cheap.
func (l *Lexical) score(query string, hits []retrieval.Hit) []scoredIdx {
	qterms := unique(l.an.Tokens(query))
	m := len(qterms)
	qidx := make(map[string]int, m)
	for i, t := range qterms {
		qidx[t] = i
	}
	type doc struct {
		inTitle, inAny []bool
		matched        int
		seq            []int // query-term index per matched token, -1 for others
	}
	docs := make([]doc, len(hits))
	df := make([]int, m)
	for i, h := range hits {
		d := doc{inTitle: make([]bool, m), inAny: make([]bool, m)}
		titleSeq := l.seq(h.Chunk.Title, qidx, d.inTitle)
		textSeq := l.seq(h.Chunk.Text, qidx, d.inAny)
		// Proximity is measured on the text, or on the title when the
		// text has no match (a FAQ whose question is the title).
		d.seq = textSeq
		if textSeq == nil {
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
			// Over a handful of candidates "to" can look as rare as
			// "invoice"; a function word must not decide the order.
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
		prior := l.w.RankK / (l.w.RankK + float64(i))
		s := l.w.Rank*prior + l.w.Coverage*cov + l.w.Title*tit
		if l.w.Proximity != 0 && d.matched >= 2 {
			s += l.w.Proximity * proximity(d.seq, m)
		}
		out[i] = scoredIdx{idx: i, score: s}
	}
	return out
}

// seq analyses text, marks the query terms found in found, and returns the
// token sequence as query-term indices (-1 for other tokens), or nil when no
// query term occurs.
func (l *Lexical) seq(text string, qidx map[string]int, found []bool) []int {
	if text == "" || len(qidx) == 0 {
		return nil
	}
	toks := l.an.Tokens(text)
	seq := make([]int, len(toks))
	matched := false
	for i, t := range toks {
		j, ok := qidx[t]
		if !ok {
			seq[i] = -1
			continue
		}
		seq[i] = j
		found[j] = true
		matched = true
	}
	if !matched {
		return nil
	}
	return seq
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
