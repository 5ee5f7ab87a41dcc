package service

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/adaptrag/adaptrag/api"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/")

// schemas are the v1 schemas as GET /v1/schema serves them, resolved once.
var schemas = sync.OnceValues(func() (map[string]*jsonschema.Resolved, error) {
	out := map[string]*jsonschema.Resolved{}
	for _, name := range api.SchemaNames {
		b, err := api.Schema(name)
		if err != nil {
			return nil, err
		}
		var s jsonschema.Schema
		if err := json.Unmarshal(b, &s); err != nil {
			return nil, err
		}
		r, err := s.Resolve(nil)
		if err != nil {
			return nil, err
		}
		out[name] = r
	}
	return out, nil
})

// validate checks body against the v1 schema name.
func validate(t testing.TB, name string, body []byte) {
	t.Helper()
	rs, err := schemas()
	if err != nil {
		t.Fatalf("v1 schemas: %v", err)
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Errorf("%s: not JSON: %v: %.200s", name, err, body)
		return
	}
	if err := rs[name].Validate(v); err != nil {
		t.Errorf("the body does not validate against the v1 %s schema: %v\n%.600s", name, err, body)
	}
}

// checkWire validates every JSON response of an ask or a search against
// the v1 schemas (an error body against the error schema, whatever the
// path), leaving the body readable for the test.
func checkWire(t testing.TB, path string, resp *http.Response) {
	t.Helper()
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		return
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	if err != nil || len(b) == 0 {
		return // the test sees what the client saw
	}
	p, _, _ := strings.Cut(path, "?")
	switch {
	case p == "/readyz" || p == "/healthz":
		// Probes answer their own status bodies.
	case p == "/mcp" || strings.HasPrefix(p, "/mcp/"):
		// MCP speaks JSON-RPC, whose errors are its own.
	case resp.StatusCode >= 400:
		validate(t, api.SchemaError, b)
	case p == "/v1/ask" || p == "/v1/search":
		validate(t, api.SchemaResponse, b)
	case p == "/v1/limits":
		validate(t, api.SchemaLimits, b)
	}
}

// shape is the shape of a JSON value: each object with its keys in order,
// each string, number and boolean replaced by its type, each array by the
// shape of its first element. Values (an answer, a relevance) change with
// the knowledge base and the ranking; the shape changes only with the
// wire format.
func shape(t *testing.T, b []byte) []byte {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out bytes.Buffer
	var walk func() error
	walk = func() error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{':
				out.WriteByte('{')
				for first := true; dec.More(); first = false {
					k, err := dec.Token()
					if err != nil {
						return err
					}
					if !first {
						out.WriteByte(',')
					}
					kb, _ := json.Marshal(k)
					out.Write(kb)
					out.WriteByte(':')
					if err := walk(); err != nil {
						return err
					}
				}
				_, err = dec.Token()
				out.WriteByte('}')
			case '[':
				out.WriteByte('[')
				for first := true; dec.More(); first = false {
					mark := out.Len()
					if err := walk(); err != nil {
						return err
					}
					if !first {
						out.Truncate(mark) // only the first element's shape
					}
				}
				_, err = dec.Token()
				out.WriteByte(']')
			}
			return err
		case string:
			out.WriteString(`"string"`)
		case json.Number:
			out.WriteString(`"number"`)
		case bool:
			out.WriteString(`"boolean"`)
		case nil:
			out.WriteString(`null`)
		}
		return nil
	}
	if err := walk(); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return indent(t, out.Bytes())
}

// golden compares got with testdata/name.golden (rewritten with -update).
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./service -run %s -update to create it)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s changed (go test ./service -run %s -update rewrites it after a deliberate change):\n got: %s\nwant: %s", path, t.Name(), got, want)
	}
}

func indent(t *testing.T, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return append(out.Bytes(), '\n')
}

// The shape of a v1 response, an ask per route and a search, is pinned by
// golden files: a field renamed inside the pipeline cannot change it.
func TestWireGolden(t *testing.T) {
	s := newServer(t, Config{Pipeline: sampleParts(t).pipeline(t)})
	for _, tc := range []struct {
		name, path string
		body       any
	}{
		{"ask_chitchat", "/v1/ask", map[string]any{"question": qChitchat}},
		{"ask_factual", "/v1/ask", map[string]any{"question": qFactual}},
		{"ask_analytical", "/v1/ask", map[string]any{"question": qAnalytical}},
		{"search", "/v1/search", map[string]any{"query": qFactual, "k": 2}},
		{"error_timeout_range", "/v1/ask", map[string]any{"question": qFactual, "timeout_ms": -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := s.do(t, call{path: tc.path, body: tc.body})
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			golden(t, "v1_"+tc.name, shape(t, b))
		})
	}
}

// The schema the server serves is the one the tests validate against, and
// its shape is pinned too.
func TestSchemaEndpoint(t *testing.T) {
	s := newServer(t, Config{Pipeline: sampleParts(t).pipeline(t)})
	for _, name := range api.SchemaNames {
		resp := s.do(t, call{method: "GET", path: "/v1/schema?type=" + name})
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		want, _ := api.Schema(name)
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/schema+json" || !bytes.Equal(bytes.TrimSpace(b), want) {
			t.Errorf("%s: status %d, type %q, %d bytes", name, resp.StatusCode, resp.Header.Get("Content-Type"), len(b))
		}
	}
	resp := s.do(t, call{method: "GET", path: "/v1/schema"})
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	golden(t, "schema_response", b)
	wantError(t, s.do(t, call{method: "GET", path: "/v1/schema?type=nope"}), 400, CodeInvalidRequest)
	// A response with a field the schema does not know fails validation:
	// the check is not vacuous.
	rs, err := schemas()
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	ok := s.do(t, call{path: "/v1/ask", body: map[string]any{"question": qFactual}})
	decodeJSON(t, ok, &v)
	v["docs"] = []any{}
	if rs[api.SchemaResponse].Validate(v) == nil {
		t.Error("a response with an unknown field validated")
	}
	delete(v, "docs")
	v["answered_by"] = "guess"
	if rs[api.SchemaResponse].Validate(v) == nil {
		t.Error("a response with an unknown answered_by validated")
	}
}

// The internal record comes only on request, and then in "debug".
func TestDebugRecord(t *testing.T) {
	s := newServer(t, Config{Pipeline: sampleParts(t).pipeline(t)})
	for _, path := range []string{"/v1/ask", "/v1/search"} {
		field := map[string]string{"/v1/ask": "question", "/v1/search": "query"}[path]
		var plain, debug map[string]json.RawMessage
		wantOK(t, s.do(t, call{path: path, body: map[string]any{field: qAnalytical}}), &plain)
		wantOK(t, s.do(t, call{path: path, body: map[string]any{field: qAnalytical, "debug": true}}), &debug)
		if _, ok := plain["debug"]; ok {
			t.Errorf("%s: a debug record without debug: true", path)
		}
		var rec struct {
			Decision json.RawMessage `json:"decision"`
			Docs     []struct {
				Method string  `json:"method"`
				Score  float64 `json:"score"`
			} `json:"docs"`
		}
		if err := json.Unmarshal(debug["debug"], &rec); err != nil || rec.Decision == nil || len(rec.Docs) == 0 || rec.Docs[0].Method == "" {
			t.Errorf("%s: debug record %.300s (%v)", path, debug["debug"], err)
		}
	}
	// Streamed, too.
	evs := allEvents(t, s.do(t, call{path: "/v1/ask", body: map[string]any{"question": qFactual, "debug": true}, header: sse}))
	last := evs[len(evs)-1]
	var res map[string]json.RawMessage
	if err := json.Unmarshal(last.data, &res); last.name != "result" || err != nil || len(res["debug"]) < 10 {
		t.Errorf("streamed result %s: %.200s", last.name, last.data)
	}
}

// GET /v1/limits reports what the server takes, and the page's question
// box is sized from it.
func TestLimits(t *testing.T) {
	p := sampleParts(t)
	p.opts.MaxQuestionRunes = 1200
	s := newServer(t, Config{Pipeline: p.pipeline(t), MaxQuestionParts: 5})
	var l api.Limits
	wantOK(t, s.do(t, call{method: "GET", path: "/v1/limits"}), &l)
	if l.MaxQuestionRunes != 1200 || l.MaxQuestionParts != 5 || l.MaxTimeoutMs != DefaultTimeout.Milliseconds() || l.MaxSearchK != MaxSearchK {
		t.Errorf("limits %+v", l)
	}
	var cfg struct{ Limits api.Limits }
	wantOK(t, s.do(t, call{method: "GET", path: "/ui/config.json"}), &cfg)
	if cfg.Limits != l {
		t.Errorf("the page's limits %+v differ from %+v", cfg.Limits, l)
	}
}

// manyParts is a compound question of n independent asks.
func manyParts(n int) string {
	qs := []string{"退货要在几天内发起？", "电子发票怎么申请？", "年假有多少天？", "报销需要哪些材料？"}
	var b strings.Builder
	for i := range n {
		b.WriteString(qs[i%len(qs)])
	}
	return b.String()
}
