package graph

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// Start and End are the reserved names of the entry and exit of every graph.
// They cannot be used as node names.
const (
	Start = "__start__"
	End   = "__end__"
)

// NodeFunc is a step of the workflow: it receives the current state and
// returns the updated state. It must honour ctx cancellation for timeouts and
// cancellation to take effect promptly.
type NodeFunc[S any] func(ctx context.Context, s S) (S, error)

// RouteFunc chooses the label of the edge to follow after a node. The label
// must be one of those declared with AddConditionalEdges.
type RouteFunc[S any] func(s S) string

// MergeFunc joins the states produced by the parallel branches of a fan-out.
// base is the state the fan-out started from; branches holds one state per
// branch, in the order the branches were declared. Which field wins, or how
// two writes combine, is the merge's decision: the engine never guesses.
type MergeFunc[S any] func(base S, branches []S) (S, error)

// Graph is a builder: add nodes and edges, then Compile it into a Runnable.
// A Graph is not safe for concurrent use; the Runnable it compiles to is.
// Methods never panic: the first problems are kept and reported by Compile.
type Graph[S any] struct {
	name  string
	nodes []*nodeSpec[S]
	index map[string]int
	// out holds the declared outgoing edges per source name (including Start).
	out   map[string]*outSpec[S]
	order []string // sources in declaration order, for stable dumps
	errs  []error
}

type nodeSpec[S any] struct {
	name     string
	fn       NodeFunc[S]
	timeout  time.Duration
	retry    RetryPolicy
	fallback string
}

// outSpec is everything that leaves one node. Exactly one kind is valid per
// node; Compile rejects mixtures.
type outSpec[S any] struct {
	static []string // plain edges, in order
	// conditional edge
	route  RouteFunc[S]
	labels []string          // declared labels, in order
	target map[string]string // label -> node
	// fan-out
	branches []string
	join     string
	merge    MergeFunc[S]
	fanouts  int // number of AddFanOut calls, to reject duplicates
	conds    int // number of AddConditionalEdges calls
}

// New returns an empty graph builder. The name labels spans and diagrams.
func New[S any](name string) *Graph[S] {
	return &Graph[S]{name: name, index: map[string]int{}, out: map[string]*outSpec[S]{}}
}

// NodeOption configures one node.
type NodeOption func(*nodeOptions)

type nodeOptions struct {
	timeout  time.Duration
	retry    RetryPolicy
	fallback string
}

// WithTimeout bounds each attempt of the node: its context gets a deadline d
// after the attempt starts. A node that overruns fails with an error that
// matches context.DeadlineExceeded.
func WithTimeout(d time.Duration) NodeOption {
	return func(o *nodeOptions) { o.timeout = d }
}

// WithRetry retries the node on errors marked with Retryable, with
// exponential backoff as p describes.
func WithRetry(p RetryPolicy) NodeOption {
	return func(o *nodeOptions) { o.retry = p }
}

// WithFallback sends the run to target when the node fails (after its
// retries), instead of failing the run. target receives the state the failed
// node was given; Cause(ctx) tells it why it was called.
func WithFallback(target string) NodeOption {
	return func(o *nodeOptions) { o.fallback = target }
}

// AddNode adds a node. Names must be unique and not Start or End.
func (g *Graph[S]) AddNode(name string, fn NodeFunc[S], opts ...NodeOption) *Graph[S] {
	switch {
	case name == "" || name == Start || name == End:
		g.errs = append(g.errs, &BuildError{Node: name, Err: ErrReservedName})
		return g
	case fn == nil:
		g.errs = append(g.errs, &BuildError{Node: name, Err: ErrNilFunc})
		return g
	}
	if _, dup := g.index[name]; dup {
		g.errs = append(g.errs, &BuildError{Node: name, Err: ErrDuplicateNode})
		return g
	}
	var o nodeOptions
	for _, opt := range opts {
		opt(&o)
	}
	g.index[name] = len(g.nodes)
	g.nodes = append(g.nodes, &nodeSpec[S]{name: name, fn: fn, timeout: o.timeout, retry: o.retry, fallback: o.fallback})
	return g
}

func (g *Graph[S]) outOf(from string) *outSpec[S] {
	o := g.out[from]
	if o == nil {
		o = &outSpec[S]{}
		g.out[from] = o
		g.order = append(g.order, from)
	}
	return o
}

// AddEdge adds an unconditional edge. Use Start as from to set the entry
// node and End as to to finish the run. A node has at most one plain edge;
// to run several nodes in parallel, use AddFanOut.
func (g *Graph[S]) AddEdge(from, to string) *Graph[S] {
	o := g.outOf(from)
	o.static = append(o.static, to)
	return g
}

// AddConditionalEdges routes the run after from by the label route returns.
// targets declares every possible label and the node it leads to (End is
// allowed), so that validation and diagrams are exact; a label outside the
// map is a run-time error naming the node and the label.
func (g *Graph[S]) AddConditionalEdges(from string, route RouteFunc[S], targets map[string]string) *Graph[S] {
	o := g.outOf(from)
	o.conds++
	if route == nil {
		g.errs = append(g.errs, &BuildError{Node: from, Err: ErrNilFunc})
		return g
	}
	o.route = route
	o.target = make(map[string]string, len(targets))
	o.labels = o.labels[:0]
	for l, t := range targets {
		o.target[l] = t
		o.labels = append(o.labels, l)
	}
	slices.Sort(o.labels)
	return g
}

// AddFanOut runs branches in parallel after from, each on its own copy of the
// state, waits for all of them at join, and combines their states with merge
// before join runs. Every branch must lead to join. Parallel branches can only
// be declared this way, so no two branches ever write the state without a
// merge: a node with two plain edges is a compile error.
func (g *Graph[S]) AddFanOut(from string, branches []string, join string, merge MergeFunc[S]) *Graph[S] {
	o := g.outOf(from)
	o.fanouts++
	o.branches = append([]string(nil), branches...)
	o.join = join
	o.merge = merge
	return g
}

func (g *Graph[S]) String() string {
	return fmt.Sprintf("graph.Graph[%s](%d nodes)", g.name, len(g.nodes))
}
