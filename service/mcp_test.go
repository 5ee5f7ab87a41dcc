package service

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/adaptrag/adaptrag"
	"github.com/adaptrag/adaptrag/mcpserver"
)

// /mcp is served behind the API keys, and the handler sees the key's
// caller in the request's context.
func TestMCPMountedBehindKeys(t *testing.T) {
	var seen adaptrag.Caller
	var ok bool
	mcp := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen, ok = adaptrag.CallerFrom(r.Context())
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	})
	s := newServer(t, Config{Pipeline: tenantParts(t).pipeline(t), Keys: []Key{keyAcme, keyGlobex}, MCP: mcp})
	body := map[string]any{"jsonrpc": "2.0", "id": 1, "method": "ping"}
	wantError(t, s.do(t, call{path: "/mcp", body: body}), 401, CodeUnauthorized)
	if ok {
		t.Fatal("an unauthenticated request reached the MCP handler")
	}
	resp := s.do(t, call{path: "/mcp", body: body, key: keyAcme.Key})
	resp.Body.Close()
	if resp.StatusCode != 200 || !ok || seen.Scope.Tenant != "acme" || seen.Actor != "alice" {
		t.Errorf("status %d, caller %+v (set %v), want acme/alice", resp.StatusCode, seen, ok)
	}
}

// mcpService is a service whose /mcp is the real MCP server over a
// pipeline whose searches wait at a gate.
func mcpService(t *testing.T, cfg Config) (*server, *gated) {
	t.Helper()
	p := tenantParts(t)
	g := newGated(p.deps.Docs)
	p.deps.Docs = g
	pipe := p.pipeline(t)
	srv, err := mcpserver.New(pipe, mcpserver.Config{})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Pipeline, cfg.MCP = pipe, srv.Handler(nil)
	if cfg.Keys == nil {
		cfg.Keys = []Key{keyAcme, keyGlobex}
	}
	return newServer(t, cfg), g
}

var mcpHeaders = map[string]string{"Accept": "application/json, text/event-stream"}

func searchCall(id int) map[string]any {
	return map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call",
		"params": map[string]any{"name": "search", "arguments": map[string]any{"query": "annual leave"}}}
}

// rpcError is the error of a JSON-RPC response, nil when it has none.
func rpcError(t *testing.T, resp *http.Response) *struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
} {
	t.Helper()
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var msg struct {
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(b, &msg); err != nil {
		t.Fatalf("status %d, body %q: %v", resp.StatusCode, b, err)
	}
	return msg.Error
}

// Regression: /mcp took no run slot, so --max-runs did not bound it.
func TestMCPTakesARunSlot(t *testing.T) {
	s, g := mcpService(t, Config{MaxRuns: 1})
	first := make(chan *http.Response, 1)
	go func() {
		first <- s.do(t, call{path: "/mcp", body: searchCall(1), key: keyAcme.Key, header: mcpHeaders})
	}()
	g.waitEntered(t)
	if e := rpcError(t, s.do(t, call{path: "/mcp", body: searchCall(2), key: keyAcme.Key, header: mcpHeaders})); e == nil || e.Code != mcpserver.CodeBusy {
		t.Errorf("second tool call while the slot is taken: error %+v, want code %d", e, mcpserver.CodeBusy)
	}
	// The slot is the service's: /v1/search waits for it too.
	wantError(t, s.do(t, call{path: "/v1/search", body: map[string]any{"query": "leave"}, key: keyAcme.Key}), 429, CodeTooManyRuns)
	// Listing takes no slot.
	list := map[string]any{"jsonrpc": "2.0", "id": 3, "method": "tools/list"}
	if e := rpcError(t, s.do(t, call{path: "/mcp", body: list, key: keyAcme.Key, header: mcpHeaders})); e != nil {
		t.Errorf("tools/list while busy: %+v", e)
	}
	close(g.release)
	if e := rpcError(t, <-first); e != nil {
		t.Errorf("first call: %+v", e)
	}
}

// Regression: /mcp ran without the service's --timeout.
func TestMCPTimeout(t *testing.T) {
	s, g := mcpService(t, Config{Timeout: 150 * time.Millisecond})
	start := time.Now()
	e := rpcError(t, s.do(t, call{path: "/mcp", body: searchCall(1), key: keyAcme.Key, header: mcpHeaders}))
	if e == nil || e.Code != mcpserver.CodeTimeout {
		t.Fatalf("error %+v, want code %d", e, mcpserver.CodeTimeout)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("answered after %s", d)
	}
	select {
	case err := <-g.ended:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("the search ended with %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Error("the search was not cancelled")
	}
}

// Regression: /mcp took bodies up to the SDK's 4 MiB, not --max-body.
func TestMCPBodyLimit(t *testing.T) {
	s, _ := mcpService(t, Config{MaxBodyBytes: 1024})
	body := searchCall(1)
	body["params"].(map[string]any)["arguments"].(map[string]any)["query"] = strings.Repeat("x", 2048)
	resp := s.do(t, call{path: "/mcp", body: body, key: keyAcme.Key, header: mcpHeaders})
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("a 2 KiB body with --max-body 1024: status %d, want 413", resp.StatusCode)
	}
}

// Regression: a client that went away left its run going.
func TestMCPClientGoneCancelsTheRun(t *testing.T) {
	s, g := mcpService(t, Config{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.url+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"query":"annual leave"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", mcpHeaders["Accept"])
		req.Header.Set("Authorization", "Bearer "+keyAcme.Key)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	g.waitEntered(t)
	cancel()
	<-done
	select {
	case err := <-g.ended:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the search ended with %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the run went on after its client disconnected")
	}
}

// Regression: notifications/cancelled did not cancel the call it named
// (over HTTP it arrives on another request, another session).
func TestMCPCancelledNotification(t *testing.T) {
	s, g := mcpService(t, Config{})
	first := make(chan *http.Response, 1)
	go func() {
		first <- s.do(t, call{path: "/mcp", body: searchCall(7), key: keyAcme.Key, header: mcpHeaders})
	}()
	g.waitEntered(t)
	// Another tenant naming the same id cancels nothing.
	cancelBody := map[string]any{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": map[string]any{"requestId": 7, "reason": "user"}}
	s.do(t, call{path: "/mcp", body: cancelBody, key: keyGlobex.Key, header: mcpHeaders}).Body.Close()
	select {
	case err := <-g.ended:
		t.Fatalf("another tenant's cancel ended the run: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	s.do(t, call{path: "/mcp", body: cancelBody, key: keyAcme.Key, header: mcpHeaders}).Body.Close()
	select {
	case err := <-g.ended:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the search ended with %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the run went on after notifications/cancelled")
	}
	if e := rpcError(t, <-first); e == nil || e.Code != mcpserver.CodeCancelled {
		t.Errorf("cancelled call: error %+v, want code %d", e, mcpserver.CodeCancelled)
	}
}

// Regression: with API keys, a Host other than loopback (a reverse
// proxy's) was refused with 403; without keys it still is (DNS
// rebinding).
func TestMCPHostBehindAProxy(t *testing.T) {
	list := map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
	proxied := map[string]string{"Accept": mcpHeaders["Accept"], "Host": "kb.example.com"}
	s, _ := mcpService(t, Config{})
	resp := s.do(t, call{path: "/mcp", body: list, key: keyAcme.Key, header: proxied})
	if e := rpcError(t, resp); resp.StatusCode != 200 || e != nil {
		t.Errorf("authenticated request with a proxy's Host: status %d, error %+v", resp.StatusCode, e)
	}
	open, _ := mcpService(t, Config{Keys: []Key{}})
	resp = open.do(t, call{path: "/mcp", body: list, header: proxied})
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("unauthenticated request with a foreign Host: status %d, want 403", resp.StatusCode)
	}
}
