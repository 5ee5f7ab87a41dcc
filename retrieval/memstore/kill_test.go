//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package memstore

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/adaptrag/adaptrag/retrieval"
)

// The kill test re-executes the test binary as a child that writes batches
// to a store in a loop, printing "done N" after each Upsert returns. The
// parent SIGKILLs it at a random moment, reopens the directory and checks
// that every batch reported done is there, whole.
const (
	killDirEnv   = "MEMSTORE_KILL_DIR"
	killStartEnv = "MEMSTORE_KILL_START"
	killBatch    = 16 // chunks per batch
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(killDirEnv); dir != "" {
		start, _ := strconv.Atoi(os.Getenv(killStartEnv))
		killChild(dir, start)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func batchChunks(n int) []retrieval.Chunk {
	cs := make([]retrieval.Chunk, killBatch)
	for j := range cs {
		v := make([]float32, 16)
		v[(n+j)%16] = 1
		v[j%16] += 0.5
		cs[j] = retrieval.Chunk{
			ID: fmt.Sprintf("b%d-%d", n, j), DocID: fmt.Sprintf("doc%d", n), Tenant: "t",
			Text: fmt.Sprintf("batch%d chunk%d common %s", n, j, strings.Repeat("filler ", 20)), Vector: v,
		}
	}
	return cs
}

// killChild writes batches start, start+1, ... until it is killed. A small
// CompactBytes makes compactions happen often, so kills land in them too.
func killChild(dir string, start int) {
	s, err := Open(context.Background(), Options{Dir: dir, CompactBytes: 64 << 10})
	if err != nil {
		fmt.Println("error", err)
		return
	}
	out := bufio.NewWriter(os.Stdout)
	for n := start; ; n++ {
		if err := s.Upsert(context.Background(), batchChunks(n)); err != nil {
			fmt.Fprintln(out, "error", err)
			out.Flush()
			return
		}
		fmt.Fprintln(out, "done", n)
		out.Flush()
	}
}

func TestKill(t *testing.T) {
	if testing.Short() {
		t.Skip("kill test skipped in -short mode")
	}
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	next, done := 0, map[int]bool{}
	for round := range 6 {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), killDirEnv+"="+dir, killStartEnv+"="+strconv.Itoa(next))
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan string)
		go func() {
			defer close(lines)
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				lines <- sc.Text()
			}
		}()
		// Kill after the child has written a few batches, at a random moment.
		deadline := time.After(time.Duration(50+r.IntN(250)) * time.Millisecond)
		started := 0
	read:
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					break read
				}
				if strings.HasPrefix(l, "error") {
					cmd.Process.Kill()
					t.Fatalf("round %d: child: %s", round, l)
				}
				if n, err := strconv.Atoi(strings.TrimPrefix(l, "done ")); err == nil {
					done[n] = true
					next = max(next, n+1)
					started++
				}
			case <-deadline:
				if started > 0 {
					cmd.Process.Signal(syscall.SIGKILL)
					deadline = nil
				} else {
					deadline = time.After(20 * time.Millisecond)
				}
			}
		}
		cmd.Wait()
		// The batch being written when the kill came may or may not be
		// there; whole either way. Later rounds continue after it.
		next++

		s, err := Open(context.Background(), Options{Dir: dir})
		if err != nil {
			t.Fatalf("round %d: reopen after kill: %v", round, err)
		}
		counts := map[int]int{}
		for k := range s.byKey {
			var n, j int
			if _, err := fmt.Sscanf(k.id, "b%d-%d", &n, &j); err != nil {
				t.Fatalf("unexpected chunk id %q", k.id)
			}
			counts[n]++
		}
		for n := range done {
			if counts[n] != killBatch {
				t.Errorf("round %d: batch %d reported done has %d of %d chunks", round, n, counts[n], killBatch)
			}
		}
		for n, c := range counts {
			if c != killBatch {
				t.Errorf("round %d: batch %d is partial: %d of %d chunks", round, n, c, killBatch)
			}
		}
		// The store is readable and searchable.
		last := next - 2
		hits, err := s.SearchSparse(context.Background(), retrieval.Request{Scope: retrieval.Scope{Tenant: "t"}, Text: fmt.Sprintf("batch%d", last), K: killBatch})
		if err != nil || (done[last] && len(hits) != killBatch) {
			t.Errorf("round %d: search for batch %d: %d hits, %v", round, last, len(hits), err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		t.Logf("round %d: %d batches reported done so far, %d stored", round, len(done), len(counts))
	}
	if len(done) < 6 {
		t.Errorf("only %d batches completed in all rounds", len(done))
	}
}
