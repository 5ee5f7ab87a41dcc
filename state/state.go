// Package state defines RAG, the state that flows through the adaptive
// pipeline's graph. Each node reads what earlier nodes wrote and adds its
// own part; nothing is stored anywhere else, so a finished state is the
// whole record of a turn: the question, how it was routed and why, what was
// retrieved, the answer with its citations, and what each node cost.
//
// RAG is a value: nodes receive a copy and return the updated copy. Slices
// are shared between copies, so nodes append with slices.Clip (or the helper
// methods here) rather than writing into a slice they did not create.
package state

import (
	"slices"
	"time"

	"github.com/adaptrag/adaptrag/plan"
	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/router"
)

// RAG is the state of one question's run through the adaptive graph.
type RAG struct {
	// Inputs, set by the caller.
	Question string
	History  []string        // earlier user turns, oldest first
	Scope    retrieval.Scope // the caller's tenant; never taken from a model
	Source   string          // a source the caller selected ("" for any)

	// Query is the question as retrieval will use it. Query understanding
	// (rewrite, variants, decomposition) fills it; until then it holds the
	// question unchanged.
	Query Query

	// Decision is the seed-000 route decision taken before any retrieval.
	Decision plan.RouteDecision
	// Intent and Plan are the seed-000 intent and retrieval plan (nil when
	// the run was answered directly or as chitchat).
	Intent *plan.IntentResult
	Plan   *plan.RetrievalPlan

	// Route is the seed-002 routing outcome, fallback included.
	Route Route
	// Strategy is the retrieval strategy the route selected, as resolved
	// from the strategy table and the plan.
	Strategy Strategy

	// FAQ holds the FAQ hits, Candidates the document hits before rerank,
	// and Docs the passages given to generation, best first.
	FAQ        []retrieval.Hit
	Candidates []retrieval.Hit
	Docs       []retrieval.Hit
	// Rerank reports how the rerank stage went (zero when it did not run).
	Rerank RerankInfo

	// Answer is the reply; Citations refer to Docs by number.
	Answer    string
	Citations []Citation
	// AnsweredBy says which node produced the answer: "direct", "chitchat",
	// "faq", "generate" or "extractive".
	AnsweredBy string

	// Usage holds one entry per node execution, in order.
	Usage []Usage
	// Errors holds the failures the run absorbed (a classifier that fell
	// back, a reranker that failed open); a failure that stops the run is
	// returned as an error instead.
	Errors []NodeError
	// Log holds one entry per sub-task (a search leg, a model call), for
	// diagnosing a wrong answer.
	Log []SubTask
}

// Query is the retrieval form of a question. Fields beyond Text are filled
// by query-understanding nodes.
type Query struct {
	Text      string   `json:"text"`                // what retrieval searches for
	Rewritten bool     `json:"rewritten,omitempty"` // Text differs from the question
	Variants  []string `json:"variants,omitempty"`  // alternative phrasings, searched too
	// Resolved records what an ambiguous reference was resolved to, and
	// from which turn, so a wrong rewrite can be traced.
	Resolved map[string]string `json:"resolved,omitempty"`
	// Vector is Text's embedding once a node has computed it, so that the
	// FAQ and document searches embed the query once; VectorText is the
	// text it was made from (a rewrite invalidates it).
	Vector     []float32 `json:"-"`
	VectorText string    `json:"-"`
}

// Route is where the router sent the question and why.
type Route struct {
	QueryType  string          `json:"query_type"` // chitchat, factual or analytical: the route taken
	Complexity string          `json:"complexity"`
	Confidence float64         `json:"confidence"`
	Reason     string          `json:"reason"`
	Fallback   bool            `json:"fallback"`          // the route is the conservative default
	Cause      string          `json:"cause,omitempty"`   // why it fell back
	Classifier string          `json:"classifier"`        // "offline", "llm", or "" when it failed
	Profile    *router.Profile `json:"profile,omitempty"` // the classifier's output, if any
}

// Strategy is what the retrieval stage does for a route. See
// nodes.StrategyTable for the defaults.
type Strategy struct {
	Mode       string `json:"mode"`       // "none", "dense" or "hybrid"
	Candidates int    `json:"candidates"` // hits fetched (per leg for hybrid)
	Rerank     bool   `json:"rerank"`     // rerank the candidates
	Context    int    `json:"context"`    // passages kept for generation
}

// RerankInfo reports the rerank stage.
type RerankInfo struct {
	Reranker string `json:"reranker"`
	Fallback bool   `json:"fallback"`        // the fused order was kept
	Cause    string `json:"cause,omitempty"` // why
}

// Citation ties a numbered marker in the answer to a passage.
type Citation struct {
	N      int    `json:"n"` // the [n] marker
	ID     string `json:"id"`
	Source string `json:"source"`
	Title  string `json:"title"`
}

// Usage is the cost of one node execution.
type Usage struct {
	Node         string        `json:"node"`
	Duration     time.Duration `json:"-"`
	Ms           float64       `json:"ms"`
	InputTokens  int           `json:"tokens_in"`
	OutputTokens int           `json:"tokens_out"`
}

// NodeError is a failure the run recovered from.
type NodeError struct {
	Node string `json:"node"`
	Err  string `json:"error"`
	// Kind classifies the failure: "timeout", "unavailable", "invalid",
	// "refused" or "error". A timeout is never folded into another kind.
	Kind string `json:"kind"`
}

// SubTask is one log line of a sub-task.
type SubTask struct {
	Node   string        `json:"node"`
	Task   string        `json:"task"`             // e.g. "dense docs", "faq", "llm classify"
	Query  string        `json:"query,omitempty"`  // the text searched or sent
	Filter string        `json:"filter,omitempty"` // the filter applied, rendered
	Hits   int           `json:"hits"`
	Status string        `json:"status"` // "ok", "empty", "timeout", "error"
	Took   time.Duration `json:"-"`
	Err    string        `json:"error,omitempty"`
}

// AddError records an absorbed failure.
func (s *RAG) AddError(node, kind string, err error) {
	s.Errors = append(slices.Clip(s.Errors), NodeError{Node: node, Err: err.Error(), Kind: kind})
}

// AddLog records a sub-task.
func (s *RAG) AddLog(t SubTask) {
	s.Log = append(slices.Clip(s.Log), t)
}

// TotalTokens sums the tokens of every node.
func (s *RAG) TotalTokens() (in, out int) {
	for _, u := range s.Usage {
		in += u.InputTokens
		out += u.OutputTokens
	}
	return in, out
}
