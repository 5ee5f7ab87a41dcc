package nodes

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/adaptrag/adaptrag/graph"
	"github.com/adaptrag/adaptrag/state"
)

// Fork is the node the parts fan out from: one branch per part (see
// SplitParts and MergeParts).
func (n *Nodes) Fork(ctx context.Context, s state.RAG) (state.RAG, error) {
	trace.SpanFromContext(ctx).SetAttributes(attribute.Int("adaptrag.parts", len(s.Parts)))
	return s, nil
}

// SplitParts is the split function of the parts map: one state per part,
// each asking its own sub-question, with the run's plan and conversation.
// A part only retrieves (its answer is the whole question's), so its state
// is search-only: an FAQ entry that matches it is evidence, not a reply.
func SplitParts(s state.RAG) []state.RAG {
	out := make([]state.RAG, len(s.Parts))
	for i, p := range s.Parts {
		sub := state.RAG{
			Question: p.Question, History: s.History, Source: s.Source, SearchOnly: true, Adjust: s.Adjust,
			Query:    state.Query{Text: p.Question, Entities: s.Query.Entities},
			Decision: s.Decision, Route: s.Route,
			Parts: []state.Part{p},
		}
		out[i] = sub
	}
	return out
}

// Part returns the node that answers one sub-question's retrieval in its
// own branch: it profiles and plans the sub-question, then runs retrieve
// (the graph's own retrieval stretch, from the FAQ search to the evidence,
// with its timeouts, retries and any edits) and keeps the evidence, so
// that each part is retrieved and cited apart. retrieve is called at run
// time, so it may be set after the node is added.
func (n *Nodes) Part(retrieve func() graph.NodeFunc[state.RAG]) graph.NodeFunc[state.RAG] {
	return func(ctx context.Context, s state.RAG) (state.RAG, error) {
		return n.part(ctx, s, retrieve())
	}
}

func (n *Nodes) part(ctx context.Context, s state.RAG, retrieve graph.NodeFunc[state.RAG]) (state.RAG, error) {
	if len(s.Parts) != 1 {
		return s, fmt.Errorf("%s: a part state carries one part, got %d", NodePart, len(s.Parts))
	}
	if retrieve == nil {
		return s, fmt.Errorf("%s: no retrieval for the parts: %w", NodePart, ErrConfig)
	}
	start := time.Now()
	var err error
	if s, err = n.Classify(ctx, s); err != nil {
		return s, err
	}
	if s.Route.QueryType == "chitchat" {
		// A part of a real question is never small talk: search it.
		s.Route.QueryType = "factual"
	}
	if s, err = n.Plan(ctx, s); err != nil {
		return s, err
	}
	if s, err = retrieve(ctx, s); err != nil {
		return s, err
	}
	if len(s.Parts) != 1 {
		return s, fmt.Errorf("%s: the retrieval left %d parts in a part state, want 1", NodePart, len(s.Parts))
	}
	p := &s.Parts[0]
	p.Route, p.Status = s.Route.QueryType, state.StatusOK
	if len(s.Docs) == 0 {
		p.Status = state.StatusEmpty
	}
	for _, h := range s.Docs {
		p.Evidence = append(p.Evidence, h.Chunk.ID)
	}
	s.Log(state.SubTask{Node: NodePart, Kind: "subquestion", Task: fmt.Sprintf("part %d", p.N), Input: p.Question, Query: s.Query.Text,
		Hits: len(s.Docs), IDs: p.Evidence, Status: p.Status, Took: time.Since(start)})
	trace.SpanFromContext(ctx).SetAttributes(attribute.Int("adaptrag.part", p.N), attribute.Int("adaptrag.part.evidence", len(s.Docs)))
	return s, nil
}

// Passages is the evidence stage (NodePassages): the run's final passages,
// from the single-query path or the parts, pass through it before the
// answer or the end of a search-only run. It changes nothing itself; the
// nodes inserted before it do.
func (n *Nodes) Passages(ctx context.Context, s state.RAG) (state.RAG, error) {
	trace.SpanFromContext(ctx).SetAttributes(attribute.Int("adaptrag.evidence.kept", len(s.Docs)))
	return s, nil
}

// MergeParts joins the parts' branches: their evidence in part order (a
// passage two parts share is kept once, under the first), their parts,
// sub-tasks, warnings and usage.
func MergeParts(base state.RAG, parts []state.RAG) (state.RAG, error) {
	base.Parts, base.Docs, base.Candidates = nil, nil, nil
	seen := map[string]bool{}
	for _, p := range parts {
		if len(p.Parts) == 1 {
			part := p.Parts[0]
			part.Evidence = nil
			for _, h := range p.Docs {
				if !seen[h.Chunk.ID] {
					seen[h.Chunk.ID] = true
					base.Docs = append(base.Docs, h)
				}
				part.Evidence = append(part.Evidence, h.Chunk.ID)
			}
			base.Parts = append(base.Parts, part)
		}
		base.Candidates = append(base.Candidates, p.Candidates...)
		base.SubTasks = append(base.SubTasks, p.SubTasks...)
		base.Warnings = append(base.Warnings, p.Warnings...)
		base.Usage = append(base.Usage, p.Usage...)
		if base.Plan == nil && p.Plan != nil {
			pl := *p.Plan
			base.Plan = &pl
		}
	}
	return base, nil
}

// Combine is the join of the parts map: the merge has already gathered the
// parts' evidence; it records the outcome on the span.
func (n *Nodes) Combine(ctx context.Context, s state.RAG) (state.RAG, error) {
	trace.SpanFromContext(ctx).SetAttributes(attribute.Int("adaptrag.parts", len(s.Parts)), attribute.Int("adaptrag.evidence.kept", len(s.Docs)))
	return s, nil
}
