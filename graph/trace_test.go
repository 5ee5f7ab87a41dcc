package graph

import (
	"context"
	"errors"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

func recorder() (*tracetest.SpanRecorder, trace.TracerProvider) {
	rec := tracetest.NewSpanRecorder()
	return rec, sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
}

func attrs(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes() {
		m[kv.Key] = kv.Value
	}
	return m
}

func TestSpansPerNode(t *testing.T) {
	rec, tp := recorder()
	g := routerGraph()
	// A node adds its own attribute and a child span through the context.
	g.nodes[g.index["vector"]].fn = func(ctx context.Context, s st) (st, error) {
		trace.SpanFromContext(ctx).SetAttributes(attribute.Int("retrieval.k", 3))
		_, child := tp.Tracer("test").Start(ctx, "retrieve dense")
		child.End()
		return s, nil
	}
	r := mustCompile(t, g, Config[st]{TracerProvider: tp})
	if _, err := r.Invoke(context.Background(), st{Route: "factual"}); err != nil {
		t.Fatal(err)
	}
	spans := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range rec.Ended() {
		spans[s.Name()] = s
	}
	run := spans["graph.run"]
	if run == nil {
		t.Fatalf("no graph.run span among %d spans", len(spans))
	}
	if attrs(run)["graph.name"].AsString() != "router" {
		t.Errorf("graph.run lacks graph.name")
	}
	for step, name := range []string{"classify", "vector", "generate"} {
		s := spans[name]
		if s == nil {
			t.Fatalf("no span for node %s", name)
		}
		if s.Parent().SpanID() != run.SpanContext().SpanID() {
			t.Errorf("%s is not a child of graph.run", name)
		}
		a := attrs(s)
		if a["graph.step"].AsInt64() != int64(step+1) || a["graph.retry.count"].AsInt64() != 0 {
			t.Errorf("%s: attributes %v", name, a)
		}
	}
	if got := attrs(spans["classify"])["graph.route.label"].AsString(); got != "factual" {
		t.Errorf("classify route label = %q", got)
	}
	if _, ok := attrs(spans["vector"])["graph.route.label"]; ok {
		t.Errorf("vector has a route label but no conditional edge")
	}
	if attrs(spans["vector"])["retrieval.k"].AsInt64() != 3 {
		t.Errorf("node attribute not recorded on its span")
	}
	if c := spans["retrieve dense"]; c == nil || c.Parent().SpanID() != spans["vector"].SpanContext().SpanID() {
		t.Errorf("node child span not parented to the node span")
	}
	if _, ok := spans["hybrid"]; ok {
		t.Errorf("a node that did not run has a span")
	}
}

func TestSpanRecordsRetriesAndErrors(t *testing.T) {
	rec, tp := recorder()
	calls := 0
	g := New[st]("err")
	g.AddNode("flaky", func(_ context.Context, s st) (st, error) {
		calls++
		return s, Retryable(errors.New("still down"))
	}, WithRetry(RetryPolicy{MaxAttempts: 3, Initial: 1})).AddEdge(Start, "flaky").AddEdge("flaky", End)
	r := mustCompile(t, g, Config[st]{TracerProvider: tp})
	if _, err := r.Invoke(context.Background(), st{}); err == nil {
		t.Fatal("want error")
	}
	for _, s := range rec.Ended() {
		if s.Status().Code != codes.Error {
			t.Errorf("%s: status %v, want Error", s.Name(), s.Status())
		}
		if s.Name() == "flaky" {
			if got := attrs(s)["graph.retry.count"].AsInt64(); got != 2 {
				t.Errorf("retry count %d, want 2", got)
			}
			if len(s.Events()) == 0 || s.Events()[0].Name != "exception" {
				t.Errorf("error not recorded as an exception event")
			}
		}
	}
}

func TestNoProviderMeansNoNodeSpans(t *testing.T) {
	// The global provider without an SDK yields non-recording spans; the
	// engine then skips node spans entirely (the cheap path).
	r := mustCompile(t, routerGraph(), Config[st]{})
	allocs := testingAllocs(func() { _, _ = r.Invoke(context.Background(), st{Route: "analytical"}) })
	if allocs > 8 {
		t.Errorf("%v allocations per untraced run of 4 nodes", allocs)
	}
}
