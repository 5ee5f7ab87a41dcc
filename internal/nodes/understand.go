package nodes

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/adaptrag/adaptrag/query"
	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/state"
)

// Ambiguity says what a run does with a reference that has several
// candidates ("这个" after P-204 and P-205 were both mentioned).
type Ambiguity string

// Ambiguity policies.
const (
	// AmbiguityClarify retrieves nothing and asks which candidate was meant
	// (the default).
	AmbiguityClarify Ambiguity = "clarify"
	// AmbiguitySearchEach retrieves for every candidate and keeps their
	// evidence apart, one part per candidate.
	AmbiguitySearchEach Ambiguity = "search_each"
)

// Understand turns the question into the standalone query retrieval uses:
// a follow-up that refers back or elides its topic is rewritten from the
// history (what each reference was resolved to is recorded), its entities
// are extracted with their roles, and a reference with several candidates
// either stops the run to ask back (AmbiguityClarify) or becomes one part
// per candidate (AmbiguitySearchEach). A compound question is split into
// independent parts. A rewrite that fails (a model that errs or whose
// output fails validation) keeps the original question, with the error
// recorded. Small talk is left alone.
func (n *Nodes) Understand(ctx context.Context, s state.RAG) (state.RAG, error) {
	start := time.Now()
	rw, err := n.rewrite(ctx, &s)
	if err != nil && ctx.Err() != nil {
		return s, ctx.Err()
	}
	s.Query.Text = rw.Text
	s.Query.Rewritten = rw.Rewritten
	s.Query.FollowUp = rw.FollowUp
	s.Query.Resolved, s.Query.Unresolved, s.Query.Entities = rw.Resolved, rw.Unresolved, rw.Entities
	s.Query.Variants = append(s.Query.Variants[:0:0], rw.Variants...)
	s.Query.Shape = query.ShapeOf(rw.Text)
	t := state.SubTask{Node: NodeUnderstand, Kind: "rewrite", Task: "rewrite " + rw.Rule, Input: s.Question, Query: rw.Text,
		Status: state.StatusOK, Took: time.Since(start)}
	if err != nil {
		t.Status, t.Err = rewriteStatus(err), err.Error()
		s.Warn(NodeUnderstand, KindOf(err), err)
	}
	s.Log(t)
	span := trace.SpanFromContext(ctx)
	span.SetAttributes(attribute.Bool("adaptrag.query.rewritten", rw.Rewritten), attribute.Int("adaptrag.query.entities", len(rw.Entities)))
	if rw.Clarify != nil {
		if n.cfg.Ambiguity == AmbiguitySearchEach {
			for i, c := range rw.Clarify.Candidates {
				q := substitute(s.Question, rw.Clarify.Mention, c)
				s.Parts = append(s.Parts, state.Part{N: i + 1, Question: q, Candidate: c})
			}
			span.SetAttributes(attribute.Int("adaptrag.query.parts", len(s.Parts)))
			return s, nil
		}
		s.Clarify = rw.Clarify
		span.SetAttributes(attribute.String("adaptrag.query.clarify", rw.Clarify.Mention))
		return s, nil
	}
	for _, r := range n.lookupIDs(&s) {
		s.Lookups = append(s.Lookups, r.kind+":"+r.id)
	}
	if t, ok := n.p.Lookup.(totalFinder); ok {
		// The tables decide what is a total: "how many shipments ..." is
		// one, "how much is bill BL-7005" a look-up.
		switch total := t.IsTotal(s.Query.Text); {
		case total && len(s.Lookups) == 0:
			s.Query.Shape.Aggregate = true
		case !total && len(s.Lookups) > 0:
			s.Query.Shape.Aggregate = false
		}
	}
	if len(s.Lookups) == 0 {
		if kind := n.askFor(&s); kind != "" {
			s.AskFor = kind
			return s, nil
		}
	}
	if parts := query.SplitWith(query.StandIn(n.p.Rewriter).VocabFor(ctx), rw.Text); len(parts) >= 2 && len(s.Lookups) == 0 {
		for i, q := range parts {
			s.Parts = append(s.Parts, state.Part{N: i + 1, Question: q})
		}
		span.SetAttributes(attribute.Int("adaptrag.query.parts", len(s.Parts)))
	}
	return s, nil
}

// rewrite runs the configured rewriter; when it fails, the offline rules
// stand in (they never fail), and the error is returned for the record.
func (n *Nodes) rewrite(ctx context.Context, s *state.RAG) (query.Rewrite, error) {
	if n.p.Rewriter == nil {
		return query.Offline{}.Rewrite(ctx, s.Question, s.History)
	}
	rctx, cancel := withTimeout(ctx, n.cfg.RewriteTimeout)
	defer cancel()
	rw, err := n.p.Rewriter.Rewrite(rctx, s.Question, s.History)
	if err == nil {
		return rw, nil
	}
	off, oerr := query.StandIn(n.p.Rewriter).Rewrite(ctx, s.Question, s.History)
	if oerr != nil {
		off = query.Rewrite{Text: s.Question, Rule: "original"}
	}
	return off, fmt.Errorf("rewrite failed, kept the offline rewrite: %w", err)
}

func rewriteStatus(err error) state.Status {
	switch {
	case errors.Is(err, query.ErrRewriteRejected):
		return state.StatusRejected
	case KindOf(err) == state.KindTimeout:
		return state.StatusTimeout
	}
	return state.StatusFallback
}

// substitute replaces the first occurrence of mention in q by value, or
// puts value before q when mention does not occur.
func substitute(q, mention, value string) string {
	if mention != "" && strings.Contains(q, mention) {
		return strings.Replace(q, mention, value, 1)
	}
	return value + " " + q
}

// RouteAfterUnderstand is the router after NodeUnderstand: LabelClarify
// when the run must ask back, else LabelGo.
func RouteAfterUnderstand(s state.RAG) string {
	if s.Clarify != nil || s.AskFor != "" {
		return LabelClarify
	}
	return LabelGo
}

// ClarifyNode asks back instead of guessing: it names every candidate of
// the ambiguous reference, or asks for the id of the record the question
// refers to. Nothing is retrieved.
func (n *Nodes) ClarifyNode(_ context.Context, s state.RAG) (state.RAG, error) {
	t := n.cfg.Texts.lang(runLang(&s))
	if s.AskFor != "" && s.Clarify == nil {
		s.Answer, s.AnsweredBy = strings.ReplaceAll(t.AskEntity, "{kind}", n.kindLabel(s.AskFor, runLang(&s))), state.ByAskEntity
		return s, nil
	}
	if s.Clarify == nil {
		return s, fmt.Errorf("%s: nothing to clarify: %w", NodeClarify, retrieval.ErrInvalid)
	}
	sep := "、"
	if runLang(&s) == "en" {
		sep = ", "
	}
	s.Answer = strings.NewReplacer("{mention}", s.Clarify.Mention, "{candidates}", strings.Join(s.Clarify.Candidates, sep)).Replace(t.Clarify)
	s.AnsweredBy = state.ByClarify
	return s, nil
}

// kindLabel is the word for a record kind in lang: the first of its
// aliases written in that language, else its name.
func (n *Nodes) kindLabel(kind, lang string) string {
	for _, k := range n.p.Lookup.Kinds() {
		if k.Name != kind {
			continue
		}
		for _, a := range k.Aliases {
			if langOf(a) == lang {
				return a
			}
		}
	}
	return kind
}
