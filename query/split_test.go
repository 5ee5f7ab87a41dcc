package query_test

import (
	"reflect"
	"testing"

	"github.com/adaptrag/adaptrag/query"
)

func TestSplit(t *testing.T) {
	tests := []struct {
		text string
		want []string
	}{
		{"退货要在几天内发起，电子发票怎么申请？", []string{"退货要在几天内发起？", "电子发票怎么申请？"}},
		{"退货时限和发票申请方法分别是什么", []string{"退货时限是什么？", "发票申请方法是什么？"}},
		{"报销单、借款单和付款单分别由谁审批？", []string{"报销单由谁审批？", "借款单由谁审批？", "付款单由谁审批？"}},
		{"What are the core hours, and how many remote days are allowed?", []string{"What are the core hours?", "How many remote days are allowed?"}},
		{"What are the core hours and how many remote days are allowed?", []string{"What are the core hours?", "How many remote days are allowed?"}},
		{"What is the per diem for Tokyo, how do I book a hotel, and who approves international trips?", []string{"What is the per diem for Tokyo?", "How do I book a hotel?", "Who approves international trips?"}},
		{"What are the deadlines for expense claims and mileage claims, respectively?", []string{"What are the deadlines for expense claims?", "What are the deadlines for mileage claims?"}},
		{"入职需要带哪些材料？试用期多长？", []string{"入职需要带哪些材料？", "试用期多长？"}},
		{"SKU-3381 的保修期多久，支持以旧换新吗？", []string{"SKU-3381 的保修期多久？", "SKU-3381 支持以旧换新吗？"}},
		{"我想问下年假怎么申请，还有病假要什么证明", []string{"我想问下年假怎么申请？", "病假要什么证明？"}},
		// One ask.
		{"订单 A100 的产品适用哪份特殊规则", nil},
		{"Which laptop model is assigned to employee E-1207, and what is its warranty period?", nil},
		{"查一下工单 T-1001 的负责人，然后告诉我他的联系电话", nil},
		{"Who is older, the director of Jaws or the director of Alien?", nil},
		{"我是新员工，年假有几天？", nil},
		{"If I leave in March, is my bonus paid?", nil},
		{"你好，请问年假怎么申请？", nil},
		{"退货要几天，怎么退？", nil},
		{"What is the difference between annual leave and sick leave?", nil},
		{"退货和换货的运费谁出？", nil},
		{"", nil},
	}
	for _, tt := range tests {
		if got := query.Split(tt.text); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Split(%q)\n got %q\nwant %q", tt.text, got, tt.want)
		}
	}
}
