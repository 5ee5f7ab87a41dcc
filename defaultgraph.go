package adaptrag

import (
	"fmt"
	"time"

	"github.com/adaptrag/adaptrag/graph"
	"github.com/adaptrag/adaptrag/internal/nodes"
	"github.com/adaptrag/adaptrag/plan"
	"github.com/adaptrag/adaptrag/router"
	"github.com/adaptrag/adaptrag/state"
)

// defaultGraph wires the adaptive graph:
//
//	decide ─direct→ direct → END
//	   └─retrieval→ understand ─clarify→ clarify → END
//	                   └─go→ classify ─chitchat→ chitchat → END
//	                            └─factual, analytical→ plan ─parts→ part (one per sub-question, in parallel) → combine ─┐
//	                                                      ├─aggregate→ aggregate → END                                    │
//	                                                      ├─lookup→ hops ─stop→ END                                       │
//	                                                      │            └─search→ expand                                   │
//	                                                      └─search→ expand → faq ─faq_direct→ faq_answer → END            │
//	                                                                           ├─dense→ dense ───────────┐                │
//	                                                                           ├─hybrid→ hybrid → rerank ┤                │
//	                                                                           └─none────────────────────┴→ evidence ─────┴→ passages ─answer→ generate → END
//	                                                                                                                           (search only: ─done→ END)
//
// passages is the evidence stage: both ways to the answer (evidence and
// combine) meet there, and search-only runs end after it. part runs the
// stretch faq … evidence of the final (edited) graph for each part: see
// partRetrieval.
func defaultGraph(n *nodes.Nodes, o Options, parts *partRetrieval) *Graph {
	retry := graph.WithRetry(graph.RetryPolicy{MaxAttempts: 2, Initial: 100 * time.Millisecond, Retry: nodes.RetryUnavailable})
	search := []graph.NodeOption{graph.WithTimeout(o.RetrieveTimeout), retry}
	g := graph.New[state.RAG]("adaptrag")
	g.AddNode(NodeDecide, n.Decide).
		AddNode(NodeDirect, n.Direct).
		AddNode(NodeUnderstand, n.Understand).
		AddNode(NodeClarify, n.ClarifyNode).
		AddNode(NodeClassify, n.Classify).
		AddNode(NodeChitchat, n.Chitchat).
		AddNode(NodePlan, n.Plan).
		AddNode(NodePart, n.Part(parts.get), graph.WithTimeout(2*o.RetrieveTimeout)).
		AddNode(NodeCombine, n.Combine).
		AddNode(NodeAggregate, n.Aggregate, graph.WithTimeout(o.RetrieveTimeout)).
		AddNode(NodeHops, n.Hops, graph.WithTimeout(o.RetrieveTimeout)).
		AddNode(NodeExpand, n.Expand).
		AddNode(NodeFAQ, n.FAQ, search...).
		AddNode(NodeFAQAnswer, n.FAQAnswer).
		AddNode(NodeDense, n.Dense, search...).
		AddNode(NodeHybrid, n.Hybrid, search...).
		// These four only read the large parts of the state (candidates,
		// passages and their metadata): they are handed the engine's
		// state instead of a copy (graph.ReadsInput).
		AddNode(NodeRerank, n.Rerank, graph.ReadsInput()).
		AddNode(NodeEvidence, n.Evidence, graph.ReadsInput()).
		AddNode(NodePassages, n.Passages, graph.ReadsInput()).
		AddNode(NodeGenerate, n.Generate, graph.ReadsInput())
	g.AddEdge(graph.Start, NodeDecide).
		AddConditionalEdges(NodeDecide, nodes.RouteDecision, map[string]string{
			nodes.LabelDirect: NodeDirect, nodes.LabelRetrieval: NodeUnderstand,
		}).
		AddEdge(NodeDirect, graph.End).
		AddConditionalEdges(NodeUnderstand, nodes.RouteAfterUnderstand, map[string]string{
			nodes.LabelClarify: NodeClarify, nodes.LabelGo: NodeClassify,
		}).
		AddEdge(NodeClarify, graph.End).
		AddConditionalEdges(NodeClassify, nodes.RouteProfile, map[string]string{
			string(router.Chitchat): NodeChitchat, string(router.Factual): NodePlan, string(router.Analytical): NodePlan,
		}).
		AddEdge(NodeChitchat, graph.End).
		AddConditionalEdges(NodePlan, nodes.RouteAfterPlan, map[string]string{
			nodes.LabelParts: NodeParts, nodes.LabelAggregate: NodeAggregate,
			nodes.LabelLookup: NodeHops, nodes.LabelSearch: NodeExpand,
		}).
		AddNode(NodeParts, n.Fork).
		AddMap(NodeParts, NodePart, NodeCombine, nodes.SplitParts, nodes.MergeParts).
		AddEdge(NodePart, NodeCombine).
		AddEdge(NodeCombine, NodePassages).
		AddEdge(NodeAggregate, graph.End).
		AddConditionalEdges(NodeHops, nodes.RouteAfterHops, map[string]string{
			nodes.LabelStop: graph.End, nodes.LabelSearch: NodeExpand,
		}).
		AddEdge(NodeExpand, NodeFAQ).
		AddConditionalEdges(NodeFAQ, nodes.RouteAfterFAQ, map[string]string{
			nodes.LabelFAQDirect: NodeFAQAnswer, string(plan.ModeDense): NodeDense,
			string(plan.ModeHybrid): NodeHybrid, string(plan.ModeNone): NodeEvidence,
		}).
		AddEdge(NodeFAQAnswer, graph.End).
		AddEdge(NodeDense, NodeEvidence).
		AddEdge(NodeHybrid, NodeRerank).
		AddEdge(NodeRerank, NodeEvidence).
		AddEdge(NodeEvidence, NodePassages).
		AddConditionalEdges(NodePassages, nodes.RouteAfterEvidence, map[string]string{
			nodes.LabelAnswer: NodeGenerate, nodes.LabelDone: graph.End,
		}).
		AddEdge(NodeGenerate, graph.End)
	return g
}

// partRetrieval holds the per-part retrieval: the stretch NodeFAQ …
// NodeEvidence of the graph as Options.Graph left it, compiled on its own
// and run by NodePart for each part. It is set once in New, before any run.
type partRetrieval struct {
	fn graph.NodeFunc[state.RAG]
}

func (r *partRetrieval) get() graph.NodeFunc[state.RAG] { return r.fn }

// compile builds the per-part retrieval from the edited graph g. A graph
// without the part node needs none; one whose edits removed the stretch's
// ends cannot retrieve parts and is a configuration error.
func (r *partRetrieval) compile(g *Graph, cfg graph.Config[state.RAG]) error {
	if !g.HasNode(NodePart) {
		return nil
	}
	seg, err := g.Segment("adaptrag.part", NodeFAQ, NodeEvidence).Compile(cfg)
	if err != nil {
		return fmt.Errorf("the parts' retrieval (%s … %s): %w", NodeFAQ, NodeEvidence, err)
	}
	r.fn = graph.Subgraph(seg)
	return nil
}
