package adaptrag_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/adaptrag/adaptrag"
	"github.com/adaptrag/adaptrag/graph"
	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/state"
)

// dimEmbedder embeds everything as a unit vector of dim dimensions.
type dimEmbedder struct{ dim int }

func (e dimEmbedder) Dim() int { return e.dim }

func (e dimEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = make([]float32, e.dim)
		out[i][0] = 1
	}
	return out, nil
}

// A guard inserted before the decision can end the run: nothing after it
// runs, and Ask still validates, traces and reports the path.
func TestGuardEndsTheRun(t *testing.T) {
	f := newFixture(t)
	f.opts.Graph = func(g *adaptrag.Graph) error {
		g.InsertBefore(adaptrag.NodeDecide, "guard", func(_ context.Context, s adaptrag.State) (adaptrag.State, error) {
			if strings.Contains(s.Question, "salary of") {
				s.Answer, s.AnsweredBy = "I can't discuss individual salaries.", "guard"
			}
			return s, nil
		})
		g.RemoveEdges("guard")
		g.AddConditionalEdges("guard", func(s adaptrag.State) string {
			if s.Answer != "" {
				return "stop"
			}
			return "go"
		}, map[string]string{"stop": graph.End, "go": adaptrag.NodeDecide})
		return nil
	}
	p := f.pipeline(t)
	res := ask(t, p, "What is the salary of my manager?")
	if res.AnsweredBy != "guard" || strings.Join(res.Path, ",") != "guard" || f.docs.total()+f.faq.total() != 0 {
		t.Fatalf("guarded run: answered by %s, path %v, %d searches", res.AnsweredBy, res.Path, f.docs.total()+f.faq.total())
	}
	if len(res.Usage.Nodes) != 1 || res.Usage.Nodes[0].Node != "guard" {
		t.Errorf("the guard is not accounted: %+v", res.Usage.Nodes)
	}
	if res := ask(t, p, "退货要在几天内发起？"); res.Path[0] != "guard" || res.Path[1] != adaptrag.NodeDecide || res.AnsweredBy == "guard" {
		t.Errorf("unguarded run: path %v, answered by %s", res.Path, res.AnsweredBy)
	}
	if _, err := p.Ask(context.Background(), adaptrag.Request{Question: ""}); !errors.Is(err, adaptrag.ErrEmptyQuestion) {
		t.Errorf("input checks lost in a customised pipeline: %v", err)
	}
}

func TestReplaceNode(t *testing.T) {
	f := newFixture(t)
	f.opts.Graph = func(g *adaptrag.Graph) error {
		g.ReplaceNode(adaptrag.NodeChitchat, func(_ context.Context, s adaptrag.State) (adaptrag.State, error) {
			s.Answer, s.AnsweredBy = "custom hello", state.ByChitchat
			return s, nil
		})
		return nil
	}
	if res := ask(t, f.pipeline(t), "谢谢你的帮助！"); res.Answer != "custom hello" {
		t.Errorf("replaced chitchat answered %q", res.Answer)
	}
	f.opts.Graph = func(g *adaptrag.Graph) error {
		g.ReplaceNode("nope", func(_ context.Context, s adaptrag.State) (adaptrag.State, error) { return s, nil })
		return nil
	}
	if _, err := adaptrag.New(context.Background(), f.deps, f.opts); !errors.Is(err, adaptrag.ErrConfig) || !errors.Is(err, graph.ErrUnknownNode) {
		t.Errorf("replacing an unknown node: %v", err)
	}
}

// A node with its own conditional edge: a source filter that drops
// passages from one source, and skips generation when nothing is left.
func TestNodeWithItsOwnEdge(t *testing.T) {
	f := newFixture(t)
	var ran atomic.Int32
	f.opts.Graph = func(g *adaptrag.Graph) error {
		g.InsertBefore(adaptrag.NodeGenerate, "drop_legal", func(_ context.Context, s adaptrag.State) (adaptrag.State, error) {
			ran.Add(1)
			s.Docs = slices.DeleteFunc(s.Docs, func(h retrieval.Hit) bool { return h.Chunk.Source == "legal" })
			return s, nil
		})
		g.RemoveEdges("drop_legal")
		g.AddConditionalEdges("drop_legal", func(s adaptrag.State) string {
			if len(s.Docs) == 0 {
				return "empty"
			}
			return "answer"
		}, map[string]string{"empty": "nothing_left", "answer": adaptrag.NodeGenerate})
		g.AddNode("nothing_left", func(_ context.Context, s adaptrag.State) (adaptrag.State, error) {
			s.Answer, s.AnsweredBy = "Nothing I may quote.", state.ByNotFound
			return s, nil
		}).AddEdge("nothing_left", graph.End)
		return nil
	}
	p := f.pipeline(t)
	res := ask(t, p, "对比一下差旅报销和招待报销的流程差异")
	if ran.Load() != 1 || !strings.Contains(strings.Join(res.Path, ","), "evidence,passages,drop_legal,generate") {
		t.Errorf("path %v", res.Path)
	}
	for _, d := range res.Docs {
		if d.Source == "legal" {
			t.Errorf("a legal passage survived the filter")
		}
	}
	if !strings.Contains(p.Diagram().Mermaid(nil), "nothing_left") {
		t.Error("the diagram does not show the added node")
	}
}

// Every node gets its own copy of the state: a node that edits every slice
// and map it receives, in place, changes neither what the caller holds, nor
// what earlier nodes produced, nor other runs.
func TestNodesOwnTheirState(t *testing.T) {
	f := newFixture(t)
	f.deps.FAQ = nil // the run goes through the evidence node, not an FAQ's direct answer
	history := []adaptrag.Message{{Role: adaptrag.RoleUser, Content: "报销流程是什么"}}
	f.opts.Graph = func(g *adaptrag.Graph) error {
		g.InsertBefore(adaptrag.NodeGenerate, "vandal", func(_ context.Context, s adaptrag.State) (adaptrag.State, error) {
			if len(s.History) == 0 {
				return s, nil // only the probe's runs, which carry a history, are vandalised
			}
			if len(s.Docs) == 0 || len(s.Candidates) == 0 || len(s.SubTasks) == 0 || len(s.Usage) == 0 {
				return s, errors.New("vandal: nothing to break")
			}
			n := len(s.Candidates)
			s.Docs = slices.DeleteFunc(s.Docs, func(retrieval.Hit) bool { return true })
			if len(s.Candidates) != n || s.Candidates[0].Chunk.ID == "" {
				return s, errors.New("deleting from Docs changed Candidates")
			}
			s.Candidates[0].Chunk.Meta["vandal"] = "yes"
			s.Candidates[0].Chunk.Text = "vandalised"
			s.History[0].Content = "vandalised"
			s.Query.Vector[0] = 42
			s.Query.Variants = append(s.Query.Variants, "vandalised")
			s.Plan.DocTopK = 999
			s.Intent.Intent = "VANDAL"
			s.SubTasks[0].IDs = append(s.SubTasks[0].IDs[:0], "vandalised")
			s.Usage[0].Node = "vandalised"
			for i := range s.Docs {
				s.Docs[i].Chunk.Meta[retrieval.MetaAnswer] = "vandalised"
			}
			return s, nil
		})
		return nil
	}
	p := f.pipeline(t)
	var before []adaptrag.State // states streamed before the vandal ran
	probe := func(q string) {
		ctx := context.Background()
		for ev, err := range p.Runnable().Stream(ctx, adaptrag.State{Question: q, History: history}) {
			if err != nil {
				t.Fatal(err)
			}
			if ev.Kind == graph.NodeEnd && ev.Node == adaptrag.NodeEvidence {
				before = append(before, ev.State)
			}
		}
	}
	probe("那审批呢")
	if history[0].Content != "报销流程是什么" {
		t.Errorf("the caller's history changed: %q", history[0].Content)
	}
	b := before[0]
	if b.Candidates[0].Chunk.Text == "vandalised" || b.Candidates[0].Chunk.Meta["vandal"] != "" || b.History[0].Content == "vandalised" ||
		b.Query.Vector[0] == 42 || b.Plan.DocTopK == 999 || b.Intent.Intent == "VANDAL" || b.Usage[0].Node == "vandalised" ||
		slices.Contains(b.SubTasks[0].IDs, "vandalised") || len(b.Docs) == 0 {
		t.Errorf("an earlier node's state was changed by a later node")
	}
	for _, h := range b.Docs {
		if h.Chunk.Meta[retrieval.MetaAnswer] == "vandalised" {
			t.Error("a passage's metadata was shared")
		}
	}
	// Another run starts clean.
	res := ask(t, p, "对比一下差旅报销和招待报销的流程差异")
	for _, c := range res.Debug.State.Candidates {
		if c.Chunk.Text == "vandalised" {
			t.Fatal("a run saw another run's edit")
		}
	}
}

// The compiled graph runs directly on a bare state: no hidden field is
// needed, and bad input fails with the same errors as Ask.
func TestCompiledGraphRunsDirectly(t *testing.T) {
	f := newFixture(t)
	app := f.pipeline(t).Runnable()
	out, err := app.Invoke(context.Background(), adaptrag.State{Question: "退货要在几天内发起？"})
	if err != nil {
		t.Fatal(err)
	}
	if out.Query.Text == "" || len(out.Docs) == 0 || !strings.Contains(out.Answer, "7") {
		t.Errorf("direct run: query %q, %d passages, answer %q", out.Query.Text, len(out.Docs), out.Answer)
	}
	if _, err := app.Invoke(context.Background(), adaptrag.State{}); !errors.Is(err, adaptrag.ErrEmptyQuestion) {
		t.Errorf("empty state: err = %v, want ErrEmptyQuestion", err)
	}
}

// A node reads the caller's scope from the context; there is no state field
// a node could widen it through.
func TestScopeIsTheCallers(t *testing.T) {
	f := newFixture(t)
	var seen adaptrag.Caller
	f.opts.Graph = func(g *adaptrag.Graph) error {
		g.InsertBefore(adaptrag.NodeDense, "spy", func(ctx context.Context, s adaptrag.State) (adaptrag.State, error) {
			seen, _ = adaptrag.CallerFrom(ctx)
			return s, nil
		})
		return nil
	}
	res, err := f.pipeline(t).Ask(context.Background(), adaptrag.Request{Question: "退货要在几天内发起？", Scope: retrieval.Scope{Tenant: "acme"}, Actor: "u1"})
	if err != nil {
		t.Fatal(err)
	}
	if seen.Scope.Tenant != "acme" || seen.Actor != "u1" || res.Query.Scope.Tenant != "acme" {
		t.Errorf("caller seen by a node: %+v", seen)
	}
}

// New checks what a run would only meet later.
func TestNewChecks(t *testing.T) {
	f := newFixture(t)
	f.deps.Embedder = dimEmbedder{dim: 7}
	if _, err := adaptrag.New(context.Background(), f.deps, f.opts); !errors.Is(err, adaptrag.ErrConfig) || !errors.Is(err, retrieval.ErrDimension) {
		t.Errorf("embedder of another dimension: err = %v", err)
	}
	if _, err := adaptrag.New(context.Background(), adaptrag.Deps{}, adaptrag.Options{}); !errors.Is(err, adaptrag.ErrConfig) {
		t.Errorf("no parts: err = %v", err)
	}
	f = newFixture(t)
	f.opts.Graph = func(g *adaptrag.Graph) error { return errors.New("no") }
	if _, err := adaptrag.New(context.Background(), f.deps, f.opts); !errors.Is(err, adaptrag.ErrConfig) {
		t.Errorf("a failing graph edit: err = %v", err)
	}
}
