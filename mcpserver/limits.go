package mcpserver

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Limits are what a host enforces on the MCP requests it passes to
// Handler, put on each request's context with WithLimits (the service puts
// its --max-runs, --timeout and --max-body there). The zero value limits
// nothing beyond Config.
type Limits struct {
	// Acquire takes a run slot for one tool call and returns its release;
	// an error refuses the call with CodeBusy. nil: no slots.
	Acquire func(ctx context.Context) (release func(), err error)
	// Timeout bounds each tool call; the shorter of it and Config.Timeout
	// applies. Zero: Config.Timeout alone.
	Timeout time.Duration
	// MaxBodyBytes bounds a request body (413 beyond it). Zero:
	// Config.MaxBodyBytes.
	MaxBodyBytes int64
	// Authenticated says the host authenticated the request (an API key):
	// the DNS-rebinding check of Handler, which refuses a non-loopback Host
	// arriving on a loopback address, is then skipped, so that a reverse
	// proxy may forward its public host name.
	Authenticated bool
}

type limitsKey struct{}

// WithLimits returns a context whose MCP requests Handler limits by l.
func WithLimits(ctx context.Context, l Limits) context.Context {
	return context.WithValue(ctx, limitsKey{}, l)
}

func limitsFrom(ctx context.Context) Limits {
	l, _ := ctx.Value(limitsKey{}).(Limits)
	return l
}

// ErrBusy is what Limits.Acquire returns when every run slot is taken.
var ErrBusy = errors.New("mcpserver: every run slot is taken; retry later")

// httpCall is what Handler knows of the HTTP request carrying a tools/call:
// its context (done when the client disconnects) and the call's JSON-RPC id.
type httpCall struct {
	ctx context.Context
	id  string // the raw JSON of the id; "" when unknown
}

type httpCallKey struct{}

// calls are the tool calls in flight over HTTP, by caller and JSON-RPC id,
// so that a notifications/cancelled arriving on another HTTP request (each
// request is its own session) can cancel the call it names.
type calls struct {
	mu sync.Mutex
	m  map[string]map[*callEntry]struct{}
}

type callEntry struct{ cancel context.CancelFunc }

func callKey(c Caller, id string) string {
	return c.Scope.Tenant + "\x00" + c.Actor + "\x00" + id
}

// add registers cancel under key and returns its removal.
func (cs *calls) add(key string, cancel context.CancelFunc) func() {
	e := &callEntry{cancel: cancel}
	cs.mu.Lock()
	if cs.m == nil {
		cs.m = map[string]map[*callEntry]struct{}{}
	}
	if cs.m[key] == nil {
		cs.m[key] = map[*callEntry]struct{}{}
	}
	cs.m[key][e] = struct{}{}
	cs.mu.Unlock()
	return func() {
		cs.mu.Lock()
		delete(cs.m[key], e)
		if len(cs.m[key]) == 0 {
			delete(cs.m, key)
		}
		cs.mu.Unlock()
	}
}

// cancel cancels the calls registered under key and reports how many.
func (cs *calls) cancel(key string) int {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	for e := range cs.m[key] {
		e.cancel()
	}
	return len(cs.m[key])
}

// limit is the receiving middleware that applies the limits to tool calls:
// a run slot (Limits.Acquire), the timeout, and cancellation when the
// HTTP client goes away or cancels the call.
func (s *Server) limit(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "tools/call" {
			return next(ctx, method, req)
		}
		lim := limitsFrom(ctx)
		if lim.Acquire != nil {
			release, err := lim.Acquire(ctx)
			if err != nil {
				return nil, &jsonrpc.Error{Code: CodeBusy, Message: err.Error()}
			}
			defer release()
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		timeout := minPositive(lim.Timeout, s.cfg.Timeout)
		if timeout > 0 {
			var stop context.CancelFunc
			ctx, stop = context.WithTimeout(ctx, timeout)
			defer stop()
		}
		if hc, ok := ctx.Value(httpCallKey{}).(httpCall); ok {
			defer context.AfterFunc(hc.ctx, cancel)()
			if hc.id != "" {
				defer s.calls.add(callKey(s.caller(ctx), hc.id), cancel)()
			}
		}
		res, err := next(ctx, method, req)
		switch cerr := ctx.Err(); {
		case errors.Is(cerr, context.DeadlineExceeded):
			return nil, &jsonrpc.Error{Code: CodeTimeout, Message: fmt.Sprintf("the call did not finish within the server's limit of %s", timeout)}
		case cerr != nil:
			return nil, &jsonrpc.Error{Code: CodeCancelled, Message: "the call was cancelled"}
		}
		return res, err
	}
}

func minPositive(a, b time.Duration) time.Duration {
	switch {
	case a <= 0:
		return b
	case b <= 0:
		return a
	}
	return min(a, b)
}

// peeked is what Handler reads of a request body before the SDK does.
type peeked struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		RequestID json.RawMessage `json:"requestId"`
	} `json:"params"`
}

// peek reads the method, id and (for notifications/cancelled) requestId
// of a single JSON-RPC message; anything else yields the zero value, and
// the SDK answers it.
func peek(body []byte) peeked {
	var p peeked
	body = bytes.TrimSpace(body)
	if len(body) == 0 || body[0] != '{' {
		return peeked{}
	}
	if json.Unmarshal(body, &p) != nil {
		return peeked{}
	}
	return p
}

// canonicalID is the compact JSON of a JSON-RPC id, so that 7 and 7.0 or
// "a" written with different spacing compare equal; "" for no id.
func canonicalID(raw json.RawMessage) string {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil || v == nil {
		return ""
	}
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

// writeRPCError answers an HTTP request with a JSON-RPC error.
func writeRPCError(w http.ResponseWriter, status int, code int64, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": code, "message": msg}})
	w.Write(b)
}

// rebinding reports a request that arrived on a loopback address with a
// Host header that is not loopback: a browser led there by DNS rebinding.
func rebinding(r *http.Request) bool {
	la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	return ok && la != nil && loopback(la.String()) && !loopback(r.Host)
}

// loopback reports whether host (optionally with a port) names a loopback
// address or localhost.
func loopback(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// serveHTTP is the body of Handler: authentication, the DNS-rebinding
// check, the body limit, cancellation, then the SDK's handler.
func (s *Server) serveHTTP(h http.Handler, callerOf CallerFunc, w http.ResponseWriter, r *http.Request) {
	lim := limitsFrom(r.Context())
	c, ok := CallerFrom(r.Context())
	if !ok {
		c = s.cfg.Caller
	}
	authed := lim.Authenticated
	if callerOf != nil {
		var err error
		if c, err = callerOf(r); err != nil {
			http.Error(w, "mcp: "+err.Error(), http.StatusUnauthorized)
			return
		}
		authed = true
	}
	if !authed && !s.cfg.DisableLocalhostProtection && rebinding(r) {
		http.Error(w, fmt.Sprintf("mcp: forbidden: Host %q on a loopback address (DNS-rebinding protection; authenticate or set DisableLocalhostProtection behind a proxy)", r.Host), http.StatusForbidden)
		return
	}
	ctx := WithCaller(r.Context(), c)
	if r.Method == http.MethodPost && r.Body != nil {
		limit := cmp.Or(lim.MaxBodyBytes, s.cfg.MaxBodyBytes, mcp.DefaultMaxRequestBodyBytes)
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				writeRPCError(w, http.StatusRequestEntityTooLarge, jsonrpc.CodeInvalidRequest, fmt.Sprintf("request body exceeds %d bytes", mbe.Limit))
				return
			}
			writeRPCError(w, http.StatusBadRequest, jsonrpc.CodeParseError, "could not read the request body")
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		switch p := peek(body); p.Method {
		case "tools/call":
			ctx = context.WithValue(ctx, httpCallKey{}, httpCall{ctx: r.Context(), id: canonicalID(p.ID)})
		case "notifications/cancelled":
			if id := canonicalID(p.Params.RequestID); id != "" {
				s.calls.cancel(callKey(c, id))
			}
		}
	}
	h.ServeHTTP(w, r.WithContext(ctx))
}
