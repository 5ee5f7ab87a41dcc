package relevance

import (
	"slices"
	"testing"
)

func TestFacets(t *testing.T) {
	for _, c := range []struct {
		q    string
		want []string
	}{
		{"Compare annual leave and sick leave rules", []string{"Compare annual leave", "sick leave rules"}},
		{"What should I do differently for a lost laptop versus a forgotten password?", []string{"What should I do differently for a lost laptop", "a forgotten password?"}},
		{"How do travel claims differ from entertainment claims?", []string{"How do travel claims", "entertainment claims?"}},
		{"对比一下差旅报销和招待报销的流程差异", []string{"一下差旅报销", "招待报销的流程差异"}},
		{"年假与病假、婚假有什么区别", nil}, // each side too short to stand alone
		{"Why do quality returns and ordinary returns differ in who pays shipping?", []string{"Why do quality returns", "ordinary returns differ in who pays shipping?"}},
		{"Compare the warranty for headsets with the return window", []string{"Compare the warranty for headsets", "the return window"}},
		// Joined, not compared: a passage about both is wanted.
		{"退货和换货要带什么材料？", nil},
		{"Who approves travel and entertainment claims?", nil},
		{"What is the difference between returning an item and exchanging it?", []string{"What is the difference between returning an item"}},
		// No cue, or a cue inside a word or a longer word: not split.
		{"How many days of annual leave do I get?", nil},
		{"员工持股计划怎么参与？", nil},
		{"涉及客户数据的合同怎么审批？", nil},
		{"Who handles Android devices?", nil},
		{"", nil},
	} {
		if got := facets(c.q); !slices.Equal(got, c.want) {
			t.Errorf("facets(%q) = %q, want %q", c.q, got, c.want)
		}
	}
}

func FuzzFacets(f *testing.F) {
	f.Add("Compare annual leave and sick leave rules")
	f.Add("对比一下差旅报销和招待报销的流程差异")
	f.Add("İstanbul and Ankara offices versus remote")
	f.Fuzz(func(t *testing.T, q string) {
		for _, p := range facets(q) {
			if len(p) >= len(q) {
				t.Fatalf("facet %q of %q is not a part of it", p, q)
			}
		}
	})
}
