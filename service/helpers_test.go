package service

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/adaptrag/adaptrag"
	"github.com/adaptrag/adaptrag/api"
	"github.com/adaptrag/adaptrag/ingest"
	"github.com/adaptrag/adaptrag/kb"
	"github.com/adaptrag/adaptrag/plan"
	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/retrieval/embed"
	"github.com/adaptrag/adaptrag/retrieval/memstore"
	"github.com/adaptrag/adaptrag/samplekb"
)

// Questions of the bundled sample, one per route.
const (
	qChitchat   = "你好，你能做什么？"
	qFactual    = "退货要在几天内发起？"
	qAnalytical = "对比一下差旅报销和招待报销的流程差异"
)

var hashing = embed.NewHashing(embed.HashingConfig{})

// sample is the bundled handbook, built once per test binary.
var sample = sync.OnceValues(func() (*kb.KB, error) {
	return kb.Sample(context.Background(), hashing)
})

// parts are what a test pipeline is built from.
type parts struct {
	deps adaptrag.Deps
	opts adaptrag.Options
}

// sampleParts returns the sample knowledge base's parts, offline.
func sampleParts(t testing.TB) *parts {
	t.Helper()
	k, err := sample()
	if err != nil {
		t.Fatal(err)
	}
	return &parts{
		deps: adaptrag.Deps{Docs: k.Docs, FAQ: k.FAQ, Embedder: hashing},
		opts: adaptrag.Options{Plan: plan.Settings{Sources: samplekb.PlanSources()}},
	}
}

func (p *parts) pipeline(t testing.TB) *adaptrag.Pipeline {
	t.Helper()
	pipe, err := adaptrag.New(context.Background(), p.deps, p.opts)
	if err != nil {
		t.Fatal(err)
	}
	return pipe
}

// Two tenants' handbooks in one store: each has a secret the other must
// never see.
const (
	acmeSecret   = "ACME-LEAVE-7731"
	globexSecret = "GLOBEX-LEAVE-4242"
)

var tenantFiles = map[string]fstest.MapFS{
	"acme": {"hr/leave.md": {Data: []byte("# Acme leave policy\n\n## Annual leave\n\nAcme employees get 15 days of annual leave each year. " +
		"Leave requests are approved by the team lead. Reference " + acmeSecret + ".\n")}},
	"globex": {"hr/leave.md": {Data: []byte("# Globex leave policy\n\n## Annual leave\n\nGlobex employees get 30 days of annual leave each year. " +
		"Leave requests are approved by human resources. Reference " + globexSecret + ".\n")}},
}

// tenantParts builds the two tenants' knowledge base in memory.
func tenantParts(t testing.TB) *parts {
	t.Helper()
	ctx := context.Background()
	docs, err := memstore.Open(ctx, memstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { docs.Close() })
	for tenant, files := range tenantFiles {
		rep, err := ingest.IngestFS(ctx, ingest.Target{Docs: docs}, files, ingest.Options{Tenant: tenant, Embedder: hashing})
		if err == nil {
			err = rep.Err()
		}
		if err != nil || rep.Chunks == 0 {
			t.Fatalf("ingest %s: %v (%d chunks)", tenant, err, rep.Chunks)
		}
	}
	return &parts{deps: adaptrag.Deps{Docs: docs, Embedder: hashing}}
}

// Keys of the tests' key file.
var (
	keyAcme   = Key{Key: "acme-key-0123456789abcdef", Tenant: "acme", Actor: "alice"}
	keyGlobex = Key{Key: "globex-key-0123456789abcdef", Tenant: "globex", Actor: "bob"}
)

// server is a Server under test behind a loopback HTTP server.
type server struct {
	*Server
	url  string
	logs *syncBuffer
}

func newServer(t testing.TB, cfg Config) *server {
	t.Helper()
	logs := &syncBuffer{}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	return &server{Server: s, url: hs.URL, logs: logs}
}

// syncBuffer is a bytes.Buffer safe for concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// call is one request of a test.
type call struct {
	method, path string
	body         any // marshalled to JSON unless a string or []byte
	key          string
	header       map[string]string
	ctx          context.Context
}

func (s *server) do(t testing.TB, c call) *http.Response {
	t.Helper()
	var body io.Reader
	switch b := c.body.(type) {
	case nil:
	case string:
		body = strings.NewReader(b)
	case []byte:
		body = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		body = bytes.NewReader(j)
	}
	ctx := c.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	method := c.method
	if method == "" {
		method = http.MethodPost
	}
	req, err := http.NewRequestWithContext(ctx, method, s.url+c.path, body)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	for k, v := range c.header {
		if k == "Host" {
			req.Host = v
			continue
		}
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	checkWire(t, c.path, resp)
	return resp
}

// result is the JSON of a result, as the tests read it.
type result struct {
	Question string `json:"question"`
	Query    struct {
		Scope struct{ Tenant, Actor string } `json:"scope"`
	} `json:"query"`
	Route struct {
		QueryType  string  `json:"query_type"`
		Confidence float64 `json:"confidence"`
	} `json:"route"`
	Path []string `json:"path"`
	Docs []struct {
		N            int
		Origin, Text string
	} `json:"passages"`
	Answer     string `json:"answer"`
	AnsweredBy string `json:"answered_by"`
	Citations  []struct {
		N               int
		Origin, Locator string
	} `json:"citations"`
	Usage struct {
		Nodes []struct {
			Node      string `json:"node"`
			TokensIn  int    `json:"tokens_in"`
			TokensOut int    `json:"tokens_out"`
		} `json:"nodes"`
	} `json:"usage"`
	TraceID string `json:"trace_id"`
	RunID   string `json:"run_id"`
}

// decodeJSON reads a response body into v and closes it.
func decodeJSON(t testing.TB, resp *http.Response, v any) {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("status %d, body %q: %v", resp.StatusCode, b, err)
	}
}

// wantOK decodes a 200 response.
func wantOK(t testing.TB, resp *http.Response, v any) {
	t.Helper()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("status %d, want 200: %s", resp.StatusCode, b)
	}
	decodeJSON(t, resp, v)
}

// wantError checks an error response's status and code.
func wantError(t testing.TB, resp *http.Response, status int, code Code) apiError {
	t.Helper()
	var body struct {
		Error *apiError `json:"error"`
	}
	decodeJSON(t, resp, &body)
	if resp.StatusCode != status || body.Error == nil || body.Error.Code != code || body.Error.Message == "" {
		t.Fatalf("status %d, error %+v; want %d %s with a message", resp.StatusCode, body.Error, status, code)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("error Content-Type %q", ct)
	}
	return *body.Error
}

// event is one Server-Sent Event.
type event struct {
	name string
	data json.RawMessage
}

// events reads a stream's events as they come.
func events(r io.Reader) func() (event, bool) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	return func() (event, bool) {
		var ev event
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.name != "" || ev.data != nil {
					return ev, true
				}
			case strings.HasPrefix(line, "event: "):
				ev.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				ev.data = append(ev.data, strings.TrimPrefix(line, "data: ")...)
			}
		}
		return ev, false
	}
}

// allEvents reads a whole stream.
func allEvents(t testing.TB, resp *http.Response) []event {
	t.Helper()
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d, Content-Type %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	next := events(resp.Body)
	var evs []event
	for {
		ev, ok := next()
		if !ok {
			return evs
		}
		switch ev.name {
		case "node":
			validate(t, api.SchemaNodeEvent, ev.data)
		case "token":
			validate(t, api.SchemaTokenEvent, ev.data)
		case "result":
			validate(t, api.SchemaResponse, ev.data)
		case "error":
			validate(t, api.SchemaError, ev.data)
		}
		evs = append(evs, ev)
	}
}

var sse = map[string]string{"Accept": "text/event-stream"}

// gated wraps a searcher: each search announces itself on entered, then
// waits for release (or its context, whose error it reports on ended),
// then fails with fail or searches.
type gated struct {
	retrieval.Searcher
	entered chan struct{}
	release chan struct{}
	ended   chan error
	fail    error
}

func newGated(s retrieval.Searcher) *gated {
	return &gated{Searcher: s, entered: make(chan struct{}, 64), release: make(chan struct{}), ended: make(chan error, 64)}
}

func (g *gated) wait(ctx context.Context) error {
	select {
	case g.entered <- struct{}{}:
	default:
	}
	select {
	case <-g.release:
	case <-ctx.Done():
		g.ended <- ctx.Err()
		return ctx.Err()
	}
	return g.fail
}

func (g *gated) SearchDense(ctx context.Context, r retrieval.Request) ([]retrieval.Hit, error) {
	if err := g.wait(ctx); err != nil {
		return nil, err
	}
	return g.Searcher.SearchDense(ctx, r)
}

func (g *gated) SearchSparse(ctx context.Context, r retrieval.Request) ([]retrieval.Hit, error) {
	if err := g.wait(ctx); err != nil {
		return nil, err
	}
	return g.Searcher.(retrieval.SparseSearcher).SearchSparse(ctx, r)
}

func (g *gated) SearchHybrid(ctx context.Context, r retrieval.Request) ([]retrieval.Hit, error) {
	if err := g.wait(ctx); err != nil {
		return nil, err
	}
	return retrieval.SearchHybrid(ctx, g.Searcher, r)
}

// waitEntered waits for a search to start.
func (g *gated) waitEntered(t testing.TB) {
	t.Helper()
	select {
	case <-g.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("no search started")
	}
}

// waitFor polls cond for up to 10s.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }
