package analysis_test

import (
	"fmt"

	"github.com/adaptrag/adaptrag/retrieval/analysis"
)

func ExampleDefault() {
	fmt.Println(analysis.Default().Tokens("Wi-Fi密码是5000"))
	// Output: [wi fi 密 密码 码 码是 是 5000]
}

func ExamplePipeline() {
	// A Chinese-aware analyzer that keeps case.
	an := analysis.Pipeline{Filters: []analysis.Filter{analysis.Width{}, analysis.CJKBigram{}}}
	fmt.Println(an.Tokens("ＧＯ语言"))
	// Output: [GO 语 语言 言]
}
