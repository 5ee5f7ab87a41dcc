package checkpoint_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/adaptrag/adaptrag/checkpoint"
	_ "github.com/adaptrag/adaptrag/checkpoint/postgres"
	_ "github.com/adaptrag/adaptrag/checkpoint/sqlite"
	"github.com/adaptrag/adaptrag/graph"
)

// benchState is a small conversation-sized state: a few strings.
type benchState struct {
	Question string
	Steps    []string
}

const benchSteps = 10

func benchGraph(b *testing.B, cp graph.Checkpointer, mode graph.Durability) *graph.Runnable[benchState] {
	g := graph.New[benchState]("bench")
	prev := graph.Start
	for i := range benchSteps {
		name := fmt.Sprintf("n%d", i)
		g.AddNode(name, func(_ context.Context, s benchState) (benchState, error) {
			s.Steps = append(slices.Clone(s.Steps), name)
			return s, nil
		}).AddEdge(prev, name)
		prev = name
	}
	g.AddEdge(prev, graph.End)
	r, err := g.Compile(graph.Config[benchState]{Checkpointer: cp, Durability: mode})
	if err != nil {
		b.Fatal(err)
	}
	return r
}

// BenchmarkCheckpointOverhead runs a 10-node graph on a thread, one new
// thread per run, and reports the time per step (ns/step) for each store
// and durability mode, beside the same graph without a thread.
func BenchmarkCheckpointOverhead(b *testing.B) {
	ctx := context.Background()
	stores := []struct{ name, url string }{
		{"memory", "memory:"},
		{"sqlite", "sqlite:" + filepath.Join(b.TempDir(), "bench.db")},
	}
	if u := os.Getenv("ADAPTRAG_TEST_POSTGRES"); u != "" {
		stores = append(stores, struct{ name, url string }{"postgres", u})
	}
	in := benchState{Question: "how many days of leave do I have left this year?"}
	b.Run("none", func(b *testing.B) {
		r := benchGraph(b, nil, 0)
		for b.Loop() {
			if _, err := r.Invoke(ctx, in); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchSteps), "ns/step")
	})
	for _, st := range stores {
		s, err := checkpoint.Open(ctx, st.url)
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		for _, mode := range []graph.Durability{graph.DurabilitySync, graph.DurabilityAsync, graph.DurabilityExit} {
			b.Run(st.name+"/"+mode.String(), func(b *testing.B) {
				r := benchGraph(b, s, mode)
				run := fmt.Sprintf("bench-%s-%s-%d-", st.name, mode, os.Getpid())
				i := 0
				for b.Loop() {
					i++
					if _, err := r.Invoke(ctx, in, graph.WithThread(fmt.Sprint(run, i))); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchSteps), "ns/step")
				b.StopTimer()
				for j := 1; j <= i; j++ {
					_ = s.Delete(ctx, fmt.Sprint(run, j))
				}
			})
		}
	}
}
