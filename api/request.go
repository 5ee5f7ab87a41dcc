package api

// AskRequest is the body of POST /v1/ask.
type AskRequest struct {
	// Question is what to answer (at most Limits.MaxQuestionRunes
	// characters).
	Question string `json:"question"`
	// History is the conversation so far, oldest first.
	History []Message `json:"history,omitempty"`
	// Source restricts retrieval to one source of the knowledge base.
	Source string `json:"source,omitempty"`
	// TimeoutMs shortens the server's run timeout (1 to the server's
	// timeout in milliseconds; 0 or absent: the server's).
	TimeoutMs int64 `json:"timeout_ms,omitempty" jsonschema:"minimum=0"`
	// Debug asks for the full internal record in Response.Debug.
	Debug bool `json:"debug,omitempty"`
	// Tenant and Actor are accepted only to refuse them when they differ
	// from the caller's: the API key decides both.
	Tenant *string `json:"tenant,omitempty"`
	Actor  *string `json:"actor,omitempty"`
}

// SearchRequest is the body of POST /v1/search.
type SearchRequest struct {
	// Query is what to search for (the limits of a question apply).
	Query string `json:"query"`
	// K is the passages wanted (0 or absent: the plan's; at most
	// MaxSearchK).
	K int `json:"k,omitempty" jsonschema:"minimum=0,maximum=100"`
	// Mode is "dense" or "hybrid" ("" or absent: the plan's).
	Mode      string    `json:"mode,omitempty" jsonschema:"enum=,enum=dense,enum=hybrid"`
	History   []Message `json:"history,omitempty"`
	Source    string    `json:"source,omitempty"`
	TimeoutMs int64     `json:"timeout_ms,omitempty" jsonschema:"minimum=0"`
	Debug     bool      `json:"debug,omitempty"`
	Tenant    *string   `json:"tenant,omitempty"`
	Actor     *string   `json:"actor,omitempty"`
}

// MaxSearchK is the most passages a search returns.
const MaxSearchK = 100

// Message is one turn of a conversation.
type Message struct {
	Role    string `json:"role" jsonschema:"enum=user,enum=assistant"`
	Content string `json:"content"`
}

// ErrorBody is the body of every error response, and the data of an SSE
// "error" event.
type ErrorBody struct {
	Error Error `json:"error"`
}

// Error says what went wrong: Code for programs, Message for people.
type Error struct {
	// Code is one of the codes docs/service.md lists ("invalid_request",
	// "timeout", ...).
	Code string `json:"code"`
	// Message says what to change, in the client's terms.
	Message string `json:"message"`
	// RunID names the run that failed, when one had started.
	RunID string `json:"run_id,omitempty"`
}

// Limits are a server's bounds on requests, for clients that check before
// sending (the web page sizes its question box from them).
type Limits struct {
	// MaxQuestionRunes bounds a question, in characters.
	MaxQuestionRunes int `json:"max_question_runes"`
	// MaxQuestionParts bounds the sub-questions of a compound question.
	MaxQuestionParts int `json:"max_question_parts"`
	// MaxTimeoutMs is the longest timeout_ms (the server's run timeout).
	MaxTimeoutMs int64 `json:"max_timeout_ms"`
	// MaxBodyBytes bounds a request body.
	MaxBodyBytes int64 `json:"max_body_bytes"`
	// MaxSearchK is the largest k of a search.
	MaxSearchK int `json:"max_search_k"`
}

// NodeEvent is the data of an SSE "node" event of a streamed ask: a node
// finished.
type NodeEvent struct {
	Node string `json:"node"`
	// Step counts the nodes run so far, from 1.
	Step int `json:"step" jsonschema:"minimum=1"`
	// Label is the edge the node's router chose ("" or absent for a node
	// without one).
	Label      string  `json:"label,omitempty"`
	DurationMs float64 `json:"duration_ms" jsonschema:"minimum=0"`
	TokensIn   int     `json:"tokens_in" jsonschema:"minimum=0"`
	TokensOut  int     `json:"tokens_out" jsonschema:"minimum=0"`
}

// TokenEvent is the data of an SSE "token" event: a piece of the answer,
// a preview that the final response's answer supersedes.
type TokenEvent struct {
	Node string `json:"node"`
	Text string `json:"text"`
}
