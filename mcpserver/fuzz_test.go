package mcpserver_test

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/adaptrag/adaptrag/mcpserver"
)

// allMethods are every method of the protocol a client can send a server,
// and one that does not exist.
var allMethods = []string{
	"initialize", "ping", "tools/list", "tools/call", "resources/list", "resources/read", "resources/templates/list",
	"resources/subscribe", "resources/unsubscribe", "prompts/list", "prompts/get", "completion/complete", "logging/setLevel",
	"server/discover", "subscriptions/listen", "elicitation/create", "sampling/createMessage", "roots/list",
	"notifications/initialized", "notifications/cancelled", "notifications/progress", "notifications/roots/list_changed",
	"notifications/message", "no/such/method", "",
}

// paramShapes are the params a fuzzed request carries: missing, null,
// wrong-typed, half-right and oversized.
var paramShapes = []string{
	``, `,"params":null`, `,"params":{}`, `,"params":1`, `,"params":"x"`, `,"params":true`, `,"params":[]`, `,"params":[1,2]`,
	`,"params":{"_meta":"x"}`, `,"params":{"_meta":{"progressToken":{}}}`, `,"params":{"_meta":{"traceparent":5}}`,
	`,"params":{"cursor":5}`, `,"params":{"cursor":"@@"}`, `,"params":{"uri":5}`, `,"params":{"uri":"adaptrag://docs/%zz"}`,
	`,"params":{"name":5}`, `,"params":{"name":"ask"}`, `,"params":{"name":"ask","arguments":null}`,
	`,"params":{"name":"ask","arguments":[]}`, `,"params":{"name":"ask","arguments":{"question":5}}`,
	`,"params":{"name":"search","arguments":{"query":"退货","k":"many"}}`, `,"params":{"name":"search","arguments":{"query":"退货","k":1e309}}`,
	`,"params":{"name":"fetch","arguments":{"id":{}}}`, `,"params":{"name":"sources","arguments":{"x":1}}`,
	`,"params":{"name":"search","arguments":{"query":"` + strings.Repeat("退", 20000) + `"}}`,
	`,"params":{"name":"ask","arguments":{"question":"x","history":` + strings.Repeat(`[`, 5000) + strings.Repeat(`]`, 5000) + `}}}`,
	`,"params":{"protocolVersion":null,"capabilities":null,"clientInfo":null}`, `,"params":{"requestId":null}`,
	`,"params":{"level":"nonsense"}`, `,"params":{"ref":null,"argument":null}`,
}

// idShapes are the ids a fuzzed request carries; "" sends none (a
// notification). Every method and params shape goes with the first two;
// the odd ids go with a few methods.
var idShapes = []string{`7`, ``, `"s"`, `null`, `{}`, `1.5`, `-1`, `99999999999999999999`}

var oddIDMethods = []string{"ping", "tools/list", "tools/call"}

// garbage are lines that are not one JSON-RPC request.
var garbage = []string{
	`garbage{`, `{`, `}`, `[]`, `[{}]`, `[1,2]`, `null`, `5`, `"x"`, `{"foo":1}`, `{"jsonrpc":"1.0","id":1,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":1}`, `{"jsonrpc":"2.0","id":1,"result":{}}`, `{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"x"}}`,
	`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
	`[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","method":"notifications/initialized"}]`,
	"\xff\xfe", `{"jsonrpc":"2.0","id":1,"method":"ping"}{"jsonrpc":"2.0","id":2,"method":"ping"}`,
	strings.Repeat(" ", 1000) + `{"jsonrpc":"2.0","id":3,"method":"ping"}`,
}

// fuzzCases are the table of the fuzzer: every method with every params
// shape and id shape, then the garbage.
func fuzzCases() []string {
	var cases []string
	add := func(m, p, id string) {
		idPart := ""
		if id != "" {
			idPart = `"id":` + id + `,`
		}
		cases = append(cases, `{"jsonrpc":"2.0",`+idPart+`"method":"`+m+`"`+p+`}`)
	}
	for _, m := range allMethods {
		for _, p := range paramShapes {
			for _, id := range idShapes[:2] {
				add(m, p, id)
			}
		}
	}
	for _, m := range oddIDMethods {
		for _, p := range paramShapes[:3] {
			for _, id := range idShapes[2:] {
				add(m, p, id)
			}
		}
	}
	// One body of 3 MiB, under the 4 MiB limit and far over every
	// argument's.
	cases = append(cases, `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"ask","arguments":{"question":"`+strings.Repeat("退", 1<<20)+`"}}}`)
	return append(cases, garbage...)
}

// TestRawFuzzTable sends every case over stdio-like pipes and over HTTP:
// the server answers each request that has an id and answers a ping
// after each case.
func TestRawFuzzTable(t *testing.T) {
	cases := fuzzCases()
	if testing.Short() {
		cases = cases[:len(cases)/8]
	}
	t.Run("stdio", func(t *testing.T) {
		t.Parallel()
		rs := newRawSession(t, mcpserver.Config{})
		for i, c := range cases {
			// A case with a usable id must be answered under that id.
			var probe struct {
				ID     any    `json:"id"`
				Method string `json:"method"`
			}
			wantID := ""
			if json.Unmarshal([]byte(c), &probe) == nil && probe.Method != "" && !strings.HasPrefix(probe.Method, "notifications/") {
				switch probe.ID.(type) {
				case string, float64:
					b, _ := json.Marshal(probe.ID)
					wantID = string(b)
				}
			}
			rs.send(c)
			if wantID != "" && !strings.Contains(c, "1.5") && !strings.Contains(c, "99999999999999999999") {
				if _, ok := rs.until(wantID); !ok {
					t.Fatalf("case %d %.200s: no answer with id %s", i, c, wantID)
				}
			} else if !rs.alive() {
				t.Fatalf("case %d %.200s: the server stopped answering", i, c)
			}
		}
		t.Logf("%d cases over stdio", len(cases))
	})
	t.Run("http", func(t *testing.T) {
		t.Parallel()
		k, p := samplePipeline(t)
		srv, err := mcpserver.New(p, mcpserver.Config{KB: k})
		if err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(srv.Handler(nil))
		defer hs.Close()
		for i, c := range cases {
			if status, body := postRaw(t, hs.URL, c); status >= 500 {
				t.Errorf("case %d %.200s: status %d %.200s", i, c, status, body)
			}
			if i%16 == 0 {
				if status, _ := postRaw(t, hs.URL, `{"jsonrpc":"2.0","id":1,"method":"ping"}`); status != 200 {
					t.Fatalf("after case %d: ping status %d", i, status)
				}
			}
		}
		t.Logf("%d cases over HTTP", len(cases))
	})
}

// fuzzStdio is one session the fuzzer reuses across inputs.
var fuzzStdio struct {
	once sync.Once
	rs   *rawSession
}

// FuzzRawJSONRPC sends arbitrary lines to a session over stdio-like pipes
// and bodies to the HTTP handler; after each, the server still answers.
//
//	go test ./mcpserver/ -run '^$' -fuzz FuzzRawJSONRPC -fuzztime 30s
func FuzzRawJSONRPC(f *testing.F) {
	// The table runs in full in TestRawFuzzTable; the fuzzer starts from
	// a sample of it.
	for i, c := range fuzzCases() {
		if len(c) < 4096 && i%7 == 0 {
			f.Add(c)
		}
	}
	k, p := samplePipeline(f)
	srv, err := mcpserver.New(p, mcpserver.Config{KB: k})
	if err != nil {
		f.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler(nil))
	f.Cleanup(hs.Close)
	fuzzStdio.once.Do(func() { fuzzStdio.rs = newRawSession(f, mcpserver.Config{}) })
	rs := fuzzStdio.rs
	f.Fuzz(func(t *testing.T, line string) {
		line = strings.ReplaceAll(line, "\n", " ")
		rs.t = t
		rs.send(line)
		if !rs.alive() {
			t.Fatalf("stdio: the server stopped answering after %q", line)
		}
		if status, body := postRaw(t, hs.URL, line); status >= 500 {
			t.Fatalf("http: %q: status %d %s", line, status, body)
		}
	})
}
