// Package nodes holds the node functions of the adaptive pipeline and the
// routing functions of its conditional edges. Package adaptrag wires them
// into a graph and is the front door applications call; the names of the
// nodes and labels are public in package nodes, the functions are not.
//
// Every node is a graph.NodeFunc[state.RAG]: it receives its own copy of the
// state and returns the updated copy. The caller's authority (tenant scope,
// actor) is not in the state: nodes read it from the run's context with
// CallerOf, so no node (built in or custom) can widen a search by editing
// a field.
package nodes

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"

	"github.com/adaptrag/adaptrag/graph"
	"github.com/adaptrag/adaptrag/llm"
	"github.com/adaptrag/adaptrag/plan"
	"github.com/adaptrag/adaptrag/query"
	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/retrieval/analysis"
	"github.com/adaptrag/adaptrag/router"
	"github.com/adaptrag/adaptrag/state"
)

// Errors for questions the pipeline refuses before running, and for
// requests it cannot serve. All carry the "adaptrag:" prefix.
var (
	ErrEmptyQuestion   = errors.New("adaptrag: empty question")
	ErrQuestionTooLong = errors.New("adaptrag: question too long")
	ErrInvalidUTF8     = errors.New("adaptrag: question is not valid UTF-8")
	ErrInvalidHistory  = errors.New("adaptrag: invalid history")
	// ErrNoTenant reports a request without a tenant to a pipeline that
	// requires one.
	ErrNoTenant = errors.New("adaptrag: request has no tenant")
	// ErrCallerConflict reports a request whose Scope or Actor differs from
	// the caller its context already carries.
	ErrCallerConflict = errors.New("adaptrag: request scope conflicts with the caller in the context")
	// ErrConfig reports parts or options the pipeline cannot be built from.
	ErrConfig = errors.New("adaptrag: invalid configuration")
)

// Defaults of Config.
const (
	DefaultMaxQuestionRunes = 2000
	DefaultMaxHistoryTurns  = 20
	DefaultMaxHistoryChars  = 8000
	DefaultClassifyTimeout  = 10 * time.Second
	DefaultRerankTimeout    = 10 * time.Second
	DefaultGenerateTimeout  = 60 * time.Second
	DefaultRewriteTimeout   = 10 * time.Second
)

// Parts are the components the nodes call.
type Parts struct {
	Docs       retrieval.Searcher   // the document collection (required)
	FAQ        retrieval.Searcher   // the FAQ collection; nil: no FAQ search
	Embedder   retrieval.Embedder   // embeds queries for dense search (required)
	Classifier router.Classifier    // profiles questions (required)
	Reranker   retrieval.Reranker   // nil: the fused order is kept
	Calibrator retrieval.Calibrator // nil: no relevance floor (Relevance stays 0)
	Generator  llm.Generator        // nil: offline extractive answers
	Planner    *plan.Planner        // the retrieval policy (required)
	// Rewriter turns follow-ups into standalone queries; nil: the offline
	// rules (query.Offline).
	Rewriter query.Rewriter
	// Lookup reads structured records (orders, products) for dependent
	// chains, and computes totals when it is also a retrieval.Aggregator;
	// nil: none (a total is then answered with "cannot compute").
	Lookup retrieval.Lookup
}

// Config holds the nodes' options; zero fields take the defaults above.
type Config struct {
	Texts  Texts         // fixed replies and prompts; zero fields: DefaultTexts
	Topics []string      // what the knowledge base covers, for replies; nil: from the documents
	Policy router.Policy // the fallback rule (confidence below 0.7 -> analytical)

	ClassifyTimeout time.Duration // bounds the classifier; a timeout falls back to analytical
	RerankTimeout   time.Duration // bounds the reranker; a timeout keeps the fused order
	GenerateTimeout time.Duration // bounds a model answer; a timeout falls back to the extractive answer

	MaxQuestionRunes int // longest question accepted
	MaxHistoryTurns  int // most recent turns kept; earlier ones are dropped with a warning
	MaxHistoryChars  int // most recent history characters kept
	MaxAnswerTokens  int // caps the model's answer; 0: the server's default

	Ambiguity      Ambiguity     // a reference with several candidates: ask back (default) or search each
	RewriteTimeout time.Duration // bounds a model's rewrite, variants or hypothetical passage; default 10s
	MaxVariants    int           // search keys of a multi-query search, the original included; default 3
	ModelVariants  bool          // ask the model for variants (when one is configured) instead of the offline rewordings
	HyDE           bool          // search with a model-written hypothetical passage too (needs a model)

	TracerProvider trace.TracerProvider // nil: the global provider

	// RequireTenant makes every node that reads the caller (decide, the
	// searches, the look-ups, the topic listing) fail with ErrNoTenant when
	// the run's context carries no caller with a tenant, however the graph
	// was entered.
	RequireTenant bool
}

// Nodes holds the pipeline's node functions over its parts. It is safe for
// concurrent use.
type Nodes struct {
	p        Parts
	cfg      Config
	hyde     modelQueries // variants and hypothetical passages from the model (nil without one)
	tracer   trace.Tracer
	analyzer analysis.Analyzer
	terms    *termMemo // the extractive answer's terms of passage texts
	topics   sync.Map  // tenant -> string
}

// ScopeName is the instrumentation scope of the nodes' own spans.
const ScopeName = "github.com/adaptrag/adaptrag/nodes"

// New checks the parts and returns the nodes.
func New(p Parts, cfg Config) (*Nodes, error) {
	var missing []string
	if p.Docs == nil {
		missing = append(missing, "Docs")
	}
	if p.Embedder == nil {
		missing = append(missing, "Embedder")
	}
	if p.Classifier == nil {
		missing = append(missing, "Classifier")
	}
	if p.Planner == nil {
		missing = append(missing, "Planner")
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%w: %s required", ErrConfig, strings.Join(missing, ", "))
	}
	cfg.Texts = cfg.Texts.withDefaults()
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&cfg.ClassifyTimeout, DefaultClassifyTimeout)
	def(&cfg.RerankTimeout, DefaultRerankTimeout)
	def(&cfg.GenerateTimeout, DefaultGenerateTimeout)
	defInt := func(d *int, v int) {
		if *d <= 0 {
			*d = v
		}
	}
	defInt(&cfg.MaxQuestionRunes, DefaultMaxQuestionRunes)
	defInt(&cfg.MaxHistoryTurns, DefaultMaxHistoryTurns)
	defInt(&cfg.MaxHistoryChars, DefaultMaxHistoryChars)
	defInt(&cfg.MaxVariants, DefaultMaxVariants)
	def(&cfg.RewriteTimeout, DefaultRewriteTimeout)
	switch cfg.Ambiguity {
	case "":
		cfg.Ambiguity = AmbiguityClarify
	case AmbiguityClarify, AmbiguitySearchEach:
	default:
		return nil, fmt.Errorf("%w: ambiguity %q (want %q or %q)", ErrConfig, cfg.Ambiguity, AmbiguityClarify, AmbiguitySearchEach)
	}
	if cfg.HyDE && p.Generator == nil {
		return nil, fmt.Errorf("%w: HyDE needs a model (Generator)", ErrConfig)
	}
	tp := cfg.TracerProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	n := &Nodes{p: p, cfg: cfg, tracer: tp.Tracer(ScopeName), analyzer: analysis.Default()}
	n.terms = newTermMemo(n.analyzer, defaultTermMemo)
	if p.Generator != nil {
		n.hyde = newModelQueries(p.Generator)
	}
	return n, nil
}

// modelQueries writes search keys through a model: variants of a query
// and a hypothetical passage (HyDE), both checked against the question.
type modelQueries interface {
	Variants(ctx context.Context, text string, n int) ([]string, error)
	Hypothetical(ctx context.Context, text string) (string, error)
}

// Caller is the authority a run acts for: the tenant whose data it may
// search and the actor look-ups are made for. It comes from the caller's
// own authentication, never from a question or a model.
type Caller struct {
	Scope retrieval.Scope
	Actor string
}

type callerKey struct{}

// WithCaller returns a context whose runs act for c.
func WithCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerOf returns the caller of the run under ctx (the zero Caller, the
// default tenant, when none was set).
func CallerOf(ctx context.Context) Caller {
	c, _ := ctx.Value(callerKey{}).(Caller)
	return c
}

// caller returns the caller of the run under ctx, failing closed with
// ErrNoTenant when the nodes require a tenant and ctx carries none. Every
// node that searches or looks up reads the caller through it.
func (n *Nodes) caller(ctx context.Context) (Caller, error) {
	c := CallerOf(ctx)
	if n.cfg.RequireTenant && strings.TrimSpace(c.Scope.Tenant) == "" {
		return c, ErrNoTenant
	}
	return c, nil
}

// CallerFrom returns the caller WithCaller put in ctx, and whether one was.
func CallerFrom(ctx context.Context) (Caller, bool) {
	c, ok := ctx.Value(callerKey{}).(Caller)
	return c, ok
}

// LogValue implements slog.LogValuer: a caller logs as its tenant and actor.
func (c Caller) LogValue() slog.Value {
	return slog.GroupValue(slog.String("tenant", c.Scope.Tenant), slog.String("actor", c.Actor))
}

type tokensKey struct{}

// WithTokens returns a context under which a model answer is delivered to
// fn piece by piece as the model produces it (when the generator implements
// llm.Streamer). fn is called on the run's goroutine.
func WithTokens(ctx context.Context, fn func(text string)) context.Context {
	return context.WithValue(ctx, tokensKey{}, fn)
}

func tokensOf(ctx context.Context) func(string) {
	fn, _ := ctx.Value(tokensKey{}).(func(string))
	return fn
}

// Timed wraps a node so that its latency and the tokens charged under its
// context (llm.Charge) are appended to State.Usage. The pipeline applies it
// to every node of its graph, custom ones included.
func Timed(name string, fn graph.NodeFunc[state.RAG]) graph.NodeFunc[state.RAG] {
	return func(ctx context.Context, s state.RAG) (state.RAG, error) {
		m := &llm.Meter{}
		ctx = llm.WithMeter(ctx, m)
		start := time.Now()
		out, err := fn(ctx, s)
		d := time.Since(start)
		u := m.Usage()
		out.Usage = append(out.Usage, state.Usage{
			Node: name, Duration: d, Ms: float64(d.Microseconds()) / 1000, InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
		})
		return out, err
	}
}

// KindOf classifies an error for warnings and logs, keeping a timeout
// distinct from every other failure.
func KindOf(err error) state.ErrorKind {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, context.DeadlineExceeded):
		return state.KindTimeout
	case errors.Is(err, context.Canceled):
		return state.KindCancelled
	case errors.Is(err, retrieval.ErrUnavailable), errors.Is(err, llm.ErrUnavailable):
		return state.KindUnavailable
	case errors.Is(err, llm.ErrRefused):
		return state.KindRefused
	case errors.Is(err, retrieval.ErrNotPermitted):
		return state.KindNotPermitted
	case errors.Is(err, router.ErrInvalidProfile), errors.Is(err, retrieval.ErrInvalid):
		return state.KindInvalid
	}
	return state.KindError
}

// statusOf maps an error to a sub-task status: a timeout stays a timeout.
func statusOf(err error) state.Status {
	if KindOf(err) == state.KindTimeout {
		return state.StatusTimeout
	}
	return state.StatusError
}

// withTimeout bounds ctx by d (d <= 0: no bound).
func withTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, d)
}

// RetryUnavailable reports whether a failed search is worth one more
// attempt: a store that could not be reached is; a timeout or a bad request
// is not.
func RetryUnavailable(err error) bool {
	return errors.Is(err, retrieval.ErrUnavailable) && !errors.Is(err, context.DeadlineExceeded)
}
