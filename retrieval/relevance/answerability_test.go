package relevance_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"strings"
	"testing"

	"github.com/adaptrag/adaptrag/kb"
	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/retrieval/embed"
	"github.com/adaptrag/adaptrag/retrieval/relevance"
	"github.com/adaptrag/adaptrag/retrieval/rerank"
	"github.com/adaptrag/adaptrag/samplekb"
)

// question is one line of testdata/answerable.jsonl.
type question struct {
	Q          string   `json:"q"`
	Answerable bool     `json:"answerable"`
	Mode       string   `json:"mode"`   // "factual" or "analytical": which retrieval runs
	Expect     []string `json:"expect"` // a passage holding any of these holds the answer
	Note       string   `json:"note"`
}

func loadQuestions(t testing.TB) []question { return loadQuestionFile(t, "testdata/answerable.jsonl") }

// loadQuestionFile reads a question set in the layout of
// testdata/answerable.jsonl.
func loadQuestionFile(t testing.TB, path string) []question {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []question
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		var q question
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
			t.Fatalf("%s:%d: %v", path, n, err)
		}
		if q.Mode != "factual" && q.Mode != "analytical" || q.Answerable != (len(q.Expect) > 0) {
			t.Fatalf("%s:%d: bad mode %q or expect %v", path, n, q.Mode, q.Expect)
		}
		out = append(out, q)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// outcome is what one question retrieved: the best relevance of any
// passage, and of a passage holding the answer (-1: none retrieved).
type outcome struct {
	q                question
	best, bestAnswer float64
	top              retrieval.Hit
}

// retrieveSample runs every question against the sample handbook the way
// the product retrieves: factual questions take the dense top 3 documents,
// analytical ones the hybrid top 50 reranked to 8 by the lexical reranker;
// both also take the dense top 3 FAQ entries (their text is question and
// answer, as the pipeline's FAQ node hands them on). Every passage is
// calibrated with cal.
func retrieveSample(t testing.TB, cal retrieval.Calibrator, qs []question) []outcome {
	t.Helper()
	return retrieveFS(t, samplekb.FS(), cal, qs)
}

// retrieveFS is retrieveSample on the knowledge base built from files; a
// knowledge base without FAQ entries gives document passages only.
func retrieveFS(t testing.TB, files fs.FS, cal retrieval.Calibrator, qs []question) []outcome {
	t.Helper()
	ctx := context.Background()
	emb := embed.NewHashing(embed.HashingConfig{})
	k, err := kb.FromFS(ctx, files, emb)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	lex := rerank.NewLexical(rerank.LexicalConfig{})
	var out []outcome
	for _, q := range qs {
		v, err := emb.Embed(ctx, []string{q.Q})
		if err != nil {
			t.Fatal(err)
		}
		req := retrieval.Request{Text: q.Q, Vector: v[0]}
		var docs []retrieval.Hit
		if q.Mode == "factual" {
			req.K = 3
			docs, err = k.Docs.SearchDense(ctx, req)
		} else {
			req.K, req.Candidates, req.DenseWeight = 50, 50, retrieval.DenseWeightOf(emb)
			docs, err = retrieval.SearchHybrid(ctx, k.Docs, req)
			if err == nil {
				docs, err = lex.Rerank(ctx, q.Q, docs, 8)
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		for i := range docs {
			docs[i].Collection = "docs"
		}
		var faq []retrieval.Hit
		if k.FAQ != nil {
			req.K = 3
			if faq, err = k.FAQ.SearchDense(ctx, req); err != nil {
				t.Fatal(err)
			}
		}
		for i := range faq {
			faq[i].Collection = "faq"
			faq[i].Chunk.Text = faq[i].Chunk.Meta[retrieval.MetaQuestion] + "\n" + faq[i].Chunk.Meta[retrieval.MetaAnswer]
		}
		hits := append(docs, faq...)
		if err := cal.Calibrate(ctx, q.Q, hits); err != nil {
			t.Fatal(err)
		}
		o := outcome{q: q, best: -1, bestAnswer: -1}
		for _, h := range hits {
			if h.Relevance > o.best {
				o.best, o.top = h.Relevance, h
			}
			if holds(h, q.Expect) && h.Relevance > o.bestAnswer {
				o.bestAnswer = h.Relevance
			}
		}
		out = append(out, o)
	}
	return out
}

func holds(h retrieval.Hit, expect []string) bool {
	text := h.Chunk.Title + "\n" + h.Chunk.Text
	for _, e := range expect {
		if strings.Contains(text, e) {
			return true
		}
	}
	return false
}

// tradeOff holds the rates at one threshold.
type tradeOff struct {
	threshold           float64
	notFound            float64 // unanswerable: every passage below the threshold
	keepAny, keepAnswer float64 // answerable: some passage kept; the answer's passage kept
	retrievedAnswer     float64 // answerable: the answer's passage was retrieved at all
	notFoundOffTopic    float64
}

func measure(os []outcome, th float64) tradeOff {
	r := tradeOff{threshold: th}
	var ans, un, off int
	for _, o := range os {
		if o.q.Answerable {
			ans++
			if o.best >= th {
				r.keepAny++
			}
			if o.bestAnswer >= th {
				r.keepAnswer++
			}
			if o.bestAnswer >= 0 {
				r.retrievedAnswer++
			}
			continue
		}
		un++
		if o.best < th {
			r.notFound++
		}
		if strings.Contains(o.q.Note, "off-topic") {
			off++
			if o.best < th {
				r.notFoundOffTopic++
			}
		}
	}
	div := func(x *float64, n int) {
		if n > 0 {
			*x /= float64(n)
		}
	}
	div(&r.keepAny, ans)
	div(&r.keepAnswer, ans)
	div(&r.retrievedAnswer, ans)
	div(&r.notFound, un)
	div(&r.notFoundOffTopic, off)
	return r
}

// TestAnswerability measures, on the sample handbook and the question set
// of testdata/answerable.jsonl, how a minimum relevance separates the
// questions the handbook answers from those it does not, and checks the
// recommended default. -v prints the trade-off table and the questions
// that the default gets wrong.
//
//	go test ./retrieval/relevance -run TestAnswerability -v
func TestAnswerability(t *testing.T) {
	qs := loadQuestions(t)
	var nAns, nUn int
	for _, q := range qs {
		if q.Answerable {
			nAns++
		} else {
			nUn++
		}
	}
	if nAns < 40 || nUn < 40 {
		t.Fatalf("question set: %d answerable, %d unanswerable; want at least 40 of each", nAns, nUn)
	}
	os := retrieveSample(t, relevance.New(relevance.Config{}), qs)
	t.Logf("%d answerable, %d unanswerable questions; passages: docs (factual dense top 3, analytical hybrid 50 -> lexical rerank 8) + FAQ dense top 3", nAns, nUn)
	t.Logf("| min relevance | unanswerable -> not found | off-topic -> not found | answerable: a passage kept | answerable: answer's passage kept |")
	t.Logf("|---|---|---|---|---|")
	for _, th := range []float64{0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5, 0.6, 0.7} {
		r := measure(os, th)
		mark := ""
		if th == relevance.DefaultMinRelevance {
			mark = " (default)"
		}
		t.Logf("| %.2f%s | %.0f%% | %.0f%% | %.0f%% | %.0f%% |", th, mark, 100*r.notFound, 100*r.notFoundOffTopic, 100*r.keepAny, 100*r.keepAnswer)
	}
	d := measure(os, relevance.DefaultMinRelevance)
	t.Logf("answer's passage retrieved at all (any relevance): %.0f%%", 100*d.retrievedAnswer)
	for _, part := range []struct {
		name string
		keep func(question) bool
	}{
		{"factual (dense top 3)", func(q question) bool { return q.Mode == "factual" }},
		{"analytical (hybrid 50 -> rerank 8)", func(q question) bool { return q.Mode == "analytical" }},
		{"Chinese", func(q question) bool { return strings.HasPrefix(q.Note, "zh") }},
		{"English", func(q question) bool { return strings.HasPrefix(q.Note, "en") }},
	} {
		var sub []outcome
		var a, u int
		for _, o := range os {
			if part.keep(o.q) {
				sub = append(sub, o)
				if o.q.Answerable {
					a++
				} else {
					u++
				}
			}
		}
		r := measure(sub, relevance.DefaultMinRelevance)
		t.Logf("at the default, %s: unanswerable -> not found %.0f%% of %d; answerable keep the answer's passage %.0f%% of %d", part.name, 100*r.notFound, u, 100*r.keepAnswer, a)
	}
	for _, o := range os {
		switch {
		case o.q.Answerable && o.bestAnswer < relevance.DefaultMinRelevance:
			t.Logf("answerable, answer dropped: %q best answer passage %.2f, best passage %.2f (%s)", o.q.Q, o.bestAnswer, o.best, o.top.Chunk.Title)
		case !o.q.Answerable && o.best >= relevance.DefaultMinRelevance:
			t.Logf("unanswerable, kept: %q %.2f %s: %s", o.q.Q, o.best, o.top.Chunk.Title, short(o.top.Chunk.Text))
		}
	}
	// What the default must deliver on this sample: most unanswerable
	// questions end in "not found", every off-topic one does, and most
	// answerable ones keep the passage that holds their answer.
	if d.notFound < 0.8 {
		t.Errorf("at the default %.2f only %.0f%% of unanswerable questions end in not found; want >= 80%%", relevance.DefaultMinRelevance, 100*d.notFound)
	}
	if d.notFoundOffTopic < 1 {
		t.Errorf("at the default %.2f only %.0f%% of off-topic questions end in not found; want all", relevance.DefaultMinRelevance, 100*d.notFoundOffTopic)
	}
	if d.keepAnswer < 0.8 {
		t.Errorf("at the default %.2f only %.0f%% of answerable questions keep the answer's passage; want >= 80%%", relevance.DefaultMinRelevance, 100*d.keepAnswer)
	}
	if d.keepAny < d.keepAnswer {
		t.Errorf("keepAny %.2f < keepAnswer %.2f", d.keepAny, d.keepAnswer)
	}
}

func short(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if r := []rune(s); len(r) > 60 {
		return string(r[:60]) + "…"
	}
	return s
}
