package adaptrag

import (
	"time"

	"github.com/adaptrag/adaptrag/graph"
	"github.com/adaptrag/adaptrag/nodes"
	"github.com/adaptrag/adaptrag/plan"
	"github.com/adaptrag/adaptrag/router"
	"github.com/adaptrag/adaptrag/state"
)

// defaultGraph wires the adaptive graph:
//
//	decide ─direct→ direct → END
//	   └─retrieval→ classify ─chitchat→ chitchat → END
//	                   └─factual, analytical→ plan → faq ─faq_direct→ faq_answer → END
//	                                                  ├─dense→ dense ─────────────┐
//	                                                  ├─hybrid→ hybrid → rerank ──┤
//	                                                  └─none──────────────────────┴→ evidence ─answer→ generate → END
//	                                                                                          └─done→ END (search only)
func defaultGraph(n *nodes.Nodes, o Options) *Graph {
	retry := graph.WithRetry(graph.RetryPolicy{MaxAttempts: 2, Initial: 100 * time.Millisecond, Retry: nodes.RetryUnavailable})
	search := []graph.NodeOption{graph.WithTimeout(o.RetrieveTimeout), retry}
	g := graph.New[state.RAG]("adaptrag")
	g.AddNode(NodeDecide, n.Decide).
		AddNode(NodeDirect, n.Direct).
		AddNode(NodeClassify, n.Classify).
		AddNode(NodeChitchat, n.Chitchat).
		AddNode(NodePlan, n.Plan).
		AddNode(NodeFAQ, n.FAQ, search...).
		AddNode(NodeFAQAnswer, n.FAQAnswer).
		AddNode(NodeDense, n.Dense, search...).
		AddNode(NodeHybrid, n.Hybrid, search...).
		AddNode(NodeRerank, n.Rerank).
		AddNode(NodeEvidence, n.Evidence).
		AddNode(NodeGenerate, n.Generate)
	g.AddEdge(graph.Start, NodeDecide).
		AddConditionalEdges(NodeDecide, nodes.RouteDecision, map[string]string{
			nodes.LabelDirect: NodeDirect, nodes.LabelRetrieval: NodeClassify,
		}).
		AddEdge(NodeDirect, graph.End).
		AddConditionalEdges(NodeClassify, nodes.RouteProfile, map[string]string{
			string(router.Chitchat): NodeChitchat, string(router.Factual): NodePlan, string(router.Analytical): NodePlan,
		}).
		AddEdge(NodeChitchat, graph.End).
		AddEdge(NodePlan, NodeFAQ).
		AddConditionalEdges(NodeFAQ, nodes.RouteAfterFAQ, map[string]string{
			nodes.LabelFAQDirect: NodeFAQAnswer, string(plan.ModeDense): NodeDense,
			string(plan.ModeHybrid): NodeHybrid, string(plan.ModeNone): NodeEvidence,
		}).
		AddEdge(NodeFAQAnswer, graph.End).
		AddEdge(NodeDense, NodeEvidence).
		AddEdge(NodeHybrid, NodeRerank).
		AddEdge(NodeRerank, NodeEvidence).
		AddConditionalEdges(NodeEvidence, nodes.RouteAfterEvidence, map[string]string{
			nodes.LabelAnswer: NodeGenerate, nodes.LabelDone: graph.End,
		}).
		AddEdge(NodeGenerate, graph.End)
	return g
}
