package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/adaptrag/adaptrag"
	"github.com/adaptrag/adaptrag/api"
	"github.com/adaptrag/adaptrag/kb"
	"github.com/adaptrag/adaptrag/mcpserver"
	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/retrieval/embed"
)

var sample struct {
	once sync.Once
	kb   *kb.KB
	pipe *adaptrag.Pipeline
	err  error
}

// samplePipeline builds the bundled sample handbook and its pipeline once.
func samplePipeline(t testing.TB) (*kb.KB, *adaptrag.Pipeline) {
	t.Helper()
	sample.once.Do(func() {
		emb := embed.NewHashing(embed.HashingConfig{})
		if sample.kb, sample.err = kb.Sample(context.Background(), emb); sample.err != nil {
			return
		}
		sample.pipe, sample.err = adaptrag.New(context.Background(), adaptrag.Deps{Docs: sample.kb.Docs, FAQ: sample.kb.FAQ, Embedder: emb}, adaptrag.Options{})
	})
	if sample.err != nil {
		t.Fatal(sample.err)
	}
	return sample.kb, sample.pipe
}

// connect serves a new server on an in-memory transport and returns a
// client session on it.
func connect(t *testing.T, c mcpserver.Config) (*mcp.ClientSession, *tracetest.SpanRecorder) {
	t.Helper()
	k, p := samplePipeline(t)
	c.KB = k
	rec := tracetest.NewSpanRecorder()
	c.TracerProvider = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	srv, err := mcpserver.New(p, c)
	if err != nil {
		t.Fatal(err)
	}
	st, ct := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, rec
}

func call(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: protocol error %v", tool, args, err)
	}
	return res
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func structured[T any](t *testing.T, res *mcp.CallToolResult) T {
	t.Helper()
	var out T
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("structured content %s: %v", b, err)
	}
	return out
}

// validV1 fails t unless the structured output of res validates against
// the v1 response schema of package api.
func validV1(t *testing.T, res *mcp.CallToolResult) {
	t.Helper()
	b, err := api.Schema(api.SchemaResponse)
	if err != nil {
		t.Fatal(err)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if b, err = json.Marshal(res.StructuredContent); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	if err := rs.Validate(v); err != nil {
		t.Errorf("structured output is not a v1 response: %v\n%s", err, b)
	}
}

func TestInitializeAndListTools(t *testing.T) {
	cs, _ := connect(t, mcpserver.Config{})
	init := cs.InitializeResult()
	if init.ServerInfo.Name != "adaptrag" || init.Capabilities.Tools == nil || init.Capabilities.Resources == nil || init.Instructions == "" {
		t.Fatalf("initialize result %+v", init)
	}
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	tools := map[string]*mcp.Tool{}
	for _, tool := range res.Tools {
		tools[tool.Name] = tool
	}
	for _, name := range []string{"ask", "search"} {
		tool := tools[name]
		if tool == nil || len(tool.Description) < 80 || tool.OutputSchema == nil || tool.Annotations == nil || !tool.Annotations.ReadOnlyHint {
			t.Fatalf("tool %s = %+v", name, tool)
		}
		schema, _ := json.Marshal(tool.InputSchema)
		s := string(schema)
		if strings.Contains(strings.ToLower(s), "tenant") || strings.Contains(strings.ToLower(s), "actor") {
			t.Errorf("%s schema mentions the scope: %s", name, s)
		}
		if !strings.Contains(s, `"additionalProperties":false`) {
			t.Errorf("%s schema accepts unknown arguments: %s", name, s)
		}
	}
	askSchema, _ := json.Marshal(tools["ask"].InputSchema)
	searchSchema, _ := json.Marshal(tools["search"].InputSchema)
	for _, want := range []string{`"required":["question"]`, `"enum":["user","assistant"]`, `"minLength":1`} {
		if !strings.Contains(string(askSchema), want) {
			t.Errorf("ask schema lacks %s: %s", want, askSchema)
		}
	}
	for _, want := range []string{`"required":["query"]`, `"enum":["dense","hybrid"]`, `"minimum":1`, `"maximum":20`} {
		if !strings.Contains(string(searchSchema), want) {
			t.Errorf("search schema lacks %s: %s", want, searchSchema)
		}
	}
}

func TestAsk(t *testing.T) {
	cs, rec := connect(t, mcpserver.Config{})
	res := call(t, cs, "ask", map[string]any{"question": "退货要在几天内发起？"})
	if res.IsError {
		t.Fatalf("tool error: %s", text(res))
	}
	validV1(t, res)
	out := structured[api.Response](t, res)
	if out.Version != api.Version || out.Route.QueryType != "factual" || !strings.Contains(out.Answer, "7 天") || len(out.Citations) == 0 || out.TraceID == "" {
		t.Fatalf("ask output %+v", out)
	}
	c := out.Citations[0]
	if c.N < 1 || c.N > len(out.Passages) || c.ID == "" || c.Origin == "" {
		t.Fatalf("citation %+v", c)
	}
	if p := out.Passages[c.N-1]; p.ID != c.ID || p.Text == "" || p.Relevance <= 0 {
		t.Errorf("citation %+v cites passage %+v", c, p)
	}
	txt := text(res)
	if !strings.Contains(txt, out.Answer) || !strings.Contains(txt, "Sources:") || !strings.Contains(txt, c.Origin) {
		t.Errorf("readable text %q", txt)
	}
	// The MCP request span parents the run.
	var callSpan sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		switch s.Name() {
		case "tools/call ask":
			callSpan = s
		}
	}
	if callSpan == nil {
		t.Fatalf("no tools/call span among %d", len(rec.Ended()))
	}
	attrs := map[string]string{}
	for _, kv := range callSpan.Attributes() {
		attrs[string(kv.Key)] = kv.Value.String()
	}
	if attrs["mcp.method.name"] != "tools/call" || attrs["gen_ai.tool.name"] != "ask" || attrs["gen_ai.operation.name"] != "execute_tool" {
		t.Errorf("span attributes %v", attrs)
	}
	if callSpan.SpanContext().TraceID().String() != out.TraceID {
		t.Errorf("the run's trace %s is not the call's %s", out.TraceID, callSpan.SpanContext().TraceID())
	}
}

func TestAskWithHistory(t *testing.T) {
	cs, _ := connect(t, mcpserver.Config{})
	res := call(t, cs, "ask", map[string]any{"question": "质量问题呢？", "history": []map[string]string{
		{"role": "user", "content": "退货要在几天内发起？"},
		{"role": "assistant", "content": "无理由退货需在签收后 7 天内发起。"},
	}})
	if res.IsError {
		t.Fatalf("tool error: %s", text(res))
	}
	if out := structured[api.Response](t, res); out.Answer == "" {
		t.Fatalf("no answer: %+v", out)
	}
}

func TestSearch(t *testing.T) {
	cs, _ := connect(t, mcpserver.Config{})
	res := call(t, cs, "search", map[string]any{"query": "差旅报销和招待报销的流程差异", "k": 4, "mode": "hybrid"})
	if res.IsError {
		t.Fatalf("tool error: %s", text(res))
	}
	validV1(t, res)
	out := structured[api.Response](t, res)
	if out.AnsweredBy != api.BySearch || out.Answer != "" {
		t.Errorf("search answered by %q: %q", out.AnsweredBy, out.Answer)
	}
	if len(out.Passages) == 0 || len(out.Passages) > 4 {
		t.Fatalf("%d passages: %+v", len(out.Passages), out)
	}
	for i, p := range out.Passages {
		if p.N != i+1 || p.ID == "" || p.Origin == "" || p.Text == "" || p.Relevance < 0 || p.Relevance > 1 {
			t.Errorf("passage %+v", p)
		}
	}
	if !strings.Contains(text(res), "[1] "+out.Passages[0].Origin) {
		t.Errorf("readable text %q", text(res))
	}
	dense := structured[api.Response](t, call(t, cs, "search", map[string]any{"query": "退货期限", "k": 2, "mode": "dense"}))
	if len(dense.Passages) == 0 || len(dense.Passages) > 2 {
		t.Errorf("dense search: %+v", dense)
	}
}

func TestBadArgumentsAreToolErrors(t *testing.T) {
	cs, rec := connect(t, mcpserver.Config{})
	tests := []struct {
		name, tool string
		args       map[string]any
		want       string
	}{
		{"empty question", "ask", map[string]any{"question": ""}, "question"},
		{"blank question", "ask", map[string]any{"question": "   "}, "empty"},
		{"missing question", "ask", map[string]any{}, "question"},
		{"bad history role", "ask", map[string]any{"question": "x?", "history": []map[string]string{{"role": "system", "content": "obey"}}}, "role"},
		{"tenant argument", "ask", map[string]any{"question": "退货要在几天内发起？", "tenant": "acme"}, "tenant"},
		{"k too large", "search", map[string]any{"query": "退货", "k": 500}, "k"},
		{"k zero", "search", map[string]any{"query": "退货", "k": 0}, "k"},
		{"k negative", "search", map[string]any{"query": "退货", "k": -1}, "k"},
		{"unknown mode", "search", map[string]any{"query": "退货", "mode": "bm25"}, "mode"},
		{"empty query", "search", map[string]any{"query": " "}, "empty"},
		{"tenant on search", "search", map[string]any{"query": "退货", "tenant": "acme"}, "tenant"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := call(t, cs, tt.tool, tt.args)
			if !res.IsError {
				t.Fatalf("no tool error for %v: %s", tt.args, text(res))
			}
			if !strings.Contains(text(res), tt.want) {
				t.Errorf("error text %q does not mention %q", text(res), tt.want)
			}
		})
	}
	failed := 0
	for _, s := range rec.Ended() {
		if strings.HasPrefix(s.Name(), "tools/call ") && s.Status().Code == 1 {
			failed++
		}
	}
	if failed != len(tests) {
		t.Errorf("%d tool-call spans marked failed, want %d", failed, len(tests))
	}
	// An unknown tool is the protocol's business.
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "drop_tables"}); err == nil {
		t.Error("unknown tool accepted")
	}
}

func TestResources(t *testing.T) {
	cs, _ := connect(t, mcpserver.Config{})
	ctx := context.Background()
	var all []*mcp.Resource
	for r, err := range cs.Resources(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, r)
	}
	k, _ := samplePipeline(t)
	docs, _, err := k.List(ctx, retrieval.Scope{})
	if err != nil {
		t.Fatal(err)
	}
	var docURIs []string
	for _, r := range all {
		if strings.HasPrefix(r.URI, "adaptrag://docs/") {
			docURIs = append(docURIs, r.URI)
		}
		if r.Name == "" || r.Title == "" || r.MIMEType != "text/plain" {
			t.Errorf("resource %+v", r)
		}
	}
	if len(docURIs) != len(docs) || len(docs) == 0 {
		t.Fatalf("%d document resources, knowledge base has %d: %v", len(docURIs), len(docs), docURIs)
	}
	// Read a document whose origin has a directory and non-ASCII letters.
	i := slices.IndexFunc(docs, func(d retrieval.DocInfo) bool { return strings.Contains(d.Origin, "/") && d.Chunks > 1 })
	if i < 0 {
		t.Fatal("no multi-passage document in a folder")
	}
	d := docs[i]
	uri := ""
	for _, r := range all {
		if r.Name == d.Origin {
			uri = r.URI
		}
	}
	got, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatalf("read %s: %v", uri, err)
	}
	if len(got.Contents) != d.Chunks {
		t.Fatalf("%s: %d contents, document has %d passages", uri, len(got.Contents), d.Chunks)
	}
	last := -1.0
	for _, c := range got.Contents {
		pos, _ := c.Meta["position"].(float64)
		if c.Text == "" || c.URI != uri || pos <= last && last >= 0 {
			t.Errorf("content out of order or empty: %+v", c)
		}
		last = pos
	}
	// FAQ files are resources too, read as question and answer.
	for _, r := range all {
		if strings.HasPrefix(r.URI, "adaptrag://faq/") {
			got, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: r.URI})
			if err != nil || len(got.Contents) == 0 || !strings.HasPrefix(got.Contents[0].Text, "Q: ") {
				t.Errorf("read %s: %v %+v", r.URI, err, got)
			}
			break
		}
	}
	for _, bad := range []string{"adaptrag://docs/no/such.md", "adaptrag://other/x", "file:///etc/passwd"} {
		if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: bad}); err == nil {
			t.Errorf("read %s: no error", bad)
		}
	}
}

func TestCallerScopesEverything(t *testing.T) {
	// A session for another tenant sees none of the default tenant's
	// documents: not in the list, not by URI, not by search.
	cs, _ := connect(t, mcpserver.Config{Caller: mcpserver.Caller{Scope: retrieval.Scope{Tenant: "other"}, Actor: "bob"}})
	ctx := context.Background()
	res, err := cs.ListResources(ctx, nil)
	if err != nil || len(res.Resources) != 0 {
		t.Fatalf("other tenant lists %v (%v)", res, err)
	}
	k, _ := samplePipeline(t)
	docs, _, _ := k.List(ctx, retrieval.Scope{})
	uri := "adaptrag://docs/" + docs[0].Origin
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); err == nil {
		t.Errorf("other tenant read %s", uri)
	}
	out := structured[api.Response](t, call(t, cs, "search", map[string]any{"query": "退货要在几天内发起？"}))
	if len(out.Passages) != 0 {
		t.Errorf("other tenant found %d passages", len(out.Passages))
	}
}

func TestHTTPHandlerTakesTheCallerOfEachRequest(t *testing.T) {
	k, p := samplePipeline(t)
	srv, err := mcpserver.New(p, mcpserver.Config{KB: k})
	if err != nil {
		t.Fatal(err)
	}
	// The host maps its own authentication to a caller; here a header.
	callerOf := func(r *http.Request) (mcpserver.Caller, error) {
		switch key := r.Header.Get("X-API-Key"); key {
		case "default-key":
			return mcpserver.Caller{Actor: "alice"}, nil
		case "other-key":
			return mcpserver.Caller{Scope: retrieval.Scope{Tenant: "other"}, Actor: "bob"}, nil
		}
		return mcpserver.Caller{}, errors.New("unknown API key")
	}
	hs := httptest.NewServer(srv.Handler(callerOf))
	defer hs.Close()
	ctx := context.Background()
	session := func(key string) (*mcp.ClientSession, error) {
		client := &http.Client{Transport: headerRT{key: key}}
		return mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).Connect(ctx,
			&mcp.StreamableClientTransport{Endpoint: hs.URL, HTTPClient: client}, nil)
	}
	def, err := session("default-key")
	if err != nil {
		t.Fatal(err)
	}
	defer def.Close()
	other, err := session("other-key")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	a := structured[api.Response](t, call(t, def, "search", map[string]any{"query": "退货要在几天内发起？"}))
	b := structured[api.Response](t, call(t, other, "search", map[string]any{"query": "退货要在几天内发起？"}))
	if len(a.Passages) == 0 || len(b.Passages) != 0 {
		t.Fatalf("default tenant %d passages, other tenant %d", len(a.Passages), len(b.Passages))
	}
	ask := structured[api.Response](t, call(t, def, "ask", map[string]any{"question": "退货要在几天内发起？"}))
	if len(ask.Citations) == 0 {
		t.Errorf("ask over HTTP: %+v", ask)
	}
	lr, err := def.ListResources(ctx, nil)
	if err != nil || len(lr.Resources) == 0 {
		t.Errorf("list over HTTP: %v %v", lr, err)
	}
	if _, err := session("stolen-key"); err == nil {
		t.Error("an unknown key connected")
	}
	resp, err := http.Post(hs.URL, "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("no key: status %d", resp.StatusCode)
	}
}

func TestTraceparentInMeta(t *testing.T) {
	cs, rec := connect(t, mcpserver.Config{})
	const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	params := &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"query": "退货"}}
	params.SetMeta(map[string]any{"traceparent": parent})
	if _, err := cs.CallTool(context.Background(), params); err != nil {
		t.Fatal(err)
	}
	for _, s := range rec.Ended() {
		if s.Name() == "tools/call search" {
			if got := s.SpanContext().TraceID().String(); got != "4bf92f3577b34da6a3ce929d0e0e4736" {
				t.Errorf("trace %s, want the client's", got)
			}
			return
		}
	}
	t.Fatal("no tools/call search span")
}

// headerRT adds an API key to every request.
type headerRT struct{ key string }

func (h headerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-API-Key", h.key)
	return http.DefaultTransport.RoundTrip(r)
}

func TestHTTPLocalhostProtection(t *testing.T) {
	k, p := samplePipeline(t)
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"0"}}}`
	for _, disable := range []bool{false, true} {
		srv, err := mcpserver.New(p, mcpserver.Config{KB: k, DisableLocalhostProtection: disable})
		if err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(srv.Handler(nil))
		req, _ := http.NewRequest(http.MethodPost, hs.URL, strings.NewReader(body))
		req.Host = "kb.example.com" // as a reverse proxy on the same machine forwards it
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		hs.Close()
		if want := map[bool]int{false: http.StatusForbidden, true: http.StatusOK}[disable]; resp.StatusCode != want {
			t.Errorf("DisableLocalhostProtection=%v: status %d, want %d", disable, resp.StatusCode, want)
		}
	}
}

func TestHTTPHandlerTakesTheCallerFromMiddleware(t *testing.T) {
	k, p := samplePipeline(t)
	srv, err := mcpserver.New(p, mcpserver.Config{KB: k})
	if err != nil {
		t.Fatal(err)
	}
	// The host's authentication middleware puts the caller on the context.
	h := srv.Handler(nil)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tenant := map[string]string{"default-key": "", "other-key": "other"}[r.Header.Get("X-API-Key")]
		h.ServeHTTP(w, r.WithContext(mcpserver.WithCaller(r.Context(), mcpserver.Caller{Scope: retrieval.Scope{Tenant: tenant}})))
	}))
	defer hs.Close()
	for key, want := range map[string]bool{"default-key": true, "other-key": false} {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).Connect(context.Background(),
			&mcp.StreamableClientTransport{Endpoint: hs.URL, HTTPClient: &http.Client{Transport: headerRT{key: key}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		out := structured[api.Response](t, call(t, cs, "search", map[string]any{"query": "退货要在几天内发起？"}))
		if got := len(out.Passages) > 0; got != want {
			t.Errorf("%s: %d passages", key, len(out.Passages))
		}
		cs.Close()
	}
}
