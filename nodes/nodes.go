// Package nodes names the nodes and edge labels of the adaptive graph, for
// applications that edit it through adaptrag.Options.Graph: replacing the
// dense search, inserting a node at the evidence stage, or rerouting an
// edge needs the names the default graph uses. The node functions
// themselves are internal to the module; a custom node is any
// graph.NodeFunc[state.RAG].
package nodes

// Node names of the adaptive graph.
const (
	NodeDecide     = "decide"     // input checks and the decision: direct answer or retrieval
	NodeDirect     = "direct"     // the fixed reply of a direct answer
	NodeUnderstand = "understand" // the standalone query: follow-up rewrite, entities, ambiguity, parts
	NodeClarify    = "clarify"    // ask back: which candidate, or which record
	NodeClassify   = "classify"   // the query profile and route
	NodeChitchat   = "chitchat"   // reply without retrieval
	NodePlan       = "plan"       // intent and retrieval plan
	NodeParts      = "parts"      // the fork of independent parts, one branch each
	NodePart       = "part"       // one independent part, retrieved in its own branch
	NodeCombine    = "combine"    // the join of the parts
	NodeHops       = "hops"       // a dependent chain through the structured look-up
	NodeAggregate  = "aggregate"  // a total or count over every matching record
	NodeExpand     = "expand"     // query variants and the hypothetical passage
	NodeFAQ        = "faq"        // FAQ collection search
	NodeFAQAnswer  = "faq_answer" // the FAQ's standard answer
	NodeDense      = "dense"      // dense top-k over documents
	NodeHybrid     = "hybrid"     // dense + BM25 candidates, fused
	NodeRerank     = "rerank"     // rerank candidates down to the passages kept
	NodeEvidence   = "evidence"   // relevance floor and size limits: the passages the answer may use
	NodePassages   = "passages"   // the evidence stage: insert nodes before it to act on the final passages
	NodeGenerate   = "generate"   // answer from the evidence, with citations
)

// NodePassages is where evidence-stage nodes go. Every run that retrieves
// passes through it with its final passages (State.Docs) before the answer
// is written or a search-only run ends: after evidence on the single-query
// path, after combine for a compound question. A node inserted before it
// (Graph.InsertBefore(NodePassages, ...)) therefore runs for Ask, Stream
// and Search alike, and sees a compound question's passages, so it is the
// place to drop a source or redact text. A node inserted before
// NodeGenerate runs only when an answer is generated.
//
// Per-part retrieval (NodePart) runs the graph's own stretch from NodeFAQ
// to NodeEvidence for each part, as edited by Options.Graph: a replaced
// NodeDense, or a node inserted in that stretch, runs for every part.

// Labels of the conditional edges.
const (
	LabelDirect    = "direct"     // after decide: a fixed reply
	LabelRetrieval = "retrieval"  // after decide: go on
	LabelClarify   = "clarify"    // after understand: ask back (several candidates, or a needed id is missing)
	LabelGo        = "go"         // after understand: a standalone query is ready
	LabelParts     = "parts"      // after plan: independent parts, retrieved in parallel
	LabelLookup    = "lookup"     // after plan: a dependent chain through the structured look-up
	LabelAggregate = "aggregate"  // after plan: a total or count over every matching record
	LabelSearch    = "search"     // after plan or hops: one query, the plan's retrieval
	LabelStop      = "stop"       // after hops: a dependent chain stopped, its answer says why
	LabelFAQDirect = "faq_direct" // after faq: an FAQ answers as it is
	LabelAnswer    = "answer"     // after evidence: generate the answer
	LabelDone      = "done"       // after evidence: a search-only run ends
)

// Collections a hit can come from (retrieval.Hit.Collection).
const (
	CollectionDocs   = "docs"   // the document collection
	CollectionFAQ    = "faq"    // the FAQ collection
	CollectionLookup = "lookup" // records of the structured look-up
)
