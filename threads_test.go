package adaptrag_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/adaptrag/adaptrag"
	"github.com/adaptrag/adaptrag/graph"
	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/state"
)

func threadPipeline(t *testing.T, cp graph.Checkpointer) (*fixture, *adaptrag.Pipeline) {
	t.Helper()
	f := newFixture(t)
	if cp == nil {
		cp = graph.NewMemoryCheckpointer()
	}
	f.opts.Threads = cp
	return f, f.pipeline(t)
}

// A thread keeps the conversation: the follow-up is understood from the
// turns the thread holds, not from a history the caller sends.
func TestThreadKeepsTheConversation(t *testing.T) {
	_, p := threadPipeline(t, nil)
	first := askWith(t, p, adaptrag.Request{Question: "P-204 的保修期多久？", Thread: "t1"})
	res := askWith(t, p, adaptrag.Request{Question: "那这个能换吗？", Thread: "t1"})
	h := res.Debug.State.History
	if len(h) != 2 || h[0].Content != "P-204 的保修期多久？" || h[1].Content != first.Answer || !res.Query.FollowUp {
		t.Fatalf("the follow-up did not get the thread's turns: %+v", h)
	}
	info, err := p.Thread(context.Background(), retrieval.Scope{}, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Turns) != 4 || info.Turns[0].Content != "P-204 的保修期多久？" || info.Turns[3].Content != res.Answer {
		t.Fatalf("turns %+v", info.Turns)
	}
	if len(info.Checkpoints) < 4 || info.Checkpoints[len(info.Checkpoints)-1].Parent != "" {
		t.Fatalf("checkpoints %+v", info.Checkpoints)
	}
}

func TestThreadRules(t *testing.T) {
	ctx := context.Background()
	_, p := threadPipeline(t, nil)
	if _, err := p.Ask(ctx, adaptrag.Request{Question: "q", Thread: "t", History: []adaptrag.Message{user("x")}}); !errors.Is(err, adaptrag.ErrThreadHistory) {
		t.Errorf("thread and history: %v, want ErrThreadHistory", err)
	}
	if _, err := p.Search(ctx, adaptrag.SearchRequest{Query: "q", Thread: "t", History: []adaptrag.Message{user("x")}}); !errors.Is(err, adaptrag.ErrThreadHistory) {
		t.Errorf("search with thread and history: %v, want ErrThreadHistory", err)
	}
	for _, id := range []string{strings.Repeat("x", 129), "a\nb", "\xff"} {
		if _, err := p.Ask(ctx, adaptrag.Request{Question: "q", Thread: id}); !errors.Is(err, adaptrag.ErrInvalidThread) {
			t.Errorf("thread %q: %v, want ErrInvalidThread", id, err)
		}
	}
	if _, err := p.Thread(ctx, retrieval.Scope{}, "never"); !errors.Is(err, adaptrag.ErrThreadNotFound) {
		t.Errorf("unknown thread: %v", err)
	}
	plain := newFixture(t).pipeline(t)
	if _, err := plain.Ask(ctx, adaptrag.Request{Question: "q", Thread: "t"}); !errors.Is(err, adaptrag.ErrNoThreads) {
		t.Errorf("no threads configured: %v, want ErrNoThreads", err)
	}
	askWith(t, p, adaptrag.Request{Question: "你好", Thread: "gone"})
	if err := p.DeleteThread(ctx, retrieval.Scope{}, "gone"); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Thread(ctx, retrieval.Scope{}, "gone"); !errors.Is(err, adaptrag.ErrThreadNotFound) {
		t.Errorf("deleted thread: %v", err)
	}
}

// A thread id of another tenant does not exist for the caller.
func TestThreadsPerTenant(t *testing.T) {
	ctx := context.Background()
	_, p := threadPipeline(t, nil)
	a, b := retrieval.Scope{Tenant: "a"}, retrieval.Scope{Tenant: "b"}
	askWith(t, p, adaptrag.Request{Question: "P-204 电池的售后政策是什么？", Thread: "shared", Scope: a})
	if _, err := p.Thread(ctx, b, "shared"); !errors.Is(err, adaptrag.ErrThreadNotFound) {
		t.Fatalf("tenant b sees tenant a's thread: %v", err)
	}
	res := askWith(t, p, adaptrag.Request{Question: "那这个能换吗？", Thread: "shared", Scope: b})
	if strings.Contains(res.Query.Text, "P-204") {
		t.Fatalf("tenant b's follow-up used tenant a's turns: %q", res.Query.Text)
	}
	ia, err := p.Thread(ctx, a, "shared")
	if err != nil || len(ia.Turns) != 2 {
		t.Fatalf("tenant a's thread: %v %v", ia, err)
	}
	if err := p.DeleteThread(ctx, b, "shared"); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Thread(ctx, a, "shared"); err != nil {
		t.Fatalf("tenant b's delete removed tenant a's thread: %v", err)
	}
}

// The clarify exit is an interrupt: the thread waits, and the user's reply
// resumes the run with the chosen candidate (it is never taken for a new
// question, nor for small talk).
func TestThreadClarifyResumesWithTheCandidate(t *testing.T) {
	ctx := context.Background()
	cp := graph.NewMemoryCheckpointer()
	_, p := threadPipeline(t, cp)
	askWith(t, p, adaptrag.Request{Question: "P-204 和 P-205 哪个更便宜？", Thread: "c"})
	res := askWith(t, p, adaptrag.Request{Question: "那这个能换吗？", Thread: "c"})
	if res.AnsweredBy != state.ByClarify || res.Clarify == nil {
		t.Fatalf("answered by %s: %q", res.AnsweredBy, res.Answer)
	}
	info, err := p.Thread(ctx, retrieval.Scope{}, "c")
	if err != nil || info.Clarify == nil || info.Checkpoints[0].Status != graph.StatusInterrupted {
		t.Fatalf("thread waits for nothing: %+v %v", info, err)
	}
	res = askWith(t, p, adaptrag.Request{Question: "P-205", Thread: "c"})
	if !strings.Contains(res.Query.Text, "P-205") || strings.Contains(res.Query.Text, "P-204") || res.Route.QueryType == "chitchat" || len(res.Docs) == 0 {
		t.Fatalf("reply: query %q, route %s, %d passages", res.Query.Text, res.Route.QueryType, len(res.Docs))
	}
	if !strings.Contains(res.Question, "换") {
		t.Fatalf("the resumed run did not ask the clarified question: %q", res.Question)
	}
	info, _ = p.Thread(ctx, retrieval.Scope{}, "c")
	if len(info.Turns) != 6 || info.Turns[4].Content != "P-205" || info.Clarify != nil {
		t.Fatalf("turns %+v", info.Turns)
	}
	// A number picks a candidate too.
	askWith(t, p, adaptrag.Request{Question: "P-204 和 P-205 哪个更便宜？", Thread: "c"})
	if r := askWith(t, p, adaptrag.Request{Question: "那这个能换吗？", Thread: "c"}); r.AnsweredBy != state.ByClarify {
		t.Fatalf("second clarification: %s %q", r.AnsweredBy, r.Answer)
	}
	res = askWith(t, p, adaptrag.Request{Question: "1", Thread: "c"})
	if !strings.Contains(res.Query.Text, "P-20") || res.AnsweredBy == state.ByClarify {
		t.Fatalf("reply by number: %q, %s", res.Query.Text, res.AnsweredBy)
	}
}

func TestThreadSearchAndStream(t *testing.T) {
	ctx := context.Background()
	_, p := threadPipeline(t, nil)
	askWith(t, p, adaptrag.Request{Question: "P-204 的保修期多久？", Thread: "s"})
	res, err := p.Search(ctx, adaptrag.SearchRequest{Query: "那这个能换吗？", Thread: "s"})
	if err != nil || len(res.Debug.State.History) != 2 {
		t.Fatalf("search on the thread: %v, history %+v", err, res.Debug.State.History)
	}
	info, _ := p.Thread(ctx, retrieval.Scope{}, "s")
	if len(info.Turns) != 2 {
		t.Fatalf("a search appended to the thread: %d turns", len(info.Turns))
	}
	var got *adaptrag.Result
	nodes := 0
	for ev, err := range p.Stream(ctx, adaptrag.Request{Question: "那这个能换吗？", Thread: "s"}) {
		if err != nil {
			t.Fatal(err)
		}
		switch ev.Kind {
		case adaptrag.EventNode:
			nodes++
		case adaptrag.EventResult:
			got = ev.Result
		}
	}
	if got == nil || nodes == 0 || len(got.Debug.State.History) != 2 {
		t.Fatalf("stream on the thread: %d node events, result %+v", nodes, got)
	}
	info, _ = p.Thread(ctx, retrieval.Scope{}, "s")
	if len(info.Turns) != 4 {
		t.Fatalf("%d turns after the streamed one", len(info.Turns))
	}
}

// Concurrent requests on one thread each land one turn.
func TestThreadConcurrentTurns(t *testing.T) {
	_, p := threadPipeline(t, nil)
	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		wg.Go(func() {
			_, errs[i] = p.Ask(context.Background(), adaptrag.Request{Question: "电子发票多久能开好？", Thread: "busy"})
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	info, err := p.Thread(context.Background(), retrieval.Scope{}, "busy")
	if err != nil || len(info.Turns) != 12 {
		t.Fatalf("%d turns, want 12 (%v)", len(info.Turns), err)
	}
}
