// Package api defines version 1 of adaptrag's wire format: the bodies the
// HTTP service takes and returns (POST /v1/ask, POST /v1/search, the
// error body), what "adaptrag ask --json" prints, and what integrations
// hand to their clients.
//
// These types are the public contract. They are declared here on their
// own, with no field borrowed from the packages that compute a run, so an
// internal rename never changes what a client reads; a change that would
// break a v1 client gets a new version. Schema returns their JSON Schema
// (served at GET /v1/schema).
//
// The full internal record of a run is not part of the contract: a
// request with "debug": true gets it in Response.Debug, whose shape may
// change with any release.
//
// The package is a leaf: it imports nothing of adaptrag. The conversion
// from a run's result is adaptrag.(*Result).V1.
package api

// Version is the version of the wire format these types describe.
const Version = "v1"

// Response is the result of an ask or a search.
type Response struct {
	// Version is "v1".
	Version string `json:"version" jsonschema:"enum=v1"`
	// RunID names the run for GET /v1/graph?run=RUN_ID (the service sets
	// it; empty elsewhere).
	RunID string `json:"run_id,omitempty"`
	// TraceID is the OpenTelemetry trace of the run, when it was traced.
	TraceID string `json:"trace_id,omitempty"`
	// Question is the question as asked.
	Question string `json:"question"`
	// Query is the question as retrieval used it.
	Query Query `json:"query"`
	// Answer is the reply: its [n] markers cite Passages[n-1]. Empty for
	// a search.
	Answer string `json:"answer"`
	// AnsweredBy says what produced the answer.
	AnsweredBy AnsweredBy `json:"answered_by"`
	// Citations are the passages the answer cites, by marker.
	Citations []Citation `json:"citations"`
	// Passages are the evidence, best first.
	Passages []Passage `json:"passages"`
	// Route is where the router sent the question.
	Route Route `json:"route"`
	// Plan is the retrieval plan; absent when nothing was retrieved (a
	// direct answer, small talk).
	Plan *Plan `json:"plan,omitempty"`
	// Path are the nodes the run took, in order.
	Path []string `json:"path"`
	// Clarify is set when the run asked back which of several things a
	// reference meant instead of guessing.
	Clarify *Clarify `json:"clarify,omitempty"`
	// Parts are the sub-questions of a compound question, each retrieved
	// and cited apart.
	Parts []Part `json:"parts,omitempty"`
	// SubTasks are the searches and model calls of the run, for
	// diagnosing a wrong answer.
	SubTasks []SubTask `json:"subtasks"`
	// Warnings are the failures the run recovered from (a model that
	// timed out and was replaced by the extractive answer, ...).
	Warnings []Warning `json:"warnings"`
	// Usage is what the run cost.
	Usage Usage `json:"usage"`
	// Debug is the full internal record of the run, present only when the
	// request asked for it ("debug": true). Its shape is not part of v1.
	Debug any `json:"debug,omitempty" jsonschema:"type=object"`
}

// AnsweredBy names what produced an answer.
type AnsweredBy string

// Values of AnsweredBy.
const (
	ByDirect     AnsweredBy = "direct"        // a fixed reply (a hand-off, a safety reply, a greeting)
	ByChitchat   AnsweredBy = "chitchat"      // small talk, nothing retrieved
	ByFAQ        AnsweredBy = "faq"           // an FAQ entry's standard answer
	ByModel      AnsweredBy = "generate"      // the model, from the cited passages
	ByExtractive AnsweredBy = "extractive"    // sentences quoted from the passages, no model
	ByNotFound   AnsweredBy = "not_found"     // nothing relevant was found
	BySearch     AnsweredBy = "search"        // a search: passages only, no answer
	ByClarify    AnsweredBy = "clarify"       // a reference had several candidates: asks which
	ByAskEntity  AnsweredBy = "ask_entity"    // an id the question needs is missing: asks for it
	ByNoAccess   AnsweredBy = "not_permitted" // a look-up refused the caller
	ByMissing    AnsweredBy = "missing_link"  // a step of a dependent chain found nothing
	ByAggregate  AnsweredBy = "aggregate"     // a total or count over every matching record
	ByNoTotal    AnsweredBy = "cannot_total"  // a total was asked and nothing can compute it
	// ByNone is a run that recorded nothing: a custom graph whose own
	// node ended it without saying what answered.
	ByNone AnsweredBy = ""
)

// AnsweredByValues lists every AnsweredBy of v1.
var AnsweredByValues = []AnsweredBy{ByDirect, ByChitchat, ByFAQ, ByModel, ByExtractive, ByNotFound, BySearch,
	ByClarify, ByAskEntity, ByNoAccess, ByMissing, ByAggregate, ByNoTotal, ByNone}

// Query is the question as retrieval used it, and whom the run acted for.
type Query struct {
	// Text is the standalone query searched for.
	Text string `json:"text"`
	// Rewritten reports that Text differs from the question (a follow-up
	// resolved against the history, for one).
	Rewritten bool `json:"rewritten"`
	// FollowUp reports a question that depended on the history.
	FollowUp bool `json:"follow_up"`
	// Scope is the caller the run acted for, from its API key.
	Scope Scope `json:"scope"`
}

// Scope is the caller a run acted for.
type Scope struct {
	Tenant string `json:"tenant"`
	Actor  string `json:"actor,omitempty"`
}

// Citation ties an [n] marker of the answer to a passage.
type Citation struct {
	// N is the marker: the answer's [N] cites Passages[N-1].
	N int `json:"n" jsonschema:"minimum=1"`
	// ID is the passage's id (Passage.ID).
	ID string `json:"id"`
	// Origin is the file (relative to the ingested folder) or URL the
	// passage came from.
	Origin string `json:"origin"`
	// Locator is where in it: a heading path, a row, a record id.
	Locator string `json:"locator"`
	Title   string `json:"title"`
	Source  string `json:"source"`
}

// Passage is one piece of evidence with its provenance.
type Passage struct {
	// N is its [n] marker in the answer.
	N int `json:"n" jsonschema:"minimum=1"`
	// ID names the passage in the knowledge base.
	ID string `json:"id"`
	// Collection is "docs", "faq" or "lookup" (a structured record).
	Collection string `json:"collection"`
	Origin     string `json:"origin"`
	Locator    string `json:"locator"`
	Title      string `json:"title"`
	Source     string `json:"source"`
	// Relevance is calibrated, 0 to 1, comparable across search methods.
	Relevance float64 `json:"relevance" jsonschema:"minimum=0,maximum=1"`
	Text      string  `json:"text"`
}

// Route is where the router sent a question and how sure it was.
type Route struct {
	// QueryType is the route: "chitchat", "factual" or "analytical"
	// ("" when the question was answered before routing).
	QueryType string `json:"query_type" jsonschema:"enum=,enum=chitchat,enum=factual,enum=analytical"`
	// Confidence is the classifier's, 0 to 1.
	Confidence float64 `json:"confidence" jsonschema:"minimum=0,maximum=1"`
	// Fallback reports the conservative route taken because the
	// classifier was unsure or failed; Reason then says why.
	Fallback bool   `json:"fallback"`
	Reason   string `json:"reason"`
	// Classifier names what decided ("offline", "llm", ...).
	Classifier string `json:"classifier"`
}

// Plan is the retrieval plan, with the fields "adaptrag ask" prints.
type Plan struct {
	// Summary is the plan in one line, as "adaptrag ask" prints it.
	Summary string `json:"summary"`
	// Mode is the document retrieval: "none", "dense" or "hybrid".
	Mode string `json:"mode" jsonschema:"enum=none,enum=dense,enum=hybrid"`
	// Intent is the question's intent ("" when none was classified).
	Intent string `json:"intent"`
	// DocTopK are the document candidates searched, FinalContextTopN the
	// passages kept, MinContextScore the lowest relevance kept.
	DocTopK          int     `json:"doc_top_k" jsonschema:"minimum=0"`
	FinalContextTopN int     `json:"final_context_top_n" jsonschema:"minimum=0"`
	MinContextScore  float64 `json:"min_context_score"`
	// FAQ reports that the FAQ collection was searched; Rerank that the
	// candidates were reranked.
	FAQ    bool `json:"faq"`
	Rerank bool `json:"rerank"`
	// Reason are the tags of the plan's rules that fired.
	Reason string `json:"reason"`
}

// Clarify is a reference with several candidates: the run asks which.
type Clarify struct {
	Mention    string   `json:"mention"`
	Candidates []string `json:"candidates"`
}

// Part is one sub-question of a compound question.
type Part struct {
	N        int    `json:"n" jsonschema:"minimum=1"`
	Question string `json:"question"`
	// Route is the part's own route.
	Route string `json:"route"`
	// Evidence are the ids of its passages, best first.
	Evidence []string `json:"evidence"`
	Status   Status   `json:"status"`
}

// Status is the outcome of a sub-task or a part.
type Status string

// StatusValues lists every Status of v1: "empty" ran and found nothing,
// "fallback" failed and a fallback took over, "timeout" ran out of time
// (never reported as empty), "rejected" a model output failed validation.
var StatusValues = []Status{"ok", "empty", "fallback", "timeout", "error", "missing", "not_permitted", "rejected"}

// SubTask is one search or model call of a run.
type SubTask struct {
	Node string `json:"node"`
	// Kind is "search", "classify", "rerank", "generate", ...
	Kind string `json:"kind"`
	// Task names it: "dense docs", "faq", "llm classify", ...
	Task string `json:"task"`
	// Input is the question the sub-task serves (a part's, for one),
	// Query the text searched or sent, Filter the filter applied.
	Input  string `json:"input,omitempty"`
	Query  string `json:"query,omitempty"`
	Filter string `json:"filter,omitempty"`
	Hits   int    `json:"hits" jsonschema:"minimum=0"`
	// Evidence are the ids of what it found, best first.
	Evidence []string `json:"evidence,omitempty"`
	Status   Status   `json:"status"`
	Ms       float64  `json:"ms" jsonschema:"minimum=0"`
	Error    string   `json:"error,omitempty"`
}

// Warning is a failure a run recovered from.
type Warning struct {
	Node    string      `json:"node"`
	Kind    WarningKind `json:"kind"`
	Message string      `json:"message"`
}

// WarningKind classifies a failure; a timeout is always its own kind.
type WarningKind string

// WarningKindValues lists every WarningKind of v1.
var WarningKindValues = []WarningKind{"timeout", "cancelled", "unavailable", "refused", "invalid", "not_permitted", "error"}

// Usage is what a run cost, in total and node by node.
type Usage struct {
	Ms        float64     `json:"ms" jsonschema:"minimum=0"`
	TokensIn  int         `json:"tokens_in" jsonschema:"minimum=0"`
	TokensOut int         `json:"tokens_out" jsonschema:"minimum=0"`
	Nodes     []NodeUsage `json:"nodes"`
}

// NodeUsage is the cost of one node execution.
type NodeUsage struct {
	Node      string  `json:"node"`
	Ms        float64 `json:"ms" jsonschema:"minimum=0"`
	TokensIn  int     `json:"tokens_in" jsonschema:"minimum=0"`
	TokensOut int     `json:"tokens_out" jsonschema:"minimum=0"`
}
