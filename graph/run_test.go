package graph

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func appendLog(name string) NodeFunc[st] {
	return func(_ context.Context, s st) (st, error) {
		s.Log = append(slices.Clip(s.Log), name)
		return s, nil
	}
}

func mustCompile(t *testing.T, g *Graph[st], cfg Config[st]) *Runnable[st] {
	t.Helper()
	r, err := g.Compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func routerGraph() *Graph[st] {
	g := New[st]("router")
	for _, n := range []string{"classify", "vector", "hybrid", "rerank", "generate"} {
		g.AddNode(n, appendLog(n))
	}
	return g.AddEdge(Start, "classify").
		AddConditionalEdges("classify", func(s st) string { return s.Route }, map[string]string{
			"chitchat": "generate", "factual": "vector", "analytical": "hybrid",
		}).
		AddEdge("vector", "generate").AddEdge("hybrid", "rerank").AddEdge("rerank", "generate").
		AddEdge("generate", End)
}

func TestRouting(t *testing.T) {
	r := mustCompile(t, routerGraph(), Config[st]{})
	for route, want := range map[string][]string{
		"chitchat":   {"classify", "generate"},
		"factual":    {"classify", "vector", "generate"},
		"analytical": {"classify", "hybrid", "rerank", "generate"},
	} {
		out, err := r.Invoke(context.Background(), st{Route: route})
		if err != nil {
			t.Fatalf("%s: %v", route, err)
		}
		if !slices.Equal(out.Log, want) {
			t.Errorf("%s: path %v, want %v", route, out.Log, want)
		}
	}
}

func TestUndeclaredLabel(t *testing.T) {
	r := mustCompile(t, routerGraph(), Config[st]{})
	out, err := r.Invoke(context.Background(), st{Route: "poetry"})
	if !errors.Is(err, ErrUnknownLabel) {
		t.Fatalf("err = %v, want ErrUnknownLabel", err)
	}
	var ne *NodeError
	if !errors.As(err, &ne) || ne.Node != "classify" || !strings.Contains(err.Error(), "poetry") {
		t.Fatalf("err = %v, want a NodeError naming classify and the label", err)
	}
	if len(out.Log) != 0 {
		t.Errorf("state on error = %+v, want the state before the failing step", out)
	}
}

func TestConditionalEntry(t *testing.T) {
	g := New[st]("entry")
	g.AddNode("small", appendLog("small")).AddNode("big", appendLog("big")).
		AddConditionalEdges(Start, func(s st) string {
			if s.N > 10 {
				return "big"
			}
			return "small"
		}, map[string]string{"big": "big", "small": "small"}).
		AddEdge("small", End).AddEdge("big", End)
	r := mustCompile(t, g, Config[st]{})
	out, err := r.Invoke(context.Background(), st{N: 11})
	if err != nil || !slices.Equal(out.Log, []string{"big"}) {
		t.Fatalf("got %v, %v", out.Log, err)
	}
}

// fanOutGraph: split -> {left, right} -> join, merging Log and summing N.
func fanOutGraph(left, right NodeFunc[st]) *Graph[st] {
	g := New[st]("fan")
	g.AddNode("split", appendLog("split")).AddNode("left", left).AddNode("right", right).
		AddNode("join", appendLog("join")).
		AddEdge(Start, "split").
		AddFanOut("split", []string{"left", "right"}, "join", func(base st, b []st) (st, error) {
			out := base
			for _, s := range b {
				out.N += s.N - base.N
				out.Log = append(slices.Clip(out.Log), s.Log[len(base.Log):]...)
			}
			return out, nil
		}).
		AddEdge("left", "join").AddEdge("right", "join").AddEdge("join", End)
	return g
}

func TestFanOutRunsInParallelAndMerges(t *testing.T) {
	var running, peak atomic.Int32
	branch := func(name string, add int) NodeFunc[st] {
		return func(ctx context.Context, s st) (st, error) {
			n := running.Add(1)
			for {
				p := peak.Load()
				if n <= p || peak.CompareAndSwap(p, n) {
					break
				}
			}
			// Wait for the sibling to be running too: parallel branches meet
			// here at once, serialised ones never do (and fail below).
			for deadline := time.Now().Add(2 * time.Second); peak.Load() < 2 && time.Now().Before(deadline); {
				time.Sleep(time.Millisecond)
			}
			running.Add(-1)
			s.N += add
			s.Log = append(slices.Clip(s.Log), name)
			return s, nil
		}
	}
	r := mustCompile(t, fanOutGraph(branch("left", 1), branch("right", 10)), Config[st]{})
	out, err := r.Invoke(context.Background(), st{N: 100})
	if err != nil {
		t.Fatal(err)
	}
	if out.N != 111 {
		t.Errorf("merged N = %d, want 111 (both branch writes combined by the merge)", out.N)
	}
	if want := []string{"split", "left", "right", "join"}; !slices.Equal(out.Log, want) {
		t.Errorf("log = %v, want %v (merge order follows declaration order)", out.Log, want)
	}
	if peak.Load() != 2 {
		t.Errorf("peak concurrency %d, want 2", peak.Load())
	}
}

func TestFanOutFailureCancelsSiblings(t *testing.T) {
	defer goleak.VerifyNone(t)
	boom := errors.New("boom")
	var started, sawCancel atomic.Bool
	left := func(ctx context.Context, s st) (st, error) { return s, boom }
	right := func(ctx context.Context, s st) (st, error) {
		started.Store(true)
		select {
		case <-ctx.Done():
			sawCancel.Store(true)
			return s, ctx.Err()
		case <-time.After(5 * time.Second):
			return s, nil
		}
	}
	r := mustCompile(t, fanOutGraph(left, right), Config[st]{})
	start := time.Now()
	_, err := r.Invoke(context.Background(), st{})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the failing branch's error (not the sibling's cancellation)", err)
	}
	var ne *NodeError
	if !errors.As(err, &ne) || ne.Node != "left" {
		t.Fatalf("err = %v, want NodeError for left", err)
	}
	// The sibling either never started (cancelled first) or saw the cancel.
	if started.Load() != sawCancel.Load() || time.Since(start) > 2*time.Second {
		t.Errorf("sibling was not cancelled promptly")
	}
}

func TestMergeErrorNamesFanOut(t *testing.T) {
	g := fanOutGraph(nop, nop)
	g.out["split"].merge = func(st, []st) (st, error) { return st{}, errors.New("conflict") }
	r := mustCompile(t, g, Config[st]{})
	_, err := r.Invoke(context.Background(), st{})
	var ne *NodeError
	if !errors.As(err, &ne) || ne.Node != "split" || !strings.Contains(err.Error(), "merge: conflict") {
		t.Fatalf("err = %v", err)
	}
}

func TestStepLimitNamesTheLoop(t *testing.T) {
	g := New[st]("loop")
	g.AddNode("plan", appendLog("plan")).AddNode("act", appendLog("act")).AddNode("check", nop).
		AddEdge(Start, "plan").AddEdge("plan", "act").AddEdge("act", "check").
		AddConditionalEdges("check", func(s st) string { return "again" }, map[string]string{"again": "plan", "done": End})
	r := mustCompile(t, g, Config[st]{MaxSteps: 10})
	_, err := r.Invoke(context.Background(), st{})
	if !errors.Is(err, ErrStepLimit) {
		t.Fatalf("err = %v, want ErrStepLimit", err)
	}
	var sl *StepLimitError
	if !errors.As(err, &sl) {
		t.Fatalf("err %T is not a *StepLimitError", err)
	}
	if sl.Limit != 10 || !isRotation(sl.Loop, []string{"plan", "act", "check"}) {
		t.Errorf("limit %d loop %v, want 10 and a rotation of [plan act check]", sl.Limit, sl.Loop)
	}
	for _, s := range []string{"10", "plan", "MaxSteps"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("message %q lacks %q", err, s)
		}
	}
}

func TestBoundedCycleFinishes(t *testing.T) {
	g := New[st]("retry-loop")
	g.AddNode("inc", func(_ context.Context, s st) (st, error) { s.N++; return s, nil }).
		AddEdge(Start, "inc").
		AddConditionalEdges("inc", func(s st) string {
			if s.N < 5 {
				return "again"
			}
			return "done"
		}, map[string]string{"again": "inc", "done": End})
	r := mustCompile(t, g, Config[st]{})
	out, err := r.Invoke(context.Background(), st{})
	if err != nil || out.N != 5 {
		t.Fatalf("got %d, %v", out.N, err)
	}
}

func TestRetry(t *testing.T) {
	transient := errors.New("transient")
	for _, tt := range []struct {
		name      string
		failures  int
		retryable bool
		wantCalls int32
		wantErr   bool
	}{
		{"recovers after two retryable failures", 2, true, 3, false},
		{"gives up after max attempts", 5, true, 3, true},
		{"does not retry unmarked errors", 5, false, 1, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			fn := func(_ context.Context, s st) (st, error) {
				if int(calls.Add(1)) <= tt.failures {
					if tt.retryable {
						return s, Retryable(transient)
					}
					return s, transient
				}
				s.N = 1
				return s, nil
			}
			g := New[st]("retry")
			g.AddNode("flaky", fn, WithRetry(RetryPolicy{MaxAttempts: 3, Initial: time.Millisecond})).
				AddEdge(Start, "flaky").AddEdge("flaky", End)
			r := mustCompile(t, g, Config[st]{})
			out, err := r.Invoke(context.Background(), st{})
			if calls.Load() != tt.wantCalls {
				t.Errorf("calls = %d, want %d", calls.Load(), tt.wantCalls)
			}
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v", err)
			}
			if err != nil {
				var ne *NodeError
				if !errors.As(err, &ne) || ne.Attempt != int(tt.wantCalls) || !errors.Is(err, transient) {
					t.Errorf("err = %v, want NodeError with %d attempts wrapping the cause", err, tt.wantCalls)
				}
			} else if out.N != 1 {
				t.Errorf("state not updated after recovery")
			}
		})
	}
}

func TestRetryBackoffStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	g := New[st]("retry")
	g.AddNode("flaky", func(_ context.Context, s st) (st, error) {
		cancel()
		return s, Retryable(errors.New("again"))
	}, WithRetry(RetryPolicy{MaxAttempts: 5, Initial: time.Hour})).AddEdge(Start, "flaky").AddEdge("flaky", End)
	r := mustCompile(t, g, Config[st]{})
	done := make(chan error, 1)
	go func() { _, err := r.Invoke(ctx, st{}); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("backoff ignored cancellation")
	}
}

func TestBackoffGrowsAndCaps(t *testing.T) {
	p := RetryPolicy{Initial: 10 * time.Millisecond, Max: 35 * time.Millisecond, Multiplier: 2}
	got := []time.Duration{p.backoff(1), p.backoff(2), p.backoff(3), p.backoff(4)}
	want := []time.Duration{10 * time.Millisecond, 20 * time.Millisecond, 35 * time.Millisecond, 35 * time.Millisecond}
	if !slices.Equal(got, want) {
		t.Errorf("backoff = %v, want %v", got, want)
	}
}

func TestTimeout(t *testing.T) {
	slow := func(ctx context.Context, s st) (st, error) {
		select {
		case <-ctx.Done():
			return s, fmt.Errorf("gave up: %w", ctx.Err())
		case <-time.After(5 * time.Second):
			return s, nil
		}
	}
	// A node that reports a different error once its deadline passed still
	// fails as a timeout.
	sloppy := func(ctx context.Context, s st) (st, error) {
		<-ctx.Done()
		return s, errors.New("connection reset")
	}
	for name, fn := range map[string]NodeFunc[st]{"cooperative": slow, "sloppy": sloppy} {
		t.Run(name, func(t *testing.T) {
			g := New[st]("timeout")
			g.AddNode("slow", fn, WithTimeout(20*time.Millisecond)).AddEdge(Start, "slow").AddEdge("slow", End)
			r := mustCompile(t, g, Config[st]{})
			start := time.Now()
			_, err := r.Invoke(context.Background(), st{})
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("err = %v, want DeadlineExceeded", err)
			}
			var ne *NodeError
			if !errors.As(err, &ne) || ne.Node != "slow" {
				t.Fatalf("err = %v, want NodeError naming slow", err)
			}
			if d := time.Since(start); d > time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
}

func TestFallback(t *testing.T) {
	boom := errors.New("classifier down")
	var cause error
	g := New[st]("fallback")
	g.AddNode("classify", func(_ context.Context, s st) (st, error) {
		s.Route = "half-written" // must not leak into the fallback's input
		return s, boom
	}, WithFallback("safe")).
		AddNode("fast", appendLog("fast")).
		AddNode("safe", func(ctx context.Context, s st) (st, error) {
			cause = Cause(ctx)
			s.Log = append(s.Log, "safe:"+s.Route)
			return s, nil
		}).
		AddEdge(Start, "classify").AddEdge("classify", "fast").AddEdge("fast", End).AddEdge("safe", End)
	r := mustCompile(t, g, Config[st]{})
	var path Path
	var out st
	for ev, err := range r.Stream(context.Background(), st{Route: "orig"}) {
		if err != nil {
			t.Fatal(err)
		}
		path.Add(ev.Edge())
		if ev.Kind == RunEnd {
			out = ev.State
		}
	}
	if !slices.Equal(out.Log, []string{"safe:orig"}) {
		t.Errorf("log = %v, want the fallback to run on the failed node's input", out.Log)
	}
	if !errors.Is(cause, boom) {
		t.Errorf("Cause(ctx) = %v, want the classifier's error", cause)
	}
	if !slices.Contains(path.Edges, Edge{From: "classify", To: "safe", Label: "fallback"}) {
		t.Errorf("path %v lacks the fallback edge", path.Edges)
	}
}

func TestPanicBecomesNodeError(t *testing.T) {
	g := New[st]("panic")
	g.AddNode("bad", func(context.Context, st) (st, error) { panic("nil map") }).AddEdge(Start, "bad").AddEdge("bad", End)
	r := mustCompile(t, g, Config[st]{})
	_, err := r.Invoke(context.Background(), st{})
	var ne *NodeError
	var pe *PanicError
	if !errors.Is(err, ErrPanic) || !errors.As(err, &ne) || ne.Node != "bad" || !errors.As(err, &pe) {
		t.Fatalf("err = %v", err)
	}
	if !strings.Contains(string(pe.Stack), "run_test.go") {
		t.Errorf("stack does not point at the panicking node")
	}
}

func TestRouterPanicBecomesNodeError(t *testing.T) {
	g := New[st]("panic")
	g.AddNode("a", nop).AddEdge(Start, "a").
		AddConditionalEdges("a", func(st) string { panic("router bug") }, map[string]string{"x": End})
	r := mustCompile(t, g, Config[st]{})
	_, err := r.Invoke(context.Background(), st{})
	var ne *NodeError
	if !errors.Is(err, ErrPanic) || !errors.As(err, &ne) || ne.Node != "a" {
		t.Fatalf("err = %v", err)
	}
}

func TestCancellationStopsPromptlyWithoutLeaks(t *testing.T) {
	defer goleak.VerifyNone(t)
	started := make(chan struct{})
	block := func(ctx context.Context, s st) (st, error) {
		close(started)
		<-ctx.Done()
		return s, ctx.Err()
	}
	never := func(context.Context, st) (st, error) { t.Error("node after cancellation ran"); return st{}, nil }
	g := fanOutGraph(block, func(ctx context.Context, s st) (st, error) { <-ctx.Done(); return s, ctx.Err() })
	g.AddNode("after", never)
	g.out["join"].static = []string{"after"}
	g.AddEdge("after", End)
	r := mustCompile(t, g, Config[st]{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := r.Invoke(ctx, st{}); done <- err }()
	<-started
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want Canceled", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("run did not stop")
	}
}

func TestConcurrentInvokes(t *testing.T) {
	r := mustCompile(t, fanOutGraph(
		func(_ context.Context, s st) (st, error) { s.N += 1; return s, nil },
		func(_ context.Context, s st) (st, error) { s.N += 2; return s, nil }), Config[st]{})
	var wg sync.WaitGroup
	for i := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := r.Invoke(context.Background(), st{N: i * 100})
			if err != nil || out.N != i*100+3 {
				t.Errorf("run %d: %d, %v", i, out.N, err)
			}
		}()
	}
	wg.Wait()
}

func TestStreamEvents(t *testing.T) {
	r := mustCompile(t, routerGraph(), Config[st]{})
	var got []string
	var final st
	for ev, err := range r.Stream(context.Background(), st{Route: "factual"}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%s %s %d %q", ev.Kind, ev.Node, ev.Step, ev.Label))
		if ev.Kind == NodeEnd && ev.Duration <= 0 {
			t.Errorf("%s: no duration", ev.Node)
		}
		if ev.Kind == RunEnd {
			final = ev.State
		}
	}
	want := []string{
		`node_start classify 1 ""`, `node_end classify 1 "factual"`,
		`node_start vector 2 "factual"`, `node_end vector 2 ""`,
		`node_start generate 3 ""`, `node_end generate 3 ""`,
		`run_end __end__ 3 ""`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !slices.Equal(final.Log, []string{"classify", "vector", "generate"}) {
		t.Errorf("final state %v", final.Log)
	}
}

func TestStreamBreakCancelsRun(t *testing.T) {
	defer goleak.VerifyNone(t)
	var ran atomic.Int32
	g := New[st]("chain")
	prev := Start
	for i := range 5 {
		n := fmt.Sprintf("n%d", i)
		g.AddNode(n, func(_ context.Context, s st) (st, error) { ran.Add(1); return s, nil }).AddEdge(prev, n)
		prev = n
	}
	g.AddEdge(prev, End)
	r := mustCompile(t, g, Config[st]{})
	for ev, err := range r.Stream(context.Background(), st{}) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind == NodeEnd && ev.Node == "n1" {
			break
		}
	}
	if ran.Load() != 2 {
		t.Errorf("%d nodes ran after the consumer stopped at n1, want 2", ran.Load())
	}
}

func TestStreamReportsFailure(t *testing.T) {
	g := New[st]("fail")
	g.AddNode("bad", func(_ context.Context, s st) (st, error) { return s, errors.New("nope") }).
		AddEdge(Start, "bad").AddEdge("bad", End)
	r := mustCompile(t, g, Config[st]{})
	var kinds []EventKind
	var last error
	for ev, err := range r.Stream(context.Background(), st{}) {
		if err != nil {
			last = err
			continue
		}
		kinds = append(kinds, ev.Kind)
		if ev.Kind == NodeEnd && ev.Err == nil {
			t.Error("NodeEnd of a failed node carries no error")
		}
	}
	if last == nil || !slices.Equal(kinds, []EventKind{NodeStart, NodeEnd}) {
		t.Fatalf("kinds %v, err %v", kinds, last)
	}
}

func isRotation(got, want []string) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range want {
		if slices.Equal(got, append(slices.Clone(want[i:]), want[:i]...)) {
			return true
		}
	}
	return false
}

func testingAllocs(f func()) float64 { return testing.AllocsPerRun(100, f) }
