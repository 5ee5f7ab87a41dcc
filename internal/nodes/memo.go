package nodes

import (
	"sync"

	"github.com/adaptrag/adaptrag/retrieval/analysis"
)

// defaultTermMemo is how many passage texts (sentences, titles) a termMemo
// keeps the terms of, and how many passages it keeps the sentences of: a
// few megabytes at most.
const defaultTermMemo = 4096

// maxMemoText is the longest text (bytes) whose terms are kept; a longer
// one is analysed each time, so that the memo's size stays bounded.
const maxMemoText = 2048

// termMemo gives the extractive answer's terms of a text (thousands joined,
// analysed, stemmed) and remembers those of the passage texts it has seen:
// every question that retrieves a passage scores the same sentences again,
// and analysing them was most of the extractive answer's cost. It holds at
// most max texts, starting afresh when full (0: it keeps none); so does
// its memory of how passages split into sentences. It is safe for
// concurrent use.
type termMemo struct {
	an    analysis.Analyzer
	max   int
	mu    sync.Mutex
	m     map[string][]string
	sents map[string][]string // passage text -> its sentences
}

func newTermMemo(an analysis.Analyzer, max int) *termMemo {
	return &termMemo{an: an, max: max, m: map[string][]string{}, sents: map[string][]string{}}
}

// sentences returns splitSentences(dropTableHeaders(text)), remembered as
// terms are: the same passages are split question after question. The
// slice is shared: callers must not modify it.
func (tm *termMemo) sentences(text string) []string {
	if tm.max <= 0 || len(text) > maxMemoText {
		return splitSentences(dropTableHeaders(text))
	}
	tm.mu.Lock()
	ss, ok := tm.sents[text]
	tm.mu.Unlock()
	if ok {
		return ss
	}
	ss = splitSentences(dropTableHeaders(text))
	tm.mu.Lock()
	if len(tm.sents) >= tm.max {
		tm.sents = make(map[string][]string, tm.max)
	}
	tm.sents[text] = ss
	tm.mu.Unlock()
	return ss
}

// fresh analyses text without the memo (a question, seen once).
func (tm *termMemo) fresh(text string) []string {
	toks := tm.an.Tokens(joinThousands(text))
	for i, tok := range toks {
		toks[i] = stem(tok)
	}
	return toks
}

// terms returns text's terms from the memo, analysing and keeping them the
// first time. The slice is shared: callers must not modify it.
func (tm *termMemo) terms(text string) []string {
	if tm.max <= 0 || len(text) > maxMemoText {
		return tm.fresh(text)
	}
	tm.mu.Lock()
	toks, ok := tm.m[text]
	tm.mu.Unlock()
	if ok {
		return toks
	}
	toks = tm.fresh(text)
	tm.mu.Lock()
	if len(tm.m) >= tm.max {
		tm.m = make(map[string][]string, tm.max)
	}
	tm.m[text] = toks
	tm.mu.Unlock()
	return toks
}
