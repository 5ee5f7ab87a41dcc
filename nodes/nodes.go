package nodes

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/adaptrag/adaptrag/llm"
	"github.com/adaptrag/adaptrag/plan"
	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/retrieval/rerank"
	"github.com/adaptrag/adaptrag/router"
	"github.com/adaptrag/adaptrag/state"
)

// Node names of the adaptive graph.
const (
	NodeDecide    = "decide"     // seed-000 route decision: direct answer or retrieval
	NodeDirect    = "direct"     // fixed reply of a direct answer
	NodeClassify  = "classify"   // seed-002 query profile and route
	NodeChitchat  = "chitchat"   // reply without retrieval
	NodePlan      = "plan"       // intent + retrieval plan + strategy
	NodeFAQ       = "faq"        // FAQ collection search and direct-answer check
	NodeFAQAnswer = "faq_answer" // the FAQ's standard answer
	NodeDense     = "dense"      // dense top-k over documents
	NodeHybrid    = "hybrid"     // dense + BM25 candidates, fused
	NodeRerank    = "rerank"     // rerank candidates down to the context size
	NodeGenerate  = "generate"   // answer from the context, with citations
)

// Route labels of the conditional edges.
const (
	LabelDirect    = "direct"
	LabelRetrieval = "retrieval"
	LabelFAQDirect = "faq_direct"
)

// meter collects the tokens a node spends; timed puts one in each node's
// context and moves the count into the node's Usage entry.
type meter struct{ in, out int }

type meterKey struct{}

// AddTokens charges tokens to the node running under ctx. Custom nodes that
// call models use it so their cost shows in the run's usage.
func AddTokens(ctx context.Context, u llm.Usage) {
	if m, ok := ctx.Value(meterKey{}).(*meter); ok {
		m.in += u.InputTokens
		m.out += u.OutputTokens
	}
	if u.InputTokens+u.OutputTokens > 0 {
		trace.SpanFromContext(ctx).SetAttributes(
			attribute.Int("gen_ai.usage.input_tokens", u.InputTokens),
			attribute.Int("gen_ai.usage.output_tokens", u.OutputTokens))
	}
}

// Timed wraps a node so that its latency and tokens are appended to
// State.Usage. Every node of the adaptive graph is wrapped; wrap custom
// nodes too.
func Timed(name string, fn func(context.Context, state.RAG) (state.RAG, error)) func(context.Context, state.RAG) (state.RAG, error) {
	return func(ctx context.Context, s state.RAG) (state.RAG, error) {
		m := &meter{}
		ctx = context.WithValue(ctx, meterKey{}, m)
		start := time.Now()
		out, err := fn(ctx, s)
		d := time.Since(start)
		out.Usage = append(slices.Clip(out.Usage), state.Usage{
			Node: name, Duration: d, Ms: float64(d.Microseconds()) / 1000, InputTokens: m.in, OutputTokens: m.out,
		})
		return out, err
	}
}

// ErrorKind classifies an error for State.Errors and logs, keeping a
// timeout distinct from every other failure.
func ErrorKind(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "cancelled"
	case errors.Is(err, retrieval.ErrUnavailable), errors.Is(err, llm.ErrUnavailable):
		return "unavailable"
	case errors.Is(err, llm.ErrRefused):
		return "refused"
	case errors.Is(err, router.ErrInvalidProfile), errors.Is(err, retrieval.ErrInvalid):
		return "invalid"
	}
	return "error"
}

func (p *Pipeline) planQuery(s *state.RAG) plan.Query {
	return plan.Query{Text: s.Question, History: s.History, Source: s.Source}
}

// decide takes the seed-000 route decision: greetings, hand-offs, unsafe or
// out-of-scope questions and source mismatches are answered with a fixed
// text before any model or store is touched.
func (p *Pipeline) decide(ctx context.Context, s state.RAG) (state.RAG, error) {
	s.Decision = p.planner.Decide(p.planQuery(&s))
	trace.SpanFromContext(ctx).SetAttributes(
		attribute.String("adaptrag.decision.route", s.Decision.Route),
		attribute.String("adaptrag.decision.reason", s.Decision.Reason))
	return s, nil
}

// RouteDecision is the router after NodeDecide: LabelDirect or LabelRetrieval.
func RouteDecision(s state.RAG) string {
	if s.Decision.Route == plan.RouteDirectAnswer {
		return LabelDirect
	}
	return LabelRetrieval
}

func (p *Pipeline) direct(_ context.Context, s state.RAG) (state.RAG, error) {
	s.Answer, s.AnsweredBy = s.Decision.Answer, NodeDirect
	s.Route = state.Route{QueryType: router.Chitchat, Reason: "route decision: " + s.Decision.Reason, Confidence: 1}
	return s, nil
}

// classify profiles the question and applies the fallback policy. A
// classifier failure never fails the run: it becomes the analytical route
// with the cause recorded on the state and the span.
func (p *Pipeline) classify(ctx context.Context, s state.RAG) (state.RAG, error) {
	cctx := ctx
	if p.cfg.ClassifyTimeout > 0 {
		var cancel context.CancelFunc
		cctx, cancel = context.WithTimeout(ctx, p.cfg.ClassifyTimeout)
		defer cancel()
	}
	start := time.Now()
	res, err := classifyWithUsage(cctx, p.classifier, s.Query.Text)
	if ctx.Err() != nil {
		// The run itself was cancelled: that is not a classifier failure.
		return s, ctx.Err()
	}
	AddTokens(ctx, res.Usage)
	d := p.policy.Decide(res.Profile, err)
	s.Route = state.Route{QueryType: d.Route, Fallback: d.Fallback, Cause: d.Cause, Classifier: res.Source, Profile: d.Profile}
	if d.Profile != nil {
		s.Route.Complexity, s.Route.Confidence, s.Route.Reason = d.Profile.Complexity, d.Profile.Confidence, d.Profile.Reason
	}
	status := "ok"
	if err != nil {
		s.AddError(NodeClassify, ErrorKind(err), err)
		status = ErrorKind(err)
	}
	if res.LLMErr != nil {
		s.AddError(NodeClassify, ErrorKind(res.LLMErr), fmt.Errorf("cascade kept the offline profile: %w", res.LLMErr))
	}
	s.AddLog(state.SubTask{Node: NodeClassify, Task: "classify " + res.Source, Query: s.Query.Text, Status: status, Took: time.Since(start), Err: errString(err)})
	span := trace.SpanFromContext(ctx)
	span.SetAttributes(
		attribute.String("adaptrag.route", d.Route),
		attribute.Bool("adaptrag.route.fallback", d.Fallback),
		attribute.Float64("adaptrag.route.confidence", s.Route.Confidence),
		attribute.String("adaptrag.classifier", res.Source))
	if d.Fallback {
		span.SetAttributes(attribute.String("adaptrag.route.cause", d.Cause))
	}
	return s, nil
}

func classifyWithUsage(ctx context.Context, c router.Classifier, q string) (router.Result, error) {
	if cu, ok := c.(interface {
		ClassifyWithUsage(context.Context, string) (router.Result, error)
	}); ok {
		return cu.ClassifyWithUsage(ctx, q)
	}
	prof, err := c.Classify(ctx, q)
	return router.Result{Profile: prof, Source: "custom"}, err
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// RouteProfile is the router after NodeClassify: the route's query type.
func RouteProfile(s state.RAG) string { return s.Route.QueryType }

// chitchat replies without touching any store.
func (p *Pipeline) chitchat(ctx context.Context, s state.RAG) (state.RAG, error) {
	s.Strategy = p.strategies.Chitchat
	s.AnsweredBy = NodeChitchat
	if p.gen == nil {
		s.Answer = p.cfg.Texts.pick(s.Question).Chitchat
		return s, nil
	}
	resp, err := p.gen.Generate(ctx, llm.Request{Messages: chitchatPrompt(s), MaxTokens: 200})
	AddTokens(ctx, resp.Usage)
	if err != nil {
		// A friendly fixed reply beats failing a greeting.
		s.AddError(NodeChitchat, ErrorKind(err), err)
		s.Answer = p.cfg.Texts.pick(s.Question).Chitchat
		return s, nil
	}
	s.Answer = strings.TrimSpace(resp.Text)
	return s, nil
}

// planNode builds the seed-000 plan and resolves the route's strategy.
func (p *Pipeline) planNode(ctx context.Context, s state.RAG) (state.RAG, error) {
	q := p.planQuery(&s)
	intent := p.planner.ClassifyIntent(q)
	pl := p.planner.Plan(q, intent)
	s.Intent, s.Plan = &intent, &pl
	st := p.strategies.For(s.Route.QueryType)
	if !pl.RunDoc {
		st.Mode = ModeNone
	}
	if !pl.Rerank {
		st.Rerank = false
	}
	s.Strategy = st
	trace.SpanFromContext(ctx).SetAttributes(
		attribute.String("adaptrag.intent", intent.Intent),
		attribute.String("adaptrag.plan.reason", pl.Reason),
		attribute.String("adaptrag.strategy.mode", st.Mode),
		attribute.Int("adaptrag.strategy.candidates", st.Candidates),
		attribute.Int("adaptrag.strategy.context", st.Context))
	return s, nil
}

// filter renders the source filter: the caller's source wins, else the
// intent's suggestion (seed 000). Tenant scope is not a filter: stores
// apply Scope on their own.
func (p *Pipeline) filter(s *state.RAG) (retrieval.Filter, bool) {
	var intent plan.IntentResult
	if s.Intent != nil {
		intent = *s.Intent
	}
	src := plan.EffectiveSource(s.Source, intent)
	if src == "" {
		return retrieval.Filter{}, false
	}
	return retrieval.Filter{Must: []retrieval.Condition{{Key: retrieval.KeySource, Values: []string{src}}}}, s.Source == ""
}

// embedQuery embeds the query once per run: the vector is kept on the
// state for the nodes that follow.
func (p *Pipeline) embedQuery(ctx context.Context, s *state.RAG) ([]float32, error) {
	if s.Query.Vector != nil && s.Query.VectorText == s.Query.Text {
		return s.Query.Vector, nil
	}
	vs, err := p.embedder.Embed(ctx, []string{s.Query.Text})
	if err != nil {
		return nil, fmt.Errorf("embed query: %w", err)
	}
	if len(vs) != 1 {
		return nil, fmt.Errorf("embed query: %d vectors for 1 text: %w", len(vs), retrieval.ErrInvalid)
	}
	s.Query.Vector, s.Query.VectorText = vs[0], s.Query.Text
	return vs[0], nil
}

// search runs one search leg with the plan's source filter. A filter that
// came from the intent's suggestion (not from the caller) is dropped when
// it finds nothing, since the suggestion is a guess; both attempts are
// logged.
func (p *Pipeline) search(ctx context.Context, s *state.RAG, node, task string, req retrieval.Request,
	fn func(context.Context, retrieval.Request) ([]retrieval.Hit, error)) ([]retrieval.Hit, error) {
	req.Scope = s.Scope
	f, guessed := p.filter(s)
	req.Filter = f
	for {
		start := time.Now()
		hits, err := fn(ctx, req)
		t := state.SubTask{Node: node, Task: task, Query: req.Text, Filter: renderFilter(req.Filter), Hits: len(hits), Took: time.Since(start)}
		switch {
		case err != nil:
			t.Status, t.Err = ErrorKind(err), err.Error()
		case len(hits) == 0:
			t.Status = "empty"
		default:
			t.Status = "ok"
		}
		s.AddLog(t)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", task, err)
		}
		if len(hits) == 0 && guessed && len(req.Filter.Must) > 0 {
			req.Filter, guessed = retrieval.Filter{}, false
			continue
		}
		return hits, nil
	}
}

func renderFilter(f retrieval.Filter) string {
	var parts []string
	for _, c := range f.Must {
		parts = append(parts, c.Key+" in "+strings.Join(c.Values, ","))
	}
	return strings.Join(parts, " and ")
}

// faq searches the FAQ collection when the plan says so and decides whether
// an FAQ's standard answer can be returned as it is.
func (p *Pipeline) faq(ctx context.Context, s state.RAG) (state.RAG, error) {
	if p.faqStore == nil || s.Plan == nil || !s.Plan.RunFAQ {
		return s, nil
	}
	vec, err := p.embedQuery(ctx, &s)
	if err != nil {
		return s, err
	}
	hits, err := p.search(ctx, &s, NodeFAQ, "faq dense", retrieval.Request{Text: s.Query.Text, Vector: vec, K: max(s.Plan.FAQTopK, 1)}, p.faqStore.SearchDense)
	if err != nil {
		return s, err
	}
	// Hits that join the context carry their answer: the question alone
	// is not evidence.
	for i, h := range hits {
		if a := h.Chunk.Meta["answer"]; a != "" {
			hits[i].Chunk.Text = faqQuestion(h.Chunk) + "\n" + a
		}
	}
	s.FAQ = hits
	return s, nil
}

// faqDirect reports whether the best FAQ hit may answer as it is.
func faqDirect(s *state.RAG) bool {
	if len(s.FAQ) == 0 || s.Plan == nil {
		return false
	}
	best := s.FAQ[0]
	return s.Plan.FAQDirect(best.Score, plan.ExactMatch(s.Question, faqQuestion(best.Chunk)))
}

func faqQuestion(c retrieval.Chunk) string {
	if q := c.Meta["question"]; q != "" {
		return q
	}
	return c.Title
}

// RouteAfterFAQ is the router after NodeFAQ: LabelFAQDirect when the best
// FAQ hit may answer as it is, else the strategy's mode.
func RouteAfterFAQ(s state.RAG) string {
	if faqDirect(&s) {
		return LabelFAQDirect
	}
	if s.Strategy.Mode == ModeNone {
		return ModeNone
	}
	return s.Strategy.Mode
}

func (p *Pipeline) faqAnswer(ctx context.Context, s state.RAG) (state.RAG, error) {
	best := s.FAQ[0]
	s.Docs = []retrieval.Hit{best}
	s.Answer = best.Chunk.Meta["answer"]
	if s.Answer == "" {
		s.Answer = best.Chunk.Text
	}
	s.Citations = []state.Citation{{N: 1, ID: best.Chunk.ID, Source: best.Chunk.Source, Title: best.Chunk.Title}}
	s.AnsweredBy = NodeFAQAnswer
	trace.SpanFromContext(ctx).SetAttributes(attribute.Float64("adaptrag.faq.score", best.Score))
	return s, nil
}

// dense is the factual branch: the dense top-k documents, joined with the
// FAQ hits by reciprocal rank and cut to the strategy's context size.
func (p *Pipeline) dense(ctx context.Context, s state.RAG) (state.RAG, error) {
	vec, err := p.embedQuery(ctx, &s)
	if err != nil {
		return s, err
	}
	k := s.Strategy.Candidates
	hits, err := p.search(ctx, &s, NodeDense, "dense docs", retrieval.Request{Text: s.Query.Text, Vector: vec, K: k}, p.docs.SearchDense)
	if err != nil {
		return s, err
	}
	s.Candidates = hits
	s.Docs = p.assemble(&s, hits)
	trace.SpanFromContext(ctx).SetAttributes(attribute.Int("adaptrag.retrieval.k", k), attribute.Int("adaptrag.retrieval.hits", len(hits)))
	return s, nil
}

// hybrid fetches the analytical branch's candidates: dense and BM25 legs of
// Strategy.Candidates each, fused by reciprocal rank.
func (p *Pipeline) hybrid(ctx context.Context, s state.RAG) (state.RAG, error) {
	vec, err := p.embedQuery(ctx, &s)
	if err != nil {
		return s, err
	}
	n := s.Strategy.Candidates
	req := retrieval.Request{Text: s.Query.Text, Vector: vec, K: n, Candidates: n, DenseWeight: retrieval.DenseWeightOf(p.embedder)}
	hits, err := p.search(ctx, &s, NodeHybrid, "hybrid docs", req, p.docs.SearchHybrid)
	if err != nil {
		return s, err
	}
	if len(s.FAQ) > 0 {
		hits = retrieval.FuseRRF(0, hits, s.FAQ)
	}
	s.Candidates = hits
	trace.SpanFromContext(ctx).SetAttributes(attribute.Int("adaptrag.retrieval.candidates", n), attribute.Int("adaptrag.retrieval.hits", len(hits)))
	return s, nil
}

// rerankNode cuts the candidates to the context size with the reranker.
// A reranker that fails or times out fails open: the fused order is kept
// and the fallback is recorded.
func (p *Pipeline) rerankNode(ctx context.Context, s state.RAG) (state.RAG, error) {
	n := s.Strategy.Context
	if !s.Strategy.Rerank || p.reranker == nil {
		s.Docs = preferTable(&s, firstN(s.Candidates, n), n)
		return s, nil
	}
	rctx := ctx
	if p.cfg.RerankTimeout > 0 {
		var cancel context.CancelFunc
		rctx, cancel = context.WithTimeout(ctx, p.cfg.RerankTimeout)
		defer cancel()
	}
	start := time.Now()
	pool := s.Candidates
	if s.Plan != nil && s.Plan.PreferTable {
		pool = preferTable(&s, pool, len(pool))
	}
	out := rerank.Safe(rctx, p.reranker, s.Query.Text, pool, n)
	if ctx.Err() != nil {
		return s, ctx.Err()
	}
	s.Rerank = state.RerankInfo{Reranker: out.Reranker, Fallback: out.Fallback}
	t := state.SubTask{Node: NodeRerank, Task: "rerank " + out.Reranker, Query: s.Query.Text, Hits: len(out.Hits), Status: "ok", Took: time.Since(start)}
	if out.Fallback {
		s.Rerank.Cause = out.Cause.Error()
		s.AddError(NodeRerank, ErrorKind(out.Cause), out.Cause)
		t.Status, t.Err = "fallback", out.Cause.Error()
	}
	s.AddLog(t)
	s.Docs = out.Hits
	trace.SpanFromContext(ctx).SetAttributes(attribute.String("adaptrag.reranker", out.Reranker), attribute.Bool("adaptrag.rerank.fallback", out.Fallback))
	return s, nil
}

// assemble joins document hits with FAQ hits (reciprocal rank, so neither
// collection's score scale dominates) and keeps the strategy's context size.
func (p *Pipeline) assemble(s *state.RAG, docs []retrieval.Hit) []retrieval.Hit {
	n := s.Strategy.Context
	all := docs
	if len(s.FAQ) > 0 {
		all = retrieval.FuseRRF(0, firstN(docs, n), firstN(s.FAQ, n))
		for i := range all {
			all[i].Method = "dense+faq" // scores are now reciprocal ranks
		}
	}
	return preferTable(s, all, n)
}

// preferTable keeps n hits; when the plan prefers tables, table rows among
// the first 2n move ahead of text so that a row with the asked field is not
// cut.
func preferTable(s *state.RAG, hits []retrieval.Hit, n int) []retrieval.Hit {
	if s.Plan == nil || !s.Plan.PreferTable {
		return firstN(hits, n)
	}
	pool := slices.Clone(firstN(hits, 2*n))
	slices.SortStableFunc(pool, func(a, b retrieval.Hit) int {
		at, bt := a.Chunk.ContentType == retrieval.ContentTableRow, b.Chunk.ContentType == retrieval.ContentTableRow
		switch {
		case at && !bt:
			return -1
		case bt && !at:
			return 1
		}
		return 0
	})
	return firstN(pool, n)
}

func firstN(h []retrieval.Hit, n int) []retrieval.Hit {
	if n >= 0 && len(h) > n {
		return h[:n:n]
	}
	return h
}
