// Package checkpointtest is the conformance suite every graph.Checkpointer
// of this module passes (memory, SQLite, PostgreSQL): storage round trips,
// parent links, conditional puts under concurrent writers, and a graph run
// that is interrupted, then resumed through a second Runnable as another
// process would.
package checkpointtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/adaptrag/adaptrag/graph"
)

// Run runs the suite. open returns an empty store for one subtest; the
// suite closes nothing (use t.Cleanup in open).
func Run(t *testing.T, open func(t *testing.T) graph.Checkpointer) {
	t.Run("RoundTrip", func(t *testing.T) { roundTrip(t, open(t)) })
	t.Run("Conflict", func(t *testing.T) { conflict(t, open(t)) })
	t.Run("ConcurrentWriters", func(t *testing.T) { concurrentWriters(t, open(t)) })
	t.Run("ChainUnderContention", func(t *testing.T) { chain(t, open(t)) })
	t.Run("ThreadsAndDelete", func(t *testing.T) { threads(t, open(t)) })
	t.Run("Invalid", func(t *testing.T) { invalid(t, open(t)) })
	t.Run("GraphInterruptResume", func(t *testing.T) { graphRun(t, open(t)) })
}

// CP returns a checkpoint of thread with id and parent, and some bytes.
func CP(thread, id, parent string, step int) graph.Checkpoint {
	return graph.Checkpoint{
		Thread: thread, ID: id, Parent: parent, Graph: "g", Step: step, Status: graph.StatusRunning,
		Next: []string{"n" + fmt.Sprint(step)}, Codec: "json", Version: "v1",
		State: []byte(fmt.Sprintf(`{"step":%d,"bin":"\u0000\u00ff"}`, step)), Run: []byte(`{"v":1}`),
		Created: time.Unix(1700000000, int64(step)*1000).UTC(),
	}
}

func equal(t *testing.T, got, want graph.Checkpoint) {
	t.Helper()
	if got.Thread != want.Thread || got.ID != want.ID || got.Parent != want.Parent || got.Graph != want.Graph ||
		got.Step != want.Step || got.Status != want.Status || !slices.Equal(got.Next, want.Next) ||
		got.Codec != want.Codec || got.Version != want.Version || !bytes.Equal(got.State, want.State) ||
		!bytes.Equal(got.Run, want.Run) || !got.Created.Equal(want.Created) {
		t.Fatalf("checkpoint changed in the store:\n got %+v\nwant %+v", got, want)
	}
}

func roundTrip(t *testing.T, cp graph.Checkpointer) {
	ctx := context.Background()
	if _, err := cp.Latest(ctx, "t"); !errors.Is(err, graph.ErrNoCheckpoint) {
		t.Fatalf("Latest of an unknown thread: %v", err)
	}
	if l, err := cp.List(ctx, "t"); err != nil || len(l) != 0 {
		t.Fatalf("List of an unknown thread: %v %v", l, err)
	}
	a, b := CP("t", "a", "", 0), CP("t", "b", "a", 1)
	b.Next = []string{}
	b.Status = graph.StatusDone
	if err := cp.Put(ctx, a, ""); err != nil {
		t.Fatal(err)
	}
	if err := cp.Put(ctx, b, "a"); err != nil {
		t.Fatal(err)
	}
	got, err := cp.Latest(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	equal(t, got, b)
	if got, err = cp.Get(ctx, "t", "a"); err != nil {
		t.Fatal(err)
	}
	equal(t, got, a)
	if _, err := cp.Get(ctx, "t", "zz"); !errors.Is(err, graph.ErrNoCheckpoint) {
		t.Fatalf("Get of an unknown id: %v", err)
	}
	l, err := cp.List(ctx, "t")
	if err != nil || len(l) != 2 || l[0].ID != "b" || l[1].ID != "a" || l[0].Parent != "a" {
		t.Fatalf("List %v %v, want b then a", ids(l), err)
	}
}

func ids(l []graph.Checkpoint) []string {
	out := make([]string, len(l))
	for i, c := range l {
		out[i] = c.ID
	}
	return out
}

func conflict(t *testing.T, cp graph.Checkpointer) {
	ctx := context.Background()
	if err := cp.Put(ctx, CP("t", "a", "", 0), ""); err != nil {
		t.Fatal(err)
	}
	var ce *graph.ConflictError
	if err := cp.Put(ctx, CP("t", "b", "", 0), ""); !errors.As(err, &ce) || !errors.Is(err, graph.ErrConflict) {
		t.Fatalf("a second first checkpoint: %v, want a ConflictError", err)
	}
	if err := cp.Put(ctx, CP("t", "c", "x", 1), "x"); !errors.Is(err, graph.ErrConflict) {
		t.Fatalf("a stale head: %v, want ErrConflict", err)
	}
	if l, _ := cp.List(ctx, "t"); len(l) != 1 {
		t.Fatalf("a conflicting Put stored something: %v", ids(l))
	}
	if err := cp.Put(ctx, CP("t", "a", "a", 1), "a"); err == nil {
		t.Fatal("a checkpoint that is its own parent was stored")
	}
}

// concurrentWriters: writers racing from one head; exactly one wins
// (langgraph#4168: concurrent writes must not corrupt the thread).
func concurrentWriters(t *testing.T, cp graph.Checkpointer) {
	ctx := context.Background()
	if err := cp.Put(ctx, CP("t", "root", "", 0), ""); err != nil {
		t.Fatal(err)
	}
	const n = 12
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			errs[i] = cp.Put(ctx, CP("t", fmt.Sprintf("w%d", i), "root", 1), "root")
		})
	}
	close(start)
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, graph.ErrConflict):
			t.Errorf("a racing Put failed with %v, want ErrConflict", err)
		}
	}
	if won != 1 {
		t.Fatalf("%d writers won, want exactly 1", won)
	}
	if l, _ := cp.List(ctx, "t"); len(l) != 2 {
		t.Fatalf("thread has %v", ids(l))
	}
}

// chain: writers that retry on conflict build one unbroken chain, every
// checkpoint's parent the one before it.
func chain(t *testing.T, cp graph.Checkpointer) {
	ctx := context.Background()
	const writers, each = 6, 8
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			for i := 0; i < each; {
				head := ""
				if l, err := cp.Latest(ctx, "t"); err == nil {
					head = l.ID
				} else if !errors.Is(err, graph.ErrNoCheckpoint) {
					errs <- err
					return
				}
				err := cp.Put(ctx, CP("t", fmt.Sprintf("w%d-%d", w, i), head, i), head)
				switch {
				case err == nil:
					i++
				case !errors.Is(err, graph.ErrConflict):
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	l, err := cp.List(ctx, "t")
	if err != nil || len(l) != writers*each {
		t.Fatalf("%d checkpoints (%v), want %d", len(l), err, writers*each)
	}
	for i := 0; i+1 < len(l); i++ {
		if l[i].Parent != l[i+1].ID {
			t.Fatalf("chain broken: %s has parent %q, the one before it is %s", l[i].ID, l[i].Parent, l[i+1].ID)
		}
	}
	if l[len(l)-1].Parent != "" {
		t.Fatalf("the first checkpoint has parent %q", l[len(l)-1].Parent)
	}
}

func threads(t *testing.T, cp graph.Checkpointer) {
	ctx := context.Background()
	for _, th := range []string{"x", "y"} {
		if err := cp.Put(ctx, CP(th, "a", "", 0), ""); err != nil {
			t.Fatal(err)
		}
	}
	if err := cp.Put(ctx, CP("x", "b", "a", 1), "a"); err != nil {
		t.Fatal(err)
	}
	if l, _ := cp.List(ctx, "y"); len(l) != 1 {
		t.Fatalf("thread y sees %v", ids(l))
	}
	if err := cp.Delete(ctx, "x"); err != nil {
		t.Fatal(err)
	}
	if _, err := cp.Latest(ctx, "x"); !errors.Is(err, graph.ErrNoCheckpoint) {
		t.Fatalf("deleted thread: %v", err)
	}
	if l, _ := cp.List(ctx, "x"); len(l) != 0 {
		t.Fatalf("deleted thread lists %v", ids(l))
	}
	if _, err := cp.Latest(ctx, "y"); err != nil {
		t.Fatalf("the other thread after a delete: %v", err)
	}
	if err := cp.Delete(ctx, "never"); err != nil {
		t.Fatalf("delete of an unknown thread: %v", err)
	}
	// A deleted thread starts again from nothing.
	if err := cp.Put(ctx, CP("x", "a", "", 0), ""); err != nil {
		t.Fatalf("recreate: %v", err)
	}
}

func invalid(t *testing.T, cp graph.Checkpointer) {
	ctx := context.Background()
	for _, c := range []graph.Checkpoint{CP("", "a", "", 0), CP("t", "", "", 0)} {
		if err := cp.Put(ctx, c, ""); err == nil {
			t.Errorf("stored %+v", c)
		}
	}
}

type state struct {
	Log    []string
	Answer string
}

func step(name string) graph.NodeFunc[state] {
	return func(_ context.Context, s state) (state, error) {
		s.Log = append(slices.Clone(s.Log), name)
		return s, nil
	}
}

func graphRun(t *testing.T, cp graph.Checkpointer) {
	build := func() *graph.Runnable[state] {
		ask := func(ctx context.Context, s state) (state, error) {
			v, err := graph.Interrupt(ctx, map[string]string{"question": "which?"})
			if err != nil {
				return s, err
			}
			s.Answer, err = graph.ResumeValue[string](v)
			s.Log = append(slices.Clone(s.Log), "ask")
			return s, err
		}
		r, err := graph.New[state]("conformance").AddNode("a", step("a")).AddNode("ask", ask).AddNode("c", step("c")).
			AddEdge(graph.Start, "a").AddEdge("a", "ask").AddEdge("ask", "c").AddEdge("c", graph.End).
			Compile(graph.Config[state]{Checkpointer: cp})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	ctx := context.Background()
	_, err := build().Invoke(ctx, state{}, graph.WithThread("conv"))
	var ie *graph.InterruptedError
	if !errors.As(err, &ie) || len(ie.Interrupts) != 1 {
		t.Fatalf("err %v, want an interrupt", err)
	}
	// Another Runnable, as another process would have.
	out, err := build().Resume(ctx, "conv", map[string]any{ie.Interrupts[0].ID: "that one"})
	if err != nil {
		t.Fatal(err)
	}
	if out.Answer != "that one" || !slices.Equal(out.Log, []string{"a", "ask", "c"}) {
		t.Fatalf("out %+v", out)
	}
	l, err := cp.List(ctx, "conv")
	if err != nil || len(l) != 5 || l[0].Status != graph.StatusDone {
		t.Fatalf("history %v %v", ids(l), err)
	}
}
