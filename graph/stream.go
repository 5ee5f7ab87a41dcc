package graph

import (
	"context"
	"iter"
	"time"
)

// EventKind tells what an Event reports.
type EventKind uint8

// The kinds of events a stream yields.
const (
	NodeStart EventKind = iota + 1 // a node is about to run
	NodeEnd                        // a node finished (Err set on failure)
	RunEnd                         // the run reached End; State is the final state
)

// String returns the kind's snake_case name, as used in logs.
func (k EventKind) String() string {
	switch k {
	case NodeStart:
		return "node_start"
	case NodeEnd:
		return "node_end"
	case RunEnd:
		return "run_end"
	}
	return "unknown"
}

// Event reports progress of a streamed run.
type Event[S any] struct {
	Kind EventKind
	Node string // the node concerned; End for RunEnd
	Step int    // 1-based execution step of the node (total steps for RunEnd)
	// From is the node the run came from (Start for the entry node, "" for a
	// join entered from several branches at once).
	From string
	// Label is, on NodeStart and RunEnd, the label of the edge that was taken
	// to get here; on NodeEnd, the label the node's router chose ("" when the
	// node has no conditional edge). Fallback edges carry "fallback".
	Label    string
	Duration time.Duration // NodeEnd: time spent in the node, retries included
	Attempts int           // NodeEnd: attempts made
	Err      error         // NodeEnd: the node's error, if it failed
	// State is, on NodeStart, the node's input; on NodeEnd, its output (its
	// input on error); on RunEnd, the final state. With Config.Clone set it
	// is a copy the loop body may modify; without, or with
	// WithReadOnlyEvents, it shares slices and maps with the run and must be
	// treated as read-only.
	State S
}

// Edge returns the edge the run traversed to produce this event, for
// NodeStart and RunEnd events.
func (e Event[S]) Edge() (Edge, bool) {
	if e.Kind != NodeStart && e.Kind != RunEnd {
		return Edge{}, false
	}
	return Edge{From: e.From, To: e.Node, Label: e.Label}, true
}

// Stream runs the graph on s and yields an event as each node starts and
// finishes, then a RunEnd event carrying the final state. A failed run ends
// with one (zero Event, error) pair. Each range over the sequence starts a
// new run.
//
// Every event is yielded on the goroutine that ranges over the sequence,
// one at a time, including the events of fan-out branches: a branch waits
// while the loop body handles its event. Breaking out of the loop cancels
// the run, and a node whose NodeStart the loop stopped at does not run. A
// panic in the loop body propagates to the caller unchanged, once the run
// is cancelled and its branches have returned. No goroutine is left behind.
func (r *Runnable[S]) Stream(ctx context.Context, s S, opts ...RunOption) iter.Seq2[Event[S], error] {
	return func(yield func(Event[S], error) bool) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		stopped := false
		emit := func(ev *Event[S]) bool {
			if stopped {
				return false
			}
			if !yield(*ev, nil) {
				stopped = true
				cancel()
				return false
			}
			return true
		}
		_, err := r.exec(ctx, s, emit, opts)
		if err != nil && !stopped {
			yield(Event[S]{}, err)
		}
	}
}

// Edge is a transition between two nodes, as traversed by a run.
type Edge struct {
	From, To string
	Label    string `json:",omitempty"`
}

// Path is the route a run took: the nodes in execution order and the edges
// traversed. Build it from a stream with Add, then pass it to a diagram
// renderer to highlight where a run went.
type Path struct {
	Nodes []string
	Edges []Edge
}

// Add records the edge of an event (see Event.Edge); other events are ignored.
func (p *Path) Add(e Edge, ok bool) {
	if !ok {
		return
	}
	if e.To != End {
		p.Nodes = append(p.Nodes, e.To)
	}
	p.Edges = append(p.Edges, e)
}

func (p *Path) hasNode(n string) bool {
	if p == nil {
		return false
	}
	if n == Start || n == End {
		return len(p.Edges) > 0
	}
	for _, x := range p.Nodes {
		if x == n {
			return true
		}
	}
	return false
}
