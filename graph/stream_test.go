package graph

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// goid returns the id of the calling goroutine, from its stack header.
func goid() int {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	f := bytes.Fields(buf)
	id, err := strconv.Atoi(string(f[1]))
	if err != nil {
		panic(fmt.Sprintf("cannot parse %q", buf))
	}
	return id
}

// nestedFanOut: split fans out to left and right; left fans out again to l1
// and l2 (joined at ljoin); both sides join at join.
//
//	split ==> left ==> {l1, l2} -> ljoin -> join
//	      ==> right ------------------------> join -> End
func nestedFanOut(fns map[string]NodeFunc[st]) *Graph[st] {
	merge := func(base st, b []st) (st, error) {
		out := base
		for _, s := range b {
			out.Log = append(slices.Clip(out.Log), s.Log[len(base.Log):]...)
		}
		return out, nil
	}
	g := New[st]("nested")
	for _, n := range []string{"split", "left", "l1", "l2", "ljoin", "right", "join"} {
		fn := fns[n]
		if fn == nil {
			fn = appendLog(n)
		}
		g.AddNode(n, fn)
	}
	return g.AddEdge(Start, "split").
		AddFanOut("split", []string{"left", "right"}, "join", merge).
		AddFanOut("left", []string{"l1", "l2"}, "ljoin", merge).
		AddEdge("l1", "ljoin").AddEdge("l2", "ljoin").AddEdge("ljoin", "join").
		AddEdge("right", "join").AddEdge("join", End)
}

func TestStreamYieldsOnCallersGoroutine(t *testing.T) {
	defer goleak.VerifyNone(t)
	r := mustCompile(t, nestedFanOut(nil), Config[st]{})
	me := goid()
	var seen []string
	for ev, err := range r.Stream(context.Background(), st{}) {
		if err != nil {
			t.Fatal(err)
		}
		if id := goid(); id != me {
			t.Errorf("%s %s yielded on goroutine %d, the caller is %d", ev.Kind, ev.Node, id, me)
		}
		if ev.Kind == NodeEnd {
			seen = append(seen, ev.Node)
		}
		if ev.Kind == RunEnd {
			if want := []string{"split", "left", "l1", "l2", "ljoin", "right", "join"}; !slices.Equal(ev.State.Log, want) {
				t.Errorf("final log %v, want %v", ev.State.Log, want)
			}
		}
	}
	slices.Sort(seen)
	if want := []string{"join", "l1", "l2", "left", "ljoin", "right", "split"}; !slices.Equal(seen, want) {
		t.Errorf("node_end events for %v, want %v", seen, want)
	}
}

// A panic in the loop body reaches the caller as it was raised, wherever in
// the graph the event came from, and no goroutine is left running.
func TestStreamLoopBodyPanicPropagates(t *testing.T) {
	for _, at := range []struct {
		kind EventKind
		node string
	}{
		{NodeStart, "split"}, // before any fan-out
		{NodeStart, "right"}, // a branch
		{NodeEnd, "right"},
		{NodeStart, "l2"}, // a branch of a nested fan-out
		{NodeEnd, "l1"},
		{NodeEnd, "join"},
		{RunEnd, End},
	} {
		t.Run(fmt.Sprintf("%s %s", at.kind, at.node), func(t *testing.T) {
			defer goleak.VerifyNone(t)
			r := mustCompile(t, nestedFanOut(nil), Config[st]{})
			type bodyPanic struct{ at string }
			want := &bodyPanic{at.node}
			got := func() (p any) {
				defer func() { p = recover() }()
				for ev, err := range r.Stream(context.Background(), st{}) {
					if err != nil {
						t.Errorf("stream error %v before the panic", err)
					}
					if ev.Kind == at.kind && ev.Node == at.node {
						panic(want)
					}
				}
				return nil
			}()
			if got != want {
				t.Fatalf("recovered %#v, want the loop body's own panic value", got)
			}
		})
	}
}

// A branch waits while the consumer handles its event, and a consumer that
// stops at a branch's node_start keeps that node from running.
func TestStreamBranchBackpressureAndBreak(t *testing.T) {
	defer goleak.VerifyNone(t)
	var l2Ran, rightRan atomic.Bool
	fns := map[string]NodeFunc[st]{
		"l2": func(ctx context.Context, s st) (st, error) { l2Ran.Store(true); return s, nil },
		"right": func(ctx context.Context, s st) (st, error) {
			rightRan.Store(true)
			<-ctx.Done()
			return s, ctx.Err()
		},
	}
	r := mustCompile(t, nestedFanOut(fns), Config[st]{})
	var after []string
	stopped := false
	for ev, err := range r.Stream(context.Background(), st{}) {
		if stopped {
			after = append(after, fmt.Sprint(ev.Kind, " ", ev.Node, " ", err))
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind == NodeStart && ev.Node == "l2" {
			time.Sleep(30 * time.Millisecond)
			if l2Ran.Load() {
				t.Errorf("l2 ran before the consumer returned from its node_start")
			}
			stopped = true
			break
		}
	}
	if len(after) > 0 {
		t.Errorf("events after break: %v", after)
	}
	if l2Ran.Load() {
		t.Errorf("l2 ran although the consumer stopped at its node_start")
	}
	_ = rightRan.Load() // right may or may not have started; it must have been cancelled (goleak)
}

func TestStreamBranchFailure(t *testing.T) {
	defer goleak.VerifyNone(t)
	boom := errors.New("boom")
	rightRuns := make(chan struct{})
	r := mustCompile(t, fanOutGraph(
		func(_ context.Context, s st) (st, error) { <-rightRuns; return s, boom },
		func(ctx context.Context, s st) (st, error) { close(rightRuns); <-ctx.Done(); return s, ctx.Err() }), Config[st]{})
	ends := map[string]error{}
	var last error
	for ev, err := range r.Stream(context.Background(), st{}) {
		if err != nil {
			last = err
			continue
		}
		if ev.Kind == NodeEnd {
			ends[ev.Node] = ev.Err
		}
	}
	if !errors.Is(last, boom) {
		t.Fatalf("stream ended with %v, want the failing branch's error", last)
	}
	if !errors.Is(ends["left"], boom) || !errors.Is(ends["right"], context.Canceled) {
		t.Errorf("node_end errors %v, want left's own and right's cancellation", ends)
	}
}

func TestStreamStopLeavesNoSpanOpen(t *testing.T) {
	for _, stop := range []string{"break", "panic"} {
		for _, at := range []string{"split", "right", "join"} {
			t.Run(stop+" at "+at, func(t *testing.T) {
				defer goleak.VerifyNone(t)
				rec, tp := recorder()
				r := mustCompile(t, fanOutGraph(appendLog("left"), appendLog("right")), Config[st]{TracerProvider: tp})
				func() {
					defer func() { _ = recover() }()
					for ev := range r.Stream(context.Background(), st{}) {
						if ev.Kind == NodeStart && ev.Node == at {
							if stop == "panic" {
								panic(stop)
							}
							break
						}
					}
				}()
				if s, e := len(rec.Started()), len(rec.Ended()); s != e {
					t.Errorf("%d spans started, %d ended", s, e)
				}
				for _, s := range rec.Ended() {
					if s.Name() == at {
						t.Errorf("span for %s, which the consumer stopped before", at)
					}
				}
			})
		}
	}
}
