package relevance

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/retrieval/relevance/internal/feature"
)

// ErrModel reports a Model whose weights do not match the features (see
// FeatureNames). It matches retrieval.ErrInvalid.
var ErrModel = fmt.Errorf("relevance: malformed model: %w", retrieval.ErrInvalid)

// DefaultMinRelevance is the recommended minimum relevance for keeping a
// passage. On the sample handbook with the product's retrieval it leaves
// 82% of the questions the handbook does not answer with no passage (so
// the pipeline answers "not found"), while 96% of those it answers keep
// the passage that holds the answer; TestAnswerability measures it and
// prints the trade-off at other thresholds.
const DefaultMinRelevance = 0.3

// MaxQueryTokens is how many tokens (words and CJK characters) of a query
// count; the rest of a longer query is ignored, which bounds the cost per
// passage.
const MaxQueryTokens = feature.MaxQueryTokens

// Logistic is one logistic model: P = 1/(1+exp(-(Intercept + Σ Weights[i]·x[i])))
// over the features named by FeatureNames, in that order.
type Logistic struct {
	Intercept float64
	Weights   []float64
}

// Model holds the two logistic models of a Calibrator: one for document
// passages, one for FAQ entries (matched by their question).
type Model struct {
	Doc, FAQ Logistic
}

// Check reports whether m has one finite weight per feature.
func (m Model) Check() error {
	for _, l := range []Logistic{m.Doc, m.FAQ} {
		if len(l.Weights) != feature.N {
			return fmt.Errorf("%w: %d weights, want %d (%s)", ErrModel, len(l.Weights), feature.N, strings.Join(FeatureNames(), ", "))
		}
		for _, w := range append([]float64{l.Intercept}, l.Weights...) {
			if math.IsNaN(w) || math.IsInf(w, 0) {
				return fmt.Errorf("%w: weight %v", ErrModel, w)
			}
		}
	}
	return nil
}

// FeatureNames returns the names of the features, in the order of
// Logistic.Weights:
//
//	cov   weighted share of the query's terms found in the passage
//	run   weighted share of the query found as one verbatim run
//	miss  log(1 + weight of the query terms not found)
//	qlen  log(1 + weight of all the query's terms)
//	plen  log(1 + tokens searched in the passage)
//	cjk   share of the query's weight in CJK characters
//	chr   weighted share of the query in CJK characters found only by themselves
//	head  weighted share of the query found in the title (heading path); weight 0
//	sent  documents: the largest share of the query (as cov) that one sentence holds
//	rev   FAQ entries: weighted share of the FAQ question found in the query
//	both  FAQ entries: the smaller of cov and rev
func FeatureNames() []string { return append([]string(nil), feature.Names[:]...) }

// DefaultModel returns the shipped coefficients, fitted by
// internal/fit on the public data sets described in the package
// documentation. Each call returns a fresh copy.
func DefaultModel() Model {
	m := defaultModel
	m.Doc.Weights = append([]float64(nil), m.Doc.Weights...)
	m.FAQ.Weights = append([]float64(nil), m.FAQ.Weights...)
	return m
}

// Config configures New. The zero value means the defaults.
type Config struct {
	// Model holds the coefficients; nil means DefaultModel().
	Model *Model
}

// Calibrator is the offline retrieval.Calibrator: it sets each hit's
// Relevance from lexical features of the query and that hit alone. A
// Calibrator is immutable and safe for concurrent use.
type Calibrator struct {
	m    Model
	err  error // a malformed Config.Model, reported by Calibrate
	pool sync.Pool
}

var _ retrieval.Calibrator = (*Calibrator)(nil)

// New returns a Calibrator configured by cfg. A malformed cfg.Model (see
// Model.Check) makes every Calibrate call fail with an error matching
// ErrModel.
func New(cfg Config) *Calibrator {
	c := &Calibrator{m: DefaultModel()}
	if cfg.Model != nil {
		c.m = Model{
			Doc: Logistic{cfg.Model.Doc.Intercept, append([]float64(nil), cfg.Model.Doc.Weights...)},
			FAQ: Logistic{cfg.Model.FAQ.Intercept, append([]float64(nil), cfg.Model.FAQ.Weights...)},
		}
		c.err = c.m.Check()
	}
	c.pool.New = func() any { return new(feature.Scratch) }
	return c
}

// Calibrate sets hits[i].Relevance for every hit; it changes nothing else.
// A hit's relevance depends only on query and its own chunk: not on its
// Method, Score, rank or the other hits. A query without any word or CJK
// character gives every hit relevance 0. Calibrate returns the context's
// error, wrapped, when ctx is done (hits already calibrated keep their new
// value), and an error matching ErrModel for a malformed Config.Model.
func (c *Calibrator) Calibrate(ctx context.Context, query string, hits []retrieval.Hit) error {
	if c.err != nil {
		return c.err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("relevance: %w", err)
	}
	if len(hits) == 0 {
		return nil
	}
	qs := prepare(query)
	s := c.pool.Get().(*feature.Scratch)
	defer c.pool.Put(s)
	for i := range hits {
		if i%16 == 15 {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("relevance: %w", err)
			}
		}
		hits[i].Relevance = c.best(qs, s, &hits[i].Chunk)
	}
	return nil
}

// Explanation shows how Relevance was computed for one hit.
type Explanation struct {
	FAQ       bool               // the FAQ model was used (matched on the question)
	Facet     string             // the side of the question judged, when one scored above the whole
	Features  map[string]float64 // by FeatureNames
	Logit     float64            // the linear score before the logistic
	Relevance float64
}

// Explain returns the features and the relevance that Calibrate would set
// on h for query.
func (c *Calibrator) Explain(query string, h retrieval.Hit) (Explanation, error) {
	if c.err != nil {
		return Explanation{}, c.err
	}
	q, facet := feature.Prepare(query), ""
	var s feature.Scratch
	if best := c.relevance(q, &s, &h.Chunk); q.Units() > 0 {
		for _, f := range facets(query) {
			fq := feature.Prepare(f)
			if r := c.relevance(fq, &s, &h.Chunk); r > best {
				best, q, facet = r, fq, f
			}
		}
	}
	v, faq := extract(q, &s, &h.Chunk)
	l := c.m.Doc
	if faq {
		l = c.m.FAQ
	}
	e := Explanation{FAQ: faq, Facet: facet, Features: map[string]float64{}}
	for i, n := range feature.Names {
		e.Features[n] = v[i]
	}
	e.Logit = logit(l, v)
	if q.Units() > 0 {
		e.Relevance = sigmoid(e.Logit)
	}
	return e, nil
}

// prepare analyses the query and, when it joins or contrasts subjects,
// each of its sides (see facets).
func prepare(query string) []*feature.Query {
	q := feature.Prepare(query)
	fs := facets(query)
	if q.Units() == 0 || len(fs) == 0 {
		return []*feature.Query{q}
	}
	qs := make([]*feature.Query, 1, 1+len(fs))
	qs[0] = q
	for _, f := range fs {
		qs = append(qs, feature.Prepare(f))
	}
	return qs
}

// best is the highest relevance of ch to the query or one of its sides:
// the chunk is read once and matched against each.
func (c *Calibrator) best(qs []*feature.Query, s *feature.Scratch, ch *retrieval.Chunk) float64 {
	if qs[0].Units() == 0 {
		return 0
	}
	l := c.m.Doc
	if load(s, ch) {
		l = c.m.FAQ
	}
	r := 0.0
	for _, q := range qs {
		if q.Units() > 0 {
			r = max(r, sigmoid(logit(l, q.Match(s))))
		}
	}
	return r
}

func (c *Calibrator) relevance(q *feature.Query, s *feature.Scratch, ch *retrieval.Chunk) float64 {
	return c.best([]*feature.Query{q}, s, ch)
}

// FAQQuestion returns the question an FAQ chunk is matched by, and whether
// the chunk is an FAQ entry: Meta[retrieval.MetaQuestion] when set, else
// the title (or the text) of a chunk of ContentType retrieval.ContentFAQ.
func FAQQuestion(ch *retrieval.Chunk) (string, bool) {
	if q := ch.Meta[retrieval.MetaQuestion]; q != "" {
		return q, true
	}
	if ch.ContentType == retrieval.ContentFAQ {
		if ch.Title != "" {
			return ch.Title, true
		}
		return ch.Text, true
	}
	return "", false
}

// load reads ch into s as it is matched: an FAQ entry (reported true) by
// its question, a document by its title (the heading path) and its text.
func load(s *feature.Scratch, ch *retrieval.Chunk) bool {
	if fq, ok := FAQQuestion(ch); ok {
		s.Load(true, fq)
		return true
	}
	s.Load(false, ch.Title, ch.Text)
	return false
}

func extract(q *feature.Query, s *feature.Scratch, ch *retrieval.Chunk) (feature.Vector, bool) {
	faq := load(s, ch)
	return q.Match(s), faq
}

func logit(l Logistic, v feature.Vector) float64 {
	z := l.Intercept
	for i, w := range l.Weights {
		z += w * v[i]
	}
	return z
}

// sigmoid is the logistic function, clamped to [0, 1] and never NaN for a
// finite z.
func sigmoid(z float64) float64 {
	switch {
	case math.IsNaN(z):
		return 0
	case z >= 0:
		return 1 / (1 + math.Exp(-z))
	default:
		e := math.Exp(z)
		return e / (1 + e)
	}
}
