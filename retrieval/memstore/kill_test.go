//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package memstore

import (
	"bufio"
	"context"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/retrieval/vector"
)

// The kill test re-executes the test binary as a child that writes batches
// to a store in a loop, printing "done N" after each Upsert returns. The
// parent SIGKILLs it at a random moment, reopens the directory and checks
// that every batch reported done is there, whole.
//
// The number of kills per test is ADAPTRAG_KILLS (default 6), e.g.
//
//	ADAPTRAG_KILLS=500 go test -run 'TestKill' ./retrieval/memstore/
const (
	killDirEnv   = "MEMSTORE_KILL_DIR"
	killStartEnv = "MEMSTORE_KILL_START"
	killModeEnv  = "MEMSTORE_KILL_MODE"
	killsEnv     = "ADAPTRAG_KILLS"
	// killAdoptEnv makes the child save and adopt the records file
	// whatever the store's size (adoptMinBytes 0), as the parent does.
	killAdoptEnv = "MEMSTORE_KILL_ADOPT"
	killBatch    = 16 // chunks per batch
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(killDirEnv); dir != "" {
		start, _ := strconv.Atoi(os.Getenv(killStartEnv))
		if os.Getenv(killAdoptEnv) != "" {
			adoptMinBytes = 0
		}
		if os.Getenv(killModeEnv) == "replace" {
			replaceChild(dir, start)
		} else {
			killChild(dir, start)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// killRounds is the number of kills a kill test makes.
func killRounds(t *testing.T) int {
	n := 6
	if v := os.Getenv(killsEnv); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			t.Fatalf("%s=%q: want a positive number", killsEnv, v)
		}
	}
	return n
}

// killVector leaves the vectors of a reopened store in dense.idx, so that
// the writes and compactions the kills land in read them from there.
var killVector = vector.Options{ResidentLimit: 64}

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
	s, err := Open(context.Background(), Options{Dir: dir, CompactBytes: 64 << 10, Vector: killVector})
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
	// Every Close saves the records file and every open adopts it when it
	// holds the store's state: the child's open adopts what the parent's
	// last Close saved, and is killed while it writes.
	lowAdopt(t)
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	next, done := 0, map[int]bool{}
	rounds := killRounds(t)
	for round := range rounds {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), killDirEnv+"="+dir, killStartEnv+"="+strconv.Itoa(next), killAdoptEnv+"=1")
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

		s, err := Open(context.Background(), Options{Dir: dir, Vector: killVector})
		if err != nil {
			t.Fatalf("round %d: reopen after kill: %v", round, err)
		}
		counts := map[int]int{}
		for k := range s.byKey.all(s.recs) {
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
		checkKillVectors(t, s, fmt.Sprintf("round %d, after the kill", round))
		checkLexicon(t, s, fmt.Sprintf("round %d, after the kill", round))
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		// Close saved the index files; an open adopts them and must hold
		// the same vectors.
		s, err = Open(context.Background(), Options{Dir: dir, Vector: killVector})
		if err != nil {
			t.Fatalf("round %d: reopen after close: %v", round, err)
		}
		// An index past the exact threshold has its lists (no write here
		// deletes), so past the limit it must have left its vectors on disk.
		if s.vec.Len() > vector.DefaultExactThreshold && s.vec.Resident() {
			t.Fatalf("round %d: %d vectors, all read into memory", round, s.vec.Len())
		}
		checkKillVectors(t, s, fmt.Sprintf("round %d, reopened", round))
		checkLexicon(t, s, fmt.Sprintf("round %d, reopened", round))
		if !s.sparseOnDisk {
			t.Fatalf("round %d: the reopen after a close did not adopt sparse.idx", round)
		}
		if !s.recordsOnDisk {
			t.Fatalf("round %d: the reopen after a close did not adopt records.idx", round)
		}
		s.waitScrub()
		if ok, dmg := s.Verified(); !ok || dmg != nil {
			t.Fatalf("round %d: the check of the files: %v, %v", round, ok, dmg)
		}
		reopened := map[int]int{}
		for k := range s.byKey.all(s.recs) {
			var n, j int
			fmt.Sscanf(k.id, "b%d-%d", &n, &j)
			reopened[n]++
		}
		if !maps.Equal(reopened, counts) {
			t.Fatalf("round %d: the reopen from records.idx holds other batches than the open after the kill", round)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		t.Logf("round %d: %d batches reported done so far, %d stored", round, len(done), len(counts))
	}
	if len(done) < rounds {
		t.Errorf("only %d batches completed in all rounds", len(done))
	}
}

// checkKillVectors checks that the dense index holds exactly the stored
// chunks, each with the vector batchChunks gave it: whether the open
// rebuilt the index from the records or adopted the saved one.
func checkKillVectors(t *testing.T, s *Store, when string) {
	t.Helper()
	if s.vec.Len() != s.byKey.len() {
		t.Fatalf("%s: dense index holds %d vectors for %d chunks", when, s.vec.Len(), s.byKey.len())
	}
	for k, iid := range s.byKey.all(s.recs) {
		var n, j int
		if _, err := fmt.Sscanf(k.id, "b%d-%d", &n, &j); err != nil {
			t.Fatalf("unexpected chunk id %q", k.id)
		}
		want := batchChunks(n)[j].Vector
		got, ok := s.vec.Vector(iid)
		if !ok {
			t.Fatalf("%s: chunk %s has no vector", when, k.id)
		}
		var dot, norm float64
		for i := range want {
			dot += float64(got[i]) * float64(want[i])
			norm += float64(want[i]) * float64(want[i])
		}
		if cos := dot / math.Sqrt(norm); cos < 0.9999 {
			t.Fatalf("%s: chunk %s holds another vector (cosine %.4f)", when, k.id, cos)
		}
	}
}

// killDocs are the documents the replace child rewrites in turn.
var killDocs = []string{"k0", "k1", "k2", "k3", "k4", "k5"}

// replaceChild replaces document killDocs[v%len] by version v of it
// (docChunks: 1 to 5 chunks), for v = start, start+1, ... until it is
// killed, printing "done V" after each ReplaceDocument returns.
func replaceChild(dir string, start int) {
	s, err := Open(context.Background(), Options{Dir: dir, CompactBytes: 32 << 10})
	if err != nil {
		fmt.Println("error", err)
		return
	}
	out := bufio.NewWriter(os.Stdout)
	for v := start; ; v++ {
		doc := killDocs[v%len(killDocs)]
		if err := s.ReplaceDocument(context.Background(), retrieval.Scope{Tenant: "t"}, doc, docChunks(doc, v)); err != nil {
			fmt.Fprintln(out, "error", err)
			out.Flush()
			return
		}
		fmt.Fprintln(out, "done", v)
		out.Flush()
	}
}

// TestKillReplace SIGKILLs a process that replaces multi-chunk documents
// in a loop, at random moments (compactions included), and checks after
// each kill that the store opens, read-only and for writing, that every
// document holds exactly one whole version, and that it is the last
// acknowledged one or the one being written when the kill came.
func TestKillReplace(t *testing.T) {
	if testing.Short() {
		t.Skip("kill test skipped in -short mode")
	}
	dir := t.TempDir()
	seed := uint64(time.Now().UnixNano())
	r := rand.New(rand.NewPCG(seed, 2))
	acked := map[string]int{} // document -> last acknowledged version
	next, total, reads := 0, 0, 0
	rounds := killRounds(t)
	for round := range rounds {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), killDirEnv+"="+dir, killStartEnv+"="+strconv.Itoa(next), killModeEnv+"=replace")
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(stdout)
		// Kill after a random number of acknowledged replacements and a
		// random delay, so that kills land anywhere in a write.
		target := 1 + r.IntN(60)
		last := next - 1
		killed := false
		for sc.Scan() {
			l := sc.Text()
			if strings.HasPrefix(l, "error") {
				cmd.Process.Kill()
				t.Fatalf("round %d: child: %s", round, l)
			}
			v, err := strconv.Atoi(strings.TrimPrefix(l, "done "))
			if err != nil {
				continue
			}
			acked[killDocs[v%len(killDocs)]] = v
			last = v
			total++
			if total%8 == 0 {
				// A reader in this process while the child writes and
				// compacts: whole documents only, and at least what was
				// acknowledged before it opened.
				ro, err := Open(context.Background(), Options{Dir: dir, ReadOnly: true})
				if err != nil {
					t.Fatalf("round %d: read-only open beside the writer: %v", round, err)
				}
				got, err := docVersions(ro)
				ro.Close()
				if err != nil {
					t.Fatalf("round %d: reader beside the writer: %v", round, err)
				}
				for doc, want := range acked {
					if got[doc] < want {
						t.Fatalf("round %d: reader sees %s at version %d, %d was acknowledged", round, doc, got[doc], want)
					}
				}
				reads++
			}
			if target--; target == 0 && !killed {
				time.AfterFunc(time.Duration(r.IntN(3000))*time.Microsecond, func() { cmd.Process.Signal(syscall.SIGKILL) })
				killed = true
			}
		}
		cmd.Wait()
		pending := last + 1 // the replacement in flight at the kill, if any
		next = pending + 1

		ro, err := Open(context.Background(), Options{Dir: dir, ReadOnly: true})
		if err != nil {
			t.Fatalf("round %d (seed %d): read-only open after the kill: %v", round, seed, err)
		}
		s, err := Open(context.Background(), Options{Dir: dir})
		if err != nil {
			t.Fatalf("round %d (seed %d): open after the kill: %v", round, seed, err)
		}
		if dump(ro) != dump(s) {
			t.Errorf("round %d: the read-only and the writable open differ", round)
		}
		ro.Close()
		got, err := docVersions(s)
		if err != nil {
			t.Fatalf("round %d (seed %d): %v", round, seed, err)
		}
		for _, doc := range killDocs {
			want, ok := acked[doc]
			v, present := got[doc]
			isPending := killDocs[pending%len(killDocs)] == doc
			switch {
			case present && v == want && ok:
			case present && isPending && v == pending:
			case !present && !ok:
			default:
				t.Errorf("round %d (seed %d): document %s at version %d (present %v), last acknowledged %d (%v), pending %d",
					round, seed, doc, v, present, want, ok, pending)
			}
		}
		// A write in flight at the kill that did land is now the
		// document's version.
		if doc := killDocs[pending%len(killDocs)]; got[doc] == pending {
			acked[doc] = pending
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d kills survived, %d replacements acknowledged, %d read-only opens beside the writer", rounds, total, reads)
}
