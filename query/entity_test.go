package query_test

import (
	"reflect"
	"testing"

	"github.com/adaptrag/adaptrag/query"
)

func TestEntities(t *testing.T) {
	e := func(v string, k query.EntityKind, role string) query.Entity {
		return query.Entity{Value: v, Kind: k, Role: role}
	}
	id := func(v string, k query.EntityKind) query.Entity { return e(v, k, query.RoleSubject) }
	n := func(v string, k query.EntityKind) query.Entity { return e(v, k, string(k)) }
	tests := []struct {
		text string
		want []query.Entity
	}{
		{"P-205 是去年买的。", []query.Entity{id("P-205", query.Product), e("去年", query.Date, query.RolePurchase)}},
		{"订单 A100 什么时候发货？", []query.Entity{id("A100", query.Order)}},
		{"Orders 70012 and 70019 were both late.", []query.Entity{id("70012", query.Order), id("70019", query.Order)}},
		{"工单 T-1001 和 T-1002", []query.Entity{id("T-1001", query.Order), id("T-1002", query.Order)}},
		{"Windows 更新报错 0x80070005 怎么办？", []query.Entity{id("0x80070005", query.Code)}},
		{"VPN 报错 809 怎么解决？", []query.Entity{id("809", query.Code)}},
		{"pod in CrashLoopBackOff or OOMKilled, ERR_CONNECTION_RESET", []query.Entity{id("CrashLoopBackOff", query.Code), id("OOMKilled", query.Code), id("ERR_CONNECTION_RESET", query.Code)}},
		{"Do we follow NIST 800-88 and ISO/IEC 27001:2022? CVE-2021-44228", []query.Entity{id("NIST 800-88", query.Code), id("ISO/IEC 27001:2022", query.Code), id("CVE-2021-44228", query.Code)}},
		{"报销金额超过 5000 元需要谁审批？", []query.Entity{n("5000 元", query.Amount)}},
		{"那2万元呢？那两万呢", []query.Entity{n("2万元", query.Amount), n("两万", query.Amount)}},
		{"How about $2,000 or USD 1,200?", []query.Entity{n("$2,000", query.Amount), n("USD 1,200", query.Amount)}},
		{"签收后三十天内，15日内，26 个月，两周，半年，3 business days, a 30-day window", []query.Entity{
			n("三十天", query.Duration), n("15日", query.Duration), n("26 个月", query.Duration), n("两周", query.Duration),
			n("半年", query.Duration), n("3 business days", query.Duration), n("30-day", query.Duration)}},
		{"我是 3 月 5 日签收的 SKU-3390。", []query.Entity{e("3 月 5 日", query.Date, query.RoleReceipt), id("SKU-3390", query.Product)}},
		{"I received the X-300 on March 3.", []query.Entity{id("X-300", query.Product), e("March 3", query.Date, query.RoleReceipt)}},
		{"订单 A2001 是上周五发货的。", []query.Entity{id("A2001", query.Order), e("上周五", query.Date, query.RoleShipment)}},
		{"The charger I bought last week", []query.Entity{e("last week", query.Date, query.RolePurchase)}},
		{"这个月，2024-05-01，2024年5月1日，Q3 2024, FY2024, 3天前, in 2023", []query.Entity{
			e("这个月", query.Date, query.RoleTime), e("2024-05-01", query.Date, query.RoleTime), e("2024年5月1日", query.Date, query.RoleTime),
			e("Q3 2024", query.Date, query.RoleTime), e("FY2024", query.Date, query.RoleTime), e("3天前", query.Date, query.RoleTime),
			e("2023", query.Date, query.RoleTime)}},
		{"税率 10% 还是百分之十五？20 percent", []query.Entity{n("10%", query.Percent), n("百分之十五", query.Percent), n("20 percent", query.Percent)}},
		{"包裹超过 30 公斤，买 3 件，10GB", []query.Entity{n("30 公斤", query.Number), n("3 件", query.Number), n("10GB", query.Number)}},
		{"ＳＫＵ－３３８１ ３０天", []query.Entity{id("SKU-3381", query.Product), n("30天", query.Duration)}},
		{"How do I reset my VPN password?", nil},
		{"一下 一些 统一 第一", nil},
		{"3号楼 iPhone 2FA", []query.Entity{n("3号", query.Number)}},
	}
	for _, tt := range tests {
		if got := query.Entities(tt.text); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Entities(%q)\n got %+v\nwant %+v", tt.text, got, tt.want)
		}
	}
}

// Short model codes count as ids only with a cue or beside another code of
// their shape; alone they are quarters, halves or formats.
func TestShortCodes(t *testing.T) {
	for q, want := range map[string]int{
		"Which plan includes roaming, P1 or P2?": 2,
		"套餐 P1 和 P2 哪个便宜":                        2,
		"型号 X5 的保修期":                             1,
		"Q3 revenue":                             0, // a quarter, not a product
		"upgrade to 5G":                          0,
	} {
		n := 0
		for _, e := range query.Entities(q) {
			if e.Kind == query.Product {
				n++
			}
		}
		if n != want {
			t.Errorf("%q: %d product ids %+v, want %d", q, n, query.Entities(q), want)
		}
	}
}
