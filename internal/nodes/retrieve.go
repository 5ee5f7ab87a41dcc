package nodes

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/adaptrag/adaptrag/plan"
	"github.com/adaptrag/adaptrag/query"
	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/retrieval/analysis"
	"github.com/adaptrag/adaptrag/retrieval/rerank"
	"github.com/adaptrag/adaptrag/state"
)

// filter renders the source filter: the caller's source wins, else the
// intent's suggestion. It reports whether the filter is only a guess.
func filter(s *state.RAG) (retrieval.Filter, bool) {
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
func (n *Nodes) embedQuery(ctx context.Context, s *state.RAG) ([]float32, error) {
	if s.Query.Vector != nil && s.Query.VectorText == s.Query.Text {
		return s.Query.Vector, nil
	}
	vs, err := n.p.Embedder.Embed(ctx, []string{s.Query.Text})
	if err != nil {
		return nil, fmt.Errorf("embed query: %w", err)
	}
	if err := checkVectors(vs, 1); err != nil {
		return nil, fmt.Errorf("embed query: %w", err)
	}
	s.Query.Vector, s.Query.VectorText = vs[0], s.Query.Text
	return vs[0], nil
}

// checkVectors refuses an embedder's answer that is not one usable vector
// per text: a wrong count, an empty vector, or a NaN or infinite value (a
// store would find nothing with it, and the run would say "not found").
func checkVectors(vs [][]float32, texts int) error {
	if len(vs) != texts {
		return fmt.Errorf("%d vectors for %d texts: %w", len(vs), texts, retrieval.ErrInvalid)
	}
	for i, v := range vs {
		if len(v) == 0 {
			return fmt.Errorf("vector %d is empty: %w", i, retrieval.ErrInvalid)
		}
		for _, x := range v {
			if f := float64(x); math.IsNaN(f) || math.IsInf(f, 0) {
				return fmt.Errorf("vector %d holds %v: %w", i, x, retrieval.ErrInvalid)
			}
		}
	}
	return nil
}

// searchFunc is one search method of a Searcher.
type searchFunc func(context.Context, retrieval.Request) ([]retrieval.Hit, error)

// search runs one search leg in the caller's scope (from the context, never
// from the state) with the plan's source filter, and logs it. A filter that
// came from the intent's suggestion (not from the caller) is dropped when it
// finds nothing, since the suggestion is a guess; both attempts are logged.
// Hits are tagged with their collection.
func (n *Nodes) search(ctx context.Context, s *state.RAG, node, task, collection string, req retrieval.Request, fn searchFunc, store any) ([]retrieval.Hit, error) {
	c, err := n.caller(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", task, err)
	}
	req.Scope = c.Scope
	f, guessed := filter(s)
	req.Filter = f
	backend := backendName(store)
	for {
		start := time.Now()
		sctx, span := n.tracer.Start(ctx, "retrieve "+backend, trace.WithAttributes(
			attribute.String("adaptrag.retrieval.store", backend),
			attribute.String("adaptrag.retrieval.collection", collection),
			attribute.String("adaptrag.retrieval.task", task),
			attribute.Int("adaptrag.retrieval.k", req.K),
			attribute.String("adaptrag.retrieval.filter", renderFilter(req.Filter))))
		hits, err := fn(sctx, req)
		span.SetAttributes(attribute.Int("adaptrag.retrieval.hits", len(hits)))
		if err != nil {
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
		}
		span.End()
		t := state.SubTask{Node: node, Kind: "search", Task: task, Input: s.Question, Query: req.Text, Filter: renderFilter(req.Filter),
			Hits: len(hits), Took: time.Since(start)}
		switch {
		case err != nil:
			t.Status, t.Err = statusOf(err), err.Error()
		case len(hits) == 0:
			t.Status = state.StatusEmpty
		default:
			t.Status = state.StatusOK
			t.IDs = make([]string, len(hits))
			for i, h := range hits {
				t.IDs[i] = h.Chunk.ID
			}
		}
		if err == nil {
			err = checkScores(hits)
			if err != nil {
				t.Status, t.Err = state.StatusError, err.Error()
			}
		}
		s.Log(t)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", task, err)
		}
		if len(hits) == 0 && guessed && len(req.Filter.Must) > 0 {
			req.Filter, guessed = retrieval.Filter{}, false
			continue
		}
		for i := range hits {
			hits[i].Collection = collection
		}
		return hits, nil
	}
}

// checkScores refuses hits with a NaN or infinite score: a store that
// answers them is broken, and the score would reach the output.
func checkScores(hits []retrieval.Hit) error {
	for i, h := range hits {
		if math.IsNaN(h.Score) || math.IsInf(h.Score, 0) {
			return fmt.Errorf("hit %d (%q) has score %v: %w", i, h.Chunk.ID, h.Score, retrieval.ErrInvalid)
		}
	}
	return nil
}

// backendName names a store for spans: the last element of its type's
// package path ("memstore", "qdrant"), or its type when that is empty.
func backendName(store any) string {
	t := reflect.TypeOf(store)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return "none"
	}
	if p := t.PkgPath(); p != "" {
		return path.Base(p)
	}
	return t.String()
}

func renderFilter(f retrieval.Filter) string {
	var parts []string
	for _, c := range f.Must {
		parts = append(parts, c.Key+" in "+strings.Join(c.Values, ","))
	}
	return strings.Join(parts, " and ")
}

// FAQ searches the FAQ collection when the plan says so. Hits that join
// the evidence carry their answer, since the question alone is not
// evidence.
func (n *Nodes) FAQ(ctx context.Context, s state.RAG) (state.RAG, error) {
	if n.p.FAQ == nil || s.Plan == nil || !s.Plan.RunFAQ || s.Plan.FAQTopK <= 0 {
		return s, nil
	}
	vec, err := n.embedQuery(ctx, &s)
	if err != nil {
		return s, err
	}
	hits, err := n.search(ctx, &s, NodeFAQ, "faq dense", CollectionFAQ,
		retrieval.Request{Text: s.Query.Text, Vector: vec, K: s.Plan.FAQTopK}, n.p.FAQ.SearchDense, n.p.FAQ)
	if err != nil {
		return s, err
	}
	for i, h := range hits {
		if a := h.Chunk.Meta[retrieval.MetaAnswer]; a != "" {
			hits[i].Chunk.Text = faqQuestion(h.Chunk) + "\n" + a
		}
	}
	s.FAQ = hits
	return s, nil
}

// faqDirect reports whether the best FAQ hit may answer as it is: the plan
// accepts its score, and its question covers the user's (see faqCovers).
func faqDirect(s *state.RAG) bool {
	if len(s.FAQ) == 0 || s.Plan == nil {
		return false
	}
	best := s.FAQ[0]
	fq := faqQuestion(best.Chunk)
	if !s.Plan.FAQDirect(best.Score, plan.ExactMatch(s.Question, fq)) {
		return false
	}
	q := s.Query.Text
	if q == "" {
		q = s.Question
	}
	return faqCovers(analysis.Default(), q, fq)
}

func faqQuestion(c retrieval.Chunk) string {
	if q := c.Meta[retrieval.MetaQuestion]; q != "" {
		return q
	}
	return c.Title
}

// RouteAfterFAQ is the router after NodeFAQ: LabelFAQDirect when the best
// FAQ hit may answer as it is (never in a search-only run), else the plan's
// mode (plan.ModeNone goes straight to the evidence).
func RouteAfterFAQ(s state.RAG) string {
	if !s.SearchOnly && faqDirect(&s) {
		return LabelFAQDirect
	}
	if s.Plan == nil {
		return string(plan.ModeNone)
	}
	return string(s.Plan.Mode)
}

// FAQAnswer returns the best FAQ entry's standard answer, citing it.
func (n *Nodes) FAQAnswer(ctx context.Context, s state.RAG) (state.RAG, error) {
	if len(s.FAQ) == 0 {
		return s, fmt.Errorf("%s: no FAQ hit to answer from: %w", NodeFAQAnswer, retrieval.ErrInvalid)
	}
	best := s.FAQ[0]
	s.Docs = []retrieval.Hit{best}
	s.Answer = best.Chunk.Meta[retrieval.MetaAnswer]
	if s.Answer == "" {
		s.Answer = best.Chunk.Text
	}
	s.Citations = []state.Citation{state.CitationOf(1, best)}
	s.AnsweredBy = state.ByFAQ
	trace.SpanFromContext(ctx).SetAttributes(attribute.Float64("adaptrag.faq.score", best.Score))
	return s, nil
}

// Dense is the factual branch: the plan's dense top-k documents (for each
// query variant, fused by reciprocal rank; see multiSearch).
func (n *Nodes) Dense(ctx context.Context, s state.RAG) (state.RAG, error) {
	if s.Plan == nil {
		return s, errNoPlan(NodeDense)
	}
	k := max(s.Plan.DocTopK, 1)
	hits, err := n.multiSearch(ctx, &s, NodeDense, plan.ModeDense, k)
	if err != nil {
		return s, err
	}
	s.Candidates = hits
	trace.SpanFromContext(ctx).SetAttributes(attribute.Int("adaptrag.retrieval.k", k), attribute.Int("adaptrag.retrieval.hits", len(hits)))
	return s, nil
}

// Hybrid fetches the analytical branch's candidates: dense and BM25 legs
// of the plan's doc_top_k each, fused by reciprocal rank (for each query
// variant), with the FAQ hits fused in so that the reranker sees them too.
func (n *Nodes) Hybrid(ctx context.Context, s state.RAG) (state.RAG, error) {
	if s.Plan == nil {
		return s, errNoPlan(NodeHybrid)
	}
	k := max(s.Plan.DocTopK, 1)
	hits, err := n.multiSearch(ctx, &s, NodeHybrid, plan.ModeHybrid, k)
	if err != nil {
		return s, err
	}
	if len(s.FAQ) > 0 {
		hits = fuse(hits, s.FAQ)
	}
	s.Candidates = hits
	trace.SpanFromContext(ctx).SetAttributes(attribute.Int("adaptrag.retrieval.candidates", k), attribute.Int("adaptrag.retrieval.hits", len(hits)))
	return s, nil
}

// multiSearch searches the documents for the query and each of its
// variants (and, with HyDE, the hypothetical passage's embedding, a dense
// search key only), and fuses the lists by reciprocal rank. When the query
// alone comes back with fewer hits than asked and the plan asked for no
// variants, offline variants are searched too. Each variant's search is a
// sub-task, and a final one records how many of the fused hits each
// variant contributed.
func (n *Nodes) multiSearch(ctx context.Context, s *state.RAG, node string, mode plan.Mode, k int) ([]retrieval.Hit, error) {
	texts := append([]string{s.Query.Text}, s.Query.Variants...)
	lists, err := n.searchTexts(ctx, s, node, mode, k, texts)
	if err != nil {
		return nil, err
	}
	if len(texts) == 1 && len(lists[0]) < k && s.Query.HyDE == "" {
		extra := query.Variants(s.Query.Text, n.cfg.MaxVariants)
		extra = slices.DeleteFunc(query.Dedupe(append([]string{s.Query.Text}, extra...)), func(t string) bool { return t == s.Query.Text })
		if len(extra) > 0 {
			more, err := n.searchTexts(ctx, s, node, mode, k, extra)
			if err != nil {
				return nil, err
			}
			s.Query.Variants = append(s.Query.Variants, extra...)
			texts, lists = append(texts, extra...), append(lists, more...)
		}
	}
	if s.Query.HyDE != "" {
		vs, err := n.p.Embedder.Embed(ctx, []string{s.Query.HyDE})
		if err == nil {
			err = checkVectors(vs, 1)
		}
		if err != nil {
			return nil, fmt.Errorf("embed hypothetical passage: %w", err)
		}
		hits, err := n.search(ctx, s, node, "dense docs (hypothetical passage)", CollectionDocs,
			retrieval.Request{Vector: vs[0], K: k}, n.p.Docs.SearchDense, n.p.Docs)
		if err != nil {
			return nil, err
		}
		texts, lists = append(texts, "hyde"), append(lists, hits)
	}
	if len(lists) == 1 {
		return lists[0], nil
	}
	fused := fuse(lists...)
	if len(fused) > k && mode == plan.ModeDense {
		fused = fused[:k]
	}
	// Contribution: how many of the fused hits each search key found.
	in := make(map[string]int, len(fused))
	for _, h := range fused {
		in[h.Chunk.ID] = 0
	}
	var parts []string
	for i, l := range lists {
		c := 0
		for _, h := range l {
			if _, ok := in[h.Chunk.ID]; ok {
				c++
			}
		}
		parts = append(parts, fmt.Sprintf("%q: %d", label(texts[i]), c))
	}
	s.Log(state.SubTask{Node: node, Kind: "fuse", Task: "fused " + strconv.Itoa(len(lists)) + " searches (hits each contributed: " + strings.Join(parts, ", ") + ")",
		Input: s.Question, Hits: len(fused), Status: state.StatusOK})
	return fused, nil
}

func label(t string) string {
	if r := []rune(t); len(r) > 40 {
		return string(r[:40]) + "…"
	}
	return t
}

// searchTexts runs one search of the mode for each text.
func (n *Nodes) searchTexts(ctx context.Context, s *state.RAG, node string, mode plan.Mode, k int, texts []string) ([][]retrieval.Hit, error) {
	vecs, err := n.embedTexts(ctx, s, texts)
	if err != nil {
		return nil, err
	}
	out := make([][]retrieval.Hit, len(texts))
	for i, t := range texts {
		task := string(mode) + " docs"
		if i > 0 || t != s.Query.Text {
			task += " (variant)"
		}
		req := retrieval.Request{Text: t, Vector: vecs[i], K: k}
		fn := n.p.Docs.SearchDense
		if mode == plan.ModeHybrid {
			// The store's own hybrid search, or dense and (when it has one)
			// sparse legs fused here.
			req.Candidates, req.DenseWeight, fn = k, retrieval.DenseWeightOf(n.p.Embedder), n.hybrid
		}
		if out[i], err = n.search(ctx, s, node, task, CollectionDocs, req, fn, n.p.Docs); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// hybrid is a hybrid search of the documents (see retrieval.SearchHybrid).
func (n *Nodes) hybrid(ctx context.Context, req retrieval.Request) ([]retrieval.Hit, error) {
	return retrieval.SearchHybrid(ctx, n.p.Docs, req)
}

// embedTexts embeds texts in one call, reusing the query's vector when the
// query is among them.
func (n *Nodes) embedTexts(ctx context.Context, s *state.RAG, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	var todo []string
	var at []int
	for i, t := range texts {
		if t == s.Query.Text {
			v, err := n.embedQuery(ctx, s)
			if err != nil {
				return nil, err
			}
			out[i] = v
			continue
		}
		todo, at = append(todo, t), append(at, i)
	}
	if len(todo) == 0 {
		return out, nil
	}
	vs, err := n.p.Embedder.Embed(ctx, todo)
	if err != nil {
		return nil, fmt.Errorf("embed query variants: %w", err)
	}
	if err := checkVectors(vs, len(todo)); err != nil {
		return nil, fmt.Errorf("embed query variants: %w", err)
	}
	for j, i := range at {
		out[i] = vs[j]
	}
	return out, nil
}

// Rerank cuts the candidates to the plan's passage count with the reranker.
// A reranker that fails or times out fails open: the fused order is kept
// and the fallback is recorded. Without a reranker, or when the plan says
// not to rerank, the fused order is kept.
func (n *Nodes) Rerank(ctx context.Context, s state.RAG) (state.RAG, error) {
	if s.Plan == nil {
		return s, errNoPlan(NodeRerank)
	}
	keep := s.Plan.FinalContextTopN
	if !s.Plan.Rerank || n.p.Reranker == nil {
		s.Docs = firstN(preferTable(&s, s.Candidates), keep)
		return s, nil
	}
	rctx, cancel := withTimeout(ctx, n.cfg.RerankTimeout)
	defer cancel()
	start := time.Now()
	out := rerank.Safe(rctx, n.p.Reranker, s.Query.Text, preferTable(&s, s.Candidates), keep)
	if ctx.Err() != nil {
		return s, ctx.Err()
	}
	s.Rerank = state.RerankInfo{Reranker: out.Reranker, Fallback: out.Fallback}
	t := state.SubTask{Node: NodeRerank, Kind: "rerank", Task: "rerank " + out.Reranker, Input: s.Question, Query: s.Query.Text,
		Hits: len(out.Hits), Status: state.StatusOK, Took: time.Since(start)}
	if out.Fallback {
		s.Rerank.Cause = out.Cause.Error()
		s.Warn(NodeRerank, KindOf(out.Cause), out.Cause)
		t.Status, t.Err = state.StatusFallback, out.Cause.Error()
	}
	if len(out.Hits) > 0 {
		t.IDs = make([]string, 0, len(out.Hits))
	}
	for _, h := range out.Hits {
		t.IDs = append(t.IDs, h.Chunk.ID)
	}
	s.Log(t)
	s.Docs = out.Hits
	trace.SpanFromContext(ctx).SetAttributes(attribute.String("adaptrag.reranker", out.Reranker), attribute.Bool("adaptrag.rerank.fallback", out.Fallback))
	return s, nil
}

// Evidence decides which passages the answer may use, in this order:
//
//  1. the pool: the reranked passages when a rerank ran, else the dense
//     candidates joined with the FAQ hits by reciprocal rank (so neither
//     collection's score scale dominates), else the FAQ hits alone;
//  2. relevance: each passage gets a calibrated relevance (0..1, the same
//     scale whatever found it) and those below the plan's
//     min_context_score are dropped;
//  3. table preference (prefer_table): table rows move ahead of text;
//  4. size: at most final_context_top_n passages, each cut to
//     max_context_doc_chars, max_context_chars in all.
//
// An empty result means the knowledge base has nothing relevant: the answer
// will say so rather than guess.
func (n *Nodes) Evidence(ctx context.Context, s state.RAG) (state.RAG, error) {
	if s.Plan == nil {
		return s, errNoPlan(NodeEvidence)
	}
	pl := s.Plan
	pool := s.Docs
	// own: pool may be changed in place. The node reads its input only
	// (graph.ReadsInput): s.Docs, the candidates and the FAQ hits are the
	// engine's, so only a fused pool is its own.
	own := false
	switch {
	case len(pool) > 0:
	case len(s.Candidates) > 0 && len(s.FAQ) > 0:
		pool, own = fuse(firstN(s.Candidates, pl.FinalContextTopN), firstN(s.FAQ, pl.FinalContextTopN)), true
	case len(s.Candidates) > 0:
		pool, own = s.Candidates, false
	default:
		pool, own = s.FAQ, false
	}
	start := time.Now()
	in := len(pool)
	t := state.SubTask{Node: NodeEvidence, Kind: "evidence", Task: "relevance and size", Input: s.Question, Query: s.Query.Text, Status: state.StatusOK}
	if n.p.Calibrator != nil && len(pool) > 0 {
		if !own {
			pool, own = slices.Clone(pool), true
		}
		err := n.p.Calibrator.Calibrate(ctx, s.Query.Text, pool)
		if err == nil {
			err = checkRelevance(pool)
		}
		if err != nil {
			if ctx.Err() != nil {
				return s, ctx.Err()
			}
			// Without relevance no floor can act: keep the passages, say so.
			for i := range pool {
				pool[i].Relevance = 0
			}
			s.Warn(NodeEvidence, KindOf(err), fmt.Errorf("relevance not computed, no floor applied: %w", err))
			t.Status, t.Err = state.StatusFallback, err.Error()
		} else {
			pool = slices.DeleteFunc(pool, func(h retrieval.Hit) bool { return h.Relevance < pl.MinContextScore })
		}
	}
	if pool = preferTable(&s, pool); own && pl.FinalContextTopN >= 0 {
		pool = pool[:min(len(pool), pl.FinalContextTopN)]
	} else {
		pool = firstN(pool, pl.FinalContextTopN)
	}
	// Looked-up records are exact facts the chain found: they come first
	// and are not counted against the passage limit.
	s.Docs = capChars(recordsAsEvidence(&s, pool), pl.MaxContextDocChars, pl.MaxContextChars)
	t.Hits, t.Took = len(s.Docs), time.Since(start)
	// As fmt's "kept %d of %d passages (relevance >= %.2f)", without its
	// formatting machinery on every run.
	t.Task = "kept " + strconv.Itoa(len(s.Docs)) + " of " + strconv.Itoa(in) + " passages (relevance >= " +
		strconv.FormatFloat(pl.MinContextScore, 'f', 2, 64) + ")"
	if len(s.Docs) > 0 {
		t.IDs = make([]string, 0, len(s.Docs))
	}
	for _, h := range s.Docs {
		t.IDs = append(t.IDs, h.Chunk.ID)
	}
	if len(s.Docs) == 0 && t.Status == state.StatusOK {
		t.Status = state.StatusEmpty
	}
	s.Log(t)
	trace.SpanFromContext(ctx).SetAttributes(attribute.Int("adaptrag.evidence.in", in), attribute.Int("adaptrag.evidence.kept", len(s.Docs)))
	return s, nil
}

// checkRelevance refuses a calibrator's answer outside [0, 1] (NaN
// included, which no floor would drop).
func checkRelevance(hits []retrieval.Hit) error {
	for i, h := range hits {
		if !(h.Relevance >= 0 && h.Relevance <= 1) {
			return fmt.Errorf("calibrator gave hit %d (%q) relevance %v, outside [0, 1]: %w", i, h.Chunk.ID, h.Relevance, retrieval.ErrInvalid)
		}
	}
	return nil
}

// RouteAfterEvidence is the router after NodeEvidence: LabelDone for a
// search-only run, else LabelAnswer.
func RouteAfterEvidence(s state.RAG) string {
	if s.SearchOnly {
		return LabelDone
	}
	return LabelAnswer
}

// fuse joins ranked lists by reciprocal rank (so that no list's score scale
// dominates); the fused hits' method says so.
func fuse(lists ...[]retrieval.Hit) []retrieval.Hit {
	out := retrieval.FuseRRF(0, lists...)
	for i := range out {
		out[i].Method = retrieval.MethodRRF
	}
	return out
}

// preferTable moves table rows ahead of text when the plan prefers tables,
// keeping the order within each kind; otherwise it returns hits as they are.
func preferTable(s *state.RAG, hits []retrieval.Hit) []retrieval.Hit {
	if s.Plan == nil || !s.Plan.PreferTable {
		return hits
	}
	out := slices.Clone(hits)
	slices.SortStableFunc(out, func(a, b retrieval.Hit) int {
		at, bt := a.Chunk.ContentType == retrieval.ContentTableRow, b.Chunk.ContentType == retrieval.ContentTableRow
		switch {
		case at && !bt:
			return -1
		case bt && !at:
			return 1
		}
		return 0
	})
	return out
}

// capChars cuts each passage to perDoc characters and stops adding passages
// once total would be exceeded (the first passage is always kept).
func capChars(hits []retrieval.Hit, perDoc, total int) []retrieval.Hit {
	if len(hits) == 0 {
		return hits
	}
	out := make([]retrieval.Hit, 0, len(hits))
	used := 0
	for _, h := range hits {
		size := utf8.RuneCountInString(h.Chunk.Text)
		if perDoc > 0 && size > perDoc {
			h.Chunk.Text = truncateRunes(h.Chunk.Text, perDoc)
			size = perDoc + 1 // the ellipsis
		}
		if total > 0 && len(out) > 0 && used+size > total {
			break
		}
		used += size
		out = append(out, h)
	}
	return out
}

func truncateRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}

// firstN returns the first n hits (all when n < 0) in a slice of its own.
func firstN(h []retrieval.Hit, n int) []retrieval.Hit {
	if n >= 0 && len(h) > n {
		h = h[:n]
	}
	return slices.Clone(h)
}

// errNoPlan reports a retrieval node reached without a plan: the graph was
// rewired so that the plan node no longer runs before it.
func errNoPlan(node string) error {
	return fmt.Errorf("%s: %w", node, ErrNoPlan)
}

// ErrNoPlan reports a retrieval node run before the plan node.
var ErrNoPlan = errors.New("adaptrag: retrieval node reached without a plan (the plan node must run first)")
