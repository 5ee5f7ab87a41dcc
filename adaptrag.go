// Package adaptrag answers questions from a knowledge base with adaptive
// retrieval-augmented generation, run as a typed state graph.
//
// Each question is profiled before anything is searched. Small talk is
// answered with no retrieval; a factual question takes the dense top 3
// passages; an analytical question, and any question the classifier is
// unsure of (confidence below 0.7) or fails on, takes hybrid dense + BM25
// retrieval of 50 candidates reranked to 8. One retrieval Plan, built by an
// ordered rule table, says what the run does, and every field of it acts.
// Passages whose calibrated relevance is too low are dropped, so a question
// the knowledge base cannot answer gets "not found" rather than a guess.
//
// This package is the front door: New builds a Pipeline from the parts (a
// document collection, an embedder; the rest have offline defaults), and
// Ask, Stream and Search run it. The parts live in subpackages: retrieval
// (stores, embedders, rerankers), router (classifiers), plan (the policy),
// llm (models through langchaingo), nodes (the steps), graph (the engine).
//
//	p, err := adaptrag.New(ctx, adaptrag.Deps{Docs: kb.Docs, FAQ: kb.FAQ, Embedder: emb}, adaptrag.Options{})
//	res, err := p.Ask(ctx, adaptrag.Request{Question: q, Scope: retrieval.Scope{Tenant: tenant}})
//	fmt.Println(res.Answer, res.Citations)
//
// # Customising
//
// There is one way to change what the pipeline does: Options.Graph receives
// the default graph's builder before it is compiled, to add, replace or
// remove nodes and reroute edges (a guard that ends the run, a node with
// its own conditional edge). The edited graph compiles back into the same
// Pipeline, with Ask's input checks, tracing, usage accounting and path.
// Every node receives its own copy of the state, so custom nodes may change
// what they receive in place.
package adaptrag

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/adaptrag/adaptrag/graph"
	"github.com/adaptrag/adaptrag/internal/nodes"
	"github.com/adaptrag/adaptrag/llm"
	"github.com/adaptrag/adaptrag/plan"
	"github.com/adaptrag/adaptrag/query"
	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/retrieval/relevance"
	"github.com/adaptrag/adaptrag/retrieval/rerank"
	"github.com/adaptrag/adaptrag/router"
	"github.com/adaptrag/adaptrag/state"
)

// Names of the parts of the state and the graph an application touches,
// so that it needs to import this package only.
type (
	// State is the state that flows through the graph (see package state).
	State = state.RAG
	// Message is one turn of a conversation.
	Message = state.Message
	// Graph is the builder of the adaptive graph (see Options.Graph).
	Graph = graph.Graph[state.RAG]
	// Texts are the fixed replies and prompts (see nodes.Texts).
	Texts = nodes.Texts
	// Caller is who a request acts for: the tenant whose data it may read
	// and the actor look-ups check, from the caller's own authentication.
	// Integrations (MCP, langchaingo) carry it in the context.
	Caller = nodes.Caller
)

// WithCaller returns a context whose runs act for c. The context is the one
// carrier of a caller's authority: Ask, Stream and Search act for the
// caller in their context (Request.Scope and Request.Actor, when set, must
// repeat it, or the request is refused with ErrCallerConflict), and so does
// a run of Runnable, whose search and look-up nodes read the caller from
// the context and, under Options.RequireTenant, fail with ErrNoTenant when
// it has no tenant. Integrations (MCP, langchaingo, the HTTP service) put
// the caller they authenticated here.
func WithCaller(ctx context.Context, c Caller) context.Context { return nodes.WithCaller(ctx, c) }

// CallerFrom returns the caller WithCaller put in ctx, and whether one was.
func CallerFrom(ctx context.Context) (Caller, bool) { return nodes.CallerFrom(ctx) }

// Roles of a Message.
const (
	RoleUser      = state.RoleUser
	RoleAssistant = state.RoleAssistant
)

// Node names of the default graph, for Options.Graph.
const (
	NodeDecide     = nodes.NodeDecide
	NodeDirect     = nodes.NodeDirect
	NodeUnderstand = nodes.NodeUnderstand
	NodeClarify    = nodes.NodeClarify
	NodeClassify   = nodes.NodeClassify
	NodeChitchat   = nodes.NodeChitchat
	NodePlan       = nodes.NodePlan
	NodeParts      = nodes.NodeParts
	NodePart       = nodes.NodePart
	NodeCombine    = nodes.NodeCombine
	NodeAggregate  = nodes.NodeAggregate
	NodeHops       = nodes.NodeHops
	NodeExpand     = nodes.NodeExpand
	NodeFAQ        = nodes.NodeFAQ
	NodeFAQAnswer  = nodes.NodeFAQAnswer
	NodeDense      = nodes.NodeDense
	NodeHybrid     = nodes.NodeHybrid
	NodeRerank     = nodes.NodeRerank
	NodeEvidence   = nodes.NodeEvidence
	NodePassages   = nodes.NodePassages // the evidence stage: see package nodes
	NodeGenerate   = nodes.NodeGenerate
)

// What a run does with a reference that has several candidates.
const (
	AmbiguityClarify    = nodes.AmbiguityClarify
	AmbiguitySearchEach = nodes.AmbiguitySearchEach
)

// Errors returned before a run starts. Match them with errors.Is.
var (
	ErrEmptyQuestion   = nodes.ErrEmptyQuestion
	ErrQuestionTooLong = nodes.ErrQuestionTooLong
	ErrInvalidUTF8     = nodes.ErrInvalidUTF8
	ErrInvalidHistory  = nodes.ErrInvalidHistory
	ErrNoTenant        = nodes.ErrNoTenant
	ErrCallerConflict  = nodes.ErrCallerConflict
	ErrConfig          = nodes.ErrConfig
)

// Deps are the parts the pipeline runs on. Docs and Embedder are required;
// the rest have offline defaults. The pipeline only reads: Docs and FAQ are
// searchers, not stores.
type Deps struct {
	Docs     retrieval.Searcher // the document collection (required)
	FAQ      retrieval.Searcher // the FAQ collection (question + standard answer); nil: none
	Embedder retrieval.Embedder // embeds questions for dense search (required)
	// Classifier profiles questions; nil: the offline classifier.
	Classifier router.Classifier
	// Reranker reorders analytical candidates; nil: the offline lexical
	// reranker (Options.Plan.DisableRerank switches reranking off).
	Reranker retrieval.Reranker
	// Calibrator gives passages a comparable relevance (0..1) for the
	// plan's min_context_score; nil: the offline calibrator
	// (retrieval/relevance).
	Calibrator retrieval.Calibrator
	// Generator writes answers from the passages; nil: offline extractive
	// answers with citations.
	Generator llm.Generator
	// Rewriter turns follow-ups into standalone queries; nil: the offline
	// rules (query.Offline). query.NewLLM rewrites through a model, checked
	// against the history; when it fails the offline rules stand in.
	Rewriter query.Rewriter
	// Lookup reads structured records (an order, a product) for questions
	// that depend on them, and computes totals when it is also a
	// retrieval.Aggregator; nil: none.
	Lookup retrieval.Lookup
}

// Options tune the pipeline; the zero value means the defaults.
type Options struct {
	// Plan holds the retrieval policy's settings (sizes, thresholds, the
	// source table); zero fields take plan's defaults.
	Plan plan.Settings
	// Rules replaces the policy's rule table; nil means
	// plan.DefaultRules(Plan).
	Rules []plan.Rule
	// Policy is the router's fallback rule (confidence below 0.7 ->
	// analytical).
	Policy router.Policy
	// Texts are the fixed replies and prompts; zero fields take
	// nodes.DefaultTexts.
	Texts Texts
	// Topics say what the knowledge base covers in replies to greetings
	// and small talk; nil lists the titles of its documents when the
	// document collection can list them (retrieval.Lister).
	Topics []string

	// ClassifyTimeout bounds the classifier (default 10s); a timeout falls
	// back to the analytical route.
	ClassifyTimeout time.Duration
	// RetrieveTimeout bounds each search node (default 10s); a timeout fails
	// the run with an error matching context.DeadlineExceeded, never an
	// empty "not found".
	RetrieveTimeout time.Duration
	// RerankTimeout bounds the reranker (default 10s); a timeout keeps the
	// fused order.
	RerankTimeout time.Duration
	// GenerateTimeout bounds a model answer (default 60s); a timeout falls
	// back to the extractive answer, with a warning.
	GenerateTimeout time.Duration

	// MaxQuestionRunes bounds the question (default 2000 characters).
	MaxQuestionRunes int
	// MaxHistoryTurns and MaxHistoryChars bound the conversation kept
	// (defaults 20 turns, 8000 characters): the most recent turns are
	// kept, and a warning says how many earlier ones were dropped.
	MaxHistoryTurns, MaxHistoryChars int
	// MaxAnswerTokens caps the model's answer; zero means the server's
	// default.
	MaxAnswerTokens int
	// RequireTenant refuses requests that act for no tenant (ErrNoTenant),
	// for multi-tenant services where the default tenant must never be
	// searched by mistake. It holds on every way into the graph: Ask,
	// Stream and Search refuse before running, and the nodes that read the
	// caller (decide, every search, the look-ups) fail closed on a run of
	// Runnable whose context carries no tenant.
	RequireTenant bool

	// Ambiguity says what a reference with several candidates does:
	// AmbiguityClarify (the default) asks back, AmbiguitySearchEach
	// retrieves for each candidate and keeps the evidence apart.
	Ambiguity nodes.Ambiguity
	// HyDE also searches with a hypothetical passage the model writes for
	// the question: a search key only, never evidence. Needs a Generator.
	HyDE bool
	// MaxVariants bounds a multi-query search's phrasings, the original
	// included (default 3); ModelVariants asks the model for them instead
	// of the offline rewordings.
	MaxVariants   int
	ModelVariants bool
	// RewriteTimeout bounds a model's rewrite, variants or hypothetical
	// passage (default 10s); a timeout keeps the offline result, with a
	// warning.
	RewriteTimeout time.Duration

	// MaxSteps bounds a run's node executions; zero means the graph
	// engine's default.
	MaxSteps int
	// TracerProvider traces runs; nil means the global provider.
	TracerProvider trace.TracerProvider
	// MeterProvider records runs by route, node latency, tokens and
	// failures by kind; nil means the global provider.
	MeterProvider metric.MeterProvider

	// Graph, when set, receives the default graph before it is compiled:
	// the one place to add, replace or remove nodes and reroute edges. See
	// the package documentation and the examples.
	Graph func(g *Graph) error
}

// Pipeline is a compiled adaptive graph with its parts. It is safe for
// concurrent use.
type Pipeline struct {
	opts     Options
	meters   *meters
	nodes    *nodes.Nodes
	app      *graph.Runnable[state.RAG]
	tracer   trace.Tracer
	maxRunes int
}

// ScopeName is the instrumentation scope of the pipeline's run spans.
const ScopeName = "github.com/adaptrag/adaptrag"

// New checks the parts, builds the graph and compiles it. Problems a run
// would only meet later are reported now: a missing part, an embedder
// whose dimension differs from a collection's, an invalid rule table or a
// graph edit that does not compile. Errors match ErrConfig.
//
// ctx bounds the one call New may make over the network: an embedder that
// does not know its dimension (Dim returns 0) is asked to embed a probe
// text, under ctx. Nothing else uses ctx after New returns.
func New(ctx context.Context, d Deps, o Options) (*Pipeline, error) {
	if d.Docs == nil || d.Embedder == nil {
		return nil, fmt.Errorf("%w: Deps.Docs and Deps.Embedder are required", ErrConfig)
	}
	if err := checkDims(ctx, d); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if d.Classifier == nil {
		off, err := router.NewOffline()
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrConfig, err)
		}
		d.Classifier = off
	}
	if d.Reranker == nil {
		d.Reranker = rerank.NewLexical(rerank.LexicalConfig{})
	}
	if d.Calibrator == nil {
		d.Calibrator = relevance.New(relevance.Config{})
	}
	planner := plan.New(o.Plan)
	if o.Rules != nil {
		var err error
		if planner, err = plan.NewWithRules(o.Plan, o.Rules); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrConfig, err)
		}
	}
	ns, err := nodes.New(nodes.Parts{
		Docs: d.Docs, FAQ: d.FAQ, Embedder: d.Embedder, Classifier: d.Classifier, Reranker: d.Reranker,
		Calibrator: d.Calibrator, Generator: d.Generator, Planner: planner, Rewriter: d.Rewriter, Lookup: d.Lookup,
	}, nodes.Config{
		Ambiguity: o.Ambiguity, HyDE: o.HyDE, MaxVariants: o.MaxVariants, ModelVariants: o.ModelVariants, RewriteTimeout: o.RewriteTimeout,
		Texts: o.Texts, Topics: o.Topics, Policy: o.Policy,
		ClassifyTimeout: o.ClassifyTimeout, RerankTimeout: o.RerankTimeout, GenerateTimeout: o.GenerateTimeout,
		MaxQuestionRunes: o.MaxQuestionRunes, MaxHistoryTurns: o.MaxHistoryTurns, MaxHistoryChars: o.MaxHistoryChars,
		MaxAnswerTokens: o.MaxAnswerTokens, TracerProvider: o.TracerProvider, RequireTenant: o.RequireTenant,
	})
	if err != nil {
		return nil, err
	}
	if o.RetrieveTimeout <= 0 {
		o.RetrieveTimeout = 10 * time.Second
	}
	parts := &partRetrieval{}
	g := defaultGraph(ns, o, parts)
	// Every node, custom ones included, is timed and charged its tokens.
	g.Use(nodes.Timed)
	if o.Graph != nil {
		if err := o.Graph(g); err != nil {
			return nil, fmt.Errorf("%w: Options.Graph: %w", ErrConfig, err)
		}
	}
	tp := o.TracerProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	cfg := graph.Config[state.RAG]{MaxSteps: o.MaxSteps, TracerProvider: tp, Clone: state.RAG.Clone}
	app, err := g.Compile(cfg)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if err := parts.compile(g, cfg); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	maxRunes := o.MaxQuestionRunes
	if maxRunes <= 0 {
		maxRunes = nodes.DefaultMaxQuestionRunes
	}
	ms, err := newMeters(o.MeterProvider)
	if err != nil {
		return nil, fmt.Errorf("%w: metrics: %w", ErrConfig, err)
	}
	return &Pipeline{opts: o, meters: ms, nodes: ns, app: app, tracer: tp.Tracer(ScopeName), maxRunes: maxRunes}, nil
}

// checkDims compares the embedder's dimension with each collection's (when
// both are known), so that a mismatch fails at New rather than at the
// first search, which small talk would never reach.
func checkDims(ctx context.Context, d Deps) error {
	ed := d.Embedder.Dim()
	if ed == 0 {
		// A remote embedder may not know its size until asked: ask once.
		vs, err := d.Embedder.Embed(ctx, []string{"dimension check"})
		if err != nil {
			return fmt.Errorf("embedder: dimension check: %w", err)
		}
		if len(vs) != 1 || len(vs[0]) == 0 {
			return fmt.Errorf("embedder: dimension check returned %d vectors: %w", len(vs), retrieval.ErrInvalid)
		}
		ed = len(vs[0])
	}
	var errs []error
	for name, c := range map[string]retrieval.Searcher{"Docs": d.Docs, "FAQ": d.FAQ} {
		if c == nil {
			continue
		}
		if sd := c.Dim(); sd > 0 && sd != ed {
			errs = append(errs, fmt.Errorf("embedder dimension %d, %s collection dimension %d: %w", ed, name, sd, retrieval.ErrDimension))
		}
	}
	return errors.Join(errs...)
}

// Diagram returns the structure of the compiled graph, for rendering as
// Mermaid, DOT, JSON or text (see graph.Diagram). The caller owns it.
func (p *Pipeline) Diagram() *graph.Diagram { return p.app.Diagram() }

// Runnable returns the compiled graph, to run directly on a state.RAG. Ask
// and Stream add a run span, the path and the metrics. A run of the graph
// acts for the caller in its context (WithCaller) and nothing else; under
// Options.RequireTenant it fails with ErrNoTenant without one.
func (p *Pipeline) Runnable() *graph.Runnable[state.RAG] { return p.app }
