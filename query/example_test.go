package query_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/adaptrag/adaptrag/llm"
	"github.com/adaptrag/adaptrag/llm/llmtest"
	"github.com/adaptrag/adaptrag/query"
)

func ExampleEntities() {
	for _, e := range query.Entities("P-205 是去年买的，订单 A100 报销了 2万元，30 天内还能退吗？") {
		fmt.Printf("%-8s %-8s %s\n", e.Kind, e.Role, e.Value)
	}
	// Output:
	// product  subject  P-205
	// date     purchase 去年
	// order    subject  A100
	// amount   amount   2万元
	// duration duration 30 天
}

func ExampleOffline_Rewrite() {
	history := []query.Message{
		{Role: "user", Content: "P-204 电池的售后政策是什么？"},
		{Role: "assistant", Content: "P-204 电池签收后 15 天内出现质量问题可以退货。"},
	}
	r, _ := query.Offline{}.Rewrite(context.Background(), "那这个能换吗？", history)
	fmt.Println(r.Text, r.Rule, r.Resolved)

	r, _ = query.Offline{}.Rewrite(context.Background(), "P-205 呢？", history)
	fmt.Println(r.Text, r.Rule)

	r, _ = query.Offline{}.Rewrite(context.Background(), "电子发票多久能开好？", history)
	fmt.Println(r.Text, r.Rule)

	r, _ = query.Offline{}.Rewrite(context.Background(), "现在能退吗？", []query.Message{{Role: "user", Content: "P-205 是去年买的。"}})
	fmt.Println(r.Text, r.Rule)
	// Output:
	// 那P-204能换吗？ reference [{这个 P-204 0}]
	// P-205 电池的售后政策是什么？ ellipsis:entity
	// 电子发票多久能开好？ standalone
	// P-205（去年购买）：现在能退吗？ carry
}

func ExampleOffline_Rewrite_clarify() {
	history := []query.Message{{Role: "user", Content: "I bought a P-204 and a P-205 last week."}}
	r, _ := query.Offline{}.Rewrite(context.Background(), "Can I return it?", history)
	fmt.Printf("%s: ask which of %v %q means\n", r.Rule, r.Clarify.Candidates, r.Clarify.Mention)
	// Output:
	// clarify: ask which of [P-204 P-205] "it" means
}

func ExampleSplit() {
	fmt.Printf("%q\n", query.Split("退货时限和发票申请方法分别是什么"))
	fmt.Printf("%q\n", query.Split("How do I reset my VPN password, and who approves expenses over 5000?"))
	fmt.Printf("%q\n", query.Split("订单 A100 的产品适用哪份特殊规则？"))
	// Output:
	// ["退货时限是什么？" "发票申请方法是什么？"]
	// ["How do I reset my VPN password?" "Who approves expenses over 5000?"]
	// []
}

func ExampleShapeOf() {
	fmt.Printf("%+v\n", query.ShapeOf("这个月所有 P-204 订单的退款总额"))
	fmt.Printf("%+v\n", query.ShapeOf("总结所有供应商投诉的主要原因"))
	fmt.Printf("%+v\n", query.ShapeOf("How many remote days are allowed per week?"))
	// Output:
	// {Aggregate:true Op:sum Coverage:false Cue:总额}
	// {Aggregate:false Op: Coverage:true Cue:总结}
	// {Aggregate:false Op: Coverage:false Cue:}
}

func ExampleVariants() {
	for _, v := range query.Variants("P-204 质量问题三十天内能退吗？", 5) {
		fmt.Println(v)
	}
	// Output:
	// P-204 质量问题三十天内能退吗？
	// P-204 质量问题 三十天 退
	// P-204 质量问题30天内能退吗？
}

func ExampleDedupe() {
	fmt.Printf("%q\n", query.Dedupe([]string{"P-204 质量退货", "质量退货 P-204", "P-205 质量退货", "退货期限三十天", "退货期限四十天"}))
	// Output:
	// ["P-204 质量退货" "P-205 质量退货" "退货期限三十天" "退货期限四十天"]
}

func ExampleCheck() {
	history := []query.Message{{Role: "user", Content: "P-204 的保修期多久？"}}
	fmt.Println(query.Check("P-205 呢？", history, "P-205 的保修期多久？"))
	fmt.Println(query.Check("P-205 呢？", history, "P-204 的保修期多久？"))
	err := query.Check("What if it has been 40 days?", nil, "What if the return window has passed?")
	fmt.Println(err, errors.Is(err, query.ErrRewriteRejected))
	// Output:
	// <nil>
	// query: rewrite rejected: swaps "P-205" for "P-204"
	// query: rewrite rejected: drops "40 days" true
}

func ExampleEvaluate() {
	cases, _ := query.ReadCases(strings.NewReader(`
{"id":"a","history":[{"role":"user","content":"P-204 的保修期多久？"}],"question":"P-205 呢？","expect":{"outcome":"answer","must_mention":["P-205","保修"],"must_not_mention":["P-204"]}}
{"id":"b","history":[{"role":"user","content":"P-204 和 P-205 哪个更便宜？"}],"question":"这个能换吗？","expect":{"outcome":"clarify","candidates":["P-204","P-205"]}}
{"id":"c","history":[],"question":"退货要在几天内发起，电子发票怎么申请？","expect":{"outcome":"answer","subquestions":2}}`))
	rep := query.Evaluate(context.Background(), query.Offline{}, cases)
	_ = rep.WriteText(os.Stdout)
	// Output:
	// cases                3 (rewriter errors 0)
	// cases passed         3/3
	// outcome accuracy     1.000
	// entity recall        1.000 (2/2)
	// wrong-entity rate    0.000 (0/1)
	// clarify precision    1.000 (1/1)
	// clarify recall       1.000 (1/1)
	// candidates exact     1.000 (1/1)
	// sub-question recall  1.000 (1/1)
	// chains kept whole    1.000 (0/0)
	// rules fired          clarify=1 ellipsis:entity=1 no_history=1
}

func ExampleLLM_Rewrite() {
	// A loopback server stands in for the model; it swaps the product.
	srv := llmtest.Start(llmtest.Text(`{"query":"P-204 的保修期多久？","follow_up":true,"resolved":[],"unresolved":[],"clarify_mention":"","clarify_candidates":[]}`))
	defer srv.Close()
	l, err := query.NewOpenAI(llm.Config{BaseURL: srv.URL}, query.LLMConfig{})
	if err != nil {
		panic(err)
	}
	var m llm.Meter
	history := []query.Message{{Role: "user", Content: "P-204 的保修期多久？"}}
	r, err := l.Rewrite(llm.WithMeter(context.Background(), &m), "P-205 呢？", history)
	fmt.Println(r.Text, r.Rule)
	fmt.Println(err)
	fmt.Println(errors.Is(err, query.ErrRewriteFailed), errors.Is(err, query.ErrRewriteRejected), m.Usage().InputTokens > 0)
	// Output:
	// P-205 呢？ llm_failed
	// query: rewrite failed: query: rewrite rejected: swaps "P-205" for "P-204"
	// true true true
}

func ExampleLLM_Variants() {
	// The model's second variant swaps the product: it is left out.
	srv := llmtest.Start(llmtest.Text(`{"variants":["P-205 售后寄回费用由谁承担","P-204 质量退货运费","P-205 瑕疵商品运输成本"]}`))
	defer srv.Close()
	l, _ := query.NewOpenAI(llm.Config{BaseURL: srv.URL}, query.LLMConfig{})
	vs, err := l.Variants(context.Background(), "P-205 质量问题退货运费谁出？", 4)
	fmt.Printf("%q %v\n", vs, err)
	// Output:
	// ["P-205 质量问题退货运费谁出？" "P-205 售后寄回费用由谁承担" "P-205 瑕疵商品运输成本"] <nil>
}

func ExampleLLM_Hypothetical() {
	srv := llmtest.Start(llmtest.Text(`{"passage":"P-205 经核实存在质量问题的，签收后三十天内退货，寄回运费由商家承担。"}`))
	defer srv.Close()
	l, _ := query.NewOpenAI(llm.Config{BaseURL: srv.URL}, query.LLMConfig{})
	p, err := l.Hypothetical(context.Background(), "P-205 质量问题运费谁出？")
	fmt.Println(p, err)
	// Output:
	// P-205 经核实存在质量问题的，签收后三十天内退货，寄回运费由商家承担。 <nil>
}
