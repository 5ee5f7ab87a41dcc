package vector

import (
	"testing"

	"github.com/adaptrag/adaptrag/internal/workload"
)

func BenchmarkBuildProf(b *testing.B) {
	w := workload.NewClustered(200000, workload.ClusterOptions{})
	for b.Loop() {
		ix := New(384, Options{})
		for i, v := range w.Docs {
			ix.Add(uint32(i), v)
		}
	}
}
