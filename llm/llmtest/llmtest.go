// Package llmtest runs a loopback HTTP server that speaks the OpenAI
// chat-completions wire format (POST /v1/chat/completions), so tests can
// drive the real langchaingo client (or any OpenAI-compatible client)
// without a network or a stub inside the code under test.
//
// A Handler decides each Reply: content, token usage, a delay (fixed or
// proportional to the tokens, to model a real server's cost), an HTTP
// error, a malformed body or a refusal. Every request body is recorded.
package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
	"unicode"
)

// Message is one chat message of a recorded request.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Request is a recorded chat-completions request.
type Request struct {
	Body           []byte          // the raw JSON body
	Model          string          // "model"
	Messages       []Message       // "messages", text parts joined
	ResponseFormat json.RawMessage // "response_format", nil when absent
	Temperature    *float64        // "temperature", nil when absent
	Stream         bool            // "stream": the reply is sent as server-sent events
}

// PromptText is all message contents joined by newlines.
func (r Request) PromptText() string {
	s := ""
	for i, m := range r.Messages {
		if i > 0 {
			s += "\n"
		}
		s += m.Content
	}
	return s
}

// LastUser is the content of the last user message ("" if none).
func (r Request) LastUser() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			return r.Messages[i].Content
		}
	}
	return ""
}

// Reply is what the server answers to one request.
type Reply struct {
	// Content is the assistant message. It is sent as JSON null when
	// Refusal is set.
	Content string
	// Refusal, when not empty, is sent in the message's "refusal" field
	// with null content, as OpenAI does when a model declines.
	Refusal string
	// FinishReason defaults to "stop".
	FinishReason string
	// PromptTokens and CompletionTokens are reported in "usage". When both
	// are zero they are estimated with EstimateTokens from the request's
	// messages and from Content, so usage is always realistic.
	PromptTokens, CompletionTokens int
	// Delay is waited before answering (cut short if the client goes away).
	Delay time.Duration
	// PerTokenDelay adds PerTokenDelay × (prompt + completion tokens) to
	// Delay, so latency grows with the work as on a real server. The cost
	// benchmarks use it to compare strategies by tokens and time.
	PerTokenDelay time.Duration
	// Status, when not 0 or 200, answers with that HTTP status and an
	// OpenAI-style error body.
	Status int
	// RawBody, when not empty, is written verbatim with status 200 instead
	// of a well-formed completion (use it for malformed responses).
	RawBody string
	// ChunkDelay is waited before each content delta of a streamed reply
	// (cut short if the client goes away), to model a slow model whose
	// answer a deadline cuts in the middle.
	ChunkDelay time.Duration
	// IgnoreStream answers a streamed request with a plain JSON completion,
	// as some OpenAI-compatible servers do.
	IgnoreStream bool
}

// Handler computes the reply to a request. It may be called concurrently.
type Handler func(Request) Reply

// Text returns a Handler that always answers content (usage estimated).
func Text(content string) Handler {
	return func(Request) Reply { return Reply{Content: content} }
}

// Fixed returns a Handler that always answers r.
func Fixed(r Reply) Handler {
	return func(Request) Reply { return r }
}

// Server is a running loopback server. Its methods are safe for concurrent
// use.
type Server struct {
	// URL is the base URL to give an OpenAI client, ending in "/v1".
	URL string

	srv     *httptest.Server
	handler Handler

	mu       sync.Mutex
	requests []Request
}

// NewServer starts a server answering with h; it is closed by t.Cleanup.
func NewServer(t testing.TB, h Handler) *Server {
	t.Helper()
	s := Start(h)
	t.Cleanup(s.Close)
	return s
}

// Start starts a server outside a test (benchmark commands, examples); the
// caller must Close it.
func Start(h Handler) *Server {
	s := &Server{handler: h}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.serve)
	s.srv = httptest.NewServer(mux)
	s.URL = s.srv.URL + "/v1"
	return s
}

// Close stops the server; later calls fail to connect. Closing twice is
// harmless.
func (s *Server) Close() { s.srv.Close() }

// Requests returns a copy of the requests received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Count returns how many requests were received.
func (s *Server) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

// RefusedURL returns an OpenAI base URL on which nothing listens, for
// "connection refused" tests.
func RefusedURL(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("llmtest: listen: %v", err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr + "/v1"
}

// EstimateTokens is a rough token count: one per CJK character, one per
// four other non-space characters (at least one for non-empty text).
func EstimateTokens(s string) int {
	cjk, other := 0, 0
	for _, r := range s {
		switch {
		case unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) ||
			unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r):
			cjk++
		case !unicode.IsSpace(r):
			other++
		}
	}
	n := cjk + (other+3)/4
	if n == 0 && s != "" {
		n = 1
	}
	return n
}

type wireRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	ResponseFormat json.RawMessage `json:"response_format"`
	Temperature    *float64        `json:"temperature"`
	Stream         bool            `json:"stream"`
}

// decodeContent accepts both a string and an array of {type,text} parts.
func decodeContent(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	for _, p := range parts {
		s += p.Text
	}
	return s
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "read body: "+err.Error())
		return
	}
	var wr wireRequest
	if err := json.Unmarshal(body, &wr); err != nil {
		writeError(w, http.StatusBadRequest, "invalid JSON body: "+err.Error())
		return
	}
	req := Request{Body: body, Model: wr.Model, ResponseFormat: wr.ResponseFormat, Temperature: wr.Temperature, Stream: wr.Stream}
	if len(req.ResponseFormat) == 0 || string(req.ResponseFormat) == "null" {
		req.ResponseFormat = nil
	}
	for _, m := range wr.Messages {
		req.Messages = append(req.Messages, Message{Role: m.Role, Content: decodeContent(m.Content)})
	}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	s.mu.Unlock()

	rep := s.handler(req)
	if rep.PromptTokens == 0 && rep.CompletionTokens == 0 {
		rep.PromptTokens = EstimateTokens(req.PromptText())
		rep.CompletionTokens = EstimateTokens(rep.Content + rep.Refusal)
	}
	delay := rep.Delay + rep.PerTokenDelay*time.Duration(rep.PromptTokens+rep.CompletionTokens)
	if delay > 0 {
		timer := time.NewTimer(delay)
		select {
		case <-timer.C:
		case <-r.Context().Done():
			timer.Stop()
			return
		}
	}
	switch {
	case rep.Status != 0 && rep.Status != http.StatusOK:
		writeError(w, rep.Status, fmt.Sprintf("llmtest: status %d", rep.Status))
		return
	case rep.RawBody != "":
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(rep.RawBody))
		return
	}
	finish := rep.FinishReason
	if finish == "" {
		finish = "stop"
	}
	if wr.Stream && !rep.IgnoreStream {
		s.stream(w, r, wr.Model, rep, finish)
		return
	}
	msg := map[string]any{"role": "assistant", "content": rep.Content, "refusal": nil}
	if rep.Refusal != "" {
		msg["content"] = nil
		msg["refusal"] = rep.Refusal
	}
	out := map[string]any{
		"id":      "chatcmpl-llmtest",
		"object":  "chat.completion",
		"created": 0,
		"model":   wr.Model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
		"usage": map[string]any{
			"prompt_tokens":     rep.PromptTokens,
			"completion_tokens": rep.CompletionTokens,
			"total_tokens":      rep.PromptTokens + rep.CompletionTokens,
		},
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

// streamChunkRunes is the size of the content deltas a streamed reply is
// cut into.
const streamChunkRunes = 4

// stream answers as OpenAI does when "stream": true: server-sent events,
// one chat.completion.chunk per content delta, a final chunk with the
// finish reason and usage, then [DONE].
func (s *Server) stream(w http.ResponseWriter, r *http.Request, model string, rep Reply, finish string) {
	w.Header().Set("Content-Type", "text/event-stream")
	flusher, _ := w.(http.Flusher)
	send := func(v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\n\n", b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	chunk := func(delta map[string]any, finish any, usage any) map[string]any {
		c := map[string]any{"id": "chatcmpl-llmtest", "object": "chat.completion.chunk", "created": 0, "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
		if usage != nil {
			c["usage"] = usage
		}
		return c
	}
	runes := []rune(rep.Content)
	for i := 0; i < len(runes); i += streamChunkRunes {
		if rep.ChunkDelay > 0 {
			timer := time.NewTimer(rep.ChunkDelay)
			select {
			case <-timer.C:
			case <-r.Context().Done():
				timer.Stop()
				return
			}
		}
		if r.Context().Err() != nil {
			return
		}
		send(chunk(map[string]any{"role": "assistant", "content": string(runes[i:min(i+streamChunkRunes, len(runes))])}, nil, nil))
	}
	send(chunk(map[string]any{}, finish, map[string]any{
		"prompt_tokens": rep.PromptTokens, "completion_tokens": rep.CompletionTokens, "total_tokens": rep.PromptTokens + rep.CompletionTokens,
	}))
	fmt.Fprint(w, "data: [DONE]\n\n")
	if flusher != nil {
		flusher.Flush()
	}
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"error": map[string]any{"message": msg, "type": "llmtest_error"},
	})
}
