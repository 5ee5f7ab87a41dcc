package nodes

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/adaptrag/adaptrag/retrieval/analysis"
)

// TestTermMemo checks that remembered terms are those a fresh analysis
// gives (thousands joined, stemmed), that the memo stays within its bound,
// that a text too long to keep is still analysed, and that it is safe for
// concurrent use (run with -race).
func TestTermMemo(t *testing.T) {
	tm := newTermMemo(analysis.Default(), 8)
	texts := []string{"Expenses of 1,200 yuan are approved", "差旅报销须在 30 天内提交", "The invoices arrive", ""}
	for i := range 40 {
		texts = append(texts, fmt.Sprintf("meal caps %d for guests approving %d,000 claims", i, i))
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for round := range 3 {
				for _, text := range texts {
					got, want := tm.terms(text), tm.fresh(text)
					if !slices.Equal(got, want) {
						t.Errorf("goroutine %d round %d: terms(%q) = %q, want %q", g, round, text, got, want)
						return
					}
					passage := text + "。| a | b |\n|---|---|\n" + text + "!"
					if got, want := tm.sentences(passage), splitSentences(dropTableHeaders(passage)); !slices.Equal(got, want) {
						t.Errorf("goroutine %d round %d: sentences(%q) = %q, want %q", g, round, passage, got, want)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	tm.mu.Lock()
	n, np := len(tm.m), len(tm.sents)
	tm.mu.Unlock()
	if n > 8 || np > 8 {
		t.Errorf("memo holds the terms of %d texts and the sentences of %d passages, bound 8", n, np)
	}
	if got := tm.fresh("Expenses of 1,200 yuan"); !slices.Contains(got, stem("expense")) || !slices.Contains(got, "1200") {
		t.Errorf("fresh terms %q: want stemmed words and joined thousands", got)
	}
	long := string(make([]byte, maxMemoText+1)) + " approvals"
	if got := tm.terms(long); !slices.Contains(got, stem("approval")) {
		t.Errorf("long text terms %q", got)
	}
	tm.mu.Lock()
	_, kept := tm.m[long]
	tm.mu.Unlock()
	if kept {
		t.Error("a text over maxMemoText was kept")
	}
}
