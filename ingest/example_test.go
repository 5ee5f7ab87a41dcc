package ingest_test

import (
	"context"
	"fmt"
	"testing/fstest"

	"github.com/adaptrag/adaptrag/ingest"
	"github.com/adaptrag/adaptrag/retrieval"
)

func ExampleSplitter_Split() {
	s := ingest.Splitter{ChunkSize: 20, Overlap: -1}
	for _, c := range s.Split("退货须在签收后七天内发起。质量问题可延长到十五天！运费由谁承担？质量问题由公司承担。") {
		fmt.Println(c)
	}
	// Output:
	// 退货须在签收后七天内发起。
	// 质量问题可延长到十五天！运费由谁承担？
	// 质量问题由公司承担。
}

func ExampleParse() {
	csv := "费用类型,金额区间,审批人\n差旅,5000元以上,部门负责人；财务总监\n"
	doc, err := ingest.Parse("finance/报销审批矩阵.csv", []byte(csv), ingest.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range ingest.Chunks(doc, ingest.Options{}) {
		fmt.Printf("[%s %s]\n%s\n", c.ContentType, c.Title, c.Text)
	}
	// Output:
	// [table_row 报销审批矩阵]
	// 报销审批矩阵
	// 费用类型: 差旅; 金额区间: 5000元以上; 审批人: 部门负责人；财务总监
}

func ExampleLoadFS() {
	kb := fstest.MapFS{
		"hr/leave.md":    {Data: []byte("# Leave\n\n## Annual\n\nFive days a year.\n\n## Sick\n\nBring a certificate.\n")},
		"it/vpn.html":    {Data: []byte("<h1>VPN</h1><script>x()</script><p>Use port 443.</p>")},
		"it/broken.csv":  {Data: []byte("a,b\n\"open\n")},
		"it/diagram.png": {Data: []byte{0x89}},
	}
	chunks, rep, err := ingest.LoadFS(context.Background(), kb, ingest.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range chunks {
		fmt.Printf("%s | %q\n", c.Source, c.Text)
	}
	fmt.Printf("files %d, chunks %d, skipped %d, failed %d\n", rep.Files, rep.Chunks, len(rep.Skipped), len(rep.Errors))
	// Output:
	// hr | "Leave > Annual\nFive days a year."
	// hr | "Leave > Sick\nBring a certificate."
	// it | "VPN\nUse port 443."
	// files 2, chunks 3, skipped 1, failed 1
}

func ExampleIngestFS() {
	kb := fstest.MapFS{"after_sales/returns.txt": {Data: []byte("Returns are accepted within 7 days of delivery.")}}
	store := newMemStore(8) // any retrieval.Store
	o := ingest.Options{Tenant: "acme", Embedder: &hashEmbedder{dim: 8}}
	for range 2 { // re-ingesting the same files changes nothing
		rep, err := ingest.IngestFS(context.Background(), ingest.Target{Docs: store}, kb, o)
		fmt.Println(rep.Files, rep.Chunks, err, len(store.all()))
	}
	// Output:
	// 1 1 <nil> 1
	// 1 1 <nil> 1
}

func ExampleParseFAQ() {
	csv := "问题,答案,分类\n年假有几天？,入职满一年每年 5 天。,hr\n"
	entries, err := ingest.ParseFAQ("faq.csv", []byte(csv))
	if err != nil {
		fmt.Println(err)
		return
	}
	doc := ingest.Document{ID: "faq.csv", Path: "faq.csv", FAQ: true, Entries: entries}
	for _, c := range ingest.Chunks(doc, ingest.Options{}) {
		fmt.Printf("[%s %s] %s -> %s (%s)\n", c.ContentType, c.Source, c.Text, c.Meta[retrieval.MetaAnswer], c.Meta[retrieval.MetaLocator])
	}
	// Output:
	// [faq hr] 年假有几天？ -> 入职满一年每年 5 天。 (row 2)
}
