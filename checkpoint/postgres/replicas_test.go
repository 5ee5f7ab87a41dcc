package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/adaptrag/adaptrag/checkpoint"
	"github.com/adaptrag/adaptrag/checkpoint/postgres"
	"github.com/adaptrag/adaptrag/graph"
)

// Two processes (the test binary re-executed), each with two goroutines
// sending turns at once, share one conversation thread on PostgreSQL, as
// two service replicas behind a load balancer would. A turn that loses the
// race (a conflict, or the other's run still in progress) is retried. The
// final state must hold every turn once.

const (
	replicaURLEnv  = "ADAPTRAG_REPLICA_URL"
	replicaNameEnv = "ADAPTRAG_REPLICA_NAME"
	replicaTurns   = 10 // per goroutine
)

type convState struct {
	Turns []string
	In    string
}

func TestMain(m *testing.M) {
	if u := os.Getenv(replicaURLEnv); u != "" {
		os.Exit(replica(u, os.Getenv(replicaNameEnv)))
	}
	os.Exit(m.Run())
}

func convGraph(cp graph.Checkpointer) (*graph.Runnable[convState], error) {
	think := func(_ context.Context, s convState) (convState, error) {
		time.Sleep(time.Duration(rand.IntN(3)) * time.Millisecond)
		return s, nil
	}
	answer := func(_ context.Context, s convState) (convState, error) {
		s.Turns = append(slices.Clone(s.Turns), s.In)
		return s, nil
	}
	return graph.New[convState]("conv").AddNode("think", think).AddNode("answer", answer).
		AddEdge(graph.Start, "think").AddEdge("think", "answer").AddEdge("answer", graph.End).
		Compile(graph.Config[convState]{Checkpointer: cp})
}

// turn sends one turn, retrying while the thread is busy.
func turn(ctx context.Context, r *graph.Runnable[convState], in string) error {
	carry := graph.WithCarry(func(prev, in convState) convState { in.Turns = prev.Turns; return in })
	for attempt := 0; attempt < 2000; attempt++ {
		_, err := r.Invoke(ctx, convState{In: in}, graph.WithThread("conv"), carry)
		if !errors.Is(err, graph.ErrConflict) && !errors.Is(err, graph.ErrUnfinished) {
			return err
		}
		time.Sleep(time.Duration(1+rand.IntN(4)) * time.Millisecond)
	}
	return fmt.Errorf("turn %s never got the thread", in)
}

func replica(u, name string) int {
	ctx := context.Background()
	s, err := postgres.Open(ctx, u, checkpoint.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer s.Close()
	r, err := convGraph(s)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for g := range 2 {
		wg.Go(func() {
			for i := range replicaTurns {
				if err := turn(ctx, r, name+"-"+strconv.Itoa(g)+"-"+strconv.Itoa(i)); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func TestTwoReplicasShareAThread(t *testing.T) {
	u, _ := schemaURL(t)
	ctx := context.Background()
	s, err := postgres.Open(ctx, u, checkpoint.Options{}) // creates the tables before the replicas race
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var cmds []*exec.Cmd
	for _, name := range []string{"A", "B"} {
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), replicaURLEnv+"="+u, replicaNameEnv+"="+name)
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("replica: %v", err)
		}
	}
	r, err := convGraph(s)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := r.Snapshot(ctx, "conv", "")
	if err != nil {
		t.Fatal(err)
	}
	turns := snap.State.Turns
	want := 2 * 2 * replicaTurns
	seen := map[string]bool{}
	for _, x := range turns {
		seen[x] = true
	}
	if len(turns) != want || len(seen) != want {
		t.Fatalf("%d turns (%d distinct), want %d: %v", len(turns), len(seen), want, turns)
	}
	// Turns alternate between the replicas, not one after the other.
	switches := 0
	for i := 1; i < len(turns); i++ {
		if turns[i][0] != turns[i-1][0] {
			switches++
		}
	}
	hist, err := s.List(ctx, "conv")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hist); i++ {
		if hist[i].Parent != hist[i+1].ID {
			t.Fatalf("history broken at %s", hist[i].ID)
		}
	}
	t.Logf("%d turns from 2 processes x 2 goroutines, %d switches between processes, %d checkpoints in one chain", len(turns), switches, len(hist))
}
