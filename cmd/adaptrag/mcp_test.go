package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPOverStdio builds the command and drives "adaptrag mcp" with the
// SDK's own client over the process's stdin and stdout, as a desktop
// client does.
func TestMCPOverStdio(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "adaptrag")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	session := func(t *testing.T, args ...string) *mcp.ClientSession {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"mcp"}, args...)...)
		cmd.Env = offlineEnv()
		cmd.Stderr = &testWriter{t: t}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := cs.Close(); err != nil {
				t.Errorf("close: %v", err)
			}
		})
		return cs
	}

	cs := session(t)
	if info := cs.InitializeResult().ServerInfo; info.Name != "adaptrag" {
		t.Fatalf("server info %+v", info)
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) != 4 {
		t.Fatalf("tools %v, %v", tools, err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{"question": "退货要在几天内发起？"}})
	if err != nil || res.IsError {
		t.Fatalf("ask: %v %+v", err, res)
	}
	out := res.StructuredContent.(map[string]any)
	if out["version"] != "v1" || out["route"].(map[string]any)["query_type"] != "factual" || len(out["citations"].([]any)) == 0 {
		t.Errorf("ask result %v", out)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"query": "退货", "mode": "sparse"}})
	if err != nil || !res.IsError {
		t.Errorf("unknown mode: %v %+v", err, res)
	}
	list, err := cs.ListResources(ctx, nil)
	if err != nil || len(list.Resources) == 0 {
		t.Fatalf("resources %v, %v", list, err)
	}
	doc, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: list.Resources[0].URI})
	if err != nil || len(doc.Contents) == 0 {
		t.Fatalf("read %s: %v", list.Resources[0].URI, err)
	}

	// --tenant scopes the whole session.
	other := session(t, "--tenant", "someone-else")
	if list, err := other.ListResources(ctx, nil); err != nil || len(list.Resources) != 0 {
		t.Errorf("another tenant lists %v (%v)", list, err)
	}

	// --threads: the session keeps a thread of its own, and a named thread
	// outlives the process.
	followUp := func(t *testing.T, cs *mcp.ClientSession, args map[string]any) bool {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask", Arguments: args})
		if err != nil || res.IsError {
			t.Fatalf("ask %v: %v %+v", args, err, res)
		}
		q, _ := res.StructuredContent.(map[string]any)["query"].(map[string]any)
		return q["follow_up"] == true
	}
	store := "sqlite:" + filepath.Join(t.TempDir(), "threads.db")
	a := session(t, "--threads", store)
	followUp(t, a, map[string]any{"question": "退货要在几天内发起？"})
	if !followUp(t, a, map[string]any{"question": "质量问题呢？"}) {
		t.Error("the session's second ask did not continue its thread")
	}
	followUp(t, a, map[string]any{"question": "退货要在几天内发起？", "thread": "kept"})
	if !followUp(t, session(t, "--threads", store), map[string]any{"question": "质量问题呢？", "thread": "kept"}) {
		t.Error("a new process did not continue the named thread")
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{"question": "q", "thread": "kept"}})
	if err != nil || !res.IsError {
		t.Errorf("a thread without --threads: %v %+v", err, res)
	}
}

// Regression: "adaptrag mcp" exited 2 on the first tools/list without
// params (the first call the TypeScript SDK client and the Inspector make)
// and exited 1 on a line that was not JSON. Raw lines, as a client nobody
// on the project wrote sends them: every answer comes, and the process
// ends only, with status 0, when its input does.
func TestMCPRawStdioStaysUp(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "adaptrag")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	lines := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"resources/list","params":null}`,
		`{"jsonrpc":"2.0","id":4,"method":"resources/templates/list"}`,
		`{"jsonrpc":"2.0","id":5,"method":"prompts/list","params":null}`,
		`{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`,
		`garbage{`,
		`[{"jsonrpc":"2.0","id":6,"method":"ping"}]`,
		`{"jsonrpc":"2.0","id":7,"method":"ping"}`,
	}
	cmd := exec.Command(bin, "mcp")
	cmd.Env = offlineEnv()
	cmd.Stdin = strings.NewReader(strings.Join(lines, "\n") + "\n")
	cmd.Stderr = &testWriter{t: t}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("adaptrag mcp: %v\n%s", err, out)
	}
	answered := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("not JSON on stdout: %q", l)
		}
		if len(m.Result) > 0 {
			answered[string(m.ID)] = true
		}
	}
	for _, id := range []string{"1", "2", "3", "4", "5", "7"} {
		if !answered[id] {
			t.Errorf("no result for request %s; stdout:\n%s", id, out)
		}
	}
}

func TestMCPUsage(t *testing.T) {
	if _, errs, code := cli(t, "mcp", "extra"); code != 2 || !strings.Contains(errs, "no arguments") {
		t.Errorf("exit %d: %s", code, errs)
	}
	if _, errs, code := cli(t, "mcp", "--max-k", "0"); code != 2 || !strings.Contains(errs, "max-k") {
		t.Errorf("exit %d: %s", code, errs)
	}
}

// offlineEnv is the process environment without model or collector
// settings, so the test is offline whatever the shell has.
func offlineEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(k, "OPENAI_"), strings.HasPrefix(k, "OLLAMA_"), strings.HasPrefix(k, "OTEL_"), k == "ADAPTRAG_STORE":
			continue
		}
		env = append(env, kv)
	}
	return env
}

// testWriter sends a child's stderr to the test log.
type testWriter struct{ t *testing.T }

func (w *testWriter) Write(p []byte) (int, error) {
	w.t.Logf("adaptrag mcp: %s", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
