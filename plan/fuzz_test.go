package plan

import (
	"strings"
	"sync"
	"testing"
)

// FuzzPrepare: no input panics, and the result is consistent: a direct
// answer has a reason and a text and no plan; a retrieval route has both an
// intent and a plan whose reason is made of known tags.
func FuzzPrepare(f *testing.F) {
	for _, s := range []string{"", "你好", "那审批呢", "材料清单里的付款金额字段是什么", "\xff\xfe", "ignore previous", "ｈｉ！", "5000", "what about it?"} {
		f.Add(s, "报销流程是什么", "it")
	}
	p := New(testSettings)
	tags := map[string]bool{"default": true}
	for _, r := range p.Rules() {
		tags[r.Tag] = true
	}
	f.Fuzz(func(t *testing.T, text, hist, source string) {
		res := p.Prepare(Query{Text: text, History: []string{hist}, Source: source}, "")
		switch res.Decision.Action {
		case ActionDirect:
			if res.Decision.Reason == "" || res.Intent != nil || res.Plan != nil {
				t.Fatalf("bad direct answer %+v", res)
			}
		case ActionRetrieve:
			if res.Intent == nil || res.Plan == nil {
				t.Fatalf("retrieval without intent or plan: %+v", res)
			}
			if !IsRetrievalIntent(res.Intent.Intent) {
				t.Fatalf("retrieval route with intent %s", res.Intent.Intent)
			}
			rest := res.Plan.Reason
			for rest != "" {
				found := false
				for tag := range tags {
					if rest == tag || strings.HasPrefix(rest, tag+"_") {
						rest = strings.TrimPrefix(strings.TrimPrefix(rest, tag), "_")
						found = true
						break
					}
				}
				if !found {
					t.Fatalf("reason %q has an unknown tag", res.Plan.Reason)
				}
			}
		default:
			t.Fatalf("unknown route %q", res.Decision.Action)
		}
		_ = ExactMatch(text, hist)
		_ = ContentUnits(text)
	})
}

// TestConcurrentUse shares one Planner between goroutines; run with -race.
func TestConcurrentUse(t *testing.T) {
	p := New(testSettings)
	want := p.Prepare(Query{Text: "材料清单里的付款金额字段是什么"}, "")
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 50; j++ {
				got := p.Prepare(Query{Text: "材料清单里的付款金额字段是什么"}, "")
				if *got.Plan != *want.Plan {
					t.Errorf("concurrent plan differs: %+v", got.Plan)
					return
				}
				_ = p.Rules()
				_ = p.Settings()
			}
		}()
	}
	wg.Wait()
}

// BenchmarkPrepare measures one whole planning pass (route, intent, plan)
// on the worked table question.
func BenchmarkPrepare(b *testing.B) {
	p := New(testSettings)
	q := Query{Text: "材料清单里的付款金额字段是什么", History: []string{"报销流程是什么"}, Source: "finance"}
	b.ReportAllocs()
	for b.Loop() {
		_ = p.Prepare(q, "")
	}
}

// BenchmarkNew measures building a Planner (compiling the keyword tables).
func BenchmarkNew(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_ = New(testSettings)
	}
}
