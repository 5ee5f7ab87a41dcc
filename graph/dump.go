package graph

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Diagram is the static structure of a compiled graph, ready to render.
// Edges are listed in a stable order: by source declaration order, then
// target order (labels sorted).
type Diagram struct {
	Name  string        `json:"name"`
	Nodes []DiagramNode `json:"nodes"`
	Edges []DiagramEdge `json:"edges"`
}

// DiagramNode describes a node and its policies.
type DiagramNode struct {
	Name     string `json:"name"`
	Timeout  string `json:"timeout,omitempty"`
	Attempts int    `json:"max_attempts,omitempty"`
	Fallback string `json:"fallback,omitempty"`
}

// Edge kinds in a Diagram.
const (
	EdgePlain       = "edge"
	EdgeConditional = "conditional"
	EdgeFanOut      = "fanout"
	EdgeJoin        = "join"
	EdgeFallback    = "fallback"
)

// DiagramEdge is one edge. Label is set for conditional edges.
type DiagramEdge struct {
	From  string `json:"from"`
	To    string `json:"to"`
	Kind  string `json:"kind"`
	Label string `json:"label,omitempty"`
}

// Diagram returns the graph's structure. Each call returns a new copy, which
// the caller may modify freely: later calls and renders are unaffected.
func (r *Runnable[S]) Diagram() *Diagram { return r.diagram.clone() }

func (d *Diagram) clone() *Diagram {
	return &Diagram{Name: d.Name, Nodes: slices.Clone(d.Nodes), Edges: slices.Clone(d.Edges)}
}

func (g *Graph[S]) diagram() *Diagram {
	d := &Diagram{Name: g.name}
	for _, n := range g.nodes {
		dn := DiagramNode{Name: n.name, Fallback: n.fallback}
		if n.timeout > 0 {
			dn.Timeout = n.timeout.String()
		}
		if n.retry.MaxAttempts > 1 {
			dn.Attempts = n.retry.MaxAttempts
		}
		d.Nodes = append(d.Nodes, dn)
	}
	for _, from := range g.order {
		o := g.out[from]
		for _, to := range o.static {
			d.Edges = append(d.Edges, DiagramEdge{From: from, To: to, Kind: EdgePlain})
		}
		for _, l := range labelsOf(o.target) {
			d.Edges = append(d.Edges, DiagramEdge{From: from, To: o.target[l], Kind: EdgeConditional, Label: l})
		}
		for _, b := range o.branches {
			e := DiagramEdge{From: from, To: b, Kind: EdgeFanOut}
			if o.split != nil {
				e.Label = "map"
			}
			d.Edges = append(d.Edges, e)
		}
	}
	// Joins: the edges into a join come from the branches' own edges; mark
	// the fan-out's pairing so that the join's waiting is visible.
	for _, from := range g.order {
		if o := g.out[from]; o.fanouts > 0 {
			d.Edges = append(d.Edges, DiagramEdge{From: from, To: o.join, Kind: EdgeJoin, Label: "merge"})
		}
	}
	for _, n := range g.nodes {
		if n.fallback != "" {
			d.Edges = append(d.Edges, DiagramEdge{From: n.name, To: n.fallback, Kind: EdgeFallback, Label: "fallback"})
		}
	}
	return d
}

// JSON renders the diagram as indented JSON. With a path, the visited nodes
// and edges are listed under "path".
func (d *Diagram) JSON(p *Path) ([]byte, error) {
	v := struct {
		*Diagram
		Path *Path `json:"path,omitempty"`
	}{d, p}
	return json.MarshalIndent(v, "", "  ")
}

// ids gives every node a short, syntax-safe identifier for Mermaid and DOT,
// so that node names never need escaping as identifiers.
func (d *Diagram) ids() map[string]string {
	ids := map[string]string{Start: "n_start", End: "n_end"} // "end" is a Mermaid keyword
	for i, n := range d.Nodes {
		ids[n.Name] = fmt.Sprintf("n%d", i)
	}
	return ids
}

func (d *Diagram) visited(p *Path, e DiagramEdge) bool {
	if p == nil {
		return false
	}
	switch e.Kind {
	case EdgeJoin:
		return p.hasNode(e.From) && p.hasNode(e.To)
	case EdgeFanOut:
		return p.hasNode(e.From) && p.hasNode(e.To)
	}
	for _, pe := range p.Edges {
		if pe.To != e.To {
			continue
		}
		if pe.From == e.From && (pe.Label == e.Label || e.Kind == EdgePlain && pe.Label == "") {
			return true
		}
		// A join is entered from all its branches at once.
		if pe.From == "" && p.hasNode(e.From) {
			return true
		}
	}
	return false
}

func mermaidText(s string) string {
	r := strings.NewReplacer(`"`, "#quot;", "<", "#lt;", ">", "#gt;", "|", "#124;", "\n", " ")
	return r.Replace(s)
}

// Mermaid renders the diagram as a Mermaid flowchart (flowchart TD).
// Conditional edges carry their labels; fan-outs are thick arrows, fallbacks
// dotted. With a non-nil path, visited nodes and edges are highlighted.
func (d *Diagram) Mermaid(p *Path) string {
	ids := d.ids()
	var b strings.Builder
	b.WriteString("flowchart TD\n")
	fmt.Fprintf(&b, "    %s([START])\n", ids[Start])
	for _, n := range d.Nodes {
		fmt.Fprintf(&b, "    %s[\"%s\"]\n", ids[n.Name], mermaidText(n.Name))
	}
	fmt.Fprintf(&b, "    %s([END])\n", ids[End])
	var hot []int
	for i, e := range d.Edges {
		arrow := "-->"
		switch e.Kind {
		case EdgeFanOut:
			arrow = "==>"
		case EdgeJoin, EdgeFallback:
			arrow = "-.->"
		}
		if e.Label != "" {
			fmt.Fprintf(&b, "    %s %s|\"%s\"| %s\n", ids[e.From], arrow, mermaidText(e.Label), ids[e.To])
		} else {
			fmt.Fprintf(&b, "    %s %s %s\n", ids[e.From], arrow, ids[e.To])
		}
		if d.visited(p, e) {
			hot = append(hot, i)
		}
	}
	if p != nil {
		b.WriteString("    classDef visited fill:#dcfce7,stroke:#16a34a,stroke-width:2px\n")
		var vs []string
		for _, n := range append([]string{Start, End}, names(d.Nodes)...) {
			if p.hasNode(n) {
				vs = append(vs, ids[n])
			}
		}
		if len(vs) > 0 {
			fmt.Fprintf(&b, "    class %s visited\n", strings.Join(vs, ","))
		}
		if len(hot) > 0 {
			idx := make([]string, len(hot))
			for i, h := range hot {
				idx[i] = fmt.Sprint(h)
			}
			fmt.Fprintf(&b, "    linkStyle %s stroke:#16a34a,stroke-width:3px\n", strings.Join(idx, ","))
		}
	}
	return b.String()
}

func names(ns []DiagramNode) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = n.Name
	}
	return out
}

func dotQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}

// DOT renders the diagram in Graphviz DOT. With a non-nil path, visited
// nodes and edges are drawn in green and bold.
func (d *Diagram) DOT(p *Path) string {
	ids := d.ids()
	var b strings.Builder
	fmt.Fprintf(&b, "digraph %s {\n", dotQuote(d.Name))
	b.WriteString("  rankdir=TB;\n  node [shape=box, style=\"rounded,filled\", fillcolor=\"#f8fafc\", fontname=\"Helvetica\"];\n  edge [fontname=\"Helvetica\", fontsize=10];\n")
	hl := func(n string) string {
		if p.hasNode(n) {
			return `, color="#16a34a", fillcolor="#dcfce7", penwidth=2`
		}
		return ""
	}
	fmt.Fprintf(&b, "  %s [label=\"START\", shape=oval%s];\n", ids[Start], hl(Start))
	for _, n := range d.Nodes {
		label := n.Name
		var pol []string
		if n.Timeout != "" {
			pol = append(pol, "timeout "+n.Timeout)
		}
		if n.Attempts > 1 {
			pol = append(pol, fmt.Sprintf("%d attempts", n.Attempts))
		}
		if len(pol) > 0 {
			label += "\n(" + strings.Join(pol, ", ") + ")"
		}
		fmt.Fprintf(&b, "  %s [label=%s%s];\n", ids[n.Name], dotQuote(label), hl(n.Name))
	}
	fmt.Fprintf(&b, "  %s [label=\"END\", shape=oval%s];\n", ids[End], hl(End))
	for _, e := range d.Edges {
		var attrs []string
		if e.Label != "" {
			attrs = append(attrs, "label="+dotQuote(e.Label))
		}
		switch e.Kind {
		case EdgeFanOut:
			attrs = append(attrs, "style=bold")
		case EdgeJoin, EdgeFallback:
			attrs = append(attrs, "style=dashed")
		}
		if d.visited(p, e) {
			attrs = append(attrs, `color="#16a34a"`, "penwidth=2.5")
		}
		a := ""
		if len(attrs) > 0 {
			a = " [" + strings.Join(attrs, ", ") + "]"
		}
		fmt.Fprintf(&b, "  %s -> %s%s;\n", ids[e.From], ids[e.To], a)
	}
	b.WriteString("}\n")
	return b.String()
}

// Text renders a plain-text outline: each node with its outgoing edges.
// With a non-nil path, visited nodes are marked with '*' and the path is
// listed at the end.
func (d *Diagram) Text(p *Path) string {
	var b strings.Builder
	fmt.Fprintf(&b, "graph %s\n", d.Name)
	out := map[string][]DiagramEdge{}
	for _, e := range d.Edges {
		out[e.From] = append(out[e.From], e)
	}
	line := func(n string, extra string) {
		mark := " "
		if p.hasNode(n) {
			mark = "*"
		}
		fmt.Fprintf(&b, "%s %s%s\n", mark, n, extra)
		for _, e := range out[n] {
			switch e.Kind {
			case EdgeConditional:
				fmt.Fprintf(&b, "    --[%s]--> %s\n", e.Label, e.To)
			case EdgeFanOut:
				if e.Label == "map" {
					fmt.Fprintf(&b, "    ==parallel, once per item==> %s\n", e.To)
				} else {
					fmt.Fprintf(&b, "    ==parallel==> %s\n", e.To)
				}
			case EdgeJoin:
				fmt.Fprintf(&b, "    ..merge..> %s (joins the parallel branches)\n", e.To)
			case EdgeFallback:
				fmt.Fprintf(&b, "    ..on failure..> %s\n", e.To)
			default:
				fmt.Fprintf(&b, "    ----> %s\n", e.To)
			}
		}
	}
	line(Start, "")
	for _, n := range d.Nodes {
		var pol []string
		if n.Timeout != "" {
			pol = append(pol, "timeout "+n.Timeout)
		}
		if n.Attempts > 1 {
			pol = append(pol, fmt.Sprintf("%d attempts", n.Attempts))
		}
		extra := ""
		if len(pol) > 0 {
			extra = " (" + strings.Join(pol, ", ") + ")"
		}
		line(n.Name, extra)
	}
	if p != nil && len(p.Nodes) > 0 {
		fmt.Fprintf(&b, "path: %s -> %s -> %s\n", Start, strings.Join(p.Nodes, " -> "), End)
	}
	return b.String()
}
