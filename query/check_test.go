package query_test

import (
	"errors"
	"testing"

	"github.com/adaptrag/adaptrag/query"
)

func TestCheck(t *testing.T) {
	h := []query.Message{u("P-204 电池的售后政策是什么？"), a("P-204 电池签收后 15 天内出现质量问题可以退货。")}
	tests := []struct {
		question, candidate string
		history             []query.Message
		op, entity, by      string // op "" means accepted
	}{
		{"那这个能换吗？", "P-204 电池能换货吗？", h, "", "", ""},
		{"那这个能换吗？", "P-204 电池签收 15 天内能换货吗？", h, "", "", ""},
		{"三十天内能退吗？", "P204 30 天内能退吗？", h, "", "", ""},
		{"What if it has been 40 days?", "What if it has been forty days since delivery?", nil, "", "", ""},
		{"What if it has been 40 days?", "What if the return window has passed?", nil, "drop", "40 days", ""},
		{"What if it has been 40 days?", "What if it has been 30 days since delivery?", []query.Message{u("The return window is 30 days, right?")}, "swap", "40 days", "30 days"},
		{"P-205 呢？", "P-204 的保修期多久？", h, "swap", "P-205", "P-204"},
		{"那这个能换吗？", "P-204 或 P-206 能换吗？", h, "add", "P-206", ""},
		{"报销 2万元 需要谁批？", "报销 20,000元 需要谁批？", nil, "", "", ""},
		{"去年买的能退吗？", "last year 买的能退吗？", nil, "", "", ""},
		{"去年买的能退吗？", "前年买的能退吗？", nil, "swap", "去年", "前年"},
		{"订单 A100 能退吗？", "", nil, "empty", "", ""},
	}
	for _, tt := range tests {
		err := query.Check(tt.question, tt.history, tt.candidate)
		if tt.op == "" {
			if err != nil {
				t.Errorf("Check(%q, %q) = %v, want accepted", tt.question, tt.candidate, err)
			}
			continue
		}
		var re *query.RejectError
		if !errors.As(err, &re) || !errors.Is(err, query.ErrRewriteRejected) {
			t.Errorf("Check(%q, %q) = %v, want a rejection", tt.question, tt.candidate, err)
			continue
		}
		if re.Op != tt.op || re.Entity != tt.entity || re.By != tt.by {
			t.Errorf("Check(%q, %q) = %+v, want %s %q %q", tt.question, tt.candidate, re, tt.op, tt.entity, tt.by)
		}
	}
}
