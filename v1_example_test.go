package adaptrag_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/adaptrag/adaptrag"
)

// V1 turns a result into the stable wire format that the service returns
// and "adaptrag ask --json" prints.
func ExampleResult_V1() {
	k, emb := openSample()
	defer k.Close()
	p, err := adaptrag.New(context.Background(), adaptrag.Deps{Docs: k.Docs, FAQ: k.FAQ, Embedder: emb}, adaptrag.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := p.Ask(context.Background(), adaptrag.Request{Question: "退货要在几天内发起？"})
	if err != nil {
		fmt.Println(err)
		return
	}
	v := res.V1()
	fmt.Println(v.Version, v.AnsweredBy, v.Route.QueryType, v.Plan.Mode)
	fmt.Println(v.Citations[0].Origin, "·", v.Citations[0].Locator)
	b, _ := json.Marshal(v)
	var fields map[string]json.RawMessage
	_ = json.Unmarshal(b, &fields)
	_, debug := fields["debug"]
	fmt.Println("debug record:", debug)
	// Output:
	// v1 extractive factual dense
	// after_sales/退换货政策.md · 星桥电子退换货与售后政策 > 退货期限
	// debug record: false
}
