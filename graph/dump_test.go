package graph

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// dumpGraph exercises every edge kind: conditional, fan-out with join,
// fallback, and node policies.
func dumpGraph(t *testing.T) *Runnable[st] { return mustCompile(t, demoGraph(), Config[st]{}) }

// demoGraph is the builder behind dumpGraph and the golden files.
func demoGraph() *Graph[st] {
	g := New[st]("adaptive \"demo\"")
	g.AddNode("classify", nop, WithTimeout(2*time.Second), WithFallback("hybrid")).
		AddNode("direct", nop).
		AddNode("dense", nop, WithRetry(RetryPolicy{MaxAttempts: 3})).
		AddNode("hybrid", nop).
		AddNode("bm25", nop).
		AddNode("fuse", nop).
		AddNode("generate", nop).
		AddEdge(Start, "classify").
		AddConditionalEdges("classify", func(s st) string { return s.Route }, map[string]string{
			"chitchat": "direct", "factual": "dense", "analytical": "hybrid",
		}).
		AddEdge("direct", End).
		AddEdge("dense", "generate").
		AddFanOut("hybrid", []string{"dense_leg", "bm25"}, "fuse", func(b st, _ []st) (st, error) { return b, nil }).
		AddNode("dense_leg", nop).
		AddEdge("dense_leg", "fuse").
		AddEdge("bm25", "fuse").
		AddEdge("fuse", "generate").
		AddEdge("generate", End)
	return g
}

func runPath(t *testing.T, r *Runnable[st], s st) *Path {
	var p Path
	for ev, err := range r.Stream(context.Background(), s) {
		if err != nil {
			t.Fatal(err)
		}
		p.Add(ev.Edge())
	}
	return &p
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func TestDumpGolden(t *testing.T) {
	r := dumpGraph(t)
	d := r.Diagram()
	// The factual route is sequential, so its path is deterministic; the
	// parallel highlight is checked in TestHighlightFanOut.
	hl := runPath(t, r, st{Route: "factual"})
	js, err := d.JSON(nil)
	if err != nil {
		t.Fatal(err)
	}
	jsPath, err := d.JSON(hl)
	if err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string]string{
		"demo.mmd":       d.Mermaid(nil),
		"demo.path.mmd":  d.Mermaid(hl),
		"demo.dot":       d.DOT(nil),
		"demo.path.dot":  d.DOT(hl),
		"demo.json":      string(js) + "\n",
		"demo.path.json": string(jsPath) + "\n",
		"demo.txt":       d.Text(nil),
		"demo.path.txt":  d.Text(hl),
	} {
		t.Run(name, func(t *testing.T) { golden(t, name, got) })
	}
}

func TestHighlightFollowsTheRun(t *testing.T) {
	r := dumpGraph(t)
	p := runPath(t, r, st{Route: "factual"})
	if got := strings.Join(p.Nodes, ","); got != "classify,dense,generate" {
		t.Fatalf("path nodes %s", got)
	}
	dot := r.Diagram().DOT(p)
	// dense (n2) is highlighted, hybrid (n3) is not.
	if !strings.Contains(dot, `n2 [label="dense\n(3 attempts)", color="#16a34a"`) || strings.Contains(dot, `n3 [label="hybrid", color`) {
		t.Errorf("highlight does not match the run:\n%s", dot)
	}
	if !strings.Contains(dot, `n0 -> n2 [label="factual", color="#16a34a"`) || strings.Contains(dot, `n0 -> n3 [label="analytical", color`) {
		t.Errorf("edge highlight does not match the run:\n%s", dot)
	}
}

func TestHighlightFanOut(t *testing.T) {
	r := dumpGraph(t)
	p := runPath(t, r, st{Route: "analytical"})
	mmd := r.Diagram().Mermaid(p)
	m := regexp.MustCompile(`(?m)^    linkStyle ([0-9,]+) `).FindStringSubmatch(mmd)
	if m == nil {
		t.Fatalf("no linkStyle in\n%s", mmd)
	}
	var hot []string
	for _, i := range strings.Split(m[1], ",") {
		var n int
		fmt.Sscan(i, &n)
		e := r.Diagram().Edges[n]
		hot = append(hot, e.From+">"+e.To)
	}
	slices.Sort(hot)
	want := []string{"__start__>classify", "bm25>fuse", "classify>hybrid", "dense_leg>fuse", "fuse>generate", "generate>__end__", "hybrid>bm25", "hybrid>dense_leg", "hybrid>fuse"}
	if !slices.Equal(hot, want) {
		t.Errorf("highlighted edges %v, want %v", hot, want)
	}
}

func TestJSONDumpRoundTrips(t *testing.T) {
	d := dumpGraph(t).Diagram()
	b, err := d.JSON(nil)
	if err != nil {
		t.Fatal(err)
	}
	var back Diagram
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Nodes) != len(d.Nodes) || len(back.Edges) != len(d.Edges) {
		t.Fatalf("round trip lost nodes or edges")
	}
	conds := 0
	for _, e := range back.Edges {
		if e.Kind == EdgeConditional {
			conds++
			if e.Label == "" {
				t.Errorf("conditional edge %s->%s without label", e.From, e.To)
			}
		}
	}
	if conds != 3 {
		t.Errorf("%d conditional edges, want 3", conds)
	}
}

// mermaidLine is the grammar subset the renderer emits: node declarations,
// edges with optional quoted labels, classDef, class and linkStyle lines.
var mermaidLine = regexp.MustCompile(`^(flowchart TD|    [a-z][a-z0-9_]*(\(\[[A-Z]+\]\)|\["[^"]*"\])|    [a-z][a-z0-9_]* (-->|==>|-\.->)(\|"[^"]*"\|)? [a-z][a-z0-9_]*|    classDef [a-z]+ [a-z:#0-9,-]+|    class [a-z0-9_,]+ [a-z]+|    linkStyle [0-9,]+ [a-z:#0-9,-]+)$`)

func TestMermaidSyntax(t *testing.T) {
	r := dumpGraph(t)
	for _, p := range []*Path{nil, runPath(t, r, st{Route: "analytical"})} {
		out := r.Diagram().Mermaid(p)
		declared := map[string]bool{}
		for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
			if !mermaidLine.MatchString(line) {
				t.Errorf("not valid flowchart syntax: %q", line)
			}
			if f := strings.Fields(line); len(f) == 1 || (len(f) > 0 && strings.ContainsAny(f[0], "[(")) {
				declared[strings.FieldsFunc(f[0], func(r rune) bool { return r == '[' || r == '(' })[0]] = true
			}
		}
		for _, e := range regexp.MustCompile(`(?m)^    ([a-z0-9_]+) [-=.]+>(?:\|"[^"]*"\|)? ([a-z0-9_]+)$`).FindAllStringSubmatch(out, -1) {
			if !declared[e[1]] || !declared[e[2]] {
				t.Errorf("edge %s -> %s uses an undeclared node", e[1], e[2])
			}
		}
	}
}

// TestDOTRendersWithGraphviz runs `dot -Tsvg` on the dumps when Graphviz is
// installed (.ci/run installs it, so CI always runs this check).
func TestDOTRendersWithGraphviz(t *testing.T) {
	dot, err := exec.LookPath("dot")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("Graphviz dot not installed on CI")
		}
		t.Skip("Graphviz dot not installed")
	}
	r := dumpGraph(t)
	for _, p := range []*Path{nil, runPath(t, r, st{Route: "factual"})} {
		cmd := exec.Command(dot, "-Tsvg")
		cmd.Stdin = strings.NewReader(r.Diagram().DOT(p))
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "<svg") || strings.Contains(string(out), "Warning") {
			t.Fatalf("dot -Tsvg: %v\n%s", err, out)
		}
	}
}

func TestDiagramIsACopy(t *testing.T) {
	r := dumpGraph(t)
	want := r.Diagram().Mermaid(nil)
	d := r.Diagram()
	d.Name = "changed"
	d.Nodes[0].Name = "changed"
	d.Nodes = append(d.Nodes[:1], DiagramNode{Name: "extra"})
	d.Edges[0].To = "changed"
	d.Edges = d.Edges[:1]
	if got := r.Diagram().Mermaid(nil); got != want {
		t.Errorf("changing a returned diagram changed later ones:\n%s", got)
	}
	if a, b := r.Diagram(), r.Diagram(); a == b {
		t.Errorf("Diagram returns the same pointer twice")
	}
}
