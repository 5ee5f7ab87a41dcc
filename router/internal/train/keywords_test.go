package main

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/adaptrag/adaptrag/router/internal/feat"
)

func TestKeywordExamples(t *testing.T) {
	c := testCorpus(t)
	a := keywordExamples(c, rand.New(rand.NewPCG(1, 2)), 300)
	b := keywordExamples(c, rand.New(rand.NewPCG(1, 2)), 300)
	if !slices.Equal(a, b) {
		t.Fatal("keyword examples are not reproducible for a fixed seed")
	}
	gated := 0
	for _, e := range a {
		if e.label != "factual" {
			t.Fatalf("%q: label %q", e.text, e.label)
		}
		an := feat.Analyze(e.text)
		if an.Talk.Only {
			t.Errorf("%q is only small talk", e.text)
		}
		if !an.Chat {
			gated++
		}
	}
	// Most keyword queries carry no evidence of conversation; the rest
	// (elliptical follow-ups such as 那X呢) teach the model itself.
	if share := float64(gated) / float64(len(a)); share < 0.7 || share > 0.98 {
		t.Errorf("%.2f of the keyword examples are gated", share)
	}
}

func TestPoolKeywords(t *testing.T) {
	qs := []string{"when did the berlin wall fall", "who wrote the book the old man and the sea", "第二次世界大战是哪一年结束的"}
	got := poolKeywords(rand.New(rand.NewPCG(1, 2)), qs, 10)
	if len(got) != len(qs) {
		t.Fatalf("got %v", got)
	}
	for _, e := range got {
		if an := feat.Analyze(e.text); an.Talk.Conv || an.Chat {
			t.Errorf("%q keeps a function word", e.text)
		}
	}
	t.Log(got)
}
