package adaptrag_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/adaptrag/adaptrag"
	"github.com/adaptrag/adaptrag/llm/llmtest"
	"github.com/adaptrag/adaptrag/query"
	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/samplekb"
	"github.com/adaptrag/adaptrag/state"
)

func user(s string) adaptrag.Message { return adaptrag.Message{Role: adaptrag.RoleUser, Content: s} }
func assistant(s string) adaptrag.Message {
	return adaptrag.Message{Role: adaptrag.RoleAssistant, Content: s}
}

func askWith(t *testing.T, p *adaptrag.Pipeline, req adaptrag.Request) *adaptrag.Result {
	t.Helper()
	res, err := p.Ask(context.Background(), req)
	if err != nil {
		t.Fatalf("%s: %v", req.Question, err)
	}
	return res
}

// A follow-up that refers back is rewritten into a standalone query that
// names the entity, with the resolution recorded; the route is taken on
// the rewritten query.
func TestFollowUpRewrite(t *testing.T) {
	p := newFixture(t).pipeline(t)
	res := askWith(t, p, adaptrag.Request{Question: "那这个能换吗？", History: []adaptrag.Message{
		user("P-204 电池的售后政策是什么？"), assistant("P-204 电池签收后 15 天内出现质量问题可以退货。"),
	}})
	if !res.Query.Rewritten || !strings.Contains(res.Query.Text, "P-204") || len(res.Query.Resolved) != 1 || res.Query.Resolved[0].Value != "P-204" {
		t.Fatalf("query %+v", res.Query)
	}
	if res.Route.QueryType == "chitchat" || len(res.Docs) == 0 {
		t.Errorf("the follow-up was not retrieved for: route %s, %d passages", res.Route.QueryType, len(res.Docs))
	}
	// The new entity replaces the old one, never the reverse.
	res = askWith(t, p, adaptrag.Request{Question: "P-205 呢？", History: []adaptrag.Message{user("P-204 的保修期多久？")}})
	if !strings.Contains(res.Query.Text, "P-205") || strings.Contains(res.Query.Text, "P-204") {
		t.Errorf("ellipsis rewrite %q", res.Query.Text)
	}
	// A standalone question after an unrelated history is left alone.
	res = askWith(t, p, adaptrag.Request{Question: "电子发票多久能开好？", History: []adaptrag.Message{user("P-204 的保修期多久？")}})
	if res.Query.Rewritten || strings.Contains(res.Query.Text, "P-204") {
		t.Errorf("a standalone question was rewritten: %q", res.Query.Text)
	}
	// Thanks after a conversation is small talk.
	res = askWith(t, p, adaptrag.Request{Question: "好的，谢谢", History: []adaptrag.Message{user("P-204 的保修期多久？"), assistant("一年。")}})
	if res.Route.QueryType != "chitchat" || len(res.Docs) != 0 {
		t.Errorf("thanks: route %s, %d passages", res.Route.QueryType, len(res.Docs))
	}
}

// Two candidates for one reference: nothing is retrieved, the reply names
// both; with AmbiguitySearchEach, both are retrieved apart.
func TestClarifyOrSearchEach(t *testing.T) {
	f := newFixture(t)
	hist := []adaptrag.Message{user("P-204 和 P-205 哪个更便宜？"), assistant("P-204 更便宜。")}
	res := askWith(t, f.pipeline(t), adaptrag.Request{Question: "这个能换吗？", History: hist})
	if res.AnsweredBy != state.ByClarify || res.Clarify == nil || len(res.Clarify.Candidates) != 2 ||
		!strings.Contains(res.Answer, "P-204") || !strings.Contains(res.Answer, "P-205") {
		t.Fatalf("answered by %s, clarify %+v: %q", res.AnsweredBy, res.Clarify, res.Answer)
	}
	if f.docs.total()+f.faq.total() != 0 {
		t.Errorf("a clarify run searched %d times", f.docs.total()+f.faq.total())
	}
	f.opts.Ambiguity = adaptrag.AmbiguitySearchEach
	res = askWith(t, f.pipeline(t), adaptrag.Request{Question: "这个能换吗？", History: hist})
	if len(res.Parts) != 2 || res.Parts[0].Candidate != "P-204" || res.Parts[1].Candidate != "P-205" || res.AnsweredBy == state.ByClarify {
		t.Fatalf("search each: parts %+v, answered by %s", res.Parts, res.AnsweredBy)
	}
}

// A question with independent parts runs them as parallel branches, each
// retrieved and cited.
func TestDecompositionRunsParts(t *testing.T) {
	p := newFixture(t).pipeline(t)
	res := askWith(t, p, adaptrag.Request{Question: "退货要在几天内发起，电子发票怎么申请？"})
	if len(res.Parts) != 2 {
		t.Fatalf("parts %+v", res.Parts)
	}
	branches := 0
	for _, n := range res.Path {
		if n == adaptrag.NodePart {
			branches++
		}
	}
	if branches != 2 || !strings.Contains(strings.Join(res.Path, ","), "parts,part,part,combine") {
		t.Errorf("path %v", res.Path)
	}
	for _, part := range res.Parts {
		if len(part.Evidence) == 0 {
			t.Errorf("part %d (%s) has no evidence", part.N, part.Question)
		}
	}
	if !strings.Contains(res.Answer, "1.") || !strings.Contains(res.Answer, "2.") || len(res.Citations) < 2 {
		t.Errorf("answer %q, %d citations", res.Answer, len(res.Citations))
	}
	if !strings.Contains(p.Diagram().Mermaid(nil), `"map"`) {
		t.Error("the diagram does not show the parts fan-out")
	}
}

// A dependent chain runs hop by hop through the look-up: the order gives
// the product, the product's rules are searched; the records are cited as
// evidence, never turned into a verdict. Failure exits are distinct.
func TestDependentChain(t *testing.T) {
	f := newFixture(t)
	f.deps.Lookup = samplekb.Lookup()
	p := f.pipeline(t)
	q := "订单 A100 的产品适用哪份特殊规则？"
	res := askWith(t, p, adaptrag.Request{Question: q, Actor: "u1"})
	if len(res.Hops) < 2 || res.Hops[0].Found != "product P-204" || !strings.Contains(res.Query.Text, "P-204") {
		t.Fatalf("hops %+v, query %q", res.Hops, res.Query.Text)
	}
	var cited bool
	for _, c := range res.Citations {
		cited = cited || c.Collection == "lookup" && c.Origin == "orders.csv"
	}
	if !cited || !strings.Contains(res.Answer, "order A100") {
		t.Errorf("the order record is not cited: %q %+v", res.Answer, res.Citations)
	}
	// Not permitted: another actor's order stops the run, no retry.
	f.docs.dense.Store(0)
	res = askWith(t, p, adaptrag.Request{Question: q, Actor: "u2"})
	if res.AnsweredBy != state.ByNoAccess || f.docs.total() != 0 || len(res.Hops) != 1 {
		t.Errorf("not permitted: answered by %s after %d searches, hops %+v", res.AnsweredBy, f.docs.total(), res.Hops)
	}
	// A missing link names the hop that failed.
	res = askWith(t, p, adaptrag.Request{Question: "订单 A999 的产品适用哪份特殊规则？", Actor: "u1"})
	if res.AnsweredBy != state.ByMissing || !strings.Contains(res.Answer, "A999") || !strings.Contains(res.Answer, "1") {
		t.Errorf("missing link: answered by %s: %q", res.AnsweredBy, res.Answer)
	}
	// Entity missing: ask back.
	res = askWith(t, p, adaptrag.Request{Question: "我的订单什么时候发货？", Actor: "u1"})
	if res.AnsweredBy != state.ByAskEntity || !strings.Contains(res.Answer, "订单") {
		t.Errorf("entity missing: answered by %s: %q", res.AnsweredBy, res.Answer)
	}
}

// slowLookup stalls until its context ends.
type slowLookup struct{ retrieval.Lookup }

func (slowLookup) Get(ctx context.Context, _ retrieval.Scope, _, _, _ string) (retrieval.Record, error) {
	<-ctx.Done()
	return retrieval.Record{}, ctx.Err()
}

// A look-up that times out is reported as a timeout, never as "nothing
// found".
func TestLookupTimeoutIsATimeout(t *testing.T) {
	f := newFixture(t)
	f.deps.Lookup = slowLookup{samplekb.Lookup()}
	f.opts.RetrieveTimeout = 30 * time.Millisecond
	res, err := f.pipeline(t).Ask(context.Background(), adaptrag.Request{Question: "订单 A100 的产品适用哪份特殊规则？", Actor: "u1"})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want a timeout", err)
	}
	if res.AnsweredBy == state.ByNotFound || res.AnsweredBy == state.ByMissing {
		t.Errorf("a timeout answered as %s", res.AnsweredBy)
	}
}

// A total goes to a deterministic query over every record; without an
// aggregating look-up the run says it cannot total a sample of passages.
func TestTotals(t *testing.T) {
	f := newFixture(t)
	q := "这个月所有 P-204 订单的退款总额是多少？"
	res := askWith(t, f.pipeline(t), adaptrag.Request{Question: q, Actor: "u1"})
	if res.AnsweredBy != state.ByNoTotal || f.docs.total() != 0 {
		t.Errorf("without a look-up: answered by %s after %d searches", res.AnsweredBy, f.docs.total())
	}
	f.deps.Lookup = samplekb.Lookup()
	res = askWith(t, f.pipeline(t), adaptrag.Request{Question: q, Actor: "u2"})
	if res.AnsweredBy != state.ByAggregate || res.Aggregate == nil || res.Aggregate.Value != 319 || len(res.Aggregate.Records) != 2 {
		t.Fatalf("aggregate %+v, answered by %s", res.Aggregate, res.AnsweredBy)
	}
	if !strings.Contains(res.Answer, "319") || len(res.Citations) != 2 {
		t.Errorf("answer %q cites %d records", res.Answer, len(res.Citations))
	}
}

// With a model, HyDE searches with a hypothetical passage that never
// reaches the evidence, the prompt or the answer; a rewrite that swaps an
// entity is rejected and the offline rewrite stands, with the reason
// recorded.
func TestHyDEAndModelRewrite(t *testing.T) {
	const marker = "HYPOTHETICAL-MARKER"
	srv := llmtest.NewServer(t, func(r llmtest.Request) llmtest.Reply {
		prompt := r.PromptText()
		switch {
		case strings.HasPrefix(prompt, "Write a short passage"):
			return llmtest.Reply{Content: `{"passage": "P-204 退货说明 ` + marker + ` 签收后可退"}`}
		case strings.HasPrefix(prompt, "You rewrite"):
			return llmtest.Reply{Content: `{"query": "P-205 能换吗？", "follow_up": true, "resolved": [{"mention": "这个", "value": "P-205"}], "unresolved": [], "clarify_mention": "", "clarify_candidates": []}`}
		}
		return llmtest.Reply{Content: "答案见资料 [1]。"}
	})
	f := newFixture(t)
	f.deps.Generator = newModel(t, srv)
	f.deps.Rewriter = query.NewLLM(f.deps.Generator, query.LLMConfig{})
	f.opts.HyDE = true
	res := askWith(t, f.pipeline(t), adaptrag.Request{Question: "那这个能换吗？", History: []adaptrag.Message{user("P-204 电池的售后政策是什么？")}})
	if !strings.Contains(res.Query.Text, "P-204") || strings.Contains(res.Query.Text, "P-205") {
		t.Errorf("a swapped rewrite was used: %q", res.Query.Text)
	}
	var rejected, hyde bool
	for _, st := range res.SubTasks {
		rejected = rejected || st.Kind == "rewrite" && strings.Contains(st.Err, "P-205")
		hyde = hyde || st.Kind == "hyde" && strings.Contains(st.Query, marker)
	}
	if !rejected || !hyde {
		t.Errorf("subtasks do not record the rejected rewrite (%v) and the hypothetical passage (%v): %+v", rejected, hyde, res.SubTasks)
	}
	for _, d := range res.Docs {
		if strings.Contains(d.Text, marker) {
			t.Error("the hypothetical passage reached the evidence")
		}
	}
	reqs := srv.Requests()
	if last := reqs[len(reqs)-1].PromptText(); strings.Contains(last, marker) || strings.Contains(res.Answer, marker) {
		t.Error("the hypothetical passage reached the prompt or the answer")
	}
}
