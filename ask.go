package adaptrag

import (
	"context"
	"fmt"
	"iter"
	"strings"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/adaptrag/adaptrag/graph"
	"github.com/adaptrag/adaptrag/internal/nodes"
	"github.com/adaptrag/adaptrag/plan"
	"github.com/adaptrag/adaptrag/query"
	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/state"
)

// Request is one question to answer.
type Request struct {
	Question string
	// History is the conversation so far, oldest first, as chat APIs send
	// it (roles user and assistant).
	History []Message
	// Source restricts retrieval to one source of the knowledge base ("" for
	// any).
	Source string
	// Scope is the caller's tenant, from its own authentication; no
	// question, document or model output can change it. It is a
	// convenience for callers that do not put a Caller in the context: when
	// the context carries one (WithCaller), that caller is the authority,
	// Scope may be left zero, and a Scope that differs from it is refused
	// with ErrCallerConflict.
	Scope retrieval.Scope
	// Actor is who asks, from the caller's authentication, for look-ups
	// that check permissions; the same rule as Scope applies.
	Actor string
	// Thread, when set, keeps the conversation in the pipeline's threads
	// (Options.Threads) under the caller's tenant: the history is the
	// thread's (a request that also sends History is refused with
	// ErrThreadHistory), the answer is appended to it, and a message that
	// follows a clarifying question is its reply. See threads.go.
	Thread string
}

// SearchRequest asks for passages only: the same routing and plan as Ask,
// no answer. K and Mode override the plan's passage count and mode.
type SearchRequest struct {
	Query   string
	History []Message
	Source  string
	Scope   retrieval.Scope // as Request.Scope
	Actor   string          // as Request.Actor
	K       int             // passages wanted; 0: the plan's
	Mode    plan.Mode       // "dense" or "hybrid"; "": the plan's
	// Thread reads the history from the caller's thread, as Request.Thread
	// does; a search appends nothing to it.
	Thread string
}

// EventKind tells what an Event reports.
type EventKind uint8

// Kinds of Event.
const (
	EventNode   EventKind = iota + 1 // a node finished
	EventToken                       // a piece of the answer: Text is set
	EventResult                      // the run finished: Result is set
)

// String returns "node", "token" or "result".
func (k EventKind) String() string {
	switch k {
	case EventNode:
		return "node"
	case EventToken:
		return "token"
	case EventResult:
		return "result"
	}
	return "unknown"
}

// Event is the progress of a streamed run.
type Event struct {
	Kind EventKind
	// For EventNode: the node that finished, its step (1-based), the label
	// of the edge its router chose ("" when it has none), how long it took
	// and its usage entry (tokens).
	Node     string
	Step     int
	Label    string
	Duration time.Duration
	Usage    state.Usage
	// Text is a piece of the answer, for EventToken. A model that streams
	// sends the answer in many pieces as it writes it; any other answer
	// (extractive, FAQ, fixed reply) comes as one piece. The pieces are a
	// preview: should a model fail mid-answer, the Result's answer (the
	// extractive one) is the one that stands.
	Text string
	// Result is the outcome, for EventResult.
	Result *Result
}

// Ask answers one question. Input errors (ErrEmptyQuestion,
// ErrQuestionTooLong, ErrInvalidUTF8, ErrInvalidHistory, ErrNoTenant,
// ErrCallerConflict) are
// returned before any work. A run that fails returns an error naming the
// node (a *graph.NodeError; a timeout matches context.DeadlineExceeded and
// a store that is down retrieval.ErrUnavailable) together with the Result
// reached so far, which holds the path taken.
func (p *Pipeline) Ask(ctx context.Context, req Request) (*Result, error) {
	if req.Thread != "" {
		return p.askThread(ctx, req, nil)
	}
	return p.run(ctx, req.state(), req.Scope, req.Actor, nil)
}

// Stream answers one question like Ask and yields an EventNode as each
// node finishes, EventToken pieces of the answer, then one EventResult. A
// failed run ends with one error: paired with an EventResult holding the
// partial result (the path reached) when the run started, with the zero
// Event when the request was refused before it. Breaking out of the loop
// cancels the run. Each range over the sequence starts a new run.
func (p *Pipeline) Stream(ctx context.Context, req Request) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		stopped := false
		emit := func(ev Event) bool {
			if !yield(ev, nil) {
				stopped = true
				return false
			}
			return true
		}
		var res *Result
		var err error
		if req.Thread != "" {
			res, err = p.askThread(ctx, req, emit)
		} else {
			res, err = p.run(ctx, req.state(), req.Scope, req.Actor, emit)
		}
		switch {
		case stopped:
		case err != nil && res != nil:
			// The partial result says how far the run got (its path).
			yield(Event{Kind: EventResult, Result: res}, err)
		case err != nil:
			yield(Event{}, err)
		default:
			yield(Event{Kind: EventResult, Result: res}, nil)
		}
	}
}

// Search routes and plans a query as Ask does and returns the passages the
// answer would use, without generating one: adaptive retrieval for callers
// that write their own answer.
func (p *Pipeline) Search(ctx context.Context, req SearchRequest) (*Result, error) {
	s := state.RAG{Question: req.Query, History: req.History, Source: req.Source, SearchOnly: true}
	if req.Thread != "" {
		if len(req.History) > 0 {
			return nil, ErrThreadHistory
		}
		c, err := callerFor(ctx, req.Scope, req.Actor)
		if err != nil {
			return nil, err
		}
		if s.History, err = p.threadHistory(ctx, c, req.Thread); err != nil {
			return nil, err
		}
	}
	if req.K < 0 {
		return nil, fmt.Errorf("%w: k = %d", retrieval.ErrInvalid, req.K)
	}
	if req.K > 0 {
		s.Adjust.FinalContextTopN = plan.Set(float64(req.K))
		s.Adjust.DocTopK = plan.AtLeast(float64(req.K))
	}
	switch req.Mode {
	case "":
	case plan.ModeDense, plan.ModeHybrid:
		s.Adjust.Mode = req.Mode
	default:
		return nil, fmt.Errorf("%w: mode %q (want dense or hybrid)", retrieval.ErrInvalid, req.Mode)
	}
	return p.run(ctx, s, req.Scope, req.Actor, nil)
}

func (r Request) state() state.RAG {
	return state.RAG{Question: r.Question, History: r.History, Source: r.Source}
}

// callerFor is the caller a run acts for. The context is the one carrier
// of authority: a caller it holds (WithCaller) stands, and a request's
// Scope or Actor may only repeat it (a zero field takes the context's; a
// different value is ErrCallerConflict). Without one in the context, the
// request's Scope and Actor are the caller.
func callerFor(ctx context.Context, scope retrieval.Scope, actor string) (Caller, error) {
	c, ok := nodes.CallerFrom(ctx)
	if !ok {
		return Caller{Scope: scope, Actor: actor}, nil
	}
	if scope != (retrieval.Scope{}) && scope != c.Scope {
		return c, fmt.Errorf("%w: request tenant %q, context tenant %q", ErrCallerConflict, scope.Tenant, c.Scope.Tenant)
	}
	if actor != "" && actor != c.Actor {
		return c, fmt.Errorf("%w: request actor %q, context actor %q", ErrCallerConflict, actor, c.Actor)
	}
	return c, nil
}

// check refuses a request before any work.
func (p *Pipeline) check(s *state.RAG, c nodes.Caller) error {
	if err := nodes.CheckQuestion(s.Question, p.maxRunes); err != nil {
		return err
	}
	if err := nodes.CheckHistory(s.History); err != nil {
		return err
	}
	if p.opts.RequireTenant && strings.TrimSpace(c.Scope.Tenant) == "" {
		return ErrNoTenant
	}
	return nil
}

// run executes the graph for s on behalf of the caller (see callerFor),
// inside a run span, and reports node events to emit (nil: none).
func (p *Pipeline) run(ctx context.Context, s state.RAG, scope retrieval.Scope, actor string, emit func(Event) bool) (*Result, error) {
	c, err := callerFor(ctx, scope, actor)
	if err != nil {
		return nil, err
	}
	if err := p.check(&s, c); err != nil {
		return nil, err
	}
	ctx, span := p.tracer.Start(ctx, "adaptrag.run", trace.WithAttributes(
		attribute.Int("adaptrag.question.runes", utf8.RuneCountInString(s.Question)),
		attribute.Int("adaptrag.history.turns", len(s.History)),
		attribute.Bool("adaptrag.search_only", s.SearchOnly)))
	defer span.End()
	started := time.Now()
	ctx = nodes.WithCaller(ctx, c)
	// The understanding reads the caller's tenant's vocabulary.
	ctx = query.WithTenant(ctx, c.Scope.Tenant)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	streamed, stopped := false, false
	if emit != nil {
		ctx = nodes.WithTokens(ctx, func(text string) {
			if !stopped && !emit(Event{Kind: EventToken, Node: NodeGenerate, Text: text}) {
				stopped = true
				cancel() // the consumer is gone: stop the model too
			}
			streamed = true
		})
	}
	var final state.RAG
	var path graph.Path
	var runErr error
	if emit == nil {
		// Nobody watches the nodes: no events, no copies of the state for them.
		final, path, runErr = p.app.InvokePath(ctx, s)
	} else {
		final, path, runErr = p.stream(ctx, s, emit, &stopped)
		if stopped {
			return nil, context.Canceled
		}
	}
	if emit != nil && runErr == nil && !streamed && final.Answer != "" {
		if !emit(Event{Kind: EventToken, Node: path.Nodes[len(path.Nodes)-1], Text: final.Answer}) {
			return nil, context.Canceled
		}
	}
	res := newResult(final, path, c, traceID(span))
	p.meters.record(context.WithoutCancel(ctx), &final, time.Since(started).Seconds(), runErr)
	in, out := final.TotalTokens()
	span.SetAttributes(
		attribute.String("adaptrag.route", string(final.Route.QueryType)),
		attribute.Bool("adaptrag.route.fallback", final.Route.Fallback),
		attribute.String("adaptrag.answered_by", string(final.AnsweredBy)),
		attribute.Int("adaptrag.hits", len(final.Docs)),
		attribute.Int("gen_ai.usage.input_tokens", in),
		attribute.Int("gen_ai.usage.output_tokens", out))
	if runErr != nil {
		span.RecordError(runErr)
		span.SetStatus(codes.Error, runErr.Error())
		return res, runErr
	}
	return res, nil
}

// stream runs the graph with events, reporting each node's end to emit.
func (p *Pipeline) stream(ctx context.Context, s state.RAG, emit func(Event) bool, stopped *bool) (state.RAG, graph.Path, error) {
	final := s
	var path graph.Path
	// The loop only reads the states (the last usage, the final state):
	// no copies of them for the events.
	for ev, err := range p.app.Stream(ctx, s, graph.WithReadOnlyEvents()) {
		if *stopped {
			return final, path, context.Canceled
		}
		if err != nil {
			return final, path, err
		}
		path.Add(ev.Edge())
		switch ev.Kind {
		case graph.NodeEnd:
			if ev.Err == nil {
				final = ev.State
			}
			e := Event{Kind: EventNode, Node: ev.Node, Step: ev.Step, Label: ev.Label, Duration: ev.Duration}
			if n := len(ev.State.Usage); n > 0 && ev.Err == nil {
				e.Usage = ev.State.Usage[n-1]
			}
			if !emit(e) {
				*stopped = true
				return final, path, context.Canceled
			}
		case graph.RunEnd:
			final = ev.State
		}
	}
	return final, path, nil
}

func traceID(span trace.Span) string {
	if sc := span.SpanContext(); sc.HasTraceID() {
		return sc.TraceID().String()
	}
	return ""
}

// Validate reports why a pipeline with the default limits would refuse r
// before any work: ErrInvalidUTF8, ErrEmptyQuestion or ErrQuestionTooLong
// for the question, ErrInvalidHistory for a turn whose role is neither user
// nor assistant or whose content is not valid UTF-8. A pipeline built with
// a different MaxQuestionRunes applies its own limit; Validate lets a
// caller (a command line, a form) refuse a request before it loads
// anything.
func (r Request) Validate() error {
	if err := nodes.CheckQuestion(r.Question, 0); err != nil {
		return err
	}
	return nodes.CheckHistory(r.History)
}
