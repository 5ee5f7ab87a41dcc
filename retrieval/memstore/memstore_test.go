package memstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/retrieval/retrievaltest"
)

func TestConformanceInMemory(t *testing.T) {
	retrievaltest.Run(t, func(t *testing.T, dim int) retrieval.Store {
		s, err := Open(context.Background(), Options{Dim: dim})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

func TestConformanceInMemoryDimFromData(t *testing.T) {
	retrievaltest.Run(t, func(t *testing.T, dim int) retrieval.Store {
		s, err := Open(context.Background(), Options{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

func TestConformanceDir(t *testing.T) {
	retrievaltest.Run(t, func(t *testing.T, dim int) retrieval.Store {
		s, err := Open(context.Background(), Options{Dir: t.TempDir(), Dim: dim, NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// TestConformanceReopened runs the suite on stores that went through a
// close, a reopen (replaying the log) and a compaction, so that every
// behaviour also holds for state loaded from disk.
func TestConformanceReopened(t *testing.T) {
	retrievaltest.Run(t, func(t *testing.T, dim int) retrieval.Store {
		return &reopening{t: t, dir: t.TempDir(), dim: dim}
	})
}

// reopening is a Store that, after every Upsert or DeleteDocument, closes
// its memstore and opens the directory again, compacting every other time.
type reopening struct {
	t   *testing.T
	dir string
	dim int
	n   int
	*Store
}

func (r *reopening) cycle() {
	r.t.Helper()
	if r.Store != nil {
		if r.n++; r.n%2 == 0 {
			if err := r.Store.Compact(context.Background()); err != nil {
				r.t.Fatal(err)
			}
		}
		if err := r.Store.Close(); err != nil {
			r.t.Fatal(err)
		}
	}
	s, err := Open(context.Background(), Options{Dir: r.dir, Dim: r.dim, NoSync: true})
	if err != nil {
		r.t.Fatal(err)
	}
	r.Store = s
}

func (r *reopening) Upsert(ctx context.Context, cs []retrieval.Chunk) error {
	if r.Store == nil {
		r.cycle()
	}
	err := r.Store.Upsert(ctx, cs)
	r.cycle()
	return err
}

func (r *reopening) DeleteDocument(ctx context.Context, s retrieval.Scope, doc string) error {
	if r.Store == nil {
		r.cycle()
	}
	err := r.Store.DeleteDocument(ctx, s, doc)
	r.cycle()
	return err
}

func (r *reopening) ReplaceDocument(ctx context.Context, s retrieval.Scope, doc string, cs []retrieval.Chunk) error {
	if r.Store == nil {
		r.cycle()
	}
	err := r.Store.ReplaceDocument(ctx, s, doc, cs)
	r.cycle()
	return err
}

func (r *reopening) Documents(ctx context.Context, s retrieval.Scope) ([]retrieval.DocInfo, error) {
	r.ensure()
	return r.Store.Documents(ctx, s)
}

func (r *reopening) ensure() {
	if r.Store == nil {
		r.cycle()
	}
}

func (r *reopening) SearchDense(ctx context.Context, q retrieval.Request) ([]retrieval.Hit, error) {
	r.ensure()
	return r.Store.SearchDense(ctx, q)
}

func (r *reopening) SearchSparse(ctx context.Context, q retrieval.Request) ([]retrieval.Hit, error) {
	r.ensure()
	return r.Store.SearchSparse(ctx, q)
}

func (r *reopening) SearchHybrid(ctx context.Context, q retrieval.Request) ([]retrieval.Hit, error) {
	r.ensure()
	return r.Store.SearchHybrid(ctx, q)
}

func (r *reopening) Dim() int { r.ensure(); return r.Store.Dim() }

func (r *reopening) Close() error { r.ensure(); return r.Store.Close() }

func vec(dim, axis int) []float32 {
	v := make([]float32, dim)
	v[axis%dim] = 1
	return v
}

func testChunks(prefix string, n int) []retrieval.Chunk {
	out := make([]retrieval.Chunk, n)
	for i := range out {
		out[i] = retrieval.Chunk{
			ID: fmt.Sprintf("%s-%d", prefix, i), DocID: prefix, Tenant: "t", Source: "s",
			Text: fmt.Sprintf("word%d common %s", i, prefix), Meta: map[string]string{"i": fmt.Sprint(i)},
			Vector: vec(8, i),
		}
	}
	return out
}

func mustOpen(t *testing.T, o Options) *Store {
	t.Helper()
	s, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// ids returns the sorted chunk ids of tenant "t" that match "common".
func storedIDs(t *testing.T, s *Store) []string {
	t.Helper()
	hits, err := s.SearchSparse(context.Background(), retrieval.Request{Scope: retrieval.Scope{Tenant: "t"}, Text: "common", K: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, h := range hits {
		out = append(out, h.Chunk.ID)
	}
	slices.Sort(out)
	return out
}

func TestPersistReopen(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s := mustOpen(t, Options{Dir: dir})
	if err := s.Upsert(ctx, testChunks("a", 5)); err != nil {
		t.Fatal(err)
	}
	if err := s.Upsert(ctx, testChunks("b", 3)); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteDocument(ctx, retrieval.Scope{Tenant: "t"}, "a"); err != nil {
		t.Fatal(err)
	}
	want := storedIDs(t, s)
	if !slices.Equal(want, []string{"b-0", "b-1", "b-2"}) {
		t.Fatalf("before reopen: %v", want)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); !errors.Is(err, ErrClosed) {
		t.Errorf("second Close: %v, want ErrClosed", err)
	}
	if _, err := s.SearchDense(ctx, retrieval.Request{Vector: vec(8, 0), K: 1}); !errors.Is(err, ErrClosed) {
		t.Errorf("search after Close: %v, want ErrClosed", err)
	}

	s = mustOpen(t, Options{Dir: dir})
	if got := storedIDs(t, s); !slices.Equal(got, want) {
		t.Errorf("after replay: %v, want %v", got, want)
	}
	if s.Dim() != 8 || s.Len() != 3 {
		t.Errorf("after replay Dim %d Len %d, want 8 and 3", s.Dim(), s.Len())
	}
	if err := s.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Upsert(ctx, testChunks("c", 2)); err != nil {
		t.Fatal(err)
	}
	s.Close()

	s = mustOpen(t, Options{Dir: dir})
	defer s.Close()
	want = append(want, "c-0", "c-1")
	if got := storedIDs(t, s); !slices.Equal(got, want) {
		t.Errorf("after snapshot and replay: %v, want %v", got, want)
	}
	hits, err := s.SearchDense(ctx, retrieval.Request{Scope: retrieval.Scope{Tenant: "t"}, Vector: vec(8, 1), K: 1})
	if err != nil || len(hits) != 1 || hits[0].Score < 0.999 || hits[0].Chunk.Meta["i"] != "1" {
		t.Errorf("dense after reload = %+v, %v", hits, err)
	}
}

func TestTornTail(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s := mustOpen(t, Options{Dir: dir})
	if err := s.Upsert(ctx, testChunks("a", 3)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	wal := filepath.Join(dir, walName)
	st, _ := os.Stat(wal)
	good := st.Size()

	s = mustOpen(t, Options{Dir: dir})
	if err := s.Upsert(ctx, testChunks("b", 3)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	st, _ = os.Stat(wal)
	full := st.Size()

	// Every cut inside the second record loses exactly that record. (The
	// copies take the log and the manifest but not LOCK, where a clean
	// close notes the log's length: without it, they are what a crash
	// during the second write leaves.)
	manifest, _ := os.ReadFile(filepath.Join(dir, manifestName))
	for _, cut := range []int64{good + 1, good + 8, (good + full) / 2, full - 1} {
		data, _ := os.ReadFile(wal)
		d2 := t.TempDir()
		os.WriteFile(filepath.Join(d2, manifestName), manifest, 0o644)
		os.WriteFile(filepath.Join(d2, walName), data[:cut], 0o644)
		s := mustOpen(t, Options{Dir: d2})
		if got := storedIDs(t, s); !slices.Equal(got, []string{"a-0", "a-1", "a-2"}) {
			t.Errorf("cut at %d: %v, want the first batch only", cut, got)
		}
		// The tail was cut off, so new writes follow the intact record.
		if err := s.Upsert(ctx, testChunks("c", 1)); err != nil {
			t.Fatal(err)
		}
		s.Close()
		s = mustOpen(t, Options{Dir: d2})
		if got := storedIDs(t, s); !slices.Equal(got, []string{"a-0", "a-1", "a-2", "c-0"}) {
			t.Errorf("cut at %d then a write: %v", cut, got)
		}
		s.Close()
	}

	// A flipped byte in the last record is a torn write too.
	data, _ := os.ReadFile(wal)
	data[full-3] ^= 0xff
	d3 := t.TempDir()
	os.WriteFile(filepath.Join(d3, manifestName), manifest, 0o644)
	os.WriteFile(filepath.Join(d3, walName), data, 0o644)
	s = mustOpen(t, Options{Dir: d3})
	if got := storedIDs(t, s); !slices.Equal(got, []string{"a-0", "a-1", "a-2"}) {
		t.Errorf("corrupt last record: %v, want the first batch only", got)
	}
	s.Close()
}

func TestCorruptSnapshot(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s := mustOpen(t, Options{Dir: dir})
	if err := s.Upsert(ctx, testChunks("a", 20)); err != nil {
		t.Fatal(err)
	}
	if err := s.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	s.Close()
	snap := filepath.Join(dir, snapName)
	orig, err := os.ReadFile(snap)
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string][]byte{
		"flipped byte": func() []byte { b := slices.Clone(orig); b[len(b)/2] ^= 1; return b }(),
		"truncated":    orig[:len(orig)-10],
		"bad magic":    append([]byte("NOTASNAP"), orig[8:]...),
		"stray bytes":  append(slices.Clone(orig), 0),
		"empty":        {},
	}
	for name, data := range cases {
		os.WriteFile(snap, data, 0o644)
		if s, err := Open(ctx, Options{Dir: dir}); !errors.Is(err, retrieval.ErrCorrupt) {
			t.Errorf("%s: Open err = %v, want ErrCorrupt", name, err)
			if s != nil {
				s.Close()
			}
		}
	}
	os.WriteFile(snap, orig, 0o644)
	s = mustOpen(t, Options{Dir: dir})
	defer s.Close()
	if s.Len() != 20 {
		t.Errorf("restored snapshot has %d chunks, want 20", s.Len())
	}
}

func TestStaleLogAfterCompaction(t *testing.T) {
	// A crash between the snapshot rename and the new log leaves the old
	// log beside the new snapshot: its records must not be applied again.
	dir := t.TempDir()
	ctx := context.Background()
	s := mustOpen(t, Options{Dir: dir})
	s.Upsert(ctx, testChunks("a", 2))
	s.DeleteDocument(ctx, retrieval.Scope{Tenant: "t"}, "a")
	s.Upsert(ctx, testChunks("b", 2))
	s.Close()
	oldLog, _ := os.ReadFile(filepath.Join(dir, walName))

	s = mustOpen(t, Options{Dir: dir})
	if err := s.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	s.Close()
	os.WriteFile(filepath.Join(dir, walName), oldLog, 0o644)
	s = mustOpen(t, Options{Dir: dir})
	defer s.Close()
	if got := storedIDs(t, s); !slices.Equal(got, []string{"b-0", "b-1"}) {
		t.Errorf("with a stale log: %v, want [b-0 b-1]", got)
	}
}

func TestAutoCompaction(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s := mustOpen(t, Options{Dir: dir, CompactBytes: 2048, NoSync: true})
	var logged int64
	for i := range 20 {
		cs := testChunks(fmt.Sprint("p", i), 4)
		logged += int64(len(encodeUpsert(cs)) + recHeaderLen)
		if err := s.Upsert(ctx, cs); err != nil {
			t.Fatal(err)
		}
	}
	s.waitCompaction() // compactions run in the background
	if st, err := os.Stat(filepath.Join(dir, snapName)); err != nil || st.Size() == 0 {
		t.Fatalf("no snapshot after the log outgrew CompactBytes: %v", err)
	}
	if st, _ := os.Stat(filepath.Join(dir, walName)); st.Size() >= logged {
		t.Errorf("log is %d bytes after compaction, all the records are %d", st.Size(), logged)
	}
	s.Close()
	s = mustOpen(t, Options{Dir: dir})
	defer s.Close()
	if s.Len() != 80 {
		t.Errorf("after reopen Len = %d, want 80", s.Len())
	}
}

// The log may grow to half the snapshot before a compaction starts, so
// that a growing store is rewritten a logarithmic number of times.
func TestCompactionThresholdFollowsTheSnapshot(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s := mustOpen(t, Options{Dir: dir, CompactBytes: 4096, NoSync: true})
	defer s.Close()
	compactions, last := 0, uint64(0)
	for i := range 1000 {
		if err := s.Upsert(ctx, testChunks(fmt.Sprint("p", i), 4)); err != nil {
			t.Fatal(err)
		}
		s.waitCompaction()
		s.mu.RLock()
		gen := s.disk.snapGen
		s.mu.RUnlock()
		if gen != last {
			compactions++
			last = gen
		}
	}
	st, err := os.Stat(filepath.Join(dir, snapName))
	if err != nil {
		t.Fatal(err)
	}
	// A fixed threshold would compact once per 4 KiB of log: size/4096
	// times; a threshold of half the snapshot, about log1.5 of that.
	if fixed := int(st.Size() / 4096); compactions*4 > fixed || compactions < 3 {
		t.Errorf("%d compactions for a %d-byte snapshot (a fixed threshold: %d)", compactions, st.Size(), fixed)
	}
}

// Writes go on while a compaction runs and land in the snapshot or in the
// new log, never in neither or both: after a compaction raced by
// overwrites, deletes, replacements and new chunks, a reopened store (and
// a reader) holds what the writer held.
func TestCompactionUnderWrites(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s := mustOpen(t, Options{Dir: dir, CompactBytes: -1, NoSync: true})
	for i := range 60 {
		if err := s.Upsert(ctx, testChunks(fmt.Sprint("d", i), 100)); err != nil {
			t.Fatal(err)
		}
	}
	for round := range 3 {
		done := make(chan error, 1)
		var during int
		go func() { done <- s.Compact(ctx) }()
		for i := 0; ; i++ {
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
				goto compacted
			default:
			}
			doc := fmt.Sprint("d", (i*7+round)%80)
			var err error
			switch i % 4 {
			case 0:
				err = s.Upsert(ctx, testChunks(doc, 1+i%120))
			case 1:
				err = s.DeleteDocument(ctx, retrieval.Scope{Tenant: "t"}, doc)
			case 2:
				err = s.ReplaceDocument(ctx, retrieval.Scope{Tenant: "t"}, doc, testChunks(doc, 1+i%30))
			default:
				err = s.Upsert(ctx, testChunks(fmt.Sprint("new", round, "-", i), 3))
			}
			if err != nil {
				t.Fatal(err)
			}
			during++
		}
	compacted:
		t.Logf("round %d: %d writes while the compaction ran", round, during)
		if err := s.Upsert(ctx, testChunks(fmt.Sprint("after", round), 2)); err != nil {
			t.Fatal(err)
		}
		want := dump(s)
		ro := mustOpen(t, Options{Dir: dir, ReadOnly: true})
		if got := dump(ro); got != want {
			t.Fatalf("round %d: a reader sees another state than the writer", round)
		}
		ro.Close()
		s.Close()
		s = mustOpen(t, Options{Dir: dir, CompactBytes: -1, NoSync: true})
		if got := dump(s); got != want {
			t.Fatalf("round %d: reopened state differs from the state before Close", round)
		}
	}
	s.Close()
}

// A crash after a compaction renamed its snapshot into place and before it
// replaced the log leaves the old log beside it, holding, after the
// records the snapshot has, those written while the compaction ran: they
// are acknowledged and must survive, in the reopened store and in the log
// a writer then starts.
func TestStaleLogWithNewerRecords(t *testing.T) {
	ctx := context.Background()
	a := t.TempDir()
	s := mustOpen(t, Options{Dir: a, CompactBytes: -1})
	s.Upsert(ctx, testChunks("x", 3))
	s.Upsert(ctx, testChunks("y", 2))
	s.Close()
	b := copyDir(t, a)
	// In b the writer goes on: records 3 and 4 follow in the old log.
	s = mustOpen(t, Options{Dir: b, CompactBytes: -1})
	s.Upsert(ctx, testChunks("z", 2))
	s.DeleteDocument(ctx, retrieval.Scope{Tenant: "t"}, "x")
	want := dump(s)
	s.Close()
	// In a the compaction of records 1 and 2 completes its snapshot.
	s = mustOpen(t, Options{Dir: a, CompactBytes: -1})
	if err := s.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	s.Close()
	// The crash state: a's new snapshot, b's old log.
	logB, err := os.ReadFile(filepath.Join(b, walName))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(a, walName), logB, 0o644)
	ro := mustOpen(t, Options{Dir: a, ReadOnly: true})
	if got := dump(ro); got != want {
		t.Errorf("reader: got\n%s\nwant\n%s", got, want)
	}
	ro.Close()
	s = mustOpen(t, Options{Dir: a})
	if got := dump(s); got != want {
		t.Errorf("writer: got\n%s\nwant\n%s", got, want)
	}
	s.Upsert(ctx, testChunks("w", 1))
	want = dump(s)
	s.Close()
	s = mustOpen(t, Options{Dir: a})
	defer s.Close()
	if got := dump(s); got != want {
		t.Errorf("after the writer moved the records to a new log: got\n%s\nwant\n%s", got, want)
	}
}

func TestLocked(t *testing.T) {
	dir := t.TempDir()
	s := mustOpen(t, Options{Dir: dir})
	if _, err := Open(context.Background(), Options{Dir: dir}); !errors.Is(err, ErrLocked) {
		t.Errorf("second Open: %v, want ErrLocked", err)
	}
	s.Close()
	s = mustOpen(t, Options{Dir: dir}) // released by Close
	s.Close()
}

func TestDimensionMismatchOnOpen(t *testing.T) {
	dir := t.TempDir()
	s := mustOpen(t, Options{Dir: dir})
	s.Upsert(context.Background(), testChunks("a", 2))
	s.Compact(context.Background())
	s.Close()
	if _, err := Open(context.Background(), Options{Dir: dir, Dim: 16}); !errors.Is(err, retrieval.ErrDimension) {
		t.Errorf("Open with another Dim than the snapshot's: %v, want ErrDimension", err)
	}

	dir = t.TempDir() // the same with only a log
	s = mustOpen(t, Options{Dir: dir})
	s.Upsert(context.Background(), testChunks("a", 2))
	s.Close()
	if _, err := Open(context.Background(), Options{Dir: dir, Dim: 16}); !errors.Is(err, retrieval.ErrDimension) {
		t.Errorf("Open with another Dim than the log's: %v, want ErrDimension", err)
	}
	mustOpen(t, Options{Dir: dir}).Close() // the failed Open released the lock
}

func TestOpenErrors(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Open(ctx, Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Open with a cancelled context: %v", err)
	}
	if _, err := Open(context.Background(), Options{Dim: -1}); !errors.Is(err, retrieval.ErrInvalid) {
		t.Errorf("Open with Dim -1: %v, want ErrInvalid", err)
	}
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o644)
	if _, err := Open(context.Background(), Options{Dir: file}); err == nil {
		t.Error("Open of a regular file as Dir succeeded")
	}
}

func TestTenantsKeepTheirOwnChunks(t *testing.T) {
	// The same chunk id in two tenants is two chunks: B's upsert must not
	// overwrite A's, and deleting in A must not touch B.
	s := mustOpen(t, Options{})
	defer s.Close()
	ctx := context.Background()
	a := retrieval.Chunk{ID: "x", DocID: "d", Tenant: "A", Text: "alpha secret", Vector: vec(4, 0)}
	b := retrieval.Chunk{ID: "x", DocID: "d", Tenant: "B", Text: "beta public", Vector: vec(4, 1)}
	if err := s.Upsert(ctx, []retrieval.Chunk{a, b}); err != nil {
		t.Fatal(err)
	}
	hits, _ := s.SearchSparse(ctx, retrieval.Request{Scope: retrieval.Scope{Tenant: "A"}, Text: "alpha", K: 5})
	if len(hits) != 1 || hits[0].Chunk.Text != a.Text {
		t.Errorf("tenant A: %+v", hits)
	}
	s.DeleteDocument(ctx, retrieval.Scope{Tenant: "A"}, "d")
	hits, _ = s.SearchSparse(ctx, retrieval.Request{Scope: retrieval.Scope{Tenant: "B"}, Text: "beta", K: 5})
	if len(hits) != 1 || hits[0].Chunk.Tenant != "B" {
		t.Errorf("tenant B after deleting A's doc: %+v", hits)
	}
}

func TestHitsDoNotAlias(t *testing.T) {
	s := mustOpen(t, Options{})
	defer s.Close()
	ctx := context.Background()
	in := testChunks("a", 1)
	s.Upsert(ctx, in)
	in[0].Meta["i"] = "changed by caller"
	req := retrieval.Request{Scope: retrieval.Scope{Tenant: "t"}, Vector: vec(8, 0), Text: in[0].Text, K: 1}
	// Every kind of search hands out maps of its own: a reader's change
	// reaches neither the store nor the other searches.
	for _, search := range []func(context.Context, retrieval.Request) ([]retrieval.Hit, error){s.SearchDense, s.SearchSparse, s.SearchHybrid} {
		hits, err := search(ctx, req)
		if err != nil || len(hits) != 1 {
			t.Fatalf("%d hits, %v", len(hits), err)
		}
		hits[0].Chunk.Meta["i"] = "changed by reader"
	}
	for _, search := range []func(context.Context, retrieval.Request) ([]retrieval.Hit, error){s.SearchDense, s.SearchSparse, s.SearchHybrid} {
		again, _ := search(ctx, req)
		if again[0].Chunk.Meta["i"] != "0" {
			t.Errorf("stored meta changed to %q through an alias", again[0].Chunk.Meta["i"])
		}
	}
}

func TestConcurrentUse(t *testing.T) {
	s := mustOpen(t, Options{Dir: t.TempDir(), NoSync: true, CompactBytes: 16 << 10})
	defer s.Close()
	ctx := context.Background()
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Go(func() {
			for i := range 30 {
				p := fmt.Sprintf("w%d-%d", w, i)
				if err := s.Upsert(ctx, testChunks(p, 3)); err != nil {
					t.Error(err)
					return
				}
				if i%3 == 0 {
					s.DeleteDocument(ctx, retrieval.Scope{Tenant: "t"}, p)
				}
			}
		})
	}
	for range 3 {
		wg.Go(func() {
			for i := range 60 {
				req := retrieval.Request{Scope: retrieval.Scope{Tenant: "t"}, Text: "common", Vector: vec(8, i), K: 5}
				if _, err := s.SearchHybrid(ctx, req); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	// 2 writers x 30 batches x 3 chunks, a third of the batches deleted.
	if s.Len() != 2*20*3 {
		t.Errorf("Len = %d, want %d", s.Len(), 2*20*3)
	}
}

func TestCancelledDuringScan(t *testing.T) {
	// The matcher polls the context while it filters, so a search over many
	// chunks that is cancelled midway returns the context error.
	s := mustOpen(t, Options{})
	defer s.Close()
	ctx := context.Background()
	var cs []retrieval.Chunk
	for i := range 5000 {
		cs = append(cs, retrieval.Chunk{ID: fmt.Sprint(i), Text: "common", Vector: vec(8, i)})
	}
	s.Upsert(ctx, cs)
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	m := &matcher{s: s, ctx: cctx, tenant: s.tenants[""]}
	for i := range 1500 {
		if i == 100 {
			cancel()
		}
		m.accept(uint32(i))
	}
	if !errors.Is(m.err, context.Canceled) {
		t.Errorf("matcher err after cancel = %v, want context.Canceled", m.err)
	}
	if m.accept(0) {
		t.Error("matcher accepts after cancellation")
	}
}

func FuzzDecodeRecord(f *testing.F) {
	f.Add(encodeUpsert(testChunks("a", 2)))
	f.Add(encodeDelete("t", "doc"))
	f.Add(encodeReplace("t", "a", testChunks("a", 2)))
	f.Add(encodeReplace("t", "a", nil))
	f.Add([]byte{opUpsert, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, b []byte) {
		op, err := decodeOp(b)
		if err != nil {
			return
		}
		// What decodes must re-encode to an equal record.
		again, err := decodeOp(op.encode())
		if err != nil || fmt.Sprint(again) != fmt.Sprint(op) {
			t.Fatalf("round trip changed the record: %v\n%v\n%v", err, op, again)
		}
	})
}
