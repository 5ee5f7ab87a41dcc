package adaptrag_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/adaptrag/adaptrag"
	"github.com/adaptrag/adaptrag/llm/llmtest"
	"github.com/adaptrag/adaptrag/plan"
	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/samplekb"
	"github.com/adaptrag/adaptrag/state"
)

// recorder wraps a searcher and keeps the requests it saw.
type recorder struct {
	retrieval.Searcher
	mu   sync.Mutex
	reqs []retrieval.Request
	kind []string
}

func (r *recorder) note(kind string, req retrieval.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reqs = append(r.reqs, req)
	r.kind = append(r.kind, kind)
}

func (r *recorder) SearchDense(ctx context.Context, req retrieval.Request) ([]retrieval.Hit, error) {
	r.note("dense", req)
	return r.Searcher.SearchDense(ctx, req)
}

func (r *recorder) SearchHybrid(ctx context.Context, req retrieval.Request) ([]retrieval.Hit, error) {
	r.note("hybrid", req)
	return retrieval.SearchHybrid(ctx, r.Searcher, req)
}

// fixedRelevance sets every hit's relevance to v.
type fixedRelevance float64

func (v fixedRelevance) Calibrate(_ context.Context, _ string, hits []retrieval.Hit) error {
	for i := range hits {
		hits[i].Relevance = float64(v)
	}
	return nil
}

// tableFirst is a document collection whose second hit is a table row.
type tableFirst struct{ retrieval.Searcher }

func (tableFirst) SearchDense(_ context.Context, req retrieval.Request) ([]retrieval.Hit, error) {
	mk := func(id, ct, text string) retrieval.Hit {
		return retrieval.Hit{Method: retrieval.MethodDense, Score: 0.5, Chunk: retrieval.Chunk{ID: id, DocID: id, Title: id, ContentType: ct, Text: text}}
	}
	return []retrieval.Hit{
		mk("text", retrieval.ContentText, "付款金额字段的说明：见材料清单。"),
		mk("row", retrieval.ContentTableRow, "字段: 付款金额 | 说明: 含税金额"),
	}, nil
}

// TestEveryPlanFieldActs flips each field of the plan with a rule after the
// route stage and shows the run change: nothing the plan prints is inert.
func TestEveryPlanFieldActs(t *testing.T) {
	const factualQ = "退货要在几天内发起？"
	const analyticalQ = "对比一下差旅报销和招待报销的流程差异"
	type run struct {
		res        *adaptrag.Result
		docs, faqs *recorder
	}
	do := func(t *testing.T, q string, patch plan.PlanPatch, setup func(d *adaptrag.Deps)) run {
		t.Helper()
		f := newFixture(t)
		docs, faqs := &recorder{Searcher: f.docs}, &recorder{Searcher: f.faq}
		f.deps.Docs, f.deps.FAQ = docs, faqs
		if setup != nil {
			setup(&f.deps)
		}
		rules := plan.DefaultRules(f.opts.Plan)
		if patch != (plan.PlanPatch{}) {
			rules = append(rules, plan.Rule{Tag: "flip", Stage: plan.StageRoute, Patch: patch})
		}
		f.opts.Rules = rules
		res := ask(t, f.pipeline(t), q)
		return run{res: res, docs: docs, faqs: faqs}
	}
	model := func(t *testing.T) (func(d *adaptrag.Deps), *llmtest.Server) {
		srv := llmtest.NewServer(t, llmtest.Text("答案见资料 [1]。"))
		return func(d *adaptrag.Deps) { d.Generator = newModel(t, srv) }, srv
	}

	t.Run("mode", func(t *testing.T) {
		base, flip := do(t, factualQ, plan.PlanPatch{}, nil), do(t, factualQ, plan.PlanPatch{Mode: plan.ModeHybrid}, nil)
		if base.docs.kind[0] != "dense" || flip.docs.kind[0] != "hybrid" {
			t.Errorf("searches %v then %v, want dense then hybrid", base.docs.kind, flip.docs.kind)
		}
	})
	t.Run("run_faq", func(t *testing.T) {
		if n := len(do(t, factualQ, plan.PlanPatch{RunFAQ: plan.FlagOff}, nil).faqs.reqs); n != 0 {
			t.Errorf("run_faq=false still searched the FAQ %d times", n)
		}
	})
	t.Run("run_doc", func(t *testing.T) {
		r := do(t, factualQ, plan.PlanPatch{RunDoc: plan.FlagOff}, nil)
		if len(r.docs.reqs) != 0 || r.res.Plan.Mode != plan.ModeNone {
			t.Errorf("run_doc=false: %d document searches, mode %s", len(r.docs.reqs), r.res.Plan.Mode)
		}
	})
	t.Run("faq_top_k", func(t *testing.T) {
		if k := do(t, factualQ, plan.PlanPatch{FAQTopK: plan.Set(7)}, nil).faqs.reqs[0].K; k != 7 {
			t.Errorf("FAQ search asked for %d, want 7", k)
		}
	})
	t.Run("doc_top_k", func(t *testing.T) {
		if k := do(t, factualQ, plan.PlanPatch{DocTopK: plan.Set(5)}, nil).docs.reqs[0].K; k != 5 {
			t.Errorf("document search asked for %d, want 5", k)
		}
	})
	t.Run("rerank", func(t *testing.T) {
		if base := do(t, analyticalQ, plan.PlanPatch{}, nil); base.res.Rerank == nil {
			t.Fatal("the analytical route did not rerank")
		}
		if r := do(t, analyticalQ, plan.PlanPatch{Rerank: plan.FlagOff}, nil); r.res.Rerank != nil {
			t.Errorf("rerank=false still reranked: %+v", r.res.Rerank)
		}
	})
	t.Run("faq_direct_threshold", func(t *testing.T) {
		q := "年假可以有多少天" // the entry "年假有多少天？" asked another way, scoring under the default
		if base := do(t, q, plan.PlanPatch{}, nil); base.res.AnsweredBy == state.ByFAQ {
			t.Skip("the default threshold already answers from the FAQ")
		}
		if r := do(t, q, plan.PlanPatch{FAQDirectThreshold: plan.Set(0)}, nil); r.res.AnsweredBy != state.ByFAQ {
			t.Errorf("threshold 0: answered by %s, want the FAQ", r.res.AnsweredBy)
		}
	})
	t.Run("faq_direct_exact_only", func(t *testing.T) {
		fixed := func(d *adaptrag.Deps) { d.FAQ = fixedFAQ{Searcher: d.FAQ, score: 0.99} }
		if base := do(t, "报销审批该找谁呢", plan.PlanPatch{}, fixed); base.res.AnsweredBy != state.ByFAQ {
			t.Fatalf("a 0.99 FAQ hit did not answer: %s", base.res.AnsweredBy)
		}
		if r := do(t, "报销审批该找谁呢", plan.PlanPatch{FAQDirectExactOnly: plan.FlagOn}, fixed); r.res.AnsweredBy == state.ByFAQ {
			t.Error("exact-only still answered from a similar FAQ entry")
		}
	})
	t.Run("final_context_top_n", func(t *testing.T) {
		if r := do(t, analyticalQ, plan.PlanPatch{FinalContextTopN: plan.Set(2)}, nil); len(r.res.Docs) != 2 {
			t.Errorf("%d passages, want 2", len(r.res.Docs))
		}
	})
	t.Run("min_context_score", func(t *testing.T) {
		cal := func(d *adaptrag.Deps) { d.Calibrator = fixedRelevance(0.5) }
		if base := do(t, factualQ, plan.PlanPatch{MinContextScore: plan.Set(0.4)}, cal); len(base.res.Docs) == 0 {
			t.Fatal("relevance 0.5 above a 0.4 floor kept nothing")
		}
		r := do(t, factualQ, plan.PlanPatch{MinContextScore: plan.Set(0.6)}, cal)
		if len(r.res.Docs) != 0 || r.res.AnsweredBy != state.ByNotFound {
			t.Errorf("relevance 0.5 under a 0.6 floor: %d passages, answered by %s", len(r.res.Docs), r.res.AnsweredBy)
		}
	})
	t.Run("max_context_doc_chars", func(t *testing.T) {
		for _, d := range do(t, analyticalQ, plan.PlanPatch{MaxContextDocChars: plan.Set(20)}, nil).res.Docs {
			if n := utf8.RuneCountInString(d.Text); n > 21 {
				t.Errorf("passage of %d characters under a 20-character cap", n)
			}
		}
	})
	t.Run("max_context_chars", func(t *testing.T) {
		if r := do(t, analyticalQ, plan.PlanPatch{MaxContextChars: plan.Set(10)}, nil); len(r.res.Docs) != 1 {
			t.Errorf("%d passages under a 10-character total, want the first only", len(r.res.Docs))
		}
	})
	t.Run("question_category", func(t *testing.T) {
		setup, srv := model(t)
		do(t, factualQ, plan.PlanPatch{}, setup) // default category: the plain instruction
		f := newFixture(t)
		f.deps.Generator = newModel(t, srv)
		f.opts.Rules = append(plan.DefaultRules(f.opts.Plan), plan.Rule{Tag: "risky", Stage: plan.StageRoute,
			Apply: func(p *plan.Plan, _ plan.Facts) { p.QuestionCategory = plan.CategoryCompliance }})
		ask(t, f.pipeline(t), factualQ)
		reqs := srv.Requests()
		if len(reqs) != 2 || strings.Contains(reqs[0].PromptText(), "必须与资料原文一致") || !strings.Contains(reqs[1].PromptText(), "必须与资料原文一致") {
			t.Errorf("the compliance category did not make the answer instruction stricter")
		}
	})
	t.Run("prefer_table", func(t *testing.T) {
		table := func(d *adaptrag.Deps) { d.Docs = tableFirst{d.Docs}; d.FAQ = nil; d.Calibrator = fixedRelevance(1) }
		if base := do(t, factualQ, plan.PlanPatch{}, table); base.res.Docs[0].ID != "text" {
			t.Fatalf("without the preference the first passage is %s", base.res.Docs[0].ID)
		}
		if r := do(t, factualQ, plan.PlanPatch{PreferTable: plan.FlagOn}, table); r.res.Docs[0].ID != "row" {
			t.Errorf("prefer_table kept %s first, want the table row", r.res.Docs[0].ID)
		}
	})
	t.Run("use_query_variants", func(t *testing.T) {
		r := do(t, factualQ, plan.PlanPatch{UseQueryVariants: plan.FlagOn}, nil)
		if len(r.res.Query.Variants) == 0 || len(r.docs.reqs) < 2 {
			t.Errorf("variants on: %v, %d document searches; want variants searched too", r.res.Query.Variants, len(r.docs.reqs))
		}
	})
}

// The sample's source table is the sample's: the library's default policy
// suggests no source.
func TestNoSampleContentInDefaults(t *testing.T) {
	f := newFixture(t)
	f.opts = adaptrag.Options{}
	res := ask(t, f.pipeline(t), "报销需要哪些发票")
	if res.Intent.SuggestedSource != "" {
		t.Errorf("default policy suggested source %q", res.Intent.SuggestedSource)
	}
	f.opts.Plan.Sources = samplekb.PlanSources()
	if res := ask(t, f.pipeline(t), "报销需要哪些发票"); res.Intent.SuggestedSource != "finance" {
		t.Errorf("with the sample's table: suggested %q, want finance", res.Intent.SuggestedSource)
	}
	f.opts.Topics = []string{"VPN setup", "password resets"}
	if g := ask(t, f.pipeline(t), "hello!"); !strings.Contains(g.Answer, "VPN setup, password resets") {
		t.Errorf("greeting %q does not describe the configured topics", g.Answer)
	}
}
