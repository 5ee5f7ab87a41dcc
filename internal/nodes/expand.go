package nodes

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/adaptrag/adaptrag/query"
	"github.com/adaptrag/adaptrag/state"
)

// DefaultMaxVariants bounds the phrasings a multi-query search sends, the
// original included.
const DefaultMaxVariants = 3

// Expand prepares extra search keys when the plan asks for them: query
// variants (multi-query; the original is always one of them, and variants
// that differ in an entity or a number are never merged) and, when HyDE is
// on and a model is configured, a hypothetical passage used only as a
// search key. Variants from a model and the hypothetical passage are
// checked: one that drops, swaps or adds an entity or number is not used.
func (n *Nodes) Expand(ctx context.Context, s state.RAG) (state.RAG, error) {
	if s.Plan != nil && s.Plan.UseQueryVariants {
		// The history's search keys (a kept follow-up) stay first.
		s.Query.Variants = append(s.Query.Variants, n.variants(ctx, &s)...)
	}
	if n.cfg.HyDE && n.hyde != nil {
		start := time.Now()
		hctx, cancel := withTimeout(ctx, n.cfg.RewriteTimeout)
		text, err := n.hyde.Hypothetical(hctx, s.Query.Text)
		cancel()
		if ctx.Err() != nil {
			return s, ctx.Err()
		}
		t := state.SubTask{Node: NodeExpand, Kind: "hyde", Task: "hypothetical passage", Input: s.Question, Query: text, Status: state.StatusOK, Took: time.Since(start)}
		if err != nil {
			t.Status, t.Err = rewriteStatus(err), err.Error()
			s.Warn(NodeExpand, KindOf(err), fmt.Errorf("hypothetical passage not used: %w", err))
		} else {
			s.Query.HyDE = text
		}
		s.Log(t)
	}
	trace.SpanFromContext(ctx).SetAttributes(attribute.Int("adaptrag.query.variants", len(s.Query.Variants)), attribute.Bool("adaptrag.query.hyde", s.Query.HyDE != ""))
	return s, nil
}

// variants returns the alternative phrasings to search besides the query
// itself: from the model when one is configured (checked), else the
// offline rewordings.
func (n *Nodes) variants(ctx context.Context, s *state.RAG) []string {
	max := n.cfg.MaxVariants
	start := time.Now()
	var vs []string
	src := "offline"
	if n.hyde != nil && n.cfg.ModelVariants {
		vctx, cancel := withTimeout(ctx, n.cfg.RewriteTimeout)
		got, err := n.hyde.Variants(vctx, s.Query.Text, max)
		cancel()
		if err == nil {
			vs, src = got, "model"
		} else if ctx.Err() == nil {
			s.Warn(NodeExpand, KindOf(err), fmt.Errorf("model variants not used: %w", err))
		}
	}
	if vs == nil {
		// Offline variants start with the query and are deduplicated
		// already: deduplicating them again behind the query would keep
		// the same list.
		vs = query.Variants(s.Query.Text, max)
	} else {
		vs = query.Dedupe(append([]string{s.Query.Text}, vs...))
	}
	var out []string
	for _, v := range vs {
		if v != s.Query.Text {
			out = append(out, v)
		}
	}
	if len(out) > max-1 {
		out = out[:max-1]
	}
	s.Log(state.SubTask{Node: NodeExpand, Kind: "variants", Task: "variants " + src, Input: s.Question, Query: fmt.Sprint(out), Hits: len(out), Status: state.StatusOK, Took: time.Since(start)})
	return out
}
