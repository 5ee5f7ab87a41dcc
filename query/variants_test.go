package query_test

import (
	"reflect"
	"testing"

	"github.com/adaptrag/adaptrag/query"
)

func TestVariants(t *testing.T) {
	tests := []struct {
		text string
		n    int
		want []string
	}{
		{"P-204 电池能换货吗？", 4, []string{"P-204 电池能换货吗？", "P-204 电池 换货"}},
		{"这款 P-204 三十天内能退吗？", 4, []string{"这款 P-204 三十天内能退吗？", "P-204 三十天 退", "这款 P-204 30天内能退吗？"}},
		{"How long is the warranty on the P-208?", 3, []string{"How long is the warranty on the P-208?", "P-208 warranty"}},
		{"What is the return window for orders over $500?", 3, []string{"What is the return window for orders over $500?", "return window orders $500"}},
		{"How long is the warranty on the P-208?", 1, []string{"How long is the warranty on the P-208?"}},
		{"How long is the warranty on the P-208?", 0, []string{"How long is the warranty on the P-208?"}},
	}
	for _, tt := range tests {
		if got := query.Variants(tt.text, tt.n); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Variants(%q, %d)\n got %q\nwant %q", tt.text, tt.n, got, tt.want)
		}
	}
}

// TestVariantsDeduplicated checks that Variants' list starts with the text
// and needs no further deduplication: deduplicating it behind the text
// keeps it as it is (the expand node relies on this to skip a second pass).
func TestVariantsDeduplicated(t *testing.T) {
	for _, text := range []string{"P-204 电池能换货吗？", "这款 P-204 三十天内能退吗？", "对比一下差旅报销和招待报销的流程差异",
		"How long is the warranty on the P-208?", "What is the return window for orders over $500?", "退货 退货", "P-204 P-204"} {
		for _, n := range []int{1, 2, 3, 4} {
			v := query.Variants(text, n)
			if len(v) == 0 || v[0] != text {
				t.Fatalf("Variants(%q, %d) = %q: does not start with the text", text, n, v)
			}
			if again := query.Dedupe(append([]string{text}, v...)); !reflect.DeepEqual(again, v) {
				t.Errorf("Variants(%q, %d) = %q, deduplicated behind the text %q", text, n, v, again)
			}
		}
	}
}

func TestDedupe(t *testing.T) {
	tests := []struct {
		in, want []string
	}{
		{[]string{"P-204 质量退货", "p-204  质量退货！", "质量退货 P-204", "", "P-205 质量退货"}, []string{"P-204 质量退货", "P-205 质量退货"}},
		{[]string{"退货期限三十天", "退货期限四十天", "退货期限 30 天"}, []string{"退货期限三十天", "退货期限四十天", "退货期限 30 天"}},
		{[]string{"return window 30 days", "Return window, 30 days?", "return window 40 days", "30 days return window"}, []string{"return window 30 days", "return window 40 days"}},
		{[]string{"order 12345 status", "order 12346 status"}, []string{"order 12345 status", "order 12346 status"}},
		{nil, []string{}},
	}
	for _, tt := range tests {
		if got := query.Dedupe(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Dedupe(%q)\n got %q\nwant %q", tt.in, got, tt.want)
		}
	}
}
