package plan_test

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/adaptrag/adaptrag/plan"
	"github.com/adaptrag/adaptrag/router"
	"github.com/adaptrag/adaptrag/samplekb"
)

// Prepare runs the route decision and, for questions that need retrieval,
// the intent and the plan; this is what "adaptrag plan --json" prints.
func ExamplePlanner_Prepare() {
	p := plan.New(plan.Settings{}) // the defaults
	res := p.Prepare(plan.Query{Text: "报销费用超过5000需要谁审批"}, "")
	fmt.Println(res.Decision.Action, res.Intent.Intent, res.Plan.QuestionCategory)
	fmt.Println(res.Plan.DocTopK, res.Plan.FAQDirectThreshold, res.Plan.FinalContextTopN)
	fmt.Println(res.Plan.Reason)
	// Output:
	// retrieval FAQ_QUERY pricing
	// 24 0.84 6
	// faq_first_short_query_guard_pricing_guard
}

func ExamplePlanner_Prepare_json() {
	p := plan.New(plan.Settings{Sources: samplekb.PlanSources()})
	res := p.Prepare(plan.Query{Text: "那审批呢", History: []string{"报销流程是什么"}}, "")
	enc := json.NewEncoder(os.Stdout)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(res.Intent)
	// Output:
	// {"intent":"FOLLOW_UP","confidence":0.85,"requires_rewrite":true,"suggested_source":"finance","reason":"follow_up_opener:那"}
}

// A pure greeting is answered directly; a greeting that carries a real
// question is not.
func ExamplePlanner_Decide() {
	p := plan.New(plan.Settings{Sources: samplekb.PlanSources()})
	for _, q := range []string{"你好！", "hi, how long does a refund take?", "转人工"} {
		d := p.Decide(plan.Query{Text: q})
		fmt.Printf("%s %q\n", d.Action, d.Reason)
	}
	d := p.Decide(plan.Query{Text: "报销需要哪些发票", Source: "it"})
	fmt.Println(d.Reason, d.SuggestedSource)
	// Output:
	// direct_answer "greeting_rule"
	// retrieval ""
	// direct_answer "human_service_rule"
	// source_boundary finance
}

// A custom rule table replaces the default one; rules apply stage by stage.
func ExampleNewWithRules() {
	rules := append(plan.DefaultRules(plan.Settings{}), plan.Rule{
		Tag:   "no_variants_for_tables",
		Stage: plan.StageTable,
		When:  func(f plan.Facts) bool { return f.Table },
		Patch: plan.PlanPatch{UseQueryVariants: plan.FlagOff, DocTopK: plan.AtLeast(40)},
	})
	p, err := plan.NewWithRules(plan.Settings{}, rules)
	if err != nil {
		fmt.Println(err)
		return
	}
	q := plan.Query{Text: "材料清单里的付款金额字段是什么"}
	pl := p.Plan(q, p.ClassifyIntent(q), "")
	fmt.Println(pl.DocTopK, pl.Reason)
	// Output:
	// 40 faq_first_pricing_guard_table_row_preferred_no_variants_for_tables
}

func ExamplePlanner_Rules() {
	for _, r := range plan.New(plan.Settings{}).Rules()[:2] {
		fmt.Println(r)
	}
	// Output:
	// intent/faq_first: run_faq=true run_doc=true doc_top_k*0.5 faq_direct_threshold-0.08 use_query_variants=false
	// intent/knowledge_doc_enriched: run_faq=true run_doc=true doc_top_k>=24 final_context_top_n+1 use_query_variants=true
}

func ExamplePlan_FAQDirect() {
	p := plan.New(plan.Settings{})
	q := plan.Query{Text: "材料清单里的付款金额字段是什么"}
	pl := p.Plan(q, p.ClassifyIntent(q), "")
	faq := "材料清单里的付款金额字段是什么？"
	fmt.Println(pl.FAQDirect(0.95, false))                        // similar is not enough for a table question
	fmt.Println(pl.FAQDirect(0.95, plan.ExactMatch(q.Text, faq))) // an exact match is
	// Output:
	// false
	// true
}

// Once the question is profiled, the route stage sets how much to
// retrieve: a factual question takes the dense top 3, an analytical one
// hybrid 50 reranked to 8. The earlier stages' tags stay in the reason.
func ExamplePlanner_Plan_route() {
	p := plan.New(plan.Settings{})
	q := plan.Query{Text: "报销费用超过5000需要谁审批"}
	in := p.ClassifyIntent(q)
	for _, route := range []router.QueryType{router.Factual, router.Analytical} {
		pl := p.Plan(q, in, route)
		fmt.Println(pl.Mode, pl.DocTopK, pl.Rerank, pl.FinalContextTopN, pl.FAQDirectThreshold)
		fmt.Println(pl.Reason)
	}
	// Output:
	// dense 3 false 3 0.84
	// faq_first_short_query_guard_pricing_guard_route_factual
	// hybrid 50 true 8 0.84
	// faq_first_short_query_guard_pricing_guard_route_analytical
}

func ExampleEffectiveSource() {
	in := plan.IntentResult{SuggestedSource: "finance"}
	fmt.Println(plan.EffectiveSource("it", in))
	fmt.Println(plan.EffectiveSource("", in))
	// Output:
	// it
	// finance
}

func ExampleContentUnits() {
	fmt.Println(plan.ContentUnits("报销费用超过5000需要谁审批"))
	fmt.Println(plan.ContentUnits("材料清单里的付款金额字段是什么"))
	// Output:
	// 12
	// 15
}
