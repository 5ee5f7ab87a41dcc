package samplekb

import (
	"bytes"
	"embed"
	"time"

	"github.com/adaptrag/adaptrag/lookup"
)

//go:embed tables
var tables embed.FS

// Today is the day the sample's orders are as of: the sample's look-up
// counts "this month" from it, so its examples stay reproducible.
var Today = time.Date(2026, 12, 15, 0, 0, 0, 0, time.UTC)

// Lookup returns the sample's structured data: orders (each readable only
// by its owner, the actor u1 to u4) and products, for questions that depend
// on a record ("订单 A100 的产品适用哪份特殊规则") or need a total over every
// record ("这个月所有 P-204 订单的退款总额"). Its clock is fixed to Today.
func Lookup() *lookup.Store {
	load := func(name string, o lookup.TableOptions) *lookup.Table {
		b, err := tables.ReadFile("tables/" + name)
		if err != nil {
			panic("samplekb: " + err.Error())
		}
		o.Origin = name
		t, err := lookup.LoadCSV(bytes.NewReader(b), o)
		if err != nil { // the embedded tables are checked by the package's tests
			panic("samplekb: " + err.Error())
		}
		return t
	}
	orders := load("orders.csv", lookup.TableOptions{
		Kind: "order", Aliases: []string{"订单", "order", "orders"}, Key: "order_id", Owner: "owner", Date: "order_date",
		Fields: map[string][]string{"refund": {"退款", "refund", "refunds"}, "amount": {"金额", "销售额", "amount", "sales"}},
		Unit:   map[string]string{"refund": "CNY", "amount": "CNY"}, CaseFoldKey: true,
	})
	products := load("products.csv", lookup.TableOptions{
		Kind: "product", Aliases: []string{"产品", "商品", "product", "products"}, Key: "product_id", CaseFoldKey: true,
	})
	return lookup.New(func() time.Time { return Today }, orders, products)
}
