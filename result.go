package adaptrag

import (
	"github.com/adaptrag/adaptrag/graph"
	"github.com/adaptrag/adaptrag/internal/nodes"
	"github.com/adaptrag/adaptrag/plan"
	"github.com/adaptrag/adaptrag/query"
	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/state"
)

// Result is the outcome of a run in its structured form: the answer with
// its citations, the evidence, the route and plan that produced them, and
// what the run cost.
//
// Result is the internal record: its fields follow the packages that
// compute a run and may change with them. The stable wire format is
// package api; V1 converts a Result to it. Result marshals to the debug
// record of a v1 response (api.Response.Debug, asked for with "debug":
// true or "adaptrag ask --json --debug").
type Result struct {
	Question   string             `json:"question"`
	Query      Query              `json:"query"`
	Decision   plan.Decision      `json:"decision"`
	Route      state.Route        `json:"route"`
	Intent     *plan.IntentResult `json:"intent,omitempty"`
	Plan       *plan.Plan         `json:"plan,omitempty"`
	Path       []string           `json:"path"` // the nodes the run took, in order
	Docs       []Passage          `json:"docs"` // the evidence, best first; citations number into it
	Answer     string             `json:"answer"`
	AnsweredBy state.AnsweredBy   `json:"answered_by"`
	Citations  []state.Citation   `json:"citations"`
	// Clarify names the ambiguous reference and its candidates when the
	// run asked back instead of guessing.
	Clarify *query.Clarify `json:"clarify,omitempty"`
	// Parts are the independent sub-questions, each retrieved and cited
	// apart; Hops the steps of a dependent chain; Aggregate a total or
	// count computed over every matching record.
	Parts     []state.Part         `json:"parts,omitempty"`
	Hops      []state.Hop          `json:"hops,omitempty"`
	Aggregate *retrieval.Aggregate `json:"aggregate,omitempty"`
	Rerank    *state.RerankInfo    `json:"rerank,omitempty"`
	SubTasks  []state.SubTask      `json:"subtasks"`
	Warnings  []state.Warning      `json:"warnings"`
	Usage     Usage                `json:"usage"`
	TraceID   string               `json:"trace_id,omitempty"`

	// Debug holds what only debugging needs: the path's edges and the
	// final state.
	Debug Debug `json:"-"`
}

// Debug is the part of a Result for debugging and diagrams.
type Debug struct {
	// Steps is the path with its edges, to highlight the run on a diagram
	// (Pipeline.Diagram().Mermaid(&res.Debug.Steps)).
	Steps graph.Path
	// State is the final state, with everything the nodes recorded.
	State state.RAG
}

// Query is the question as retrieval used it, with the caller's scope:
// the standalone text, whether it was rewritten from the conversation,
// what each reference was resolved to (and from which turn), references
// left unresolved, the entities with their roles, the variants searched.
// Scope is the caller's and no model output can set it.
type Query struct {
	Text       string             `json:"text"`
	Rewritten  bool               `json:"rewritten"`
	FollowUp   bool               `json:"follow_up"`
	Resolved   []query.Resolution `json:"resolved"`
	Unresolved []string           `json:"unresolved"`
	Entities   []query.Entity     `json:"entities"`
	Variants   []string           `json:"variants"`
	Scope      Scope              `json:"scope"`
}

// Scope is the caller's authority as a run saw it.
type Scope struct {
	Tenant string `json:"tenant"`
	Actor  string `json:"actor,omitempty"`
}

// Passage is one piece of evidence with its provenance.
type Passage struct {
	N           int              `json:"n"` // its [n] marker in the answer
	ID          string           `json:"id"`
	Collection  string           `json:"collection"` // "docs" or "faq"
	Origin      string           `json:"origin"`     // the file (relative to the ingested folder) or URL
	Locator     string           `json:"locator"`    // where in it: heading path, row, record id
	Source      string           `json:"source"`
	Title       string           `json:"title"`
	ContentType string           `json:"content_type"`
	Method      retrieval.Method `json:"method"`    // what found it, and so what Score means
	Score       float64          `json:"score"`     // the method's own score
	Relevance   float64          `json:"relevance"` // calibrated, 0..1, comparable across methods
	Text        string           `json:"text"`
}

// Usage is what a run cost, node by node and in total.
type Usage struct {
	Nodes     []state.Usage `json:"nodes"`
	Ms        float64       `json:"ms"`
	TokensIn  int           `json:"tokens_in"`
	TokensOut int           `json:"tokens_out"`
}

// PassageOf returns hit h as passage [n].
func PassageOf(n int, h retrieval.Hit) Passage {
	c := &h.Chunk
	return Passage{N: n, ID: c.ID, Collection: h.Collection, Origin: c.Meta[retrieval.MetaOrigin], Locator: c.Meta[retrieval.MetaLocator],
		Source: c.Source, Title: c.Title, ContentType: c.ContentType, Method: h.Method, Score: h.Score, Relevance: h.Relevance, Text: c.Text}
}

func newResult(s state.RAG, path graph.Path, c nodes.Caller, traceID string) *Result {
	r := &Result{
		Question: s.Question,
		Query: Query{Text: s.Query.Text, Rewritten: s.Query.Rewritten, FollowUp: s.Query.FollowUp, Resolved: nonNil(s.Query.Resolved),
			Unresolved: nonNil(s.Query.Unresolved), Entities: nonNil(s.Query.Entities), Variants: nonNil(s.Query.Variants),
			Scope: Scope{Tenant: c.Scope.Tenant, Actor: c.Actor}},
		Clarify: s.Clarify, Parts: s.Parts, Hops: s.Hops, Aggregate: s.Aggregate,
		Decision: s.Decision, Route: s.Route, Intent: s.Intent, Plan: s.Plan,
		Path: nonNil(path.Nodes), Docs: []Passage{}, Answer: s.Answer, AnsweredBy: s.AnsweredBy,
		Citations: nonNil(s.Citations), SubTasks: nonNil(s.SubTasks), Warnings: nonNil(s.Warnings),
		Usage: Usage{Nodes: nonNil(s.Usage)}, TraceID: traceID, Debug: Debug{Steps: path, State: s},
	}
	if s.SearchOnly && r.AnsweredBy == "" {
		r.AnsweredBy = state.BySearch
	}
	if s.Rerank.Reranker != "" {
		rr := s.Rerank
		r.Rerank = &rr
	}
	for i, h := range s.Docs {
		r.Docs = append(r.Docs, PassageOf(i+1, h))
	}
	for _, u := range s.Usage {
		r.Usage.Ms += u.Ms
		r.Usage.TokensIn += u.InputTokens
		r.Usage.TokensOut += u.OutputTokens
	}
	return r
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
