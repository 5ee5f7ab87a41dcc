// Package fitting fits and evaluates the coefficients of package relevance
// on the public BEIR-layout evaluation sets (../shared/data/retrieval):
// it retrieves candidates for every query the way the product does, labels
// them by the sets' judgements, fits one logistic model for document
// passages and one for FAQ entries on the first half of each set's queries,
// and reports calibration on the second half. Everything is deterministic:
// the same data gives bit-identical coefficients.
package fitting

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"go/format"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/retrieval/embed"
	"github.com/adaptrag/adaptrag/retrieval/eval"
	"github.com/adaptrag/adaptrag/retrieval/memstore"
	"github.com/adaptrag/adaptrag/retrieval/relevance"
	"github.com/adaptrag/adaptrag/retrieval/relevance/internal/feature"
	"github.com/adaptrag/adaptrag/retrieval/rerank"
)

// Sets are the data sets used, with whether each is an FAQ set (its
// documents become FAQ entries matched by their question, as the product's
// FAQ collection stores them).
var Sets = []struct {
	Name string
	FAQ  bool
}{
	{"xquad_en", false}, {"xquad_zh", false}, {"faq_en-us", true}, {"faq_zh-cn", true},
}

// Methods, in report order. The model is fitted on FitMethods only; the
// others are evaluated with the same coefficients.
var (
	Methods    = []string{"dense@3", "bm25@10", "hybrid@50", "rerank@8"}
	FitMethods = map[string]bool{"dense@3": true, "hybrid@50": true}
)

// Candidate is one retrieved hit of one query, labelled.
type Candidate struct {
	Set, Method string
	Query, Text string // the query's id and text
	Held        bool   // the query is in the held-out (second) half
	Hit         retrieval.Hit
	Relevant    bool
	FAQ         bool
	X           feature.Vector
}

// Collect retrieves and labels the candidates of every query of every set
// under dataDir/retrieval (or dataDir itself, when it holds the sets).
func Collect(ctx context.Context, dataDir string) ([]Candidate, error) {
	dir := filepath.Join(dataDir, "retrieval")
	if _, err := os.Stat(filepath.Join(dataDir, Sets[0].Name)); err == nil {
		dir = dataDir
	}
	var out []Candidate
	for _, s := range Sets {
		ds, err := eval.LoadBEIR(filepath.Join(dir, s.Name))
		if err != nil {
			return nil, err
		}
		cs, err := collectSet(ctx, s.Name, s.FAQ, ds)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.Name, err)
		}
		out = append(out, cs...)
	}
	return out, nil
}

func collectSet(ctx context.Context, name string, faq bool, ds *eval.Dataset) ([]Candidate, error) {
	emb := embed.NewHashing(embed.HashingConfig{})
	st, err := memstore.Open(ctx, memstore.Options{})
	if err != nil {
		return nil, err
	}
	defer st.Close()
	chunks := make([]retrieval.Chunk, len(ds.Corpus))
	texts := make([]string, len(ds.Corpus))
	for i, d := range ds.Corpus {
		c := retrieval.Chunk{ID: d.ID, DocID: d.ID, Title: d.Title, Text: d.Text, ContentType: retrieval.ContentText, Position: i}
		texts[i] = d.Title + "\n" + d.Text
		if faq { // as kb.FAQChunks: indexed and embedded by the question only
			c.Text, c.ContentType = d.Title, retrieval.ContentFAQ
			c.Meta = map[string]string{retrieval.MetaQuestion: d.Title, retrieval.MetaAnswer: d.Text}
			texts[i] = d.Title
		}
		chunks[i] = c
	}
	vecs, err := emb.Embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	for i := range chunks {
		chunks[i].Vector = vecs[i]
	}
	if err := st.Upsert(ctx, chunks); err != nil {
		return nil, err
	}
	lex := rerank.NewLexical(rerank.LexicalConfig{})
	half := len(ds.Queries) / 2
	var out []Candidate
	var s feature.Scratch
	for qi, q := range ds.Queries {
		qv, err := emb.Embed(ctx, []string{q.Text})
		if err != nil {
			return nil, err
		}
		req := retrieval.Request{Text: q.Text, Vector: qv[0]}
		dense, err := st.SearchDense(ctx, with(req, 3, 0))
		if err != nil {
			return nil, err
		}
		sparse, err := st.SearchSparse(ctx, with(req, 10, 0))
		if err != nil {
			return nil, err
		}
		hreq := with(req, 50, 50)
		hreq.DenseWeight = retrieval.DenseWeightOf(emb)
		hybrid, err := st.SearchHybrid(ctx, hreq)
		if err != nil {
			return nil, err
		}
		reranked, err := lex.Rerank(ctx, q.Text, slices.Clone(hybrid), 8)
		if err != nil {
			return nil, err
		}
		fq := feature.Prepare(q.Text)
		for mi, hits := range [][]retrieval.Hit{dense, sparse, hybrid, reranked} {
			for _, h := range hits {
				c := Candidate{Set: name, Method: Methods[mi], Query: q.ID, Text: q.Text, Held: qi >= half, Hit: h,
					Relevant: ds.Qrels[q.ID][h.Chunk.ID] > 0}
				c.X, c.FAQ = Features(fq, &s, &h.Chunk)
				out = append(out, c)
			}
		}
	}
	return out, nil
}

func with(r retrieval.Request, k, cands int) retrieval.Request {
	r.K, r.Candidates = k, cands
	return r
}

// Features computes a chunk's features exactly as relevance.Calibrator
// does: against the question of an FAQ entry, else the title and the text.
func Features(q *feature.Query, s *feature.Scratch, ch *retrieval.Chunk) (feature.Vector, bool) {
	if fq, ok := relevance.FAQQuestion(ch); ok {
		return q.Extract(s, true, fq), true
	}
	return q.Extract(s, false, ch.Title, ch.Text), false
}

// Unfitted are the features the fit leaves out (their weight is 0): Head,
// because the public sets' titles are article titles that every paragraph
// of an article shares, so the fit learns that a title's words are worth
// less than the text's (weight -1.4) and would discount exactly the
// section headings that ingestion gives every chunk, which name what the
// section is about (on the new-domain knowledge bases the answer's passage
// is kept less often with it: 53% against 57% before sent, 55% against
// 58% with it, and the section answering "挂号费什么情况下可以退？" falls
// from 0.33 to 0.19).
var Unfitted = []int{feature.Head}

// Ridge is the L2 penalty on the weights (not the intercept). Each
// (set, method) group of the fitting half weighs GroupWeight in total, so
// that the 50-hit hybrid lists do not drown the 3-hit dense ones.
const (
	Ridge       = 1.0
	GroupWeight = 1000.0
	// Decimals is the rounding of the shipped coefficients: it keeps the
	// file stable against last-bit differences between platforms.
	Decimals = 4
)

// Fit fits the model on the candidates of the first half of each set's
// queries retrieved by FitMethods.
func Fit(cs []Candidate) relevance.Model {
	return relevance.Model{Doc: fitOne(cs, false), FAQ: fitOne(cs, true)}
}

func fitOne(cs []Candidate, faq bool) relevance.Logistic {
	count := map[string]int{}
	var sel []Candidate
	for _, c := range cs {
		if c.FAQ == faq && !c.Held && FitMethods[c.Method] {
			sel = append(sel, c)
			count[c.Set+"/"+c.Method]++
		}
	}
	n := feature.N + 1
	beta := make([]float64, n)
	x := make([]float64, n)
	for iter := 0; iter < 100; iter++ {
		h := make([][]float64, n)
		for i := range h {
			h[i] = make([]float64, n)
		}
		g := make([]float64, n)
		for _, c := range sel {
			w := GroupWeight / float64(count[c.Set+"/"+c.Method])
			x[0] = 1
			copy(x[1:], c.X[:])
			for _, j := range Unfitted {
				x[1+j] = 0
			}
			z := 0.0
			for i := range x {
				z += beta[i] * x[i]
			}
			p := 1 / (1 + math.Exp(-z))
			y := 0.0
			if c.Relevant {
				y = 1
			}
			for i := range x {
				g[i] += w * (p - y) * x[i]
				for j := range x {
					h[i][j] += w * p * (1 - p) * x[i] * x[j]
				}
			}
		}
		for i := 1; i < n; i++ {
			g[i] += Ridge * beta[i]
			h[i][i] += Ridge
		}
		step := solve(h, g)
		maxStep := 0.0
		for i := range beta {
			beta[i] -= step[i]
			maxStep = max(maxStep, math.Abs(step[i]))
		}
		if maxStep < 1e-12 {
			break
		}
	}
	scale := math.Pow(10, Decimals)
	r := func(v float64) float64 { return math.Round(v*scale) / scale }
	l := relevance.Logistic{Intercept: r(beta[0]), Weights: make([]float64, feature.N)}
	for i := range l.Weights {
		l.Weights[i] = r(beta[i+1])
	}
	return l
}

// solve returns x with a·x = b by Gaussian elimination with partial
// pivoting (a is small, symmetric and positive definite).
func solve(a [][]float64, b []float64) []float64 {
	n := len(b)
	m := make([][]float64, n)
	for i := range a {
		m[i] = append(slices.Clone(a[i]), b[i])
	}
	for c := range n {
		p := c
		for r := c + 1; r < n; r++ {
			if math.Abs(m[r][c]) > math.Abs(m[p][c]) {
				p = r
			}
		}
		m[c], m[p] = m[p], m[c]
		for r := c + 1; r < n; r++ {
			f := m[r][c] / m[c][c]
			for k := c; k <= n; k++ {
				m[r][k] -= f * m[c][k]
			}
		}
	}
	x := make([]float64, n)
	for r := n - 1; r >= 0; r-- {
		s := m[r][n]
		for k := r + 1; k < n; k++ {
			s -= m[r][k] * x[k]
		}
		x[r] = s / m[r][r]
	}
	return x
}

// Source returns the Go source of the shipped model file for m.
func Source(m relevance.Model) []byte {
	var b bytes.Buffer
	b.WriteString("// Code generated by go run ./retrieval/relevance/internal/fit; DO NOT EDIT.\n\n")
	b.WriteString("package relevance\n\n")
	b.WriteString("// defaultModel was fitted on the first half of the queries of xquad_en,\n")
	b.WriteString("// xquad_zh, faq_en-us and faq_zh-cn (dense top 3 and hybrid top 50).\n")
	b.WriteString("// Weights are in the order of FeatureNames: " + strings.Join(feature.Names[:], ", ") + ".\n")
	b.WriteString("var defaultModel = Model{\n")
	for _, p := range []struct {
		name string
		l    relevance.Logistic
	}{{"Doc", m.Doc}, {"FAQ", m.FAQ}} {
		fmt.Fprintf(&b, "%s: Logistic{Intercept: %s, Weights: []float64{", p.name, num(p.l.Intercept))
		for i, w := range p.l.Weights {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(num(w))
		}
		b.WriteString("}},\n")
	}
	b.WriteString("}\n")
	out, err := format.Source(b.Bytes())
	if err != nil { // the template above is valid Go
		return b.Bytes()
	}
	return out
}

func num(v float64) string {
	if v == 0 {
		return "0" // no "-0"
	}
	return fmt.Sprintf("%.*f", Decimals, v)
}

// Calibrate sets the relevance of every candidate with m through the
// public Calibrator, one query and method at a time, as the product calls
// it, and returns the predictions in the order of cs.
func Calibrate(ctx context.Context, m relevance.Model, cs []Candidate) ([]float64, error) {
	cal := relevance.New(relevance.Config{Model: &m})
	out := make([]float64, len(cs))
	for i := 0; i < len(cs); {
		j := i
		for j < len(cs) && cs[j].Set == cs[i].Set && cs[j].Query == cs[i].Query && cs[j].Method == cs[i].Method {
			j++
		}
		hits := make([]retrieval.Hit, j-i)
		for k := range hits {
			hits[k] = cs[i+k].Hit
		}
		if err := cal.Calibrate(ctx, cs[i].Text, hits); err != nil {
			return nil, err
		}
		for k, h := range hits {
			out[i+k] = h.Relevance
		}
		i = j
	}
	return out, nil
}

// Calib summarises the calibration of predictions p against labels y.
type Calib struct {
	N         int
	BaseRate  float64 // share of relevant candidates
	Mean      float64 // mean prediction
	ECE       float64 // expected calibration error over 10 equal-width bins
	Brier     float64
	BrierBase float64 // Brier score of always predicting BaseRate
	AUC       float64
	Bins      [10]Bin
}

// Bin is one decile of the prediction range [i/10, (i+1)/10).
type Bin struct {
	N         int
	Predicted float64 // mean prediction
	Observed  float64 // share relevant
}

// Measure computes the calibration summary.
func Measure(p []float64, y []bool) Calib {
	var c Calib
	c.N = len(p)
	if c.N == 0 {
		return c
	}
	var sp, sy [10]float64
	for i, v := range p {
		b := min(int(v*10), 9)
		c.Bins[b].N++
		sp[b] += v
		t := 0.0
		if y[i] {
			t = 1
			sy[b]++
		}
		c.BaseRate += t
		c.Mean += v
		c.Brier += (v - t) * (v - t)
	}
	n := float64(c.N)
	c.BaseRate /= n
	c.Mean /= n
	c.Brier /= n
	c.BrierBase = c.BaseRate * (1 - c.BaseRate)
	for b := range c.Bins {
		if k := c.Bins[b].N; k > 0 {
			c.Bins[b].Predicted = sp[b] / float64(k)
			c.Bins[b].Observed = sy[b] / float64(k)
			c.ECE += math.Abs(c.Bins[b].Predicted-c.Bins[b].Observed) * float64(k) / n
		}
	}
	c.AUC = auc(p, y)
	return c
}

// auc is the probability that a random relevant candidate scores above a
// random irrelevant one (ties count half).
func auc(p []float64, y []bool) float64 {
	idx := make([]int, len(p))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(p[a], p[b]) })
	var pos, neg, rankSum float64
	for i := 0; i < len(idx); {
		j := i
		for j < len(idx) && p[idx[j]] == p[idx[i]] {
			j++
		}
		mid := float64(i+j+1) / 2 // mean 1-based rank of the tie group
		for k := i; k < j; k++ {
			if y[idx[k]] {
				pos++
				rankSum += mid
			} else {
				neg++
			}
		}
		i = j
	}
	if pos == 0 || neg == 0 {
		return math.NaN()
	}
	return (rankSum - pos*(pos+1)/2) / (pos * neg)
}
