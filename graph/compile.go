package graph

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// DefaultMaxSteps bounds the node executions of one run when Config.MaxSteps
// is zero. Acyclic graphs never come near it; it exists to stop cycles whose
// exit condition never holds.
const DefaultMaxSteps = 100

// ScopeName is the instrumentation scope of the engine's spans.
const ScopeName = "github.com/adaptrag/adaptrag/graph"

// Config holds the compile options of a graph over state S. The zero value
// is ready to use.
type Config[S any] struct {
	// MaxSteps bounds node executions per run (all branches counted);
	// zero means DefaultMaxSteps.
	MaxSteps int
	// TracerProvider creates the run and node spans; nil means the global
	// provider (otel.GetTracerProvider), which costs next to nothing until
	// an SDK is installed.
	TracerProvider trace.TracerProvider
	// Clone, when set, returns a deep copy of its argument (a method value
	// such as State.Clone will do): one that shares no
	// slice, map or pointer the node could write through. It must not modify
	// its argument, and it may be called from several goroutines at once.
	//
	// With Clone set, no value the engine still needs is handed out:
	//   - each node attempt (retries, fallbacks and fan-out branches
	//     included) receives a fresh clone, so a node may modify every slice
	//     and map it receives in place (slices.DeleteFunc, s.Meta[k] = v)
	//     without affecting the caller's input, a retry, a fallback or a
	//     parallel branch; a node added with ReadsInput, which promises not
	//     to, receives the engine's state instead;
	//   - a fan-out's merge receives a clone of its base state;
	//   - every Event.State a Stream yields is a clone, so the loop body may
	//     modify it (unless the run is given WithReadOnlyEvents, which
	//     saves those copies for a consumer that only reads);
	//   - the state passed to Invoke or Stream is never modified.
	//
	// Routers receive the engine's own state and must only read it. A
	// panicking Clone fails the run with a *NodeError matching ErrPanic.
	//
	// Nil leaves all of this out at no cost: states
	// are passed as they are, and a node that writes into a slice or map it
	// received writes into the one its caller holds.
	Clone func(S) S

	// Checkpointer stores the checkpoints of runs given a thread
	// (WithThread); nil means runs cannot have one.
	Checkpointer Checkpointer
	// Durability says when a run on a thread saves; the zero value is
	// DurabilitySync (after every step).
	Durability Durability
	// Codec encodes states for checkpoints; nil means JSONCodec.
	Codec Codec
	// StateVersion is recorded with every checkpoint; one written under
	// another version is not decoded (an error matching ErrDecode), so
	// change it when the state type changes incompatibly. "" is a version.
	StateVersion string
	// InterruptBefore and InterruptAfter name nodes the run stops before
	// or after, as an *InterruptedError, until it is resumed.
	InterruptBefore, InterruptAfter []string
}

type edgeKind uint8

const (
	toNode edgeKind = iota
	toCond
	toFanOut
)

// endIdx marks End as a target index.
const endIdx = -1

type next[S any] struct {
	kind     edgeKind
	to       int // toNode: target index or endIdx
	route    RouteFunc[S]
	labels   map[string]int
	branches []int
	join     int
	merge    MergeFunc[S]
	split    func(S) []S // a map: branches[0] runs once per item
}

type node[S any] struct {
	name     string
	fn       NodeFunc[S]
	timeout  int64 // nanoseconds; 0 = none
	retry    RetryPolicy
	fallback int  // index or -2 for none
	reads    bool // ReadsInput: given the engine's state, not a clone
	next     next[S]
}

const noFallback = -2

// Runnable is a compiled, immutable graph. It is safe for concurrent use by
// many goroutines: each Invoke or Stream is an independent run.
type Runnable[S any] struct {
	name     string
	nodes    []node[S]
	start    next[S]
	maxSteps int
	tracer   trace.Tracer
	runOpts  []trace.SpanStartOption
	diagram  *Diagram
	clone    func(S) S // nil: states are passed as they are

	index         map[string]int
	checkpointer  Checkpointer
	durability    Durability
	codec         Codec
	version       string
	before, after []bool // by node index
}

// Name returns the graph's name.
func (r *Runnable[S]) Name() string { return r.name }

// Compile validates the graph and returns its runnable form. It reports every
// problem at once, joined with errors.Join; each is a *BuildError naming the
// node or edge and matching one of the Err* build sentinels.
func (g *Graph[S]) Compile(cfg Config[S]) (*Runnable[S], error) {
	errs := slices.Clone(g.errs)
	clone := cfg.Clone
	bad := func(node string, err error) { errs = append(errs, &BuildError{Node: node, Err: err}) }
	badEdge := func(from, to string, err error) {
		errs = append(errs, &BuildError{Node: from, Edge: from + " -> " + to, Err: err})
	}
	known := func(name string) bool { _, ok := g.index[name]; return ok }
	target := func(from, to string, allowEnd bool) bool {
		if known(to) || (allowEnd && to == End) {
			return true
		}
		badEdge(from, to, ErrUnknownNode)
		return false
	}

	// Outgoing edges: shape and targets.
	for _, from := range g.order {
		o := g.out[from]
		if o.empty() {
			continue // edges removed by RemoveEdges
		}
		if from != Start && !known(from) {
			bad(from, ErrUnknownNode)
			continue
		}
		kinds := 0
		for _, n := range []int{len(o.static), o.conds, o.fanouts} {
			if n > 0 {
				kinds++
			}
		}
		if kinds > 1 || len(o.static) > 1 || o.conds > 1 || o.fanouts > 1 {
			errs = append(errs, &BuildError{Node: from, Err: fmt.Errorf("%w (plain: %d, conditional: %d, fan-out: %d; parallel branches need AddFanOut and its merge)",
				ErrAmbiguousEdge, len(o.static), o.conds, o.fanouts)})
			continue
		}
		for _, to := range o.static {
			target(from, to, true)
		}
		for _, l := range o.labels {
			target(from, o.target[l], true)
		}
		if o.fanouts > 0 {
			if len(o.branches) == 0 || o.merge == nil {
				bad(from, fmt.Errorf("%w: needs at least one branch and a merge function", ErrFanOut))
			}
			for _, b := range o.branches {
				target(from, b, false)
			}
			target(from, o.join, false)
		}
	}
	for _, n := range g.nodes {
		if n.fallback != "" && !known(n.fallback) {
			badEdge(n.name, n.fallback, ErrUnknownNode)
		}
	}
	if g.out[Start].empty() {
		bad(Start, ErrNoEntry)
	}
	for _, n := range slices.Concat(cfg.InterruptBefore, cfg.InterruptAfter) {
		if !known(n) {
			errs = append(errs, &BuildError{Node: n, Err: fmt.Errorf("%w (Config.InterruptBefore/InterruptAfter)", ErrUnknownNode)})
		}
	}
	if cfg.Durability > DurabilityExit {
		errs = append(errs, &BuildError{Node: "Config.Durability", Err: fmt.Errorf("%w %d", ErrDurability, cfg.Durability)})
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}

	// Reachability, forward from Start and backward from End.
	succ := g.successors()
	reach := walk(Start, succ)
	pred := map[string][]string{}
	for from, tos := range succ {
		for _, to := range tos {
			pred[to] = append(pred[to], from)
		}
	}
	toEnd := walk(End, pred)
	for _, n := range g.nodes {
		if !reach[n.name] {
			bad(n.name, ErrUnreachable)
		} else if !toEnd[n.name] {
			bad(n.name, ErrNoPathToEnd)
		}
	}
	// Every branch of a fan-out must arrive at its join without leaving
	// through End, or the join could wait forever or merge a missing state.
	for _, from := range g.order {
		o := g.out[from]
		if o.fanouts == 0 {
			continue
		}
		for _, b := range o.branches {
			seen := walkUntil(b, o.join, succ)
			if !seen[o.join] {
				bad(b, fmt.Errorf("%w: branch of %q never reaches join %q", ErrFanOut, from, o.join))
			} else if seen[End] {
				bad(b, fmt.Errorf("%w: branch of %q can reach End without passing join %q", ErrFanOut, from, o.join))
			}
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return g.build(cfg, clone), nil
}

// successors lists every node a node can hand the run to, including fallback
// targets and, for a fan-out, its branches (the join is reached through them).
func (g *Graph[S]) successors() map[string][]string {
	succ := map[string][]string{}
	for from, o := range g.out {
		s := slices.Clone(o.static)
		for _, l := range o.labels {
			s = append(s, o.target[l])
		}
		s = append(s, o.branches...)
		succ[from] = s
	}
	for _, n := range g.nodes {
		if n.fallback != "" {
			succ[n.name] = append(succ[n.name], n.fallback)
		}
	}
	return succ
}

func walk(from string, adj map[string][]string) map[string]bool { return walkUntil(from, "", adj) }

// walkUntil is a graph search from from that records but does not expand stop.
func walkUntil(from, stop string, adj map[string][]string) map[string]bool {
	seen := map[string]bool{from: true}
	stack := []string{from}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if n == stop {
			continue
		}
		for _, m := range adj[n] {
			if !seen[m] {
				seen[m] = true
				stack = append(stack, m)
			}
		}
	}
	return seen
}

func (g *Graph[S]) build(cfg Config[S], clone func(S) S) *Runnable[S] {
	r := &Runnable[S]{name: g.name, maxSteps: cfg.MaxSteps, nodes: make([]node[S], len(g.nodes)), clone: clone}
	if r.maxSteps <= 0 {
		r.maxSteps = DefaultMaxSteps
	}
	tp := cfg.TracerProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	r.tracer = tp.Tracer(ScopeName)
	r.runOpts = []trace.SpanStartOption{trace.WithAttributes(attribute.String("graph.name", g.name))}
	idx := func(name string) int {
		if name == End {
			return endIdx
		}
		return g.index[name]
	}
	mkNext := func(o *outSpec[S]) next[S] {
		switch {
		case o.empty():
			return next[S]{kind: toNode, to: endIdx}
		case o.route != nil:
			labels := make(map[string]int, len(o.target))
			for l, t := range o.target {
				labels[l] = idx(t)
			}
			return next[S]{kind: toCond, route: o.route, labels: labels}
		case o.fanouts > 0:
			br := make([]int, len(o.branches))
			for i, b := range o.branches {
				br[i] = idx(b)
			}
			return next[S]{kind: toFanOut, branches: br, join: idx(o.join), merge: o.merge, split: o.split}
		default:
			return next[S]{kind: toNode, to: idx(o.static[0])}
		}
	}
	for i, n := range g.nodes {
		fb := noFallback
		if n.fallback != "" {
			fb = idx(n.fallback)
		}
		fn := n.fn
		for j := len(g.use) - 1; j >= 0; j-- {
			fn = g.use[j](n.name, fn)
		}
		r.nodes[i] = node[S]{name: n.name, fn: fn, timeout: int64(n.timeout), retry: n.retry, fallback: fb, reads: n.reads, next: mkNext(g.out[n.name])}
	}
	r.start = mkNext(g.out[Start])
	r.index = maps.Clone(g.index)
	r.checkpointer, r.durability, r.codec, r.version = cfg.Checkpointer, cfg.Durability, cfg.Codec, cfg.StateVersion
	if r.codec == nil {
		r.codec = JSONCodec{}
	}
	r.before, r.after = make([]bool, len(r.nodes)), make([]bool, len(r.nodes))
	for _, n := range cfg.InterruptBefore {
		r.before[g.index[n]] = true
	}
	for _, n := range cfg.InterruptAfter {
		r.after[g.index[n]] = true
	}
	r.diagram = g.diagram()
	return r
}

// labelsOf returns the declared labels of a conditional edge, sorted.
func labelsOf(m map[string]string) []string {
	return slices.Sorted(maps.Keys(m))
}
