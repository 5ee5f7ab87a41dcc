package router_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/adaptrag/adaptrag/router"
)

func Example() {
	clf, err := router.NewOffline()
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, q := range []string{
		"你好，你能做什么？",
		"退货要在几天内发起？",
		"对比一下差旅报销和招待报销的流程差异",
		"你好，顺便问下电子发票多久能开好",
	} {
		p, err := clf.Classify(context.Background(), q)
		d := router.Decide(p, err, router.DefaultMinConfidence)
		fmt.Printf("%s %s -> %s\n", p.QueryType, p.Complexity, d.Route)
	}
	// Output:
	// chitchat simple -> chitchat
	// factual simple -> factual
	// analytical deep -> analytical
	// factual simple -> factual
}

func ExampleDecide() {
	// A failed classification takes the full pipeline.
	d := router.Decide(router.Profile{}, errors.New("timeout"), 0.7)
	fmt.Println(d.Route, d.Fallback, d.Cause)
	// So does an unsure one; the profile is kept for the log.
	p := router.Profile{QueryType: router.Chitchat, Complexity: router.Simple, Confidence: 0.55}
	d = router.Decide(p, nil, 0.7)
	fmt.Println(d.Route, d.Fallback, d.Profile.QueryType)
	// Output:
	// analytical true classifier error: timeout
	// analytical true chitchat
}

func ExampleEvaluate() {
	clf, _ := router.NewOffline()
	items := []router.Labeled{
		{Text: "hello there", Label: string(router.Chitchat)},
		{Text: "how long does a refund take", Label: string(router.Factual)},
		{Text: "compare the approval process of travel and entertainment expenses", Label: string(router.Analytical)},
	}
	rep := router.Evaluate(context.Background(), clf, items)
	fmt.Printf("n=%d accuracy=%.2f substantive_to_chitchat=%.2f\n", rep.N, rep.Accuracy, rep.SubstantiveToChitchat)
	// Output: n=3 accuracy=1.00 substantive_to_chitchat=0.00
}
