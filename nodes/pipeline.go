// Package nodes holds the adaptive RAG pipeline: the node functions and the
// graph that wires them (seed 000's route decision and retrieval plan,
// seed 002's classifier and strategy matrix), and Pipeline, the entry point
// an application embeds.
//
// The graph (see Pipeline.Graph for the diagram):
//
//	decide ─direct→ direct → END
//	   └─retrieval→ classify ─chitchat→ chitchat → END
//	                   ├─factual────┐
//	                   └─analytical─┴→ plan → faq ─faq_direct→ faq_answer → END
//	                                              ├─dense→ dense ────────────┐
//	                                              └─hybrid→ hybrid → rerank ─┴→ generate → END
//
// The two seed layers compose as follows: the route (seed 002) picks the
// retrieval mode and its size from the StrategyTable (dense top 3, or
// hybrid 50 reranked to 8); the plan (seed 000) picks the collections (FAQ,
// documents), the FAQ direct-answer threshold and exact-only rule, table
// preference and the prompt's size limits. A plan that turns documents off
// turns the route's retrieval off too.
//
// To swap a node, name it in Config.Replace; to add one, list it in
// Config.Insert with the node it must run before (it then sits on every edge
// into that node). Both are wrapped in Timed, so their cost appears in
// State.Usage. For anything else, Graph returns the builder to extend, and
// the routing functions (RouteDecision, RouteProfile, RouteAfterFAQ) are
// exported for wiring a graph from scratch.
package nodes

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/adaptrag/adaptrag/graph"
	"github.com/adaptrag/adaptrag/llm"
	"github.com/adaptrag/adaptrag/plan"
	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/retrieval/analysis"
	"github.com/adaptrag/adaptrag/router"
	"github.com/adaptrag/adaptrag/state"
)

// Errors for questions the pipeline refuses before running.
var (
	ErrEmptyQuestion   = errors.New("adaptrag: empty question")
	ErrQuestionTooLong = errors.New("adaptrag: question too long")
	ErrInvalidUTF8     = errors.New("adaptrag: question is not valid UTF-8")
	// ErrConfig reports a pipeline that cannot be built from its Deps.
	ErrConfig = errors.New("adaptrag: invalid configuration")
)

// DefaultMaxQuestionRunes bounds a question's length.
const DefaultMaxQuestionRunes = 2000

// Deps are the parts the pipeline runs on. Docs, Embedder and Classifier
// are required; the rest have offline defaults.
type Deps struct {
	Docs       retrieval.Store    // the document collection
	FAQ        retrieval.Store    // the FAQ collection; nil: no FAQ search
	Embedder   retrieval.Embedder // embeds queries for dense search
	Reranker   retrieval.Reranker // nil: no rerank (the fused order is kept)
	Classifier router.Classifier  // the seed-002 query profiler
	Generator  llm.Generator      // nil: offline extractive answers
	Planner    *plan.Planner      // nil: plan.New(plan.Settings{})
}

// Config holds the pipeline's options; the zero value means the defaults.
type Config struct {
	// Strategies is the strategy matrix; the zero value means DefaultStrategies.
	Strategies *StrategyTable
	// Policy is the fallback rule (confidence below 0.7 -> analytical).
	Policy router.Policy
	// ClassifyTimeout bounds the classifier; zero means 10s. A timeout
	// falls back to the analytical route.
	ClassifyTimeout time.Duration
	// RetrieveTimeout bounds each search node; zero means 10s. A timeout
	// fails the run with an error matching context.DeadlineExceeded.
	RetrieveTimeout time.Duration
	// RerankTimeout bounds the reranker; zero means 10s. A timeout keeps
	// the fused order.
	RerankTimeout time.Duration
	// GenerateTimeout bounds answer generation; zero means 60s.
	GenerateTimeout time.Duration
	// MaxQuestionRunes bounds the question; zero means DefaultMaxQuestionRunes.
	MaxQuestionRunes int
	// MaxAnswerTokens caps the model's answer; zero means the server default.
	MaxAnswerTokens int
	// Texts are the fixed replies; the zero value means DefaultTexts.
	Texts Texts
	// TracerProvider traces runs; nil means the global provider.
	TracerProvider trace.TracerProvider
	// MaxSteps bounds a run's node executions; zero means the graph default.
	MaxSteps int
	// Replace swaps built-in nodes by name (see the Node* constants) for
	// your own functions; the edges stay as they are.
	Replace map[string]NodeFuncRAG
	// Insert adds nodes: each runs on every edge into its Before node.
	Insert []Insert
}

// Insert is a node added in front of an existing one.
type Insert struct {
	Name   string // the new node's name (unique)
	Before string // the node it precedes, e.g. NodeGenerate
	Fn     NodeFuncRAG
}

// Pipeline is the compiled adaptive graph with its parts. It is safe for
// concurrent use.
type Pipeline struct {
	cfg        Config
	planner    *plan.Planner
	classifier router.Classifier
	policy     router.Policy
	docs       retrieval.Store
	faqStore   retrieval.Store
	embedder   retrieval.Embedder
	reranker   retrieval.Reranker
	gen        llm.Generator
	strategies StrategyTable
	app        *graph.Runnable[state.RAG]
	tracer     trace.Tracer
	analyzer   analysis.Analyzer // for extractive answers
}

// New builds and compiles the pipeline.
func New(d Deps, cfg Config) (*Pipeline, error) {
	if d.Docs == nil || d.Embedder == nil || d.Classifier == nil {
		return nil, fmt.Errorf("%w: Docs, Embedder and Classifier are required", ErrConfig)
	}
	if cfg.Texts == (Texts{}) {
		cfg.Texts = DefaultTexts()
	}
	for _, d := range []*time.Duration{&cfg.ClassifyTimeout, &cfg.RetrieveTimeout, &cfg.RerankTimeout} {
		if *d == 0 {
			*d = 10 * time.Second
		}
	}
	if cfg.GenerateTimeout == 0 {
		cfg.GenerateTimeout = 60 * time.Second
	}
	if cfg.MaxQuestionRunes == 0 {
		cfg.MaxQuestionRunes = DefaultMaxQuestionRunes
	}
	st := DefaultStrategies()
	if cfg.Strategies != nil {
		st = *cfg.Strategies
	}
	if err := st.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	p := &Pipeline{
		cfg: cfg, planner: d.Planner, classifier: d.Classifier, policy: cfg.Policy,
		docs: d.Docs, faqStore: d.FAQ, embedder: d.Embedder, reranker: d.Reranker, gen: d.Generator,
		strategies: st, analyzer: analysis.Default(),
	}
	if p.planner == nil {
		p.planner = plan.New(plan.Settings{})
	}
	tp := cfg.TracerProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	p.tracer = tp.Tracer(ScopeName)
	g, err := p.Graph()
	if err != nil {
		return nil, err
	}
	if p.app, err = g.Compile(graph.Config{MaxSteps: cfg.MaxSteps, TracerProvider: tp}); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return p, nil
}

// ScopeName is the instrumentation scope of the pipeline's own spans.
const ScopeName = "github.com/adaptrag/adaptrag/nodes"

// Nodes returns the pipeline's node functions by name, each wrapped in
// Timed, for building a customised graph.
func (p *Pipeline) Nodes() map[string]graph.NodeFunc[state.RAG] {
	return map[string]graph.NodeFunc[state.RAG]{
		NodeDecide: Timed(NodeDecide, p.decide), NodeDirect: Timed(NodeDirect, p.direct),
		NodeClassify: Timed(NodeClassify, p.classify), NodeChitchat: Timed(NodeChitchat, p.chitchat),
		NodePlan: Timed(NodePlan, p.planNode), NodeFAQ: Timed(NodeFAQ, p.faq), NodeFAQAnswer: Timed(NodeFAQAnswer, p.faqAnswer),
		NodeDense: Timed(NodeDense, p.dense), NodeHybrid: Timed(NodeHybrid, p.hybrid),
		NodeRerank: Timed(NodeRerank, p.rerankNode), NodeGenerate: Timed(NodeGenerate, p.generate),
	}
}

// Graph returns the uncompiled adaptive graph, with Config.Replace and
// Config.Insert applied, for inspection or further changes before compiling.
func (p *Pipeline) Graph() (*graph.Graph[state.RAG], error) {
	n := p.Nodes()
	for name, fn := range p.cfg.Replace {
		if _, ok := n[name]; !ok || fn == nil {
			return nil, fmt.Errorf("%w: cannot replace node %q", ErrConfig, name)
		}
		n[name] = Timed(name, fn)
	}
	before := map[string]Insert{}
	for _, in := range p.cfg.Insert {
		if _, dup := before[in.Before]; dup {
			return nil, fmt.Errorf("%w: two inserts before %q", ErrConfig, in.Before)
		}
		before[in.Before] = in
	}
	// to routes every edge into a node through the node inserted before it.
	to := func(name string) string {
		if in, ok := before[name]; ok {
			return in.Name
		}
		return name
	}
	retry := graph.WithRetry(graph.RetryPolicy{MaxAttempts: 2, Initial: 100 * time.Millisecond})
	search := []graph.NodeOption{graph.WithTimeout(p.cfg.RetrieveTimeout), retry}
	g := graph.New[state.RAG]("adaptrag")
	g.AddNode(NodeDecide, n[NodeDecide]).
		AddNode(NodeDirect, n[NodeDirect]).
		AddNode(NodeClassify, n[NodeClassify]).
		AddNode(NodeChitchat, n[NodeChitchat], graph.WithTimeout(p.cfg.GenerateTimeout)).
		AddNode(NodePlan, n[NodePlan]).
		AddNode(NodeFAQ, retryUnavailable(n[NodeFAQ]), search...).
		AddNode(NodeFAQAnswer, n[NodeFAQAnswer]).
		AddNode(NodeDense, retryUnavailable(n[NodeDense]), search...).
		AddNode(NodeHybrid, retryUnavailable(n[NodeHybrid]), search...).
		AddNode(NodeRerank, n[NodeRerank]).
		AddNode(NodeGenerate, n[NodeGenerate], graph.WithTimeout(p.cfg.GenerateTimeout))
	for _, in := range p.cfg.Insert {
		g.AddNode(in.Name, Timed(in.Name, in.Fn)).AddEdge(in.Name, in.Before)
	}
	g.AddEdge(graph.Start, to(NodeDecide)).
		AddConditionalEdges(NodeDecide, RouteDecision, map[string]string{LabelDirect: to(NodeDirect), LabelRetrieval: to(NodeClassify)}).
		AddEdge(NodeDirect, graph.End).
		AddConditionalEdges(NodeClassify, RouteProfile, map[string]string{
			router.Chitchat: to(NodeChitchat), router.Factual: to(NodePlan), router.Analytical: to(NodePlan),
		}).
		AddEdge(NodeChitchat, graph.End).
		AddEdge(NodePlan, to(NodeFAQ)).
		AddConditionalEdges(NodeFAQ, RouteAfterFAQ, map[string]string{
			LabelFAQDirect: to(NodeFAQAnswer), ModeDense: to(NodeDense), ModeHybrid: to(NodeHybrid), ModeNone: to(NodeGenerate),
		}).
		AddEdge(NodeFAQAnswer, graph.End).
		AddEdge(NodeDense, to(NodeGenerate)).
		AddEdge(NodeHybrid, to(NodeRerank)).
		AddEdge(NodeRerank, to(NodeGenerate)).
		AddEdge(NodeGenerate, graph.End)
	return g, nil
}

// retryUnavailable marks a store that could not be reached as worth one
// more attempt; timeouts and bad requests are not retried.
func retryUnavailable(fn graph.NodeFunc[state.RAG]) graph.NodeFunc[state.RAG] {
	return func(ctx context.Context, s state.RAG) (state.RAG, error) {
		out, err := fn(ctx, s)
		if errors.Is(err, retrieval.ErrUnavailable) && !errors.Is(err, context.DeadlineExceeded) {
			return out, graph.Retryable(err)
		}
		return out, err
	}
}

// Runnable returns the compiled graph (for diagrams and direct runs).
func (p *Pipeline) Runnable() *graph.Runnable[state.RAG] { return p.app }

// Request is one question to answer.
type Request struct {
	Question string
	History  []string        // earlier user turns, oldest first
	Scope    retrieval.Scope // the caller's tenant, from its own authentication
	Source   string          // restrict retrieval to one source ("" for any)
}

// Result is the outcome of Ask.
type Result struct {
	State   state.RAG
	Path    graph.Path // the nodes and edges the run took
	TraceID string     // the run's trace id ("" without a tracing SDK)
}

// Validate checks a request's question: non-empty, valid UTF-8 and not
// longer than the limit.
func (p *Pipeline) Validate(req Request) error {
	switch {
	case !utf8.ValidString(req.Question):
		return ErrInvalidUTF8
	case strings.TrimSpace(req.Question) == "":
		return ErrEmptyQuestion
	case utf8.RuneCountInString(req.Question) > p.cfg.MaxQuestionRunes:
		return fmt.Errorf("%w: %d characters, limit %d", ErrQuestionTooLong, utf8.RuneCountInString(req.Question), p.cfg.MaxQuestionRunes)
	}
	for _, h := range req.History {
		if !utf8.ValidString(h) {
			return fmt.Errorf("history: %w", ErrInvalidUTF8)
		}
	}
	return nil
}

func initial(req Request) state.RAG {
	q := strings.TrimSpace(req.Question)
	return state.RAG{Question: q, History: req.History, Scope: req.Scope, Source: req.Source, Query: state.Query{Text: q}}
}

// Ask answers one question. progress, if not nil, receives every graph
// event as the run advances. On failure the returned Result still holds the
// state reached so far and the path taken.
func (p *Pipeline) Ask(ctx context.Context, req Request, progress func(graph.Event[state.RAG])) (Result, error) {
	if err := p.Validate(req); err != nil {
		return Result{}, err
	}
	ctx, span := p.tracer.Start(ctx, "adaptrag.ask", trace.WithAttributes(attribute.Int("adaptrag.question.runes", utf8.RuneCountInString(req.Question))))
	defer span.End()
	res := Result{TraceID: traceID(span)}
	in := initial(req)
	res.State = in
	for ev, err := range p.app.Stream(ctx, in) {
		if err != nil {
			span.RecordError(err)
			return res, err
		}
		res.Path.Add(ev.Edge())
		switch ev.Kind {
		case graph.NodeEnd:
			res.State = ev.State
		case graph.RunEnd:
			res.State = ev.State
		}
		if progress != nil {
			progress(ev)
		}
	}
	s := &res.State
	span.SetAttributes(attribute.String("adaptrag.route", s.Route.QueryType), attribute.Bool("adaptrag.route.fallback", s.Route.Fallback),
		attribute.Int("adaptrag.chunks", len(s.Docs)), attribute.String("adaptrag.answered_by", s.AnsweredBy))
	return res, nil
}

func traceID(span trace.Span) string {
	if sc := span.SpanContext(); sc.HasTraceID() {
		return sc.TraceID().String()
	}
	return ""
}

// NodeFuncRAG is a node of the adaptive graph.
type NodeFuncRAG = graph.NodeFunc[state.RAG]
