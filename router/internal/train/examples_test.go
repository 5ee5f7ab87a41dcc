package main

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/adaptrag/adaptrag/router/internal/feat"
)

func TestOwnExamples(t *testing.T) {
	c := testCorpus(t)
	a := ownExamples(c, rand.New(rand.NewPCG(1, 2)))
	b := ownExamples(c, rand.New(rand.NewPCG(1, 2)))
	if !slices.Equal(a, b) {
		t.Fatal("examples are not reproducible for a fixed seed")
	}
	count := map[string]int{}
	for _, e := range a {
		if classIndex(e.label) < 0 {
			t.Fatalf("bad label %q for %q", e.label, e.text)
		}
		lang := "en"
		if hanShare(e.text) {
			lang = "zh"
		}
		count[lang+"/"+e.label]++
	}
	t.Logf("own examples: %v", count)
	// The gaps the public pools leave: Chinese analytical, questions to a
	// service desk, greeting + question.
	for key, min := range map[string]int{"zh/analytical": 300, "zh/factual": 200, "en/factual": 150, "en/analytical": 200, "zh/chitchat": 50, "en/chitchat": 40} {
		if count[key] < min {
			t.Errorf("%s: %d examples, want >= %d", key, count[key], min)
		}
	}
	for _, e := range a {
		if e.label == "chitchat" {
			continue
		}
		if an := feat.Analyze(e.text); an.Greeting && an.Rest == "" {
			t.Errorf("substantive example is only a greeting: %q", e.text)
		}
	}
}
