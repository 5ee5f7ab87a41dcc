package plan

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*.json golden files")

// workedCase is one of the five worked examples of the plan rules, with the values
// stated for it; other fields are checked by the golden file.
type workedCase struct {
	name    string
	query   Query
	intent  string
	rewrite bool
	check   func(t *testing.T, pl Plan)
}

func workedCases() []workedCase {
	return []workedCase{
		{
			name:   "faq",
			query:  Query{Text: "异地入职材料办理时需要准备哪些资料和审批信息"},
			intent: IntentFAQ,
			check: func(t *testing.T, pl Plan) {
				wantBool(t, "run_faq", pl.RunFAQ, true)
				wantBool(t, "run_doc", pl.RunDoc, true)
				wantInt(t, "doc_top_k", pl.DocTopK, 10)
				wantFloat(t, "faq_direct_threshold", pl.FAQDirectThreshold, 0.64)
				wantInt(t, "final_context_top_n", pl.FinalContextTopN, 4)
				wantBool(t, "use_query_variants", pl.UseQueryVariants, false)
				wantString(t, "reason", pl.Reason, "faq_first")
			},
		},
		{
			name:   "knowledge",
			query:  Query{Text: "公司会议室预约规则在哪里查看以及需要遵守哪些流程要求"},
			intent: IntentKnowledge,
			check: func(t *testing.T, pl Plan) {
				wantInt(t, "doc_top_k", pl.DocTopK, 24)
				wantInt(t, "final_context_top_n", pl.FinalContextTopN, 5)
				wantBool(t, "use_query_variants", pl.UseQueryVariants, true)
				wantString(t, "reason", pl.Reason, "knowledge_doc_enriched")
			},
		},
		{
			name:    "follow_up",
			query:   Query{Text: "那审批呢", History: []string{"报销流程是什么"}},
			intent:  IntentFollowUp,
			rewrite: true,
			check: func(t *testing.T, pl Plan) {
				wantInt(t, "faq_top_k", pl.FAQTopK, 24)
				wantInt(t, "doc_top_k", pl.DocTopK, 24)
				if pl.FAQDirectThreshold < 0.78 {
					t.Errorf("faq_direct_threshold = %v, want at least 0.78", pl.FAQDirectThreshold)
				}
				wantBool(t, "use_query_variants", pl.UseQueryVariants, true)
				wantString(t, "reason", pl.Reason, "history_aware_follow_up")
			},
		},
		{
			name:   "pricing",
			query:  Query{Text: "报销费用超过5000需要谁审批"},
			intent: IntentFAQ,
			check: func(t *testing.T, pl Plan) {
				wantString(t, "question_category", pl.QuestionCategory, CategoryPricing)
				wantInt(t, "doc_top_k", pl.DocTopK, 24)
				wantFloat(t, "faq_direct_threshold", pl.FAQDirectThreshold, 0.84)
				wantInt(t, "final_context_top_n", pl.FinalContextTopN, 6)
				wantString(t, "reason", pl.Reason, "faq_first_short_query_guard_pricing_guard")
			},
		},
		{
			name:   "table",
			query:  Query{Text: "材料清单里的付款金额字段是什么"},
			intent: IntentFAQ,
			check: func(t *testing.T, pl Plan) {
				wantBool(t, "prefer_table", pl.PreferTable, true)
				wantBool(t, "faq_direct_exact_only", pl.FAQDirectExactOnly, true)
				wantInt(t, "final_context_top_n", pl.FinalContextTopN, 7)
				wantString(t, "reason", pl.Reason, "faq_first_pricing_guard_table_row_preferred")
			},
		},
	}
}

func TestSeedExamples(t *testing.T) {
	p := New(testSettings)
	for _, c := range workedCases() {
		t.Run(c.name, func(t *testing.T) {
			res := p.Prepare(c.query, "")
			if res.Decision.Action != ActionRetrieve {
				t.Fatalf("decision = %+v, want retrieval", res.Decision)
			}
			if res.Intent == nil || res.Plan == nil {
				t.Fatalf("intent or plan missing: %+v", res)
			}
			wantString(t, "intent", res.Intent.Intent, c.intent)
			wantBool(t, "requires_rewrite", res.Intent.RequiresRewrite, c.rewrite)
			c.check(t, *res.Plan)

			// Plan called on its own agrees with Prepare.
			if got := p.Plan(c.query, p.ClassifyIntent(c.query), ""); got != *res.Plan {
				t.Errorf("Plan = %+v, Prepare's plan = %+v", got, *res.Plan)
			}
		})
	}
}

// TestWorkedGolden compares Prepare's JSON for the worked examples with
// testdata/<name>.json; run with -update to rewrite the files.
func TestWorkedGolden(t *testing.T) {
	p := New(testSettings)
	for _, c := range workedCases() {
		t.Run(c.name, func(t *testing.T) {
			got, err := json.MarshalIndent(p.Prepare(c.query, ""), "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			path := filepath.Join("testdata", c.name+".json")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -run TestSeedGolden -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from Prepare's output:\n got: %s\nwant: %s", path, got, want)
			}
		})
	}
}

// TestPlanJSONFields pins the plan's JSON field names, which the CLI and the
// coordinator's consumers read.
func TestPlanJSONFields(t *testing.T) {
	b, err := json.Marshal(Plan{})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	want := []string{"mode", "run_faq", "run_doc", "faq_top_k", "doc_top_k", "rerank", "faq_direct_threshold",
		"final_context_top_n", "min_context_score", "max_context_chars", "max_context_doc_chars",
		"use_query_variants", "question_category", "prefer_table", "faq_direct_exact_only", "coverage", "reason"}
	if len(m) != len(want) {
		t.Errorf("plan has %d JSON fields, want %d: %s", len(m), len(want), b)
	}
	for _, k := range want {
		if _, ok := m[k]; !ok {
			t.Errorf("plan JSON lacks %q: %s", k, b)
		}
	}

	b, err = json.Marshal(New(testSettings).Prepare(Query{Text: "你好"}, ""))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"decision", "intent", "retrieval_plan"} {
		if _, ok := m[k]; !ok {
			t.Errorf("result JSON lacks %q: %s", k, b)
		}
	}
	if m["intent"] != nil || m["retrieval_plan"] != nil {
		t.Errorf("direct answer carries an intent or a plan: %s", b)
	}
}

func wantInt(t *testing.T, name string, got, want int) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %d, want %d", name, got, want)
	}
}

func wantFloat(t *testing.T, name string, got, want float64) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %v, want %v", name, got, want)
	}
}

func wantBool(t *testing.T, name string, got, want bool) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %v, want %v", name, got, want)
	}
}

func wantString(t *testing.T, name, got, want string) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %q, want %q", name, got, want)
	}
}
