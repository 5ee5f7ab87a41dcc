package graph

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// doc is a state with every kind of field a node may mutate in place.
type doc struct {
	N    int
	Docs []string
	Meta map[string]int
	Note *string
}

func cloneDoc(d doc) doc {
	d.Docs = slices.Clone(d.Docs)
	d.Meta = maps.Clone(d.Meta)
	if d.Note != nil {
		n := *d.Note
		d.Note = &n
	}
	return d
}

func newDoc() doc {
	note := "original"
	return doc{N: 1, Docs: []string{"a", "b", "c"}, Meta: map[string]int{"k": 1}, Note: &note}
}

// scribble mutates every field of d in place, the way idiomatic node code
// may: slices.DeleteFunc, writes through the slice, map and pointer.
func scribble(d doc, who string) doc {
	d.Docs = slices.DeleteFunc(d.Docs, func(s string) bool { return s == "a" })
	if len(d.Docs) > 0 {
		d.Docs[0] = who
	}
	d.Meta[who]++
	d.Meta["k"] = 100
	*d.Note = who
	d.N = 100
	return d
}

// pristine reports how d differs from newDoc().
func pristine(d doc) string {
	var bad []string
	if !slices.Equal(d.Docs, []string{"a", "b", "c"}) {
		bad = append(bad, "docs "+strings.Join(d.Docs, ","))
	}
	if !maps.Equal(d.Meta, map[string]int{"k": 1}) {
		bad = append(bad, "meta changed")
	}
	if d.Note == nil || *d.Note != "original" {
		bad = append(bad, "note changed")
	}
	if d.N != 1 {
		bad = append(bad, "N changed")
	}
	return strings.Join(bad, "; ")
}

func compileDoc(t *testing.T, g *Graph[doc], cfg Config[doc]) *Runnable[doc] {
	t.Helper()
	r, err := g.Compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// A node may mutate everything it receives: the caller's input, a retried
// attempt and a fallback all still see the state as it was.
func TestCloneNodeMayMutateItsInput(t *testing.T) {
	var attempts atomic.Int32
	var seen []string
	g := New[doc]("clone")
	g.AddNode("flaky", func(_ context.Context, d doc) (doc, error) {
		if bad := pristine(d); bad != "" {
			seen = append(seen, "flaky attempt: "+bad)
		}
		scribble(d, "flaky")
		if attempts.Add(1) == 1 {
			return d, Retryable(errors.New("again"))
		}
		return d, errors.New("down")
	}, WithRetry(RetryPolicy{MaxAttempts: 2, Initial: time.Millisecond}), WithFallback("safe")).
		AddNode("safe", func(_ context.Context, d doc) (doc, error) {
			if bad := pristine(d); bad != "" {
				seen = append(seen, "fallback: "+bad)
			}
			return scribble(d, "safe"), nil
		}).
		AddNode("after", func(_ context.Context, d doc) (doc, error) {
			// Only what safe returned, never what flaky scribbled.
			if *d.Note != "safe" || d.Meta["flaky"] != 0 {
				seen = append(seen, "after sees flaky's writes")
			}
			return scribble(d, "after"), nil
		}).
		AddEdge(Start, "flaky").AddEdge("flaky", "after").AddEdge("safe", "after").AddEdge("after", End)
	r := compileDoc(t, g, Config[doc]{Clone: cloneDoc})
	in := newDoc()
	out, err := r.Invoke(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range seen {
		t.Error(s)
	}
	if bad := pristine(in); bad != "" {
		t.Errorf("caller's input changed: %s", bad)
	}
	if *out.Note != "after" || out.Meta["safe"] != 1 || out.Meta["after"] != 1 {
		t.Errorf("final state %+v lost the nodes' own writes", out)
	}
}

// Parallel branches each get their own copy: both write the same slice
// element and map in place (a data race without Clone).
func TestCloneFanOutBranches(t *testing.T) {
	branch := func(name string) NodeFunc[doc] {
		return func(_ context.Context, d doc) (doc, error) {
			if bad := pristine(d); bad != "" {
				return d, errors.New(name + " got a changed state: " + bad)
			}
			time.Sleep(5 * time.Millisecond)
			return scribble(d, name), nil
		}
	}
	g := New[doc]("fan")
	g.AddNode("split", func(_ context.Context, d doc) (doc, error) { return d, nil }).
		AddNode("left", branch("left")).AddNode("right", branch("right")).
		AddNode("join", func(_ context.Context, d doc) (doc, error) { return d, nil }).
		AddEdge(Start, "split").
		AddFanOut("split", []string{"left", "right"}, "join", func(base doc, b []doc) (doc, error) {
			if bad := pristine(base); bad != "" {
				return base, errors.New("merge base changed: " + bad)
			}
			for i, want := range []string{"left", "right"} {
				if b[i].Docs[0] != want || *b[i].Note != want || b[i].Meta[want] != 1 || len(b[i].Meta) != 2 {
					return base, errors.New("branch " + want + " state mixed with its sibling's")
				}
			}
			base = scribble(base, "merge") // the merge may write its base in place too
			base.Docs = append(base.Docs, b[0].Docs[0], b[1].Docs[0])
			return base, nil
		}).
		AddEdge("left", "join").AddEdge("right", "join").AddEdge("join", End)
	r := compileDoc(t, g, Config[doc]{Clone: cloneDoc})
	in := newDoc()
	out, err := r.Invoke(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if bad := pristine(in); bad != "" {
		t.Errorf("caller's input changed: %s", bad)
	}
	if got := strings.Join(out.Docs, ","); got != "merge,c,left,right" {
		t.Errorf("merged docs %s", got)
	}
}

// A stream consumer may scribble on every event's state, including events
// of parallel branches, without the run noticing.
func TestCloneStreamEvents(t *testing.T) {
	defer goleak.VerifyNone(t)
	check := func(name string) NodeFunc[doc] {
		return func(_ context.Context, d doc) (doc, error) {
			if d.Meta["consumer"] != 0 || slices.Contains(d.Docs, "consumer") {
				return d, errors.New(name + " sees the consumer's writes")
			}
			d.Docs = append(d.Docs, name)
			return d, nil
		}
	}
	g := New[doc]("stream")
	g.AddNode("first", check("first")).AddNode("left", check("left")).AddNode("right", check("right")).
		AddNode("join", check("join")).
		AddEdge(Start, "first").
		AddFanOut("first", []string{"left", "right"}, "join", func(base doc, b []doc) (doc, error) {
			base.Docs = append(base.Docs, b[0].Docs[len(b[0].Docs)-1], b[1].Docs[len(b[1].Docs)-1])
			return base, nil
		}).
		AddEdge("left", "join").AddEdge("right", "join").AddEdge("join", End)
	r := compileDoc(t, g, Config[doc]{Clone: cloneDoc})
	in := newDoc()
	var final []string
	for ev, err := range r.Stream(context.Background(), in) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind == RunEnd {
			final = slices.Clone(ev.State.Docs)
		}
		scribble(ev.State, "consumer")
	}
	if bad := pristine(in); bad != "" {
		t.Errorf("caller's input changed: %s", bad)
	}
	if got := strings.Join(final, ","); got != "a,b,c,first,left,right,join" {
		t.Errorf("final docs %s", got)
	}
}

// Clone is typed: a function of another state type does not compile
// (Config[doc]{Clone: func(*doc) *doc {...}} is a type error), and a nil
// one means no cloning.
func TestCloneConfig(t *testing.T) {
	g := New[doc]("c").AddNode("a", func(_ context.Context, d doc) (doc, error) { return scribble(d, "a"), nil }).
		AddEdge(Start, "a").AddEdge("a", End)
	var none func(doc) doc
	r := compileDoc(t, g, Config[doc]{Clone: none})
	in := newDoc()
	if _, err := r.Invoke(context.Background(), in); err != nil || *in.Note != "a" {
		t.Errorf("nil Clone: note %q, %v; want the node to write through, as without Clone", *in.Note, err)
	}
}

// A panicking Clone fails the run like a panicking node; it never crashes
// the process, whether it copies a node's input or an event's state.
func TestClonePanicFailsTheRun(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, when := range []int{1, 2, 3, 4} { // the nth call to Clone panics
		var calls atomic.Int32
		clone := func(d doc) doc {
			if calls.Add(1) == int32(when) {
				panic("clone bug")
			}
			return cloneDoc(d)
		}
		g := New[doc]("c").AddNode("a", func(_ context.Context, d doc) (doc, error) { return d, nil }).
			AddEdge(Start, "a").AddEdge("a", End)
		r := compileDoc(t, g, Config[doc]{Clone: clone})
		var last error
		for _, err := range r.Stream(context.Background(), newDoc()) {
			last = err
		}
		var ne *NodeError
		if !errors.Is(last, ErrPanic) || !errors.As(last, &ne) {
			t.Errorf("Clone panicking on call %d: %v, want a NodeError matching ErrPanic", when, last)
		}
	}
}

// With WithReadOnlyEvents a stream yields the same events, states
// included, as one that copies them, while Clone runs only for the nodes'
// inputs (and the merge's base); the nodes still may mutate what they
// receive, and the caller's input stays as it was.
func TestCloneReadOnlyEvents(t *testing.T) {
	defer goleak.VerifyNone(t)
	g := New[doc]("ro")
	step := func(name string) NodeFunc[doc] {
		return func(_ context.Context, d doc) (doc, error) { return scribble(d, name), nil }
	}
	g.AddNode("first", step("first")).AddNode("left", step("left")).AddNode("right", step("right")).
		AddNode("join", step("join")).
		AddEdge(Start, "first").
		AddFanOut("first", []string{"left", "right"}, "join", func(base doc, b []doc) (doc, error) {
			base.Docs = append(base.Docs, b[0].Docs[0], b[1].Docs[0])
			return base, nil
		}).
		AddEdge("left", "join").AddEdge("right", "join").AddEdge("join", End)
	run := func(opts ...RunOption) (evs []Event[doc], clones int32) {
		var n atomic.Int32
		r := compileDoc(t, g, Config[doc]{Clone: func(d doc) doc { n.Add(1); return cloneDoc(d) }})
		in := newDoc()
		for ev, err := range r.Stream(context.Background(), in, opts...) {
			if err != nil {
				t.Fatal(err)
			}
			ev.Duration = 0
			ev.State = cloneDoc(ev.State) // what the event said then
			evs = append(evs, ev)
		}
		if bad := pristine(in); bad != "" {
			t.Errorf("caller's input changed: %s", bad)
		}
		return evs, n.Load()
	}
	copied, withCopies := run()
	shared, readOnly := run(WithReadOnlyEvents())
	// The branches' events interleave in any order: compare them as sets.
	key := func(e Event[doc]) string { return e.Kind.String() + " " + e.Node }
	sortEvents := func(evs []Event[doc]) {
		slices.SortStableFunc(evs, func(a, b Event[doc]) int { return strings.Compare(key(a), key(b)) })
	}
	sortEvents(copied)
	sortEvents(shared)
	if len(copied) != len(shared) {
		t.Fatalf("%d events with read-only states, %d with copies", len(shared), len(copied))
	}
	for i := range copied {
		a, b := copied[i], shared[i]
		if key(a) != key(b) || !slices.Equal(a.State.Docs, b.State.Docs) || !maps.Equal(a.State.Meta, b.State.Meta) ||
			*a.State.Note != *b.State.Note || a.State.N != b.State.N {
			t.Errorf("event %s: read-only state %+v, copied %+v", key(a), b.State, a.State)
		}
	}
	// Four nodes and a merge: five copies; events add two per node and one
	// for RunEnd.
	if readOnly != 5 || withCopies != 5+2*4+1 {
		t.Errorf("Clone called %d times with read-only events, %d with copies; want 5 and 14", readOnly, withCopies)
	}
}

// A node added with ReadsInput gets the engine's state itself (no clone);
// the others still get clones, and so does a ReadsInput node that starts a
// fan-out branch, whose siblings append to their slices at once.
func TestReadsInputSkipsTheClone(t *testing.T) {
	var clones atomic.Int32
	count := func(d doc) doc { clones.Add(1); return cloneDoc(d) }
	reader := func(name string) NodeFunc[doc] {
		return func(_ context.Context, d doc) (doc, error) {
			d.Docs = append(d.Docs, name) // an append, no write in place
			return d, nil
		}
	}
	var before *string
	g := New[doc]("reads")
	g.AddNode("first", func(_ context.Context, d doc) (doc, error) { before = d.Note; return scribble(d, "first"), nil }).
		AddNode("read", func(_ context.Context, d doc) (doc, error) {
			if d.Note != before {
				return d, errors.New("the ReadsInput node got a copy")
			}
			// A new slice with room, which the branches would share.
			d.Docs = slices.Grow(slices.Clone(d.Docs), 8)
			return d, nil
		}, ReadsInput()).
		AddNode("left", reader("left"), ReadsInput()).AddNode("right", reader("right"), ReadsInput()).
		AddNode("join", func(_ context.Context, d doc) (doc, error) { return d, nil }).
		AddEdge(Start, "first").AddEdge("first", "read").
		AddFanOut("read", []string{"left", "right"}, "join", func(base doc, b []doc) (doc, error) {
			base.Docs = append(base.Docs, b[0].Docs[len(b[0].Docs)-1], b[1].Docs[len(b[1].Docs)-1])
			return base, nil
		}).
		AddEdge("left", "join").AddEdge("right", "join").AddEdge("join", End)
	r := compileDoc(t, g, Config[doc]{Clone: count})
	in := newDoc()
	out, err := r.Invoke(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if bad := pristine(in); bad != "" {
		t.Errorf("caller's input changed: %s", bad)
	}
	// first's clone, left's and right's branch copies, the merge base's and
	// join's: not read's.
	if n := clones.Load(); n != 5 {
		t.Errorf("%d clones, want 5", n)
	}
	if got := strings.Join(out.Docs, ","); got != "first,c,left,right" {
		t.Errorf("docs %s: the branches' appends mixed", got)
	}
}
