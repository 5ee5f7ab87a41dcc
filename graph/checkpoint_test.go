package graph_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/adaptrag/adaptrag/graph"
)

// ts is the state of the thread tests: Log records every node execution.
type ts struct {
	Log    []string
	Answer string
	N      int
}

// counter counts node executions by name, across runs.
type counter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counter) inc(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[name]++
}

func (c *counter) get(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[name]
}

func logNode(c *counter, name string) graph.NodeFunc[ts] {
	return func(_ context.Context, s ts) (ts, error) {
		c.inc(name)
		s.Log = append(slices.Clone(s.Log), name)
		return s, nil
	}
}

// linear is a -> b -> c, b optionally replaced.
func linear(c *counter, b graph.NodeFunc[ts]) *graph.Graph[ts] {
	if b == nil {
		b = logNode(c, "b")
	}
	return graph.New[ts]("linear").
		AddNode("a", logNode(c, "a")).AddNode("b", b).AddNode("c", logNode(c, "c")).
		AddEdge(graph.Start, "a").AddEdge("a", "b").AddEdge("b", "c").AddEdge("c", graph.End)
}

func compile(t *testing.T, g *graph.Graph[ts], cfg graph.Config[ts]) *graph.Runnable[ts] {
	t.Helper()
	r, err := g.Compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// countingCP counts Puts.
type countingCP struct {
	graph.Checkpointer
	puts atomic.Int64
}

func (c *countingCP) Put(ctx context.Context, cp graph.Checkpoint, head string) error {
	c.puts.Add(1)
	return c.Checkpointer.Put(ctx, cp, head)
}

// A checkpoint after every node (eino#347): the input, one per node, and
// the final one, chained by parent links.
func TestCheckpointAfterEveryNode(t *testing.T) {
	var c counter
	cp := graph.NewMemoryCheckpointer()
	r := compile(t, linear(&c, nil), graph.Config[ts]{Checkpointer: cp})
	ctx := context.Background()
	out, err := r.Invoke(ctx, ts{}, graph.WithThread("t1"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out.Log, []string{"a", "b", "c"}) {
		t.Fatalf("log %v", out.Log)
	}
	hist, err := r.History(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	var next [][]string
	for i, h := range hist {
		next = append(next, h.Next)
		if i+1 < len(hist) && h.Parent != hist[i+1].ID {
			t.Errorf("checkpoint %d parent %q, want %q", i, h.Parent, hist[i+1].ID)
		}
	}
	want := [][]string{{}, {"c"}, {"b"}, {"a"}} // newest first
	if fmt.Sprint(next) != fmt.Sprint(want) {
		t.Fatalf("next per checkpoint %v, want %v", next, want)
	}
	if hist[0].Status != graph.StatusDone || hist[1].Status != graph.StatusRunning || hist[3].Parent != "" {
		t.Errorf("statuses %s %s, first parent %q", hist[0].Status, hist[1].Status, hist[3].Parent)
	}
	snap, err := r.Snapshot(ctx, "t1", hist[1].ID)
	if err != nil || !slices.Equal(snap.State.Log, []string{"a", "b"}) {
		t.Fatalf("snapshot after b: %v %v", snap.State.Log, err)
	}
}

func TestDurabilityModes(t *testing.T) {
	for _, tc := range []struct {
		mode graph.Durability
		puts int64
	}{{graph.DurabilitySync, 4}, {graph.DurabilityAsync, 4}, {graph.DurabilityExit, 1}} {
		t.Run(tc.mode.String(), func(t *testing.T) {
			var c counter
			cp := &countingCP{Checkpointer: graph.NewMemoryCheckpointer()}
			r := compile(t, linear(&c, nil), graph.Config[ts]{Checkpointer: cp, Durability: tc.mode})
			if _, err := r.Invoke(context.Background(), ts{}, graph.WithThread("t")); err != nil {
				t.Fatal(err)
			}
			if got := cp.puts.Load(); got != tc.puts {
				t.Errorf("%d puts, want %d", got, tc.puts)
			}
			last, err := cp.Latest(context.Background(), "t")
			if err != nil || last.Status != graph.StatusDone {
				t.Fatalf("latest %v %v: every write is done when Invoke returns", last.Status, err)
			}
		})
	}
}

// A failed node is retried by Resume from the last boundary; the nodes
// before it do not run again.
func TestResumeAfterFailure(t *testing.T) {
	var c counter
	fail := true
	b := func(ctx context.Context, s ts) (ts, error) {
		c.inc("b")
		if fail {
			return s, errors.New("transient")
		}
		s.Log = append(s.Log, "b")
		return s, nil
	}
	r := compile(t, linear(&c, b), graph.Config[ts]{Checkpointer: graph.NewMemoryCheckpointer()})
	ctx := context.Background()
	if _, err := r.Invoke(ctx, ts{}, graph.WithThread("t")); err == nil {
		t.Fatal("no error")
	}
	if _, err := r.Invoke(ctx, ts{}, graph.WithThread("t")); !errors.Is(err, graph.ErrUnfinished) {
		t.Fatalf("new input on an unfinished thread: %v, want ErrUnfinished", err)
	}
	fail = false
	out, err := r.Resume(ctx, "t", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out.Log, []string{"a", "b", "c"}) || c.get("a") != 1 || c.get("b") != 2 {
		t.Fatalf("log %v, a ran %d times, b %d", out.Log, c.get("a"), c.get("b"))
	}
	if _, err := r.Resume(ctx, "t", nil); !errors.Is(err, graph.ErrNothingToResume) {
		t.Fatalf("resume of a finished thread: %v", err)
	}
}

// A checkpoint is saved on a dynamic interrupt (langgraphgo#70), and the
// answer reaches the node, which runs again from its start.
func TestDynamicInterrupt(t *testing.T) {
	var c counter
	ask := func(ctx context.Context, s ts) (ts, error) {
		c.inc("b")
		v, err := graph.Interrupt(ctx, "which one?")
		if err != nil {
			return s, err
		}
		s.Answer, _ = graph.ResumeValue[string](v)
		return s, nil
	}
	cp := graph.NewMemoryCheckpointer()
	r := compile(t, linear(&c, ask), graph.Config[ts]{Checkpointer: cp})
	ctx := context.Background()
	st, err := r.Invoke(ctx, ts{}, graph.WithThread("t"))
	var ie *graph.InterruptedError
	if !errors.As(err, &ie) || !errors.Is(err, graph.ErrInterrupted) {
		t.Fatalf("err %v, want an InterruptedError", err)
	}
	if len(ie.Interrupts) != 1 || ie.Interrupts[0].Payload != "which one?" || ie.Interrupts[0].Node != "b" || ie.Interrupts[0].Kind != graph.InterruptNode {
		t.Fatalf("interrupts %+v", ie.Interrupts)
	}
	if !slices.Equal(st.Log, []string{"a"}) {
		t.Fatalf("state at the interrupt %v", st.Log)
	}
	last, _ := cp.Latest(ctx, "t")
	if last.ID != ie.Checkpoint || last.Status != graph.StatusInterrupted {
		t.Fatalf("latest %s %s, want the interrupt's checkpoint %s", last.ID, last.Status, ie.Checkpoint)
	}
	ins, err := last.Interrupts()
	if err != nil || len(ins) != 1 || ins[0].ID != ie.Interrupts[0].ID || string(ins[0].Payload.(json.RawMessage)) != `"which one?"` {
		t.Fatalf("stored interrupts %+v %v", ins, err)
	}
	if _, err := r.Resume(ctx, "t", map[string]any{"nope": 1}); !errors.Is(err, graph.ErrUnknownInterrupt) {
		t.Fatalf("unknown id: %v", err)
	}
	out, err := r.Resume(ctx, "t", map[string]any{ie.Interrupts[0].ID: "the second"})
	if err != nil {
		t.Fatal(err)
	}
	if out.Answer != "the second" || !slices.Equal(out.Log, []string{"a", "c"}) || c.get("a") != 1 || c.get("b") != 2 {
		t.Fatalf("out %+v, a %d, b %d", out, c.get("a"), c.get("b"))
	}
}

// Two interrupts in one node: the first answer is kept while the second
// is asked.
func TestTwoInterruptsInOneNode(t *testing.T) {
	ask := func(ctx context.Context, s ts) (ts, error) {
		a, err := graph.Interrupt(ctx, "first?")
		if err != nil {
			return s, err
		}
		b, err := graph.Interrupt(ctx, "second?")
		if err != nil {
			return s, err
		}
		x, _ := graph.ResumeValue[string](a)
		y, _ := graph.ResumeValue[string](b)
		s.Answer = x + "+" + y
		return s, nil
	}
	var c counter
	r := compile(t, linear(&c, ask), graph.Config[ts]{Checkpointer: graph.NewMemoryCheckpointer()})
	ctx := context.Background()
	_, err := r.Invoke(ctx, ts{}, graph.WithThread("t"))
	var ie *graph.InterruptedError
	if !errors.As(err, &ie) {
		t.Fatal(err)
	}
	_, err = r.Resume(ctx, "t", map[string]any{ie.Interrupts[0].ID: "x"})
	if !errors.As(err, &ie) || ie.Interrupts[0].Payload != "second?" {
		t.Fatalf("second interrupt: %v", err)
	}
	out, err := r.Resume(ctx, "t", map[string]any{ie.Interrupts[0].ID: "y"})
	if err != nil || out.Answer != "x+y" {
		t.Fatalf("answer %q %v", out.Answer, err)
	}
}

// fan is a -> {x, y} -> join, merged by concatenating the branches' logs.
func fan(c *counter, x, y graph.NodeFunc[ts]) *graph.Graph[ts] {
	merge := func(base ts, br []ts) (ts, error) {
		n := len(base.Log)
		for _, b := range br {
			base.Log = append(base.Log, b.Log[n:]...)
			if b.Answer != "" {
				base.Answer += b.Answer + ";"
			}
		}
		return base, nil
	}
	return graph.New[ts]("fan").
		AddNode("a", logNode(c, "a")).AddNode("x", x).AddNode("y", y).AddNode("join", logNode(c, "join")).
		AddEdge(graph.Start, "a").AddFanOut("a", []string{"x", "y"}, "join", merge).
		AddEdge("x", "join").AddEdge("y", "join").AddEdge("join", graph.End)
}

func asker(c *counter, name string) graph.NodeFunc[ts] {
	return func(ctx context.Context, s ts) (ts, error) {
		c.inc(name)
		v, err := graph.Interrupt(ctx, name+"?")
		if err != nil {
			return s, err
		}
		a, _ := graph.ResumeValue[string](v)
		s.Log = append(slices.Clone(s.Log), name)
		s.Answer = a
		return s, nil
	}
}

// Several pending interrupts, from parallel branches, resumed by id
// (langgraph PR #6108): answering one leaves the other pending with the
// same id, and the answered branch does not run again.
func TestParallelInterruptsByID(t *testing.T) {
	var c counter
	r := compile(t, fan(&c, asker(&c, "x"), asker(&c, "y")), graph.Config[ts]{Checkpointer: graph.NewMemoryCheckpointer()})
	ctx := context.Background()
	_, err := r.Invoke(ctx, ts{}, graph.WithThread("t"))
	var ie *graph.InterruptedError
	if !errors.As(err, &ie) || len(ie.Interrupts) != 2 {
		t.Fatalf("err %v, want two interrupts", err)
	}
	ids := map[string]string{}
	for _, in := range ie.Interrupts {
		ids[in.Node] = in.ID
	}
	if ids["x"] == "" || ids["y"] == "" || ids["x"] == ids["y"] {
		t.Fatalf("ids %v", ids)
	}
	_, err = r.Resume(ctx, "t", map[string]any{ids["y"]: "Y"})
	if !errors.As(err, &ie) || len(ie.Interrupts) != 1 || ie.Interrupts[0].ID != ids["x"] {
		t.Fatalf("after answering y: %v", err)
	}
	out, err := r.Resume(ctx, "t", map[string]any{ids["x"]: "X"})
	if err != nil {
		t.Fatal(err)
	}
	if out.Answer != "X;Y;" || !slices.Equal(out.Log, []string{"a", "x", "y", "join"}) {
		t.Fatalf("out %+v", out)
	}
	if c.get("y") != 2 || c.get("x") != 3 || c.get("a") != 1 {
		t.Fatalf("runs: a %d x %d y %d", c.get("a"), c.get("x"), c.get("y"))
	}
}

// A fan-out is one step: when one branch fails after the other finished,
// the finished branch's state is kept (a pending write) and Resume runs
// only the failed one.
func TestFanOutPendingWrites(t *testing.T) {
	var c counter
	fail := true
	y := func(ctx context.Context, s ts) (ts, error) {
		c.inc("y")
		if fail {
			// Fail after x has finished, so that its write is pending.
			for c.get("x") == 0 {
				time.Sleep(time.Millisecond)
			}
			return s, errors.New("y broke")
		}
		s.Log = append(slices.Clone(s.Log), "y")
		return s, nil
	}
	cp := graph.NewMemoryCheckpointer()
	r := compile(t, fan(&c, logNode(&c, "x"), y), graph.Config[ts]{Checkpointer: cp})
	ctx := context.Background()
	if _, err := r.Invoke(ctx, ts{}, graph.WithThread("t")); err == nil || errors.Is(err, graph.ErrInterrupted) {
		t.Fatalf("err %v", err)
	}
	last, _ := cp.Latest(ctx, "t")
	if last.Status != graph.StatusFailed || !slices.Equal(last.Next, []string{"x", "y"}) {
		t.Fatalf("latest %s next %v", last.Status, last.Next)
	}
	fail = false
	out, err := r.Resume(ctx, "t", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out.Log, []string{"a", "x", "y", "join"}) || c.get("x") != 1 || c.get("y") != 2 {
		t.Fatalf("log %v, x ran %d, y %d", out.Log, c.get("x"), c.get("y"))
	}
}

func TestInterruptBeforeAndAfter(t *testing.T) {
	var c counter
	cp := graph.NewMemoryCheckpointer()
	r := compile(t, linear(&c, nil), graph.Config[ts]{Checkpointer: cp, InterruptBefore: []string{"b"}, InterruptAfter: []string{"c"}})
	ctx := context.Background()
	st, err := r.Invoke(ctx, ts{}, graph.WithThread("t"))
	var ie *graph.InterruptedError
	if !errors.As(err, &ie) || ie.Interrupts[0].Kind != graph.InterruptBefore || ie.Interrupts[0].Node != "b" || c.get("b") != 0 {
		t.Fatalf("before b: %v, b ran %d", err, c.get("b"))
	}
	if !slices.Equal(st.Log, []string{"a"}) {
		t.Fatalf("state %v", st.Log)
	}
	st, err = r.Resume(ctx, "t", map[string]any{ie.Interrupts[0].ID: nil})
	if !errors.As(err, &ie) || ie.Interrupts[0].Kind != graph.InterruptAfter || !slices.Equal(st.Log, []string{"a", "b", "c"}) {
		t.Fatalf("after c: %v %v", err, st.Log)
	}
	out, err := r.Resume(ctx, "t", nil)
	if err != nil || c.get("c") != 1 || !slices.Equal(out.Log, []string{"a", "b", "c"}) {
		t.Fatalf("end: %v %v, c ran %d", out.Log, err, c.get("c"))
	}
	if _, err := linear(&c, nil).Compile(graph.Config[ts]{InterruptBefore: []string{"nope"}}); !errors.Is(err, graph.ErrUnknownNode) {
		t.Fatalf("unknown interrupt node: %v", err)
	}
}

// An external pause with a timeout (trpc-agent-go #1127) and a cleanup
// callback (eino#598): a node that does not finish in time is cancelled,
// the run stops before it, and cleanup learns it was forced.
func TestPauseTimeoutAndCleanup(t *testing.T) {
	var c counter
	slow := true
	started := make(chan struct{}, 1)
	b := func(ctx context.Context, s ts) (ts, error) {
		c.inc("b")
		if slow {
			started <- struct{}{}
			<-ctx.Done()
			return s, ctx.Err()
		}
		s.Log = append(s.Log, "b")
		return s, nil
	}
	r := compile(t, linear(&c, b), graph.Config[ts]{Checkpointer: graph.NewMemoryCheckpointer()})
	ctx := context.Background()
	p := graph.NewPause()
	var forced atomic.Int32
	go func() {
		<-started
		p.Request("maintenance", 20*time.Millisecond, func(f bool) {
			if f {
				forced.Store(1)
			} else {
				forced.Store(2)
			}
		})
	}()
	st, err := r.Invoke(ctx, ts{}, graph.WithThread("t"), graph.WithPause(p))
	var ie *graph.InterruptedError
	if !errors.As(err, &ie) || ie.Interrupts[0].Kind != graph.InterruptPause || ie.Interrupts[0].Payload != "maintenance" || ie.Interrupts[0].Node != "b" {
		t.Fatalf("err %v", err)
	}
	if forced.Load() != 1 {
		t.Fatalf("cleanup forced=%d, want called with true", forced.Load())
	}
	if !slices.Equal(st.Log, []string{"a"}) {
		t.Fatalf("state %v", st.Log)
	}
	slow = false
	out, err := r.Resume(ctx, "t", nil)
	if err != nil || !slices.Equal(out.Log, []string{"a", "b", "c"}) || c.get("a") != 1 {
		t.Fatalf("resume: %v %v", out.Log, err)
	}
}

// A pause without a timeout waits for the step in flight.
func TestPauseAtBoundary(t *testing.T) {
	var c counter
	p := graph.NewPause()
	var cleaned atomic.Int32
	a := func(ctx context.Context, s ts) (ts, error) {
		p.Request(nil, 0, func(f bool) {
			if !f {
				cleaned.Add(1)
			}
		})
		s.Log = append(s.Log, "a")
		return s, nil
	}
	g := linear(&c, nil).ReplaceNode("a", a)
	r := compile(t, g, graph.Config[ts]{Checkpointer: graph.NewMemoryCheckpointer()})
	st, err := r.Invoke(context.Background(), ts{}, graph.WithThread("t"), graph.WithPause(p))
	if !errors.Is(err, graph.ErrInterrupted) || !slices.Equal(st.Log, []string{"a"}) || cleaned.Load() != 1 || c.get("b") != 0 {
		t.Fatalf("err %v, state %v, cleanup %d, b ran %d", err, st.Log, cleaned.Load(), c.get("b"))
	}
}

// A checkpoint written under another state version (or codec) is an
// error, never a fresh start.
func TestUndecodableCheckpointIsAnError(t *testing.T) {
	var c counter
	cp := graph.NewMemoryCheckpointer()
	ctx := context.Background()
	r1 := compile(t, linear(&c, nil), graph.Config[ts]{Checkpointer: cp, StateVersion: "1"})
	if _, err := r1.Invoke(ctx, ts{}, graph.WithThread("t")); err != nil {
		t.Fatal(err)
	}
	r2 := compile(t, linear(&c, nil), graph.Config[ts]{Checkpointer: cp, StateVersion: "2"})
	_, err := r2.Invoke(ctx, ts{}, graph.WithThread("t"))
	var de *graph.DecodeError
	if !errors.As(err, &de) || !errors.Is(err, graph.ErrDecode) {
		t.Fatalf("err %v, want a DecodeError", err)
	}
	// Damaged bytes.
	last, _ := cp.Latest(ctx, "t")
	last.ID, last.Parent, last.State = "broken", last.ID, []byte("{not json")
	if err := cp.Put(ctx, last, last.Parent); err != nil {
		t.Fatal(err)
	}
	if _, err := r1.Invoke(ctx, ts{}, graph.WithThread("t")); !errors.Is(err, graph.ErrDecode) {
		t.Fatalf("damaged state: %v", err)
	}
}

// Time travel: fork from the checkpoint after a, with an edited state.
func TestForkFromEarlierCheckpoint(t *testing.T) {
	var c counter
	cp := graph.NewMemoryCheckpointer()
	r := compile(t, linear(&c, nil), graph.Config[ts]{Checkpointer: cp})
	ctx := context.Background()
	if _, err := r.Invoke(ctx, ts{N: 1}, graph.WithThread("t")); err != nil {
		t.Fatal(err)
	}
	hist, _ := r.History(ctx, "t")
	afterA := hist[2] // newest first: done, after b, after a, input
	if !slices.Equal(afterA.Next, []string{"b"}) {
		t.Fatalf("next %v", afterA.Next)
	}
	out, err := r.Resume(ctx, "t", nil, graph.WithCheckpoint(afterA.ID), graph.WithEdit(func(s ts) ts { s.N = 42; return s }))
	if err != nil {
		t.Fatal(err)
	}
	if out.N != 42 || !slices.Equal(out.Log, []string{"a", "b", "c"}) || c.get("a") != 1 || c.get("b") != 2 {
		t.Fatalf("fork %+v, a %d b %d", out, c.get("a"), c.get("b"))
	}
	hist2, _ := r.History(ctx, "t")
	if len(hist2) != len(hist)+2 {
		t.Fatalf("%d checkpoints after the fork, want %d", len(hist2), len(hist)+2)
	}
	if hist2[1].Parent != afterA.ID {
		t.Fatalf("fork's first checkpoint has parent %s, want %s", hist2[1].Parent, afterA.ID)
	}
	if _, err := r.Resume(ctx, "t", nil, graph.WithCheckpoint("nope")); !errors.Is(err, graph.ErrNoCheckpoint) {
		t.Fatalf("unknown checkpoint: %v", err)
	}
}

// A new run on a finished thread can carry the previous state over.
func TestCarry(t *testing.T) {
	var c counter
	r := compile(t, linear(&c, nil), graph.Config[ts]{Checkpointer: graph.NewMemoryCheckpointer()})
	ctx := context.Background()
	carry := graph.WithCarry(func(prev, in ts) ts { in.Log = prev.Log; in.N = prev.N + 1; return in })
	var out ts
	var err error
	for range 3 {
		if out, err = r.Invoke(ctx, ts{}, graph.WithThread("t"), carry); err != nil {
			t.Fatal(err)
		}
	}
	if out.N != 2 || len(out.Log) != 9 {
		t.Fatalf("out %+v", out)
	}
	if _, err := r.Invoke(ctx, ts{}, graph.WithThread("t"), graph.WithCarry(func(a, b int) int { return a })); err == nil {
		t.Fatal("a carry of another type is accepted")
	}
}

// Two runs on one thread at once (langgraph#4168): one wins, the other
// gets a conflict; no checkpoint of the loser becomes part of the thread.
func TestConcurrentRunsOnOneThread(t *testing.T) {
	var c counter
	cp := graph.NewMemoryCheckpointer()
	slow := func(ctx context.Context, s ts) (ts, error) {
		time.Sleep(5 * time.Millisecond)
		s.Log = append(slices.Clone(s.Log), "b")
		return s, nil
	}
	r := compile(t, linear(&c, slow), graph.Config[ts]{Checkpointer: cp})
	ctx := context.Background()
	if _, err := r.Invoke(ctx, ts{}, graph.WithThread("t")); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() { _, errs[i] = r.Invoke(ctx, ts{N: i}, graph.WithThread("t")) })
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case !errors.Is(err, graph.ErrConflict) && !errors.Is(err, graph.ErrUnfinished):
			t.Errorf("err %v, want nil, ErrConflict or ErrUnfinished", err)
		}
	}
	if ok < 1 {
		t.Fatal("no run succeeded")
	}
	// The head's lineage is whole: every parent exists.
	hist, _ := cp.List(ctx, "t")
	byID := map[string]graph.Checkpoint{}
	for _, h := range hist {
		byID[h.ID] = h
	}
	for cur := hist[0]; cur.Parent != ""; cur = byID[cur.Parent] {
		if _, found := byID[cur.Parent]; !found {
			t.Fatalf("lineage broken at %s", cur.ID)
		}
	}
}

// An interrupt inside a subgraph names both nodes and is resumed through
// the outer thread.
func TestSubgraphInterrupt(t *testing.T) {
	var c counter
	inner := compile(t, graph.New[ts]("inner").AddNode("ask", asker(&c, "ask")).AddEdge(graph.Start, "ask").AddEdge("ask", graph.End), graph.Config[ts]{})
	outer := graph.New[ts]("outer").AddNode("a", logNode(&c, "a")).AddNode("sub", graph.Subgraph(inner)).
		AddEdge(graph.Start, "a").AddEdge("a", "sub").AddEdge("sub", graph.End)
	r := compile(t, outer, graph.Config[ts]{Checkpointer: graph.NewMemoryCheckpointer()})
	ctx := context.Background()
	_, err := r.Invoke(ctx, ts{}, graph.WithThread("t"))
	var ie *graph.InterruptedError
	if !errors.As(err, &ie) || len(ie.Interrupts) != 1 || ie.Interrupts[0].Node != "sub/ask" {
		t.Fatalf("err %v", err)
	}
	out, err := r.Resume(ctx, "t", map[string]any{ie.Interrupts[0].ID: "deep"})
	if err != nil || out.Answer != "deep" || !slices.Equal(out.Log, []string{"a", "ask"}) {
		t.Fatalf("out %+v %v", out, err)
	}
}

func TestThreadNeedsCheckpointer(t *testing.T) {
	var c counter
	r := compile(t, linear(&c, nil), graph.Config[ts]{})
	if _, err := r.Invoke(context.Background(), ts{}, graph.WithThread("t")); !errors.Is(err, graph.ErrNoCheckpointer) {
		t.Fatalf("err %v", err)
	}
	if _, err := graph.Interrupt(context.Background(), nil); !errors.Is(err, graph.ErrNotInNode) {
		t.Fatalf("Interrupt outside a node: %v", err)
	}
}

// Stream resumes too, and reports the resumed nodes only.
func TestStreamResume(t *testing.T) {
	var c counter
	r := compile(t, linear(&c, asker(&c, "b")), graph.Config[ts]{Checkpointer: graph.NewMemoryCheckpointer()})
	ctx := context.Background()
	var ie *graph.InterruptedError
	for _, err := range r.Stream(ctx, ts{}, graph.WithThread("t")) {
		if err != nil && !errors.As(err, &ie) {
			t.Fatal(err)
		}
	}
	if ie == nil {
		t.Fatal("no interrupt streamed")
	}
	var started []string
	for ev, err := range r.Stream(ctx, ts{}, graph.WithThread("t"), graph.WithResume(map[string]any{ie.Interrupts[0].ID: "ok"})) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind == graph.NodeStart {
			started = append(started, ev.Node)
		}
	}
	if !slices.Equal(started, []string{"b", "c"}) {
		t.Fatalf("started %v", started)
	}
}
