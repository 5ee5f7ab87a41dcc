// Package state defines RAG, the state that flows through the adaptive
// pipeline's graph. Each node reads what earlier nodes wrote and adds its
// own part; nothing is stored anywhere else, so a finished state is the
// whole record of a turn: the question, how it was routed and why, the
// plan, what was retrieved, the answer with its citations, and what each
// node cost.
//
// RAG is a value, and the pipeline hands every node its own deep copy
// (Clone): a node may change any slice or map it receives, in place, without
// touching what another node, another run or the caller holds.
//
// The caller's authority (tenant scope, actor) is not part of the state: it
// travels with the run's context, where no node can widen it (see the nodes
// package).
package state

import (
	"maps"
	"reflect"
	"slices"
	"time"
	"unsafe"

	"github.com/adaptrag/adaptrag/plan"
	"github.com/adaptrag/adaptrag/query"
	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/router"
)

// RAG is the state of one question's run through the adaptive graph.
type RAG struct {
	// Inputs, set by the caller.
	Question string
	History  []Message // the conversation so far, oldest first
	Source   string    // a source the caller selected ("" for any)
	// SearchOnly stops the run after retrieval: no answer is generated
	// (the pipeline's Search sets it).
	SearchOnly bool
	// Adjust is the caller's change to the plan, applied after the rule
	// table (a search asking for k passages or a mode).
	Adjust plan.PlanPatch

	// Query is the question as retrieval uses it. When it is empty the
	// first node fills it from Question.
	Query Query

	// Decision is taken before anything else: a direct answer or retrieval.
	Decision plan.Decision
	// Route is the router's outcome, fallback included.
	Route Route
	// Intent and Plan are the intent and the retrieval plan (nil when the
	// run was answered directly or as chitchat).
	Intent *plan.IntentResult
	Plan   *plan.Plan

	// Clarify, when set, is a reference with several candidates: the run
	// retrieves nothing and asks which one was meant.
	Clarify *query.Clarify
	// Parts are the independent sub-questions of a compound question (or
	// one per candidate of an ambiguous reference, when the pipeline is
	// told to search each), retrieved apart; their evidence is joined in
	// Docs and each passage's part is recorded in Part.Evidence.
	Parts []Part
	// Hops are the steps of a dependent chain: look-ups whose facts feed
	// the next step (an order's product, then that product's rules).
	Hops []Hop
	// Lookups are the records the query names that the structured look-up
	// serves ("order:A100"): a dependent chain starts from them.
	Lookups []string
	// AskFor names the kind of record the question refers to without
	// giving its id ("my order"): the run asks for it.
	AskFor string
	// Stopped reports a run ended early by a node that answered why (a
	// chain whose hop failed).
	Stopped bool
	// Records are the structured facts the look-ups found; they are
	// evidence like passages (Docs holds them as hits of collection
	// "lookup").
	Records []retrieval.Record
	// Aggregate is the result of a total or count computed over every
	// matching record (nil when the question asked for none).
	Aggregate *retrieval.Aggregate

	// FAQ holds the FAQ hits, Candidates the document hits as retrieved
	// (before rerank), and Docs the passages kept as evidence, best first.
	FAQ        []retrieval.Hit
	Candidates []retrieval.Hit
	Docs       []retrieval.Hit
	// Rerank reports how the rerank stage went (zero when it did not run).
	Rerank RerankInfo

	// Answer is the reply; Citations refer to Docs by number.
	Answer     string
	Citations  []Citation
	AnsweredBy AnsweredBy

	// Usage holds one entry per node execution, in order.
	Usage []Usage
	// Warnings holds the failures the run absorbed (a classifier that fell
	// back, a reranker that failed open); a failure that stops the run is
	// returned as an error instead.
	Warnings []Warning
	// SubTasks holds one entry per sub-task (a search leg, a model call),
	// for diagnosing a wrong answer.
	SubTasks []SubTask
}

// Message is one turn of the conversation, as chat APIs send it:
// role "user" or "assistant", and the text.
type Message = query.Message

// Roles of a Message.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// Query is the retrieval form of a question.
type Query struct {
	Text      string   `json:"text"`                // the standalone query retrieval searches for
	Rewritten bool     `json:"rewritten,omitempty"` // Text differs from the question
	Variants  []string `json:"variants,omitempty"`  // alternative phrasings, searched too
	// FollowUp reports a question that depended on the history.
	FollowUp bool `json:"follow_up,omitempty"`
	// Resolved records what each reference ("这个", "it") was resolved to
	// and from which turn; Unresolved the references that found nothing.
	Resolved   []query.Resolution `json:"resolved,omitempty"`
	Unresolved []string           `json:"unresolved,omitempty"`
	// Entities are the ids, amounts, durations and dates of Text, each
	// with its role.
	Entities []query.Entity `json:"entities,omitempty"`
	// Shape flags totals, counts and coverage questions.
	Shape query.Shape `json:"-"`
	// HyDE is a hypothetical passage used only as a search key: it never
	// reaches the evidence, the prompt or the answer.
	HyDE string `json:"-"`
	// Vector is Text's embedding once a node has computed it, so that the
	// FAQ and document searches embed the query once; VectorText is the
	// text it was made from (a rewrite invalidates it).
	Vector     []float32 `json:"-"`
	VectorText string    `json:"-"`
}

// Part is one independently retrieved sub-question.
type Part struct {
	N         int              `json:"n"`
	Question  string           `json:"question"`            // the standalone sub-question
	Candidate string           `json:"candidate,omitempty"` // the candidate it stands for, when searching each
	Route     router.QueryType `json:"route"`
	Evidence  []string         `json:"evidence"` // ids of its passages, best first
	Status    Status           `json:"status"`
}

// Hop is one step of a dependent chain.
type Hop struct {
	N      int    `json:"n"`
	Kind   string `json:"kind"`            // "lookup" or "search"
	Input  string `json:"input"`           // what it used: "order A100", or the query searched
	Found  string `json:"found,omitempty"` // what it found for the next step: "product P-204"
	Status Status `json:"status"`
	Error  string `json:"error,omitempty"`
}

// Route is where the router sent the question and why.
type Route struct {
	QueryType  router.QueryType `json:"query_type"` // the route taken
	Complexity string           `json:"complexity"`
	Confidence float64          `json:"confidence"`
	Reason     string           `json:"reason"`
	Fallback   bool             `json:"fallback"`        // the route is the conservative default
	Cause      string           `json:"cause,omitempty"` // why it fell back
	Classifier string           `json:"classifier"`      // which classifier decided ("offline", "llm", ...)
}

// RerankInfo reports the rerank stage.
type RerankInfo struct {
	Reranker string `json:"reranker"`
	Fallback bool   `json:"fallback"`        // the fused order was kept
	Cause    string `json:"cause,omitempty"` // why
}

// AnsweredBy names what produced the answer.
type AnsweredBy string

// Values of AnsweredBy.
const (
	ByDirect     AnsweredBy = "direct"     // a fixed reply of the decision (hand-off, safety, greeting, ...)
	ByChitchat   AnsweredBy = "chitchat"   // small talk, no retrieval
	ByFAQ        AnsweredBy = "faq"        // an FAQ entry's standard answer
	ByModel      AnsweredBy = "generate"   // the model, from the cited passages
	ByExtractive AnsweredBy = "extractive" // sentences quoted from the passages (no model)
	ByNotFound   AnsweredBy = "not_found"  // nothing relevant was found
	BySearch     AnsweredBy = "search"     // retrieval only: no answer was asked for
	ByClarify    AnsweredBy = "clarify"    // a reference had several candidates: ask which
	ByAskEntity  AnsweredBy = "ask_entity" // a needed id is missing: ask for it
	ByNoAccess   AnsweredBy = "not_permitted"
	ByMissing    AnsweredBy = "missing_link" // a step of a dependent chain found nothing
	ByAggregate  AnsweredBy = "aggregate"    // a total or count over every matching record
	ByNoTotal    AnsweredBy = "cannot_total" // a total was asked and no structured look-up can compute it
)

// Citation ties a numbered marker in the answer to a passage.
type Citation struct {
	N          int    `json:"n"` // the [n] marker
	ID         string `json:"id"`
	Collection string `json:"collection"`
	Origin     string `json:"origin"`  // the file or URL the passage came from
	Locator    string `json:"locator"` // where in it: heading path, row, record id
	Source     string `json:"source"`
	Title      string `json:"title"`
}

// CitationOf returns the citation [n] of hit h.
func CitationOf(n int, h retrieval.Hit) Citation {
	c := &h.Chunk
	return Citation{N: n, ID: c.ID, Collection: h.Collection, Origin: c.Meta[retrieval.MetaOrigin],
		Locator: c.Meta[retrieval.MetaLocator], Source: c.Source, Title: c.Title}
}

// Usage is the cost of one node execution.
type Usage struct {
	Node         string        `json:"node"`
	Duration     time.Duration `json:"-"`
	Ms           float64       `json:"ms"`
	InputTokens  int           `json:"tokens_in"`
	OutputTokens int           `json:"tokens_out"`
}

// ErrorKind classifies a failure, keeping a timeout distinct from every
// other kind.
type ErrorKind string

// Kinds of failures.
const (
	KindTimeout      ErrorKind = "timeout"
	KindCancelled    ErrorKind = "cancelled"
	KindUnavailable  ErrorKind = "unavailable"
	KindRefused      ErrorKind = "refused"
	KindInvalid      ErrorKind = "invalid"
	KindNotPermitted ErrorKind = "not_permitted"
	KindError        ErrorKind = "error"
)

// Warning is a failure the run recovered from.
type Warning struct {
	Node    string    `json:"node"`
	Kind    ErrorKind `json:"kind"`
	Message string    `json:"message"`
}

// Status is the outcome of a sub-task.
type Status string

// Sub-task outcomes.
const (
	StatusOK       Status = "ok"
	StatusEmpty    Status = "empty"    // ran and found nothing
	StatusFallback Status = "fallback" // failed, and a fallback took over
	StatusTimeout  Status = "timeout"  // ran out of time: never reported as empty
	StatusError    Status = "error"
	StatusMissing  Status = "missing"       // a look-up found no record
	StatusDenied   Status = "not_permitted" // a look-up refused the actor
	StatusRejected Status = "rejected"      // a model's output failed validation and was not used
)

// SubTask is one log line of a sub-task.
type SubTask struct {
	Node   string        `json:"node"`
	Kind   string        `json:"kind"`             // e.g. "search", "classify", "rerank"
	Task   string        `json:"task"`             // e.g. "dense docs", "faq", "llm classify"
	Input  string        `json:"input,omitempty"`  // the question the sub-task serves
	Query  string        `json:"query,omitempty"`  // the text searched or sent
	Filter string        `json:"filter,omitempty"` // the filter applied, rendered
	Hits   int           `json:"hits"`
	IDs    []string      `json:"evidence,omitempty"` // ids of what it found, best first
	Status Status        `json:"status"`
	Took   time.Duration `json:"-"`
	Ms     float64       `json:"ms"`
	Err    string        `json:"error,omitempty"`
}

// Warn records an absorbed failure.
func (s *RAG) Warn(node string, kind ErrorKind, err error) {
	s.Warnings = append(s.Warnings, Warning{Node: node, Kind: kind, Message: err.Error()})
}

// Log records a sub-task.
func (s *RAG) Log(t SubTask) {
	if t.Ms == 0 && t.Took > 0 {
		t.Ms = float64(t.Took.Microseconds()) / 1000
	}
	s.SubTasks = append(s.SubTasks, t)
}

// TotalTokens sums the tokens of every node.
func (s *RAG) TotalTokens() (in, out int) {
	for _, u := range s.Usage {
		in += u.InputTokens
		out += u.OutputTokens
	}
	return in, out
}

// Clone returns a deep copy of s: no slice, map or pointer of the copy is
// shared with s, so either may be changed freely. A hit's metadata map that
// s holds in several lists (a passage that is both a candidate and
// evidence) is copied once, and the copy's lists share that copy as s's
// lists share the original.
func (s RAG) Clone() RAG {
	s.History = slices.Clone(s.History)
	s.Query = s.Query.clone()
	if s.Intent != nil {
		in := *s.Intent
		s.Intent = &in
	}
	if s.Plan != nil {
		pl := *s.Plan
		s.Plan = &pl
	}
	// The candidates hold most hits, the FAQ hits and the evidence among
	// them: their maps are copied with the candidates' and looked up.
	cand := s.Candidates
	s.Candidates = cloneHits(cand, nil, nil)
	s.FAQ = cloneHits(s.FAQ, cand, s.Candidates)
	s.Docs = cloneHits(s.Docs, cand, s.Candidates)
	s.Citations = slices.Clone(s.Citations)
	if s.Clarify != nil {
		c := *s.Clarify
		c.Candidates = slices.Clone(c.Candidates)
		s.Clarify = &c
	}
	s.Parts = slices.Clone(s.Parts)
	for i := range s.Parts {
		s.Parts[i].Evidence = slices.Clone(s.Parts[i].Evidence)
	}
	s.Hops = slices.Clone(s.Hops)
	s.Lookups = slices.Clone(s.Lookups)
	s.Records = slices.Clone(s.Records)
	for i := range s.Records {
		s.Records[i].Fields = maps.Clone(s.Records[i].Fields)
	}
	if s.Aggregate != nil {
		a := *s.Aggregate
		a.Records = slices.Clone(a.Records)
		for i := range a.Records {
			a.Records[i].Fields = maps.Clone(a.Records[i].Fields)
		}
		s.Aggregate = &a
	}
	// Every node execution appends its usage and most log a sub-task: room
	// for one spares each a reallocation of the copy. More room, allocated by
	// every clone, cost more than the one node logging several grows.
	s.Usage = cloneRoom(s.Usage, 1)
	s.Warnings = slices.Clone(s.Warnings)
	s.SubTasks = cloneRoom(s.SubTasks, 1)
	cloneIDs(s.SubTasks)
	return s
}

// cloneRoom is slices.Clone with room for n more elements (nil stays nil).
func cloneRoom[T any](xs []T, n int) []T {
	if xs == nil {
		return nil
	}
	return append(make([]T, 0, len(xs)+n), xs...)
}

// cloneIDs gives each sub-task a copy of its IDs, all in one array: each
// copy is capped at its length, so that an append to one reallocates
// rather than writing over the next. A nil list stays nil.
func cloneIDs(ts []SubTask) {
	n := 0
	for i := range ts {
		n += len(ts[i].IDs)
	}
	ids := make([]string, 0, n)
	for i := range ts {
		if ts[i].IDs == nil {
			continue
		}
		at := len(ids)
		ids = append(ids, ts[i].IDs...)
		ts[i].IDs = ids[at:len(ids):len(ids)]
	}
}

func (q Query) clone() Query {
	q.Variants = slices.Clone(q.Variants)
	q.Vector = slices.Clone(q.Vector)
	q.Resolved = slices.Clone(q.Resolved)
	q.Unresolved = slices.Clone(q.Unresolved)
	q.Entities = slices.Clone(q.Entities)
	return q
}

// cloneHits copies hits and each chunk's metadata map (hits carry no
// vectors, so cloning Vector is nearly free). A map that the hit of orig at
// some index also holds is not copied again: the hit takes the map of
// copied at that index (orig's copy).
func cloneHits(hits, orig, copied []retrieval.Hit) []retrieval.Hit {
	if hits == nil {
		return nil
	}
	sm := sharedMaps{orig: orig, copied: copied}
	if len(orig)*len(hits) > linearLookups {
		sm.index()
	}
	// One bulk copy, then each hit's map and vector replaced in place.
	out := slices.Clone(hits)
	for i := range out {
		c := &out[i].Chunk
		if m, ok := sm.find(c.Meta); ok {
			c.Meta = m
		} else if c.Meta != nil {
			c.Meta = maps.Clone(c.Meta)
		}
		if c.Vector != nil {
			c.Vector = slices.Clone(c.Vector)
		}
	}
	return out
}

// linearLookups bounds the comparisons of sharedMaps' scan (lookups times
// len(orig)): above it, cloneHits indexes orig's maps.
const linearLookups = 4096

// sharedMaps finds a metadata map among orig's and gives copied's map at
// the same index.
type sharedMaps struct {
	orig, copied []retrieval.Hit
	at           map[unsafe.Pointer]int // nil: scan orig
}

// mapID is a map's identity: two map values are the same map when their
// ids are equal.
func mapID(m map[string]string) unsafe.Pointer { return reflect.ValueOf(m).UnsafePointer() }

func (sm *sharedMaps) index() {
	sm.at = make(map[unsafe.Pointer]int, len(sm.orig))
	for j := range sm.orig {
		if m := sm.orig[j].Chunk.Meta; m != nil {
			if _, dup := sm.at[mapID(m)]; !dup {
				sm.at[mapID(m)] = j // the first, as the scan finds
			}
		}
	}
}

func (sm *sharedMaps) find(m map[string]string) (map[string]string, bool) {
	if m == nil || len(sm.orig) == 0 {
		return nil, false
	}
	p := mapID(m)
	if sm.at != nil {
		j, ok := sm.at[p]
		if !ok {
			return nil, false
		}
		return sm.copied[j].Chunk.Meta, true
	}
	for j := range sm.orig {
		if o := sm.orig[j].Chunk.Meta; o != nil && mapID(o) == p {
			return sm.copied[j].Chunk.Meta, true
		}
	}
	return nil, false
}
