package service

import (
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/adaptrag/adaptrag"
	"github.com/adaptrag/adaptrag/graph"
	"github.com/adaptrag/adaptrag/retrieval"
)

func TestAskJSON(t *testing.T) {
	p := sampleParts(t)
	s := newServer(t, Config{Pipeline: p.pipeline(t)})
	resp := s.do(t, call{path: "/v1/ask", body: map[string]any{"question": qFactual}})
	runID := resp.Header.Get("X-Run-Id")
	var raw map[string]json.RawMessage
	wantOK(t, resp, &raw)
	var res result
	b, _ := json.Marshal(raw)
	_ = json.Unmarshal(b, &res)
	if res.Route.QueryType != "factual" || res.Answer == "" || len(res.Citations) == 0 || res.Citations[0].Origin == "" {
		t.Fatalf("route %s, answer %q, citations %+v", res.Route.QueryType, res.Answer, res.Citations)
	}
	if runID == "" || res.RunID != runID {
		t.Errorf("run id %q in the header, %q in the body", runID, res.RunID)
	}
	// The same JSON as "ask --json": every field of the v1 form of the
	// Result, plus the run id.
	direct, err := p.pipeline(t).Ask(t.Context(), adaptrag.Request{Question: qFactual})
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]json.RawMessage
	b, _ = json.Marshal(direct.V1())
	_ = json.Unmarshal(b, &want)
	want["run_id"] = nil
	if got, w := slices.Sorted(maps.Keys(raw)), slices.Sorted(maps.Keys(want)); !slices.Equal(got, w) {
		t.Errorf("fields %v, want %v", got, w)
	}
	if string(raw["answer"]) != string(want["answer"]) || string(raw["path"]) != string(want["path"]) {
		t.Errorf("answer %s path %s, want %s %s", raw["answer"], raw["path"], want["answer"], want["path"])
	}
}

// The stream sends one node event per node in order as each finishes,
// the answer as token events, then the result.
func TestAskStreamSequence(t *testing.T) {
	for _, q := range []string{qChitchat, qFactual, qAnalytical} {
		t.Run(q, func(t *testing.T) {
			s := newServer(t, Config{Pipeline: sampleParts(t).pipeline(t)})
			resp := s.do(t, call{path: "/v1/ask", body: map[string]any{"question": q}, header: sse})
			if cc := resp.Header.Get("Cache-Control"); cc != "no-store" {
				t.Errorf("Cache-Control %q", cc)
			}
			evs := allEvents(t, resp)
			var nodes []string
			var tokens strings.Builder
			var res result
			for i, ev := range evs {
				switch ev.name {
				case "node":
					var n nodeEvent
					if err := json.Unmarshal(ev.data, &n); err != nil {
						t.Fatal(err)
					}
					if n.Step != len(nodes)+1 || tokens.Len() > 0 && n.Node != adaptrag.NodeGenerate {
						t.Errorf("event %d: node %+v out of order", i, n)
					}
					nodes = append(nodes, n.Node)
				case "token":
					var tk tokenEvent
					_ = json.Unmarshal(ev.data, &tk)
					tokens.WriteString(tk.Text)
				case "result":
					if i != len(evs)-1 {
						t.Errorf("result is event %d of %d", i, len(evs))
					}
					if err := json.Unmarshal(ev.data, &res); err != nil {
						t.Fatal(err)
					}
				default:
					t.Errorf("unexpected event %q: %s", ev.name, ev.data)
				}
			}
			if !slices.Equal(nodes, res.Path) || len(nodes) == 0 {
				t.Errorf("node events %v, result path %v", nodes, res.Path)
			}
			if tokens.String() != res.Answer || res.Answer == "" {
				t.Errorf("tokens %q, answer %q", tokens.String(), res.Answer)
			}
			if res.RunID != resp.Header.Get("X-Run-Id") {
				t.Errorf("run id %q, header %q", res.RunID, resp.Header.Get("X-Run-Id"))
			}
		})
	}
}

// Each event is flushed as it happens: the first node events arrive while
// the run is still waiting for the store.
func TestStreamFlushesEachEvent(t *testing.T) {
	p := sampleParts(t)
	g := newGated(p.deps.Docs)
	p.deps.Docs = g
	s := newServer(t, Config{Pipeline: p.pipeline(t)})
	resp := s.do(t, call{path: "/v1/ask", body: map[string]any{"question": qFactual}, header: sse})
	defer resp.Body.Close()
	next := events(resp.Body)
	ev, ok := next()
	if !ok || ev.name != "node" || !strings.Contains(string(ev.data), `"decide"`) {
		t.Fatalf("first event %s %s", ev.name, ev.data)
	}
	g.waitEntered(t) // the run is blocked in the store, yet decide arrived
	close(g.release)
	for ok {
		ev, ok = next()
		if ev.name == "result" {
			return
		}
	}
	t.Fatal("no result")
}

func TestSearch(t *testing.T) {
	s := newServer(t, Config{Pipeline: sampleParts(t).pipeline(t)})
	var res result
	wantOK(t, s.do(t, call{path: "/v1/search", body: map[string]any{"query": "差旅报销流程", "k": 2, "mode": "hybrid"}}), &res)
	if res.AnsweredBy != "search" || len(res.Docs) == 0 || len(res.Docs) > 2 || res.Answer != "" || res.RunID == "" {
		t.Errorf("answered by %q, %d docs, answer %q, run %q", res.AnsweredBy, len(res.Docs), res.Answer, res.RunID)
	}
	for _, d := range res.Docs {
		if d.Origin == "" {
			t.Errorf("passage %d without origin", d.N)
		}
	}
	wantError(t, s.do(t, call{path: "/v1/search", body: map[string]any{"query": "x", "k": -1}}), 400, CodeInvalidRequest)
	wantError(t, s.do(t, call{path: "/v1/search", body: map[string]any{"query": "x", "k": MaxSearchK + 1}}), 400, CodeInvalidRequest)
	wantError(t, s.do(t, call{path: "/v1/search", body: map[string]any{"query": "x", "mode": "bm25"}}), 400, CodeInvalidRequest)
	wantError(t, s.do(t, call{path: "/v1/search", body: map[string]any{"query": " "}}), 400, CodeEmptyQuestion)
}

func TestGraph(t *testing.T) {
	s := newServer(t, Config{Pipeline: sampleParts(t).pipeline(t)})
	for format, ctype := range map[string]string{"": "text/plain", "mermaid": "text/plain", "dot": "text/vnd.graphviz", "text": "text/plain", "json": "application/json"} {
		resp := s.do(t, call{method: "GET", path: "/v1/graph?format=" + format})
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), ctype) || len(b) == 0 {
			t.Errorf("format %q: status %d, Content-Type %q", format, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		if strings.Contains(string(b), "visited") {
			t.Errorf("format %q without a run highlights a path", format)
		}
	}
	var res result
	wantOK(t, s.do(t, call{path: "/v1/ask", body: map[string]any{"question": qAnalytical}}), &res)
	resp := s.do(t, call{method: "GET", path: "/v1/graph?format=mermaid&run=" + res.RunID})
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), "class n_start,n_end,") || !strings.Contains(string(b), "linkStyle") {
		t.Errorf("the run's path is not highlighted:\n%s", b)
	}
	resp = s.do(t, call{method: "GET", path: "/v1/graph?format=text&run=" + res.RunID})
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := "path: __start__ -> " + strings.Join(res.Path, " -> ") + " -> __end__"; !strings.Contains(string(b), want) {
		t.Errorf("text lacks %q:\n%s", want, b)
	}
	wantError(t, s.do(t, call{method: "GET", path: "/v1/graph?run=0123"}), 404, CodeNotFound)
	wantError(t, s.do(t, call{method: "GET", path: "/v1/graph?format=svg"}), 400, CodeInvalidRequest)
}

func TestRunStoreKeepsTheLastRuns(t *testing.T) {
	rs := newRunStore(2)
	rs.put("a", "t", graphPath("x"))
	rs.put("b", "t", graphPath("y"))
	rs.put("c", "t", graphPath("z"))
	if _, ok := rs.get("a", "t"); ok {
		t.Error("the oldest run was kept beyond the limit")
	}
	if p, ok := rs.get("c", "t"); !ok || p.Nodes[0] != "z" {
		t.Errorf("newest run: %v %v", p, ok)
	}
	if _, ok := rs.get("b", "other"); ok {
		t.Error("another tenant saw a run")
	}
	if rs.len() != 2 {
		t.Errorf("%d runs kept", rs.len())
	}
}

func TestHealthAndReadiness(t *testing.T) {
	var down error
	s := newServer(t, Config{Pipeline: sampleParts(t).pipeline(t), Ready: []Check{
		{Name: "store", Check: func(ctx context.Context) error { return down }},
	}})
	var body map[string]any
	wantOK(t, s.do(t, call{method: "GET", path: "/healthz"}), &body)
	wantOK(t, s.do(t, call{method: "GET", path: "/readyz"}), &body)
	if body["status"] != "ready" {
		t.Errorf("readyz %v", body)
	}
	down = retrieval.ErrUnavailable
	resp := s.do(t, call{method: "GET", path: "/readyz"})
	decodeJSON(t, resp, &body)
	if resp.StatusCode != 503 || body["status"] != "not ready" {
		t.Errorf("store down: %d %v", resp.StatusCode, body)
	}
	if !strings.Contains(s.logs.String(), "readiness check failed") {
		t.Error("the failed check was not logged")
	}
	down = nil
	s.Drain()
	resp = s.do(t, call{method: "GET", path: "/readyz"})
	decodeJSON(t, resp, &body)
	if resp.StatusCode != 503 || body["status"] != "shutting down" {
		t.Errorf("draining: %d %v", resp.StatusCode, body)
	}
	wantOK(t, s.do(t, call{method: "GET", path: "/healthz"}), &body)
}

func TestMetrics(t *testing.T) {
	m, err := NewMetrics()
	if err != nil {
		t.Fatal(err)
	}
	p := sampleParts(t)
	p.opts.MeterProvider = m.Provider
	s := newServer(t, Config{Pipeline: p.pipeline(t), Metrics: m.Handler, MeterProvider: m.Provider})
	var res result
	wantOK(t, s.do(t, call{path: "/v1/ask", body: map[string]any{"question": qFactual}}), &res)
	resp := s.do(t, call{path: "/v1/ask", body: map[string]any{"question": ""}})
	resp.Body.Close()
	resp = s.do(t, call{method: "GET", path: "/metrics"})
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`adaptrag_runs_total{answered_by="extractive",outcome="ok",route="factual"} 1`,
		`adaptrag_node_duration_seconds_bucket{node="dense",le="0.001"}`,
		`http_server_request_duration_seconds_count{http_request_method="POST",http_response_status_code="200",http_route="/v1/ask"} 1`,
		`http_server_request_duration_seconds_count{http_request_method="POST",http_response_status_code="400",http_route="/v1/ask"} 1`,
		`go_goroutines`,
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if t.Failed() {
		t.Log(string(b))
	}
	wantError(t, newServer(t, Config{Pipeline: p.pipeline(t)}).do(t, call{method: "GET", path: "/metrics"}), 404, CodeNotFound)
}

func TestPage(t *testing.T) {
	s := newServer(t, Config{Pipeline: sampleParts(t).pipeline(t), JaegerUI: "http://localhost:16686/"})
	resp := s.do(t, call{method: "GET", path: "/"})
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") ||
		!strings.Contains(resp.Header.Get("Content-Security-Policy"), "connect-src 'self'") || !strings.Contains(string(b), `src="/assets/mermaid.tiny.js"`) {
		t.Fatalf("page: %d %v", resp.StatusCode, resp.Header)
	}
	if strings.Contains(string(b), "https://") {
		t.Error("the page refers to another site")
	}
	var cfg uiConfig
	wantOK(t, s.do(t, call{method: "GET", path: "/ui/config.json"}), &cfg)
	if cfg.Auth || cfg.JaegerUI != "http://localhost:16686" {
		t.Errorf("ui config %+v", cfg)
	}
	// The vendored bundle, compressed when the client can take it.
	want, _ := webFS.ReadFile("web/vendor/mermaid.tiny.js")
	resp = s.do(t, call{method: "GET", path: "/assets/mermaid.tiny.js"}) // the client asks for gzip and inflates it
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !resp.Uncompressed || string(b) != string(want) {
		t.Errorf("asset: status %d, uncompressed by the client %v, %d bytes of %d", resp.StatusCode, resp.Uncompressed, len(b), len(want))
	}
	resp = s.do(t, call{method: "GET", path: "/assets/mermaid.tiny.js", header: map[string]string{"If-None-Match": resp.Header.Get("ETag")}})
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match: %d", resp.StatusCode)
	}
	wantError(t, s.do(t, call{method: "GET", path: "/assets/nothing.js"}), 404, CodeNotFound)
}

func TestRoutingErrors(t *testing.T) {
	s := newServer(t, Config{Pipeline: sampleParts(t).pipeline(t)})
	resp := s.do(t, call{method: "GET", path: "/v1/ask"})
	if resp.Header.Get("Allow") != "POST" {
		t.Errorf("Allow %q", resp.Header.Get("Allow"))
	}
	wantError(t, resp, 405, CodeMethodNotAllowed)
	wantError(t, s.do(t, call{method: "DELETE", path: "/v1/graph"}), 405, CodeMethodNotAllowed)
	wantError(t, s.do(t, call{method: "GET", path: "/v2/ask"}), 404, CodeNotFound)
	wantError(t, s.do(t, call{method: "GET", path: "/index.html"}), 404, CodeNotFound)
}

// Without keys, a request must name this machine by a loopback address:
// a web page elsewhere cannot reach the server by rebinding its name.
func TestNoAuthAnswersLoopbackHostsOnly(t *testing.T) {
	s := newServer(t, Config{Pipeline: sampleParts(t).pipeline(t)})
	for host, ok := range map[string]bool{"127.0.0.1:8080": true, "localhost:8080": true, "[::1]:8080": true, "LOCALHOST": true,
		"evil.example:8080": false, "10.0.0.1:8080": false, "localhost.evil.example": false} {
		resp := s.do(t, call{method: "GET", path: "/healthz", header: map[string]string{"Host": host}})
		if ok {
			var b any
			wantOK(t, resp, &b)
		} else {
			wantError(t, resp, 403, CodeForbiddenHost)
		}
	}
	k := newServer(t, Config{Pipeline: sampleParts(t).pipeline(t), Keys: []Key{keyAcme}})
	var b any
	wantOK(t, k.do(t, call{method: "GET", path: "/healthz", header: map[string]string{"Host": "adaptrag.example.com"}}), &b)
}

func TestRecoverPanics(t *testing.T) {
	s := newServer(t, Config{Pipeline: sampleParts(t).pipeline(t)})
	s.mux.HandleFunc("/boom", func(http.ResponseWriter, *http.Request) { panic("boom") })
	wantError(t, s.do(t, call{method: "GET", path: "/boom"}), 500, CodeInternal)
	if !strings.Contains(s.logs.String(), "panic serving a request") {
		t.Error("the panic was not logged")
	}
	// A panic once a stream has begun cuts the response.
	s.mux.HandleFunc("/boom-stream", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "event: node\ndata: {}\n\n")
		_ = http.NewResponseController(w).Flush()
		panic("boom")
	})
	resp := s.do(t, call{method: "GET", path: "/boom-stream"})
	_, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || err == nil {
		t.Errorf("a stream that panicked: status %d, read error %v; want the stream cut", resp.StatusCode, err)
	}
	var b any
	wantOK(t, s.do(t, call{method: "GET", path: "/healthz"}), &b) // still serving
}

func TestNewChecksConfig(t *testing.T) {
	if _, err := New(Config{}); err == nil {
		t.Error("no pipeline accepted")
	}
	p := sampleParts(t).pipeline(t)
	if _, err := New(Config{Pipeline: p, JaegerUI: "javascript:alert(1)"}); err == nil {
		t.Error("a non-http Jaeger URL accepted")
	}
	if _, err := New(Config{Pipeline: p, MaxRuns: -1}); err == nil {
		t.Error("negative MaxRuns accepted")
	}
}

// graphPath is a path through the given nodes.
func graphPath(nodes ...string) (p graph.Path) {
	p.Nodes = nodes
	return p
}
