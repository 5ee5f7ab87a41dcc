package query_test

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/adaptrag/adaptrag/query"
)

var fuzzSeeds = []string{
	"P-205 是去年买的。", "那这个能换吗？", "What about P-208?", "Can it be exchanged?", "那2万元呢？",
	"ＳＫＵ－３３８１ ３０天", "0x", "0x8007000", "ISO", "ISO 2", "$", "$5k", "百分之", "百分之十", "三十天前",
	"2024-13-45", "12:99", "#12", "A-", "-1", "1,000,00", "1.2.3", "March", "May 2024", "Q5", "FY", "订单：A100、A101",
	"\xff\xfe", "它的它的它", "this one that one which one", "What if", "分别", "respectively", "、和与及",
	"好的，谢谢！那 P-205 呢", "  ,,,  ", "哪个哪个", "the the the", "这个 这个 P-204",
}

// FuzzUnderstand checks that no input makes the offline functions panic,
// that entity values come from the text, and that the properties the API
// promises hold: the original first among variants, a rewrite keeps the
// question's entities, Split returns nil or two parts or more.
func FuzzUnderstand(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s, "P-204 的保修期多久？")
	}
	f.Fuzz(func(t *testing.T, q, h string) {
		es := query.Entities(q)
		folded := strings.Join(strings.Fields(foldWidth(q)), " ")
		for _, e := range es {
			if e.Value == "" || e.Kind == "" || e.Role == "" {
				t.Fatalf("Entities(%q): incomplete %+v", q, e)
			}
			if utf8.ValidString(q) && !strings.Contains(folded, e.Value) {
				t.Fatalf("Entities(%q): value %q not in the text", q, e.Value)
			}
		}
		hist := []query.Message{{Role: "user", Content: h}, {Role: "assistant", Content: h}}
		r, err := query.Offline{}.Rewrite(context.Background(), q, hist)
		if err != nil {
			t.Fatal(err)
		}
		if r.Clarify == nil && r.Rewritten && utf8.ValidString(q) && utf8.ValidString(h) {
			if err := query.Check(q, hist, r.Text); err != nil && strings.TrimSpace(q) != "" {
				t.Fatalf("Rewrite(%q | %q) = %q fails Check: %v", q, h, r.Text, err)
			}
		}
		if parts := query.Split(q); len(parts) == 1 {
			t.Fatalf("Split(%q) = one part", q)
		}
		_ = query.ShapeOf(q)
		if v := query.Variants(q, 3); len(v) == 0 || v[0] != q || len(v) > 3 {
			t.Fatalf("Variants(%q) = %q", q, v)
		}
	})
}

// foldWidth folds full-width ASCII as the package does.
func foldWidth(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\u3000':
			return ' '
		case r >= '\uFF01' && r <= '\uFF5E':
			return r - 0xFEE0
		case r == '\uFFE5':
			return '¥'
		}
		return r
	}, s)
}
