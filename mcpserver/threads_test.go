package mcpserver_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/adaptrag/adaptrag"
	"github.com/adaptrag/adaptrag/api"
	"github.com/adaptrag/adaptrag/graph"
	"github.com/adaptrag/adaptrag/mcpserver"
	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/retrieval/embed"
)

const (
	firstQuestion = "退货要在几天内发起？"
	followUp      = "质量问题呢？"
)

// threadServer is a server on the sample handbook whose pipeline keeps
// threads in memory.
func threadServer(t *testing.T, c mcpserver.Config) (*mcpserver.Server, *adaptrag.Pipeline) {
	t.Helper()
	k, _ := samplePipeline(t)
	p, err := adaptrag.New(context.Background(), adaptrag.Deps{Docs: k.Docs, FAQ: k.FAQ, Embedder: embed.NewHashing(embed.HashingConfig{})},
		adaptrag.Options{Threads: graph.NewMemoryCheckpointer()})
	if err != nil {
		t.Fatal(err)
	}
	c.KB = k
	srv, err := mcpserver.New(p, c)
	if err != nil {
		t.Fatal(err)
	}
	return srv, p
}

// clientOf connects a client to srv: through Run (a stdio-like session,
// which has no session id) when run is set, else through the SDK's
// Connect.
func clientOf(t *testing.T, srv *mcpserver.Server, run bool) *mcp.ClientSession {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	if run {
		go func() { defer close(done); _ = srv.Run(ctx, st) }()
	} else {
		ss, err := srv.MCP().Connect(ctx, st, nil)
		if err != nil {
			t.Fatal(err)
		}
		close(done)
		t.Cleanup(func() { ss.Close() })
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); cancel(); <-done })
	return cs
}

func askOK(t *testing.T, cs *mcp.ClientSession, args map[string]any) api.Response {
	t.Helper()
	res := call(t, cs, "ask", args)
	if res.IsError {
		t.Fatalf("ask %v: %s", args, text(res))
	}
	validV1(t, res)
	return structured[api.Response](t, res)
}

// Two asks on the same thread continue the conversation; the thread is
// the caller's tenant's, so another tenant's same id is another thread.
func TestThreadArgument(t *testing.T) {
	ctx := context.Background()
	srv, p := threadServer(t, mcpserver.Config{})
	cs := clientOf(t, srv, false)
	if out := askOK(t, cs, map[string]any{"question": followUp, "thread": "t-other-first"}); out.Query.FollowUp {
		t.Fatalf("a question on a new thread was taken as a follow-up: %+v", out.Query)
	}
	first := askOK(t, cs, map[string]any{"question": firstQuestion, "thread": "t1"})
	second := askOK(t, cs, map[string]any{"question": followUp, "thread": "t1"})
	if !second.Query.FollowUp {
		t.Fatalf("the second ask on the thread was not resolved as a follow-up: %+v", second.Query)
	}
	info, err := p.Thread(ctx, retrieval.Scope{}, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Turns) != 4 || info.Turns[0].Content != firstQuestion || info.Turns[1].Content != first.Answer || info.Turns[2].Content != followUp {
		t.Fatalf("thread turns %+v", info.Turns)
	}
	// search reads the thread and adds no turn.
	res := call(t, cs, "search", map[string]any{"query": followUp, "thread": "t1"})
	if res.IsError {
		t.Fatalf("search on a thread: %s", text(res))
	}
	if out := structured[api.Response](t, res); !out.Query.FollowUp {
		t.Errorf("search on the thread did not resolve the follow-up: %+v", out.Query)
	}
	if info, _ := p.Thread(ctx, retrieval.Scope{}, "t1"); len(info.Turns) != 4 {
		t.Errorf("search changed the thread: %d turns", len(info.Turns))
	}

	other := retrieval.Scope{Tenant: "other"}
	if _, err := p.Thread(ctx, other, "t1"); !errors.Is(err, adaptrag.ErrThreadNotFound) {
		t.Fatalf("tenant other sees the default tenant's thread: %v", err)
	}
	oc := clientOf(t, mustServer(t, p, mcpserver.Config{Caller: mcpserver.Caller{Scope: other}}), false)
	if out := askOK(t, oc, map[string]any{"question": followUp, "thread": "t1"}); out.Query.FollowUp {
		t.Errorf("tenant other's ask used the default tenant's thread: %+v", out.Query)
	}
	if info, _ := p.Thread(ctx, retrieval.Scope{}, "t1"); len(info.Turns) != 4 {
		t.Errorf("tenant other's ask changed the default tenant's thread: %d turns", len(info.Turns))
	}
}

func mustServer(t *testing.T, p *adaptrag.Pipeline, c mcpserver.Config) *mcpserver.Server {
	t.Helper()
	k, _ := samplePipeline(t)
	c.KB = k
	srv, err := mcpserver.New(p, c)
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// A session Run serves keeps a thread of its own: a call without thread
// or history continues it; another session does not see it; a call with
// history stays off it.
func TestSessionThread(t *testing.T) {
	srv, _ := threadServer(t, mcpserver.Config{})
	cs := clientOf(t, srv, true)
	askOK(t, cs, map[string]any{"question": firstQuestion})
	if out := askOK(t, cs, map[string]any{"question": followUp}); !out.Query.FollowUp {
		t.Fatalf("the session's second ask was not a follow-up: %+v", out.Query)
	}
	if out := askOK(t, clientOf(t, srv, true), map[string]any{"question": followUp}); out.Query.FollowUp {
		t.Fatalf("another session continued the first session's thread: %+v", out.Query)
	}
	res := call(t, cs, "ask", map[string]any{"question": followUp, "thread": "t", "history": []map[string]string{{"role": "user", "content": "x"}}})
	if !res.IsError || !strings.Contains(text(res), "not both") {
		t.Errorf("thread and history: %s", text(res))
	}
}

// Without a thread store, a thread argument is a tool error that says
// what to do instead.
func TestThreadWithoutStore(t *testing.T) {
	cs, _ := connect(t, mcpserver.Config{})
	for _, tc := range []struct{ tool, key string }{{"ask", "question"}, {"search", "query"}} {
		res := call(t, cs, tc.tool, map[string]any{tc.key: firstQuestion, "thread": "t1"})
		if !res.IsError || !strings.Contains(text(res), "keeps no threads") || !strings.Contains(text(res), "history") {
			t.Errorf("%s with a thread and no store: %v %s", tc.tool, res.IsError, text(res))
		}
	}
	// Without a store, the session has no thread either: plain calls work.
	askOK(t, cs, map[string]any{"question": firstQuestion})
}

// recordingStore is a thread store that remembers which threads were
// written.
type recordingStore struct {
	*graph.MemoryCheckpointer
	mu      sync.Mutex
	threads map[string]bool
}

func (r *recordingStore) Put(ctx context.Context, cp graph.Checkpoint, head string) error {
	r.mu.Lock()
	r.threads[cp.Thread] = true
	r.mu.Unlock()
	return r.MemoryCheckpointer.Put(ctx, cp, head)
}

// A session Run serves deletes its own thread when it ends: nobody can
// name it again, so it would only fill the store. A thread the client
// named survives the session.
func TestSessionThreadEndsWithSession(t *testing.T) {
	k, _ := samplePipeline(t)
	store := &recordingStore{MemoryCheckpointer: graph.NewMemoryCheckpointer(), threads: map[string]bool{}}
	p, err := adaptrag.New(context.Background(), adaptrag.Deps{Docs: k.Docs, FAQ: k.FAQ, Embedder: embed.NewHashing(embed.HashingConfig{})},
		adaptrag.Options{Threads: store})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := mcpserver.New(p, mcpserver.Config{KB: k})
	if err != nil {
		t.Fatal(err)
	}
	st, ct := mcp.NewInMemoryTransports()
	done := make(chan error, 1)
	go func() { done <- srv.Run(context.Background(), st) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	askOK(t, cs, map[string]any{"question": firstQuestion})
	askOK(t, cs, map[string]any{"question": firstQuestion, "thread": "kept"})
	store.mu.Lock()
	var own, named []string
	for th := range store.threads {
		if strings.Contains(th, mcpserver.SessionThreadPrefix) {
			own = append(own, th)
		} else {
			named = append(named, th)
		}
	}
	store.mu.Unlock()
	if len(own) != 1 || len(named) != 1 {
		t.Fatalf("threads written: session's own %v, named %v; want one each", own, named)
	}
	if _, err := store.Latest(context.Background(), own[0]); err != nil {
		t.Fatalf("the session's thread is not there while it runs: %v", err)
	}
	cs.Close()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after the client left")
	}
	if _, err := store.Latest(context.Background(), own[0]); !errors.Is(err, graph.ErrNoCheckpoint) {
		t.Errorf("the ended session's thread %s is still stored (err %v)", own[0], err)
	}
	if _, err := store.Latest(context.Background(), named[0]); err != nil {
		t.Errorf("the named thread %s went with the session: %v", named[0], err)
	}
}
