package service

import (
	"net/http"
	"strings"
	"testing"

	"github.com/adaptrag/adaptrag"
	"github.com/adaptrag/adaptrag/api"
	"github.com/adaptrag/adaptrag/graph"
)

// "thread" in /v1/ask keeps the conversation on the server: the follow-up
// gets the first turn, a clarifying question is answered by the next
// message; GET /v1/threads/ID shows turns and checkpoints; DELETE removes
// it; another key's tenant never sees it.
func TestThreadsOverHTTP(t *testing.T) {
	p := sampleParts(t)
	p.opts.Threads = graph.NewMemoryCheckpointer()
	s := newServer(t, Config{Pipeline: p.pipeline(t), Logger: discard()})
	ask := func(q string) api.Response {
		t.Helper()
		var r api.Response
		wantOK(t, s.do(t, call{path: "/v1/ask", body: map[string]any{"question": q, "thread": "conv"}}), &r)
		return r
	}
	ask("P-204 和 P-205 哪个更便宜？")
	if r := ask("那这个能换吗？"); r.AnsweredBy != "clarify" {
		t.Fatalf("the follow-up did not get the thread's turn: %s %q", r.AnsweredBy, r.Answer)
	}
	if r := ask("P-205"); r.AnsweredBy == "clarify" || !strings.Contains(r.Query.Text, "P-205") {
		t.Fatalf("the reply did not resume the clarification: %+v", r.Query)
	}
	var info adaptrag.ThreadInfo
	wantOK(t, s.do(t, call{method: http.MethodGet, path: "/v1/threads/conv"}), &info)
	if len(info.Turns) != 6 || len(info.Checkpoints) == 0 || info.Checkpoints[0].Status != graph.StatusDone {
		t.Fatalf("thread: %d turns, checkpoints %+v", len(info.Turns), info.Checkpoints)
	}
	// Search reads the thread.
	var sr api.Response
	wantOK(t, s.do(t, call{path: "/v1/search", body: map[string]any{"query": "那这个能换吗？", "thread": "conv"}}), &sr)
	// Both thread and history: refused.
	wantError(t, s.do(t, call{path: "/v1/ask", body: map[string]any{"question": "q", "thread": "conv",
		"history": []map[string]string{{"role": "user", "content": "x"}}}}), 400, CodeInvalidRequest)
	resp := s.do(t, call{method: http.MethodDelete, path: "/v1/threads/conv"})
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: %d", resp.StatusCode)
	}
	wantError(t, s.do(t, call{method: http.MethodGet, path: "/v1/threads/conv"}), 404, CodeNotFound)
	wantError(t, s.do(t, call{method: http.MethodPut, path: "/v1/threads/conv"}), 405, CodeMethodNotAllowed)
}

// Another key's tenant does not see a thread, nor delete it.
func TestThreadsPerKey(t *testing.T) {
	p := tenantParts(t)
	p.opts.Threads = graph.NewMemoryCheckpointer()
	s := newServer(t, Config{Pipeline: p.pipeline(t), Keys: []Key{keyAcme, keyGlobex}, Logger: discard()})
	var r api.Response
	wantOK(t, s.do(t, call{path: "/v1/ask", key: keyAcme.Key, body: map[string]any{"question": "How many days of annual leave?", "thread": "t"}}), &r)
	wantError(t, s.do(t, call{method: http.MethodGet, path: "/v1/threads/t", key: keyGlobex.Key}), 404, CodeNotFound)
	resp := s.do(t, call{method: http.MethodDelete, path: "/v1/threads/t", key: keyGlobex.Key})
	resp.Body.Close()
	var info adaptrag.ThreadInfo
	wantOK(t, s.do(t, call{method: http.MethodGet, path: "/v1/threads/t", key: keyAcme.Key}), &info)
	if len(info.Turns) != 2 || strings.Contains(info.Turns[1].Content, globexSecret) {
		t.Fatalf("acme's thread: %+v", info.Turns)
	}
}

// A server without a thread store refuses "thread".
func TestThreadWithoutStore(t *testing.T) {
	s := newServer(t, Config{Pipeline: sampleParts(t).pipeline(t), Logger: discard()})
	wantError(t, s.do(t, call{path: "/v1/ask", body: map[string]any{"question": "q", "thread": "x"}}), 400, CodeInvalidRequest)
	wantError(t, s.do(t, call{method: http.MethodGet, path: "/v1/threads/x"}), 400, CodeInvalidRequest)
}
