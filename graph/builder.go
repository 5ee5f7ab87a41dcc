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
// A graph can also be edited before compiling (ReplaceNode, RemoveNode,
// RemoveEdges, InsertBefore), for instance to customise one assembled
// elsewhere; a compiled Runnable never sees later edits.
// A Graph is not safe for concurrent use; the Runnable it compiles to is.
// Methods never panic: problems are kept and reported by Compile.
type Graph[S any] struct {
	name  string
	nodes []*nodeSpec[S]
	index map[string]int
	// out holds the declared outgoing edges per source name (including Start).
	out   map[string]*outSpec[S]
	order []string // sources in declaration order, for stable dumps
	errs  []error
	use   []Middleware[S]
}

// Middleware wraps a node's function; name is the node's name. See Use.
type Middleware[S any] func(name string, fn NodeFunc[S]) NodeFunc[S]

// Use adds middleware that Compile applies to every node's function, those
// added after the call included, the first added outermost: accounting,
// logging or policy that must cover every node whoever adds it. A nil
// middleware is ignored.
func (g *Graph[S]) Use(mw Middleware[S]) *Graph[S] {
	if mw != nil {
		g.use = append(g.use, mw)
	}
	return g
}

type nodeSpec[S any] struct {
	name     string
	fn       NodeFunc[S]
	timeout  time.Duration
	retry    RetryPolicy
	fallback string
	reads    bool
}

// outSpec is everything that leaves one node. Exactly one kind is valid per
// node; Compile rejects mixtures.
type outSpec[S any] struct {
	static []string // plain edges, in order
	// conditional edge
	route  RouteFunc[S]
	labels []string          // declared labels, in order
	target map[string]string // label -> node
	// fan-out (and map: one branch, run once per item split returns)
	branches []string
	join     string
	merge    MergeFunc[S]
	split    func(S) []S
	fanouts  int // number of AddFanOut and AddMap calls, to reject duplicates
	conds    int // number of AddConditionalEdges calls
}

// empty reports whether o declares no edge: never declared, or removed by
// RemoveEdges.
func (o *outSpec[S]) empty() bool {
	return o == nil || len(o.static) == 0 && o.conds == 0 && o.fanouts == 0
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
	reads    bool
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

// ReadsInput declares that the node never writes into what the state it
// receives holds: it may replace fields and append to slices, but it
// changes no element, map entry or pointed-to value in place. With
// Config.Clone set the engine then hands it its own state instead of a
// clone (but for the first node of a fan-out branch, whose siblings
// could append to the same arrays at once), so that a node that only
// reads the large parts of the state does not pay for copying them. Its
// output may share with its input whatever it did not replace. A node so
// declared that writes in place anyway changes what a retry, a fallback or
// the caller's input sees.
func ReadsInput() NodeOption {
	return func(o *nodeOptions) { o.reads = true }
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
	g.index[name] = len(g.nodes)
	g.nodes = append(g.nodes, newNodeSpec(name, fn, opts))
	return g
}

func newNodeSpec[S any](name string, fn NodeFunc[S], opts []NodeOption) *nodeSpec[S] {
	var o nodeOptions
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	return &nodeSpec[S]{name: name, fn: fn, timeout: o.timeout, retry: o.retry, fallback: o.fallback, reads: o.reads}
}

// fail records a problem for Compile to report. op names the editing
// method, so that the message tells which call went wrong.
func (g *Graph[S]) fail(node string, err error, op string) {
	if op != "" {
		err = fmt.Errorf("%w (%s)", err, op)
	}
	g.errs = append(g.errs, &BuildError{Node: node, Err: err})
}

// Nodes returns the names of the graph's nodes in declaration order.
func (g *Graph[S]) Nodes() []string {
	names := make([]string, len(g.nodes))
	for i, n := range g.nodes {
		names[i] = n.name
	}
	return names
}

// HasNode reports whether the graph has a node called name.
func (g *Graph[S]) HasNode(name string) bool {
	_, ok := g.index[name]
	return ok
}

// ReplaceNode swaps the function and options of the node name, keeping its
// place in the declaration order and every edge into and out of it. The
// options replace the old ones as a whole: a timeout, retry policy or
// fallback the node had is dropped unless given again. An unknown name is
// reported by Compile as a *BuildError matching ErrUnknownNode, a nil fn
// as ErrNilFunc; the graph is then left as it was.
func (g *Graph[S]) ReplaceNode(name string, fn NodeFunc[S], opts ...NodeOption) *Graph[S] {
	i, ok := g.index[name]
	switch {
	case !ok:
		g.fail(name, ErrUnknownNode, "ReplaceNode")
	case fn == nil:
		g.fail(name, ErrNilFunc, "ReplaceNode")
	default:
		g.nodes[i] = newNodeSpec(name, fn, opts)
	}
	return g
}

// RemoveNode removes the node name with its options and outgoing edges.
// Edges that still lead to it, from other nodes, Start or fallbacks, are
// left in place: Compile reports each as an unknown target until it is
// removed or rewired. A node added again under the same name is placed last
// in the declaration order. Removing Start, End or an unknown name is
// reported by Compile.
func (g *Graph[S]) RemoveNode(name string) *Graph[S] {
	i, ok := g.index[name]
	switch {
	case name == "" || name == Start || name == End:
		g.fail(name, ErrReservedName, "RemoveNode")
		return g
	case !ok:
		g.fail(name, ErrUnknownNode, "RemoveNode")
		return g
	}
	g.nodes = slices.Delete(g.nodes, i, i+1)
	delete(g.index, name)
	for j := i; j < len(g.nodes); j++ {
		g.index[g.nodes[j].name] = j
	}
	delete(g.out, name)
	g.order = slices.DeleteFunc(g.order, func(n string) bool { return n == name })
	return g
}

// RemoveEdges removes every outgoing edge of from, whatever its kind
// (plain, conditional or fan-out), so that from can be wired anew: for
// instance given a conditional edge that may lead to End. from may be
// Start. A fallback is a node option, not an edge, and stays. Edges added
// to from afterwards are listed in diagrams where the removed ones were.
// Removing the edges of a name that is neither a node nor the source of
// any edge is reported by Compile.
func (g *Graph[S]) RemoveEdges(from string) *Graph[S] {
	if o := g.out[from]; o != nil {
		*o = outSpec[S]{} // keeps from's place in g.order
	} else if from != Start && !g.HasNode(from) {
		g.fail(from, ErrUnknownNode, "RemoveEdges")
	}
	return g
}

// InsertBefore adds the node name (as AddNode does) in front of target:
// every edge that led to target now leads to name, and name gets a plain
// edge to target. Redirected are plain edges (Start's included), the
// targets of conditional edges, fan-out branches and joins, and fallbacks
// of other nodes. target may be End, to add a last step to every way out.
// Give name other outgoing edges with RemoveEdges and AddConditionalEdges,
// for example to let it end the run early.
//
// A target that is Start or unknown, or a name AddNode would refuse, is
// reported by Compile, and the graph is then left as it was.
func (g *Graph[S]) InsertBefore(target, name string, fn NodeFunc[S], opts ...NodeOption) *Graph[S] {
	switch {
	case target == Start:
		g.fail(target, ErrReservedName, "InsertBefore")
		return g
	case target != End && !g.HasNode(target):
		g.fail(target, ErrUnknownNode, "InsertBefore")
		return g
	}
	errs := len(g.errs)
	if g.AddNode(name, fn, opts...); len(g.errs) > errs {
		return g
	}
	redirect := func(to *string) {
		if *to == target {
			*to = name
		}
	}
	for _, o := range g.out {
		for i := range o.static {
			redirect(&o.static[i])
		}
		for l, t := range o.target {
			if t == target {
				o.target[l] = name
			}
		}
		for i := range o.branches {
			redirect(&o.branches[i])
		}
		if o.fanouts > 0 {
			redirect(&o.join)
		}
	}
	for _, n := range g.nodes {
		if n.name != name {
			redirect(&n.fallback)
		}
	}
	return g.AddEdge(name, target)
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

// AddMap runs worker once per item that split returns, in parallel, each on
// the state split made for it, and combines their states with merge before
// join runs: a fan-out whose width the run decides (one branch per
// sub-question, say). split receives the state after from; merge receives
// that state and the branches' final states in split's order. worker must
// lead to join. An empty split runs no branch: merge gets no states and the
// run goes on at join. In a path the worker appears once per item; in a
// diagram its edge is a fan-out labelled "map". A panic in split fails the
// run with a *NodeError naming from.
func (g *Graph[S]) AddMap(from, worker, join string, split func(S) []S, merge MergeFunc[S]) *Graph[S] {
	o := g.outOf(from)
	o.fanouts++
	if split == nil {
		g.errs = append(g.errs, &BuildError{Node: from, Err: fmt.Errorf("%w: AddMap needs a split function", ErrNilFunc)})
	}
	o.branches = []string{worker}
	o.join = join
	o.merge = merge
	o.split = split
	return g
}

// String names the graph and counts its nodes, for logs and debugging.
func (g *Graph[S]) String() string {
	return fmt.Sprintf("graph.Graph[%s](%d nodes)", g.name, len(g.nodes))
}
