package sqlite_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/adaptrag/adaptrag/checkpoint/sqlite"
	"github.com/adaptrag/adaptrag/graph"
)

// The kill test re-executes the test binary as a child that runs (or
// resumes) a long thread on a SQLite file and is killed with SIGKILL at
// random moments, inside steps and between them (while a checkpoint is
// being written). After every kill a new child resumes the thread. The
// final state must hold every step exactly once, in order.

const (
	killChildEnv = "ADAPTRAG_KILL_CHILD" // path of the database: run as the child
	killModeEnv  = "ADAPTRAG_KILL_MODE"
	killStepsEnv = "ADAPTRAG_KILL_STEPS"
)

type killState struct {
	Steps []int
}

func TestMain(m *testing.M) {
	if path := os.Getenv(killChildEnv); path != "" {
		os.Exit(killChild(path))
	}
	os.Exit(m.Run())
}

func killGraph(cp graph.Checkpointer, mode graph.Durability, killSteps int) (*graph.Runnable[killState], error) {
	g := graph.New[killState]("kill")
	prev := graph.Start
	for i := range killSteps {
		name := fmt.Sprintf("s%02d", i)
		g.AddNode(name, func(_ context.Context, s killState) (killState, error) {
			time.Sleep(time.Duration(rand.IntN(2000)) * time.Microsecond) // work: a kill may land here
			s.Steps = append(slices.Clone(s.Steps), i)
			return s, nil
		}).AddEdge(prev, name)
		prev = name
	}
	g.AddEdge(prev, graph.End)
	return g.Compile(graph.Config[killState]{Checkpointer: cp, Durability: mode, MaxSteps: killSteps})
}

// killChild runs or resumes the thread; exit code 0 when it is done.
func killChild(path string) int {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer s.Close()
	mode, _ := strconv.Atoi(os.Getenv(killModeEnv))
	steps, _ := strconv.Atoi(os.Getenv(killStepsEnv))
	r, err := killGraph(s, graph.Durability(mode), steps)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	// Tell the parent the run starts now: its kill timer counts from here,
	// not from process start, which the race detector makes slow.
	fmt.Println("ready")
	_, err = r.Resume(ctx, "t", nil)
	if errors.Is(err, graph.ErrNothingToResume) {
		if last, lerr := s.Latest(ctx, "t"); lerr == nil && last.Status == graph.StatusDone {
			return 0
		}
		_, err = r.Invoke(ctx, killState{}, graph.WithThread("t"))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	return 0
}

// readyWriter closes ready once the child has printed its ready line.
type readyWriter struct {
	buf   []byte
	ready chan struct{}
}

func (w *readyWriter) Write(p []byte) (int, error) {
	if w.ready != nil {
		w.buf = append(w.buf, p...)
		if bytes.Contains(w.buf, []byte("ready\n")) {
			close(w.ready)
			w.ready = nil
		}
	}
	return len(p), nil
}

func TestKillAndResume(t *testing.T) {
	kills, steps := 6, 40
	if n, err := strconv.Atoi(os.Getenv("ADAPTRAG_CHECKPOINT_KILLS")); err == nil && n > 0 {
		kills, steps = n, max(40, 8*n) // long enough for every kill to land in the run
	}
	if testing.Short() {
		kills = 2
	}
	for _, mode := range []graph.Durability{graph.DurabilitySync, graph.DurabilityAsync} {
		t.Run(mode.String(), func(t *testing.T) { killRun(t, mode, kills, steps) })
	}
}

func killRun(t *testing.T, mode graph.Durability, kills, killSteps int) {
	path := filepath.Join(t.TempDir(), "kill.db")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	child := func() *exec.Cmd {
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), killChildEnv+"="+path, killModeEnv+"="+strconv.Itoa(int(mode)), killStepsEnv+"="+strconv.Itoa(killSteps))
		cmd.Stderr = os.Stderr
		return cmd
	}
	done, killed, midRun := false, 0, 0
	progress := func() int {
		s, err := sqlite.Open(context.Background(), path, sqlite.Options{})
		if err != nil {
			return -1
		}
		defer s.Close()
		c, err := s.Latest(context.Background(), "t")
		if err != nil {
			return 0
		}
		return c.Step
	}
	for killed < kills && !done {
		cmd := child()
		ready := make(chan struct{})
		cmd.Stdout = &readyWriter{ready: ready}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		select {
		case <-ready:
		case err := <-exited: // failed before its run began
			t.Fatalf("child failed: %v", err)
		case <-time.After(time.Minute):
			_ = cmd.Process.Kill()
			t.Fatal("child did not start within a minute")
		}
		select {
		case err := <-exited:
			if err != nil {
				t.Fatalf("child failed: %v", err)
			}
			done = true
		case <-time.After(time.Duration(rand.IntN(60)) * time.Millisecond):
			_ = cmd.Process.Kill() // SIGKILL
			<-exited
			killed++
			if p := progress(); p > 0 && p < killSteps {
				midRun++
			}
		}
	}
	if !done {
		if err := child().Run(); err != nil {
			t.Fatalf("final child: %v", err)
		}
	}
	ctx := context.Background()
	s, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r, err := killGraph(s, mode, killSteps)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := r.Snapshot(ctx, "t", "")
	if err != nil {
		t.Fatalf("final checkpoint: %v", err)
	}
	want := make([]int, killSteps)
	for i := range want {
		want[i] = i
	}
	if snap.Checkpoint.Status != graph.StatusDone || !slices.Equal(snap.State.Steps, want) {
		t.Fatalf("after %d kills: status %s, steps %v", killed, snap.Checkpoint.Status, snap.State.Steps)
	}
	// Every checkpoint decodes and none lost a step it had recorded.
	hist, err := r.History(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range hist {
		sn, err := r.Snapshot(ctx, "t", c.ID)
		if err != nil {
			t.Fatalf("checkpoint %s: %v", c.ID, err)
		}
		if !slices.Equal(sn.State.Steps, want[:len(sn.State.Steps)]) {
			t.Fatalf("checkpoint %s holds %v", c.ID, sn.State.Steps)
		}
	}
	if killed > 1 && midRun == 0 {
		t.Fatalf("no kill landed in the middle of the run (%d kills); the test did not test", killed)
	}
	t.Logf("durability %s: %d kills (%d in the middle of the run), %d checkpoints, every step once", mode, killed, midRun, len(hist))
}
