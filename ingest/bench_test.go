package ingest_test

import (
	"context"
	"strings"
	"testing"

	"github.com/adaptrag/adaptrag/ingest"
	"github.com/adaptrag/adaptrag/samplekb"
)

func BenchmarkSplit(b *testing.B) {
	text := strings.Repeat("员工出差前必须提交出差申请，由直属上级审批。Claims above 5,000 yuan need the finance director. ", 500)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		ingest.Splitter{}.Split(text)
	}
}

func BenchmarkLoadSampleKB(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := ingest.LoadFS(context.Background(), samplekb.FS(), ingest.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
