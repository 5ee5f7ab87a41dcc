package query_test

import (
	"context"
	"testing"

	"github.com/adaptrag/adaptrag/query"
)

// benchHistory is a six-turn conversation (three exchanges).
var benchHistory = []query.Message{
	{Role: "user", Content: "我上周在门店买了 HB-20 耳机，订单号 A2001。"},
	{Role: "assistant", Content: "好的，HB-20 支持 7 天无理由退货，签收后 15 天内有质量问题可以换货。"},
	{Role: "user", Content: "退货运费谁出？"},
	{Role: "assistant", Content: "质量问题由商家承担运费，其他情况由买家承担。"},
	{Role: "user", Content: "HB-30 的保修期多久？"},
	{Role: "assistant", Content: "HB-30 整机保修一年。"},
}

const benchQuestion = "那 HB-20 呢？"

// BenchmarkUnderstand measures what a pipeline does offline for one
// follow-up: rewrite it with a six-turn history, then read the entities,
// the parts and the shape of the standalone query.
func BenchmarkUnderstand(b *testing.B) {
	ctx := context.Background()
	var off query.Offline
	b.ReportAllocs()
	for b.Loop() {
		r, _ := off.Rewrite(ctx, benchQuestion, benchHistory)
		_ = query.Entities(r.Text)
		_ = query.Split(r.Text)
		_ = query.ShapeOf(r.Text)
	}
}

func BenchmarkEntities(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_ = query.Entities("我是 3 月 5 日签收的 SKU-3390，订单 A2001，报销 5000 元，30 天内能退吗？")
	}
}
