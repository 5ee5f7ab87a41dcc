package query_test

import (
	"testing"

	"github.com/adaptrag/adaptrag/query"
)

func TestShapeOf(t *testing.T) {
	tests := []struct {
		text     string
		op       string
		coverage bool
	}{
		{"这个月所有 P-204 订单的退款总额是多少？", query.OpSum, false},
		// How long, not how many records or how much in all.
		{"请问年假一共有多少天", "", false},
		{"How many days of annual leave do I get in total?", "", false},
		{"How many leave days are there altogether?", "", false},
		{"How many days of leave did the team take in total this month?", query.OpSum, false},
		{"P-204 一共有多少笔订单", query.OpCount, false},
		{"What was the total refund amount for P-204 orders last month?", query.OpSum, false},
		{"上个月一共退了多少单？", query.OpCount, false},
		{"How many tickets were opened last week?", query.OpCount, false},
		{"What is the total number of employees in Shanghai?", query.OpCount, false},
		{"列出所有未结清的发票", query.OpListAll, false},
		{"List all orders shipped to Berlin in May.", query.OpListAll, false},
		{"总结所有供应商投诉的主要原因", "", true},
		{"Summarize the main reasons across all supplier complaints.", "", true},
		// Rules that mention numbers are not aggregates.
		{"How many remote days are allowed per week?", "", false},
		{"每年能报销几次体检？", "", false},
		{"报销超过 5000 元需要谁审批？", "", false},
		{"年假有几天？", "", false},
		{"总结一下差旅报销流程", "", false},
	}
	for _, tt := range tests {
		s := query.ShapeOf(tt.text)
		if s.Op != tt.op || s.Aggregate != (tt.op != "") || s.Coverage != tt.coverage {
			t.Errorf("ShapeOf(%q) = %+v, want op %q coverage %v", tt.text, s, tt.op, tt.coverage)
		}
		if (s.Aggregate || s.Coverage) && s.Cue == "" {
			t.Errorf("ShapeOf(%q): no cue", tt.text)
		}
	}
}
