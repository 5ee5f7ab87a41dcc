package postgres_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/adaptrag/adaptrag/checkpoint"
	"github.com/adaptrag/adaptrag/checkpoint/checkpointtest"
	"github.com/adaptrag/adaptrag/checkpoint/postgres"
	"github.com/adaptrag/adaptrag/graph"
)

// schemaURL returns ADAPTRAG_TEST_POSTGRES with a fresh schema of its own
// as search_path (dropped at the end), and an admin connection.
func schemaURL(t testing.TB, params ...string) (string, *sql.DB) {
	t.Helper()
	base := os.Getenv("ADAPTRAG_TEST_POSTGRES")
	if base == "" {
		if os.Getenv("ADAPTRAG_REQUIRE_POSTGRES") == "1" {
			t.Fatal("ADAPTRAG_REQUIRE_POSTGRES=1 but ADAPTRAG_TEST_POSTGRES is unset")
		}
		t.Skip("PostgreSQL tests need ADAPTRAG_TEST_POSTGRES (export ADAPTRAG_TEST_POSTGRES=$(scripts/postgres.sh))")
	}
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	schema := fmt.Sprintf("ckpt_%x", rand.Uint64())
	if _, err := admin.Exec("CREATE SCHEMA " + schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		admin.Exec("DROP SCHEMA " + schema + " CASCADE")
		admin.Close()
	})
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	return base + sep + strings.Join(append([]string{"search_path=" + schema}, params...), "&"), admin
}

func TestConformance(t *testing.T) {
	checkpointtest.Run(t, func(t *testing.T) graph.Checkpointer {
		u, _ := schemaURL(t)
		s, err := checkpoint.Open(context.Background(), u)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

// Dropped connections (langgraph#3716, #5675): the server terminates every
// connection of the store in the middle of a run, before each step; the run
// finishes and the thread's history is whole.
func TestTerminatedConnections(t *testing.T) {
	app := fmt.Sprintf("adaptrag_kill_%x", rand.Uint32())
	u, admin := schemaURL(t, "application_name="+app)
	ctx := context.Background()
	s, err := postgres.Open(ctx, u, checkpoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.DB().SetMaxIdleConns(4)
	var killed atomic.Int64
	kill := func(ctx context.Context, st []string) ([]string, error) {
		var n int64
		if err := admin.QueryRowContext(ctx, "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1", app).Scan(&n); err != nil {
			return st, err
		}
		killed.Add(n)
		return append(slices.Clone(st), "step"), nil
	}
	g := graph.New[[]string]("kill")
	prev := graph.Start
	const steps = 6
	for i := range steps {
		name := fmt.Sprintf("n%d", i)
		g.AddNode(name, kill).AddEdge(prev, name)
		prev = name
	}
	g.AddEdge(prev, graph.End)
	r, err := g.Compile(graph.Config[[]string]{Checkpointer: s})
	if err != nil {
		t.Fatal(err)
	}
	out, err := r.Invoke(ctx, nil, graph.WithThread("t"))
	if err != nil {
		t.Fatalf("run with terminated connections: %v", err)
	}
	if len(out) != steps {
		t.Fatalf("%d steps, want %d", len(out), steps)
	}
	if killed.Load() < steps-1 {
		t.Fatalf("only %d connections terminated; the test did not test", killed.Load())
	}
	hist, err := s.List(ctx, "t")
	if err != nil || len(hist) != steps+1 {
		t.Fatalf("%d checkpoints (%v), want %d", len(hist), err, steps+1)
	}
	for i := 0; i+1 < len(hist); i++ {
		if hist[i].Parent != hist[i+1].ID {
			t.Fatalf("history broken at %s", hist[i].ID)
		}
	}
	t.Logf("%d connections terminated", killed.Load())
}
