package service

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/adaptrag/adaptrag/api"
	"github.com/adaptrag/adaptrag/llm"
	"github.com/adaptrag/adaptrag/llm/llmtest"
)

// timeout_ms is compared in milliseconds: no value overflows into a
// negative or tiny run timeout.
func TestTimeoutMsRange(t *testing.T) {
	s := newServer(t, Config{Pipeline: sampleParts(t).pipeline(t), Timeout: 5 * time.Second})
	for _, ms := range []int64{math.MaxInt64, 18446744073710, 5001, -1} {
		for _, path := range []string{"/v1/ask", "/v1/search"} {
			field := map[string]string{"/v1/ask": "question", "/v1/search": "query"}[path]
			e := wantError(t, s.do(t, call{path: path, body: map[string]any{field: qFactual, "timeout_ms": ms}}), 400, CodeInvalidRequest)
			if !strings.Contains(e.Message, "1 to 5000") {
				t.Errorf("%s timeout_ms %d: message %q does not give the range", path, ms, e.Message)
			}
		}
	}
	var res result
	wantOK(t, s.do(t, call{path: "/v1/ask", body: map[string]any{"question": qFactual, "timeout_ms": 5000}}), &res)
}

// A compound question of more parts than the server takes is a 400 that
// says so, not a 500 from the run's step limit.
func TestTooManyParts(t *testing.T) {
	s := newServer(t, Config{Pipeline: sampleParts(t).pipeline(t)})
	long := manyParts(94) // about 900 characters: past the graph's 100 steps
	if n := utf8.RuneCountInString(long); n < 800 || n > 2000 {
		t.Fatalf("the question has %d characters", n)
	}
	for _, path := range []string{"/v1/ask", "/v1/search"} {
		field := map[string]string{"/v1/ask": "question", "/v1/search": "query"}[path]
		e := wantError(t, s.do(t, call{path: path, body: map[string]any{field: long}}), 400, CodeTooManyParts)
		if !strings.Contains(e.Message, "94") || !strings.Contains(e.Message, fmt.Sprint(DefaultMaxQuestionParts)) {
			t.Errorf("%s: message %q", path, e.Message)
		}
	}
	var res struct {
		Parts []api.Part `json:"parts"`
	}
	wantOK(t, s.do(t, call{path: "/v1/ask", body: map[string]any{"question": manyParts(DefaultMaxQuestionParts)}}), &res)
	if len(res.Parts) != DefaultMaxQuestionParts {
		t.Errorf("%d parts answered, want %d", len(res.Parts), DefaultMaxQuestionParts)
	}
}

// serveOn runs s through Serve on a loopback listener until the test ends.
func serveOn(t *testing.T, s *Server) (addr string, stop func() error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln, 5*time.Second) }()
	var once sync.Once
	var serr error
	stop = func() error {
		once.Do(func() { cancel(); serr = <-done })
		return serr
	}
	t.Cleanup(func() { _ = stop() })
	return ln.Addr().String(), stop
}

// A body slower than the read timeout is a 408 whose message names no
// socket address.
func TestSlowBody(t *testing.T) {
	s, err := New(Config{Pipeline: sampleParts(t).pipeline(t), Logger: discard(), DrainDelay: -1})
	if err != nil {
		t.Fatal(err)
	}
	s.readTimeout = 200 * time.Millisecond
	addr, _ := serveOn(t, s)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	body := `{"question": "` + qFactual + `"}`
	fmt.Fprintf(c, "POST /v1/ask HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", addr, len(body), body[:5])
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	checkWire(t, "/v1/ask", resp)
	e := wantError(t, resp, http.StatusRequestTimeout, CodeRequestTimeout)
	host, _, _ := net.SplitHostPort(addr)
	if strings.Contains(e.Message, host) || strings.Contains(e.Message, "tcp") {
		t.Errorf("the message names the connection: %q", e.Message)
	}
}

// A client that leaves before its answer is logged as such (499), never
// as a 200.
func TestClientClosedIsLogged(t *testing.T) {
	p := sampleParts(t)
	g := newGated(p.deps.Docs)
	p.deps.Docs = g
	s := newServer(t, Config{Pipeline: p.pipeline(t)})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		req, _ := http.NewRequestWithContext(ctx, "POST", s.url+"/v1/ask", strings.NewReader(`{"question": "`+qFactual+`"}`))
		req.Header.Set("Content-Type", "application/json")
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	g.waitEntered(t)
	cancel()
	<-done
	waitFor(t, "the request log line", func() bool { return strings.Contains(s.logs.String(), "msg=request") })
	var line string
	for l := range strings.SplitSeq(s.logs.String(), "\n") {
		if strings.Contains(l, "msg=request") && strings.Contains(l, "/v1/ask") {
			line = l
		}
	}
	if !strings.Contains(line, "status=499") || !strings.Contains(line, "client_closed=true") {
		t.Errorf("request log line %q, want status=499 client_closed=true", line)
	}
}

// Two Authorization headers are refused: neither may silently win.
func TestTwoAuthorizationHeaders(t *testing.T) {
	s := newServer(t, Config{Pipeline: tenantParts(t).pipeline(t), Keys: []Key{keyAcme, keyGlobex}})
	req, _ := http.NewRequest("POST", s.url+"/v1/ask", strings.NewReader(`{"question": "How many days of annual leave?"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Add("Authorization", "Bearer "+keyAcme.Key)
	req.Header.Add("Authorization", "Bearer "+keyGlobex.Key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	checkWire(t, "/v1/ask", resp)
	e := wantError(t, resp, 400, CodeInvalidRequest)
	if !strings.Contains(e.Message, "Authorization") {
		t.Errorf("message %q", e.Message)
	}
}

// After its context ends, Serve keeps answering for DrainDelay with
// /readyz at 503, so a load balancer sees the server leave before the
// listener closes.
func TestPreDrain(t *testing.T) {
	s, err := New(Config{Pipeline: sampleParts(t).pipeline(t), Logger: discard(), DrainDelay: 400 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	addr, stop := serveOn(t, s)
	ready := func() (int, error) {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	if code, err := ready(); code != 200 {
		t.Fatalf("before shutdown: %d %v", code, err)
	}
	stopped := make(chan error, 1)
	start := time.Now()
	go func() { stopped <- stop() }()
	waitFor(t, "draining", s.draining.Load)
	code, err := ready()
	if code != http.StatusServiceUnavailable || err != nil {
		t.Fatalf("while draining /readyz answered %d %v, want 503", code, err)
	}
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 400*time.Millisecond {
		t.Errorf("Serve returned %v after its context ended, before the drain delay", d)
	}
	if _, err := ready(); err == nil {
		t.Error("the listener is still open after Serve returned")
	}
}

// A model answer cut by the run's timeout is never returned as the
// model's answer: on SSE with a 3s timeout and a model that streams for
// longer, no run ends answered_by "generate" with part of the answer, and
// none counts as outcome "ok".
func TestCutAnswerIsNotAnAnswer(t *testing.T) {
	const n = 8
	full := strings.Repeat("tok ", 60) // 60 deltas, 80ms apart: about 5s
	srv := llmtest.NewServer(t, llmtest.Fixed(llmtest.Reply{Content: full, ChunkDelay: 80 * time.Millisecond}))
	gen, err := llm.NewOpenAI(llm.Config{BaseURL: srv.URL, APIKey: "test", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	reader := sdkmetric.NewManualReader()
	p := sampleParts(t)
	p.deps.Generator = gen
	p.opts.MeterProvider = sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	s := newServer(t, Config{Pipeline: p.pipeline(t), Timeout: 3 * time.Second})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			q := []string{qFactual, qAnalytical}[i%2]
			evs := allEvents(t, s.do(t, call{path: "/v1/ask", body: map[string]any{"question": q}, header: sse}))
			last := evs[len(evs)-1]
			switch last.name {
			case "error":
				var e api.ErrorBody
				_ = json.Unmarshal(last.data, &e)
				if e.Error.Code != string(CodeTimeout) {
					t.Errorf("run %d: error %+v, want a timeout", i, e.Error)
				}
			case "result":
				var res api.Response
				_ = json.Unmarshal(last.data, &res)
				if res.AnsweredBy == api.ByModel {
					t.Errorf("run %d: a cut answer returned as the model's: %q", i, res.Answer)
				}
			default:
				t.Errorf("run %d: the stream ended with %q", i, last.name)
			}
		})
	}
	wg.Wait()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	ok, total := runsByOutcome(rm)
	if total != n || ok != 0 {
		t.Errorf("adaptrag.runs: %d runs, %d with outcome ok; want %d, none ok", total, ok, n)
	}
}

func runsByOutcome(rm metricdata.ResourceMetrics) (ok, total int64) {
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "adaptrag.runs" {
				continue
			}
			for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
				total += dp.Value
				if v, _ := dp.Attributes.Value("outcome"); v.AsString() == "ok" {
					ok += dp.Value
				}
			}
		}
	}
	return ok, total
}

// A server that answers "stream": true with a plain completion answers
// Stream as it answers Ask: with the model, no warning.
func TestStreamOnServerThatDoesNotStream(t *testing.T) {
	const answer = "无理由退货须在签收后 7 天内发起 [1]。"
	srv := llmtest.NewServer(t, llmtest.Fixed(llmtest.Reply{Content: answer, IgnoreStream: true}))
	gen, err := llm.NewOpenAI(llm.Config{BaseURL: srv.URL, APIKey: "test", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	p := sampleParts(t)
	p.deps.Generator = gen
	s := newServer(t, Config{Pipeline: p.pipeline(t)})
	var asked api.Response
	wantOK(t, s.do(t, call{path: "/v1/ask", body: map[string]any{"question": qFactual}}), &asked)
	evs := allEvents(t, s.do(t, call{path: "/v1/ask", body: map[string]any{"question": qFactual}, header: sse}))
	var streamed api.Response
	if last := evs[len(evs)-1]; last.name != "result" || json.Unmarshal(last.data, &streamed) != nil {
		t.Fatalf("the stream ended with %s: %s", last.name, last.data)
	}
	for _, r := range []api.Response{asked, streamed} {
		if r.AnsweredBy != api.ByModel || r.Answer != answer || len(r.Warnings) != 0 {
			t.Errorf("answered by %s: %q, warnings %+v", r.AnsweredBy, r.Answer, r.Warnings)
		}
	}
}

// A client that leaves a stream while the model writes does not leave a
// run counted as outcome "ok" with the part of the answer it had.
func TestAbandonedStreamIsNotOK(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Fixed(llmtest.Reply{Content: strings.Repeat("tok ", 50), ChunkDelay: 40 * time.Millisecond}))
	gen, err := llm.NewOpenAI(llm.Config{BaseURL: srv.URL, APIKey: "test", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	reader := sdkmetric.NewManualReader()
	p := sampleParts(t)
	p.deps.Generator = gen
	p.opts.MeterProvider = sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	s := newServer(t, Config{Pipeline: p.pipeline(t)})
	for range 3 {
		ctx, cancel := context.WithCancel(t.Context())
		resp := s.do(t, call{path: "/v1/ask", body: map[string]any{"question": qFactual}, header: sse, ctx: ctx})
		next := events(resp.Body)
		for {
			ev, ok := next()
			if !ok {
				t.Fatal("the stream ended before a token")
			}
			if ev.name == "token" {
				break
			}
		}
		cancel() // leave after the first piece of the answer
		resp.Body.Close()
	}
	waitFor(t, "the runs to end", func() bool { return len(s.sem) == 0 })
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	if ok, total := runsByOutcome(rm); ok != 0 {
		t.Errorf("%d of %d abandoned runs counted as outcome ok", ok, total)
	}
}
