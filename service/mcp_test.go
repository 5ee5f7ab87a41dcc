package service

import (
	"io"
	"net/http"
	"testing"

	"github.com/adaptrag/adaptrag"
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
