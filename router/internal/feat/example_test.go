package feat_test

import (
	"fmt"

	"github.com/adaptrag/adaptrag/router/internal/feat"
)

func ExampleAnalyze() {
	an := feat.Analyze("你好，顺便问下：电子发票多久能开好？")
	fmt.Printf("%q %v %q\n", an.Norm, an.Greeting, an.Rest)
	fmt.Println(feat.Normalize("What's the VPN address？"))
	// Output:
	// "你好 顺便问下 电子发票多久能开好" true "电子发票多久能开好"
	// what is the vpn address
}
