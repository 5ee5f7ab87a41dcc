package graph

import (
	"fmt"
	"maps"
	"slices"
)

// Segment returns a new builder, called name, holding the stretch of g that
// runs from first up to last: every node reachable from first without
// passing through last (following plain and conditional edges, fan-out
// branches and joins, and fallbacks), with their options, outgoing edges
// and g's middleware, plus last itself. Start leads to first and last
// leads to End; last's own outgoing edges are left out. Edges to End inside
// the stretch stay.
//
// A segment lets one stretch of a graph run on its own, as a Subgraph node
// or a separate Runnable, while edits made to g (a replaced node, a node
// inserted in the stretch) apply to both: build the segment after editing
// g. The segment shares node functions with g, not builder state: later
// edits of either do not reach the other. An unknown first or last, or a
// last that first does not reach, is reported by the segment's Compile,
// as are any problems g already holds.
func (g *Graph[S]) Segment(name, first, last string) *Graph[S] {
	seg := New[S](name)
	seg.use = slices.Clone(g.use)
	seg.errs = slices.Clone(g.errs)
	for _, n := range []string{first, last} {
		if !g.HasNode(n) {
			seg.fail(n, ErrUnknownNode, "Segment")
		}
	}
	if len(seg.errs) > len(g.errs) {
		return seg
	}
	reached := map[string]bool{first: true}
	queue := []string{first}
	visit := func(to string) {
		if to != "" && to != End && !reached[to] {
			reached[to] = true
			queue = append(queue, to)
		}
	}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		if i, ok := g.index[n]; ok {
			visit(g.nodes[i].fallback)
		}
		if n == last {
			continue
		}
		o := g.out[n]
		if o == nil {
			continue
		}
		for _, t := range o.static {
			visit(t)
		}
		for _, l := range o.labels {
			visit(o.target[l])
		}
		for _, b := range o.branches {
			visit(b)
		}
		if o.fanouts > 0 {
			visit(o.join)
		}
	}
	if !reached[last] {
		seg.fail(last, fmt.Errorf("%w: %q does not reach it", ErrUnknownNode, first), "Segment")
		return seg
	}
	for _, n := range g.nodes {
		if reached[n.name] {
			cp := *n
			seg.index[n.name] = len(seg.nodes)
			seg.nodes = append(seg.nodes, &cp)
		}
	}
	seg.AddEdge(Start, first)
	for _, from := range g.order {
		o := g.out[from]
		if !reached[from] || from == last || o == nil {
			continue
		}
		cp := *o
		cp.static = slices.Clone(o.static)
		cp.labels = slices.Clone(o.labels)
		cp.target = maps.Clone(o.target)
		cp.branches = slices.Clone(o.branches)
		seg.out[from] = &cp
		seg.order = append(seg.order, from)
	}
	return seg.AddEdge(last, End)
}
