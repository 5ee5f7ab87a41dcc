package memstore

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/retrieval/vector"
)

// denseChunks returns n chunks over three tenants and a few documents,
// with random vectors of dim dimensions.
func denseChunks(rng *rand.Rand, n, dim, rev int) []retrieval.Chunk {
	cs := make([]retrieval.Chunk, n)
	for i := range cs {
		v := make([]float32, dim)
		for j := range v {
			v[j] = float32(rng.NormFloat64())
		}
		cs[i] = retrieval.Chunk{
			ID: fmt.Sprintf("c%d", i), Tenant: fmt.Sprintf("t%d", i%3), DocID: fmt.Sprintf("d%d", i/50),
			Text: fmt.Sprintf("chunk %d revision %d", i, rev), Vector: v,
		}
	}
	return cs
}

// reopened opens dir read-only and writable in turn and returns the dump
// of each and whether it adopted the saved dense index.
func reopened(t *testing.T, dir string) (ro, rw string, roAdopted, rwAdopted bool) {
	t.Helper()
	ctx := context.Background()
	r, err := Open(ctx, Options{Dir: dir, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	ro, roAdopted = dump(r), r.denseOnDisk
	r.Close()
	w, err := Open(ctx, Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	rw, rwAdopted = dump(w), w.denseOnDisk
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return ro, rw, roAdopted, rwAdopted
}

// rebuilt is the dump of dir opened without its dense index file.
func rebuilt(t *testing.T, dir string) string {
	t.Helper()
	c := copyDir(t, dir, denseName)
	s, err := Open(context.Background(), Options{Dir: c, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.denseOnDisk {
		t.Fatal("a store without dense.idx claims to have adopted one")
	}
	return dump(s)
}

func TestDenseIndexSavedAndAdopted(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	s, err := Open(ctx, Options{Dir: dir, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	// Enough vectors for inverted lists, then deletes and replacements, so
	// that the writer's internal ids (reused slots) differ from a load's.
	if err := s.Upsert(ctx, denseChunks(rng, 3000, 32, 0)); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"d3", "d10", "d17"} {
		if err := s.DeleteDocument(ctx, retrieval.Scope{Tenant: "t0"}, d); err != nil {
			t.Fatal(err)
		}
	}
	repl := denseChunks(rng, 7, 32, 1)
	for i := range repl {
		repl[i].ID, repl[i].Tenant, repl[i].DocID = fmt.Sprintf("d5-new%d", i), "t1", "d5"
	}
	if err := s.ReplaceDocument(ctx, retrieval.Scope{Tenant: "t1"}, "d5", repl); err != nil {
		t.Fatal(err)
	}
	if err := s.Upsert(ctx, denseChunks(rng, 200, 32, 2)); err != nil {
		t.Fatal(err)
	}
	want := dump(s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, denseName)); err != nil {
		t.Fatalf("Close saved no dense index: %v", err)
	}
	ro, rw, roA, rwA := reopened(t, dir)
	if !roA || !rwA {
		t.Fatalf("the saved dense index was not adopted (read-only %v, writable %v)", roA, rwA)
	}
	if ro != want || rw != want {
		t.Fatal("a store opened with its saved dense index differs from the one closed")
	}
	if rebuilt(t, dir) != want {
		t.Fatal("a store rebuilt without the file differs from the one closed")
	}
	// The adopted index searches like a rebuilt one.
	a, err := Open(ctx, Options{Dir: dir, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(ctx, Options{Dir: copyDir(t, dir, denseName), ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	q := denseChunks(rng, 20, 32, 3)
	for _, c := range q {
		req := retrieval.Request{Vector: c.Vector, K: 10, Scope: retrieval.Scope{Tenant: "t1"}}
		x, err := a.SearchDense(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		y, err := b.SearchDense(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(ids(x)) != fmt.Sprint(ids(y)) {
			t.Fatalf("adopted index found %v, rebuilt %v", ids(x), ids(y))
		}
	}
}

func ids(hs []retrieval.Hit) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.Chunk.ID
	}
	return out
}

// A dense index file that does not index the store, or is damaged, is
// ignored: the open builds the index and gives exactly the stored state.
func TestDenseIndexStaleOrDamagedIsIgnored(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(3, 4))
	dir := t.TempDir()
	s, err := Open(ctx, Options{Dir: dir, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Upsert(ctx, denseChunks(rng, 2000, 16, 0)); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	old, err := os.ReadFile(filepath.Join(dir, denseName))
	if err != nil {
		t.Fatal(err)
	}
	put := func(b []byte) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, denseName), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	check := func(name string, wantAdopted bool) {
		t.Helper()
		ro, rw, roA, _ := reopened(t, dir)
		want := rebuilt(t, dir)
		if ro != want || rw != want {
			t.Fatalf("%s: the open differs from the stored state", name)
		}
		if roA != wantAdopted {
			t.Fatalf("%s: adopted %v, want %v", name, roA, wantAdopted)
		}
	}

	// More records after the file was written (as after a crash of a
	// later writer that never closed): the file is stale.
	s, err = Open(ctx, Options{Dir: dir, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Upsert(ctx, denseChunks(rng, 100, 16, 1)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, denseName)); err == nil {
		t.Fatal("the first write after the open left the dense index file in place")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	put(old)
	check("stale, more records", false)

	// Same records, a new snapshot generation (Compact without writes):
	// the sequence number agrees, the generation does not.
	s, err = Open(ctx, Options{Dir: dir, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	cur, err := os.ReadFile(filepath.Join(dir, denseName))
	if err != nil {
		t.Fatal(err)
	}
	s, err = Open(ctx, Options{Dir: dir, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	put(cur)
	check("stale, compacted", false)

	// Damage: every kind of cut and a flipped byte in each part.
	s, err = Open(ctx, Options{Dir: dir, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(filepath.Join(dir, denseName))
	if err != nil {
		t.Fatal(err)
	}
	check("intact", true)
	for _, off := range []int{0, 9, 30, len(good) / 3, len(good) / 2, len(good) - 5} {
		b := append([]byte(nil), good...)
		b[off] ^= 0x40
		put(b)
		check(fmt.Sprintf("flipped at %d", off), false)
		put(good[:off])
		check(fmt.Sprintf("cut at %d", off), false)
	}
	put(append(append([]byte(nil), good...), 1, 2, 3))
	check("trailing bytes", false)
}

// A large dense index (past Options.Vector.ResidentLimit) is adopted with
// its float32 vectors left in dense.idx: the store holds exactly what a
// store with every vector in memory holds, through writes, a compaction
// (which reads the vectors back from the file, by then removed from the
// directory), Close and another open.
func TestDenseIndexLeftOnDisk(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(7, 8))
	dir := t.TempDir()
	s, err := Open(ctx, Options{Dir: dir, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Upsert(ctx, denseChunks(rng, 3000, 32, 0)); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteDocument(ctx, retrieval.Scope{Tenant: "t0"}, "d4"); err != nil {
		t.Fatal(err)
	}
	want := dump(s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	spilled := Options{Dir: dir, NoSync: true, Vector: vector.Options{ResidentLimit: 100}}
	resident := Options{Dir: copyDir(t, dir), NoSync: true, Vector: vector.Options{ResidentLimit: -1}}
	ro := spilled
	ro.ReadOnly = true
	r, err := Open(ctx, ro)
	if err != nil {
		t.Fatal(err)
	}
	if !r.denseOnDisk || r.vec.Resident() || r.vecFile == nil {
		t.Fatalf("read-only open: adopted %v, resident %v", r.denseOnDisk, r.vec.Resident())
	}
	if dump(r) != want {
		t.Fatal("read-only, the vectors read back from dense.idx differ from the stored ones")
	}
	r.Close()

	a, err := Open(ctx, spilled)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Open(ctx, resident)
	if err != nil {
		t.Fatal(err)
	}
	if a.vec.Resident() || !b.vec.Resident() {
		t.Fatalf("resident: spilled store %v, resident store %v", a.vec.Resident(), b.vec.Resident())
	}
	more := denseChunks(rng, 400, 32, 1) // ids c0..c399: replacements
	repl := denseChunks(rng, 5, 32, 2)
	for i := range repl {
		repl[i].ID, repl[i].Tenant, repl[i].DocID = fmt.Sprintf("d9-new%d", i), "t0", "d9"
	}
	for _, st := range []*Store{a, b} {
		if err := st.Upsert(ctx, more); err != nil {
			t.Fatal(err)
		}
		if err := st.DeleteDocument(ctx, retrieval.Scope{Tenant: "t1"}, "d7"); err != nil {
			t.Fatal(err)
		}
		if err := st.ReplaceDocument(ctx, retrieval.Scope{Tenant: "t0"}, "d9", repl); err != nil {
			t.Fatal(err)
		}
		if err := st.Compact(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if dump(a) != dump(b) {
		t.Fatal("after writes and a compaction, the store with vectors on disk differs from the one with them in memory")
	}
	q := denseChunks(rng, 10, 32, 3)
	for _, c := range q {
		req := retrieval.Request{Vector: c.Vector, K: 10, Scope: retrieval.Scope{Tenant: "t2"}}
		x, err := a.SearchDense(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		y, err := b.SearchDense(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if common(ids(x), ids(y)) < 8 {
			t.Fatalf("int8 scores found %v, exact ones %v", ids(x), ids(y))
		}
	}
	want = dump(b)
	for _, st := range []*Store{a, b} {
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
	}
	for _, o := range []Options{spilled, resident} {
		st, err := Open(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		if dump(st) != want {
			t.Fatalf("reopened %s: differs", o.Dir)
		}
		st.Close()
	}
}

// A damaged vector in the part of dense.idx that an open does not read is
// found by the compaction that needs it: a *CorruptError naming dense.idx,
// nothing lost, and the next open builds the index from the records.
func TestDenseIndexLeftOnDiskDamaged(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(9, 10))
	dir := t.TempDir()
	s, err := Open(ctx, Options{Dir: dir, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Upsert(ctx, denseChunks(rng, 3000, 32, 0)); err != nil {
		t.Fatal(err)
	}
	want := dump(s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, denseName)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The float32 vectors fill the file's middle: 3000 of 32 floats.
	b[len(b)/2] ^= 0x08
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	o := Options{Dir: dir, NoSync: true, Vector: vector.Options{ResidentLimit: 100}}
	s, err = Open(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if s.vec.Resident() {
		t.Fatal("the dense index was read into memory")
	}
	err = s.Compact(ctx)
	var ce *CorruptError
	if !errors.As(err, &ce) || ce.File != denseName || !errors.Is(err, retrieval.ErrCorrupt) {
		t.Fatalf("compaction over a damaged vector: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err == nil {
		t.Fatal("the damaged dense.idx is still there")
	}
	s, err = Open(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if dump(s) != want {
		t.Fatal("the store rebuilt from its records differs from the one written")
	}
	if err := s.Compact(ctx); err != nil {
		t.Fatal(err)
	}
}

func common(a, b []string) int {
	n := 0
	for _, x := range a {
		if slices.Contains(b, x) {
			n++
		}
	}
	return n
}

// TestWindow: fields taken through a window, of sizes up to the reader's
// buffer and straddling its refills, are the stream's bytes in order,
// with the stream's checksum and count; a field past the end is an
// unexpected EOF.
func TestWindow(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	data := make([]byte, 20000)
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	for _, size := range []int{16, 64, 4096} {
		r := bufio.NewReaderSize(bytes.NewReader(data), size)
		w := &window{r: r}
		var got []byte
		for len(got) < len(data)-size {
			b, err := w.next(1 + rng.IntN(size))
			if err != nil {
				t.Fatalf("size %d at %d: %v", size, len(got), err)
			}
			got = append(got, b...)
		}
		if sum := w.done(); sum != crc32Update(0, got) || w.n != int64(len(got)) {
			t.Fatalf("size %d: checksum or count of %d bytes wrong (count %d)", size, len(got), w.n)
		}
		if !bytes.Equal(got, data[:len(got)]) {
			t.Fatalf("size %d: bytes differ", size)
		}
		rest, _ := io.ReadAll(r)
		if !bytes.Equal(rest, data[len(got):]) {
			t.Fatalf("size %d: the reader is not at the first byte not taken", size)
		}
		w = &window{r: bufio.NewReaderSize(bytes.NewReader(data[:10]), size)}
		if _, err := w.next(11); !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("size %d: a field past the end: %v", size, err)
		}
	}
}

// The int8 copies of a large index are mapped from dense.idx unread and
// checked before their first use, and by the writer in the background
// (checkCopies). With every copy damaged, a copy made again from its
// float32 original answers as the intact file does; the check reports the
// damage as repaired and drops the file, which Close writes anew. With
// the originals damaged too, dense searches fail with ErrCorrupt rather
// than score from cleared copies, and the next open builds the index
// from the snapshot, losing nothing.
func TestDenseCopiesCheckedAfterOpen(t *testing.T) {
	lowAdopt(t)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(11, 12))
	// 8,300 copies of 1,024 bytes: past the size from which the vector
	// index maps them.
	const n, dim = 8300, 1024
	dir := t.TempDir()
	s, err := Open(ctx, Options{Dir: dir, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	chunks := denseChunks(rng, n, dim, 0)
	if err := s.Upsert(ctx, chunks); err != nil {
		t.Fatal(err)
	}
	want := dump(s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	o := Options{Dir: dir, NoSync: true, Vector: vector.Options{ResidentLimit: 100}}
	ref := o
	ref.Dir = copyDir(t, dir)
	intact, err := Open(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	defer intact.Close()
	search := func(st *Store, c retrieval.Chunk) ([]string, error) {
		hits, err := st.SearchDense(ctx, retrieval.Request{Vector: c.Vector, K: 10, Scope: retrieval.Scope{Tenant: c.Tenant}})
		return ids(hits), err
	}

	// The vector index starts after dense.idx's head; its int8 copies
	// after its 64-byte header, the ids, the float32 vectors and two
	// checksums a vector.
	h := readRecordsHint(dir)
	if h == nil {
		t.Fatal("no records file")
	}
	path := filepath.Join(dir, denseName)
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	floats := h.head + 64 + 4*n
	copies := floats + 4*dim*n + 8*n
	damage := func(originals bool) {
		b := slices.Clone(good)
		for i := range int64(n) {
			b[copies+i*dim+i%dim] ^= 0x40
			if originals {
				b[floats+i*4*dim+5] ^= 0x40
			}
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	damage(false)
	// Held until the test has seen the copies unchecked, as the check
	// that starts at once could otherwise have checked them all.
	hold := make(chan struct{})
	scrubHold = func() { <-hold }
	t.Cleanup(func() { scrubHold = nil })
	s, err = Open(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	unchecked := s.vec.CopiesUnchecked()
	close(hold)
	if !unchecked {
		t.Fatal("the int8 copies were not mapped unchecked")
	}
	for i := 0; i < n; i += 97 {
		c := chunks[i]
		got, err := search(s, c)
		if err != nil {
			t.Fatal(err)
		}
		if exp, _ := search(intact, c); !slices.Equal(got, exp) {
			t.Fatalf("repaired copies found %v, the intact file %v", got, exp)
		}
	}
	s.waitScrub()
	done, dmg := s.Verified()
	var ce *CorruptError
	if !done || !errors.As(dmg, &ce) || ce.File != denseName || !ce.Rewritten || !strings.Contains(ce.Reason, fmt.Sprintf("%d int8 copies", n)) {
		t.Fatalf("Verified: %v, %v", done, dmg)
	}
	if _, err := os.Stat(path); err == nil {
		t.Fatal("dense.idx was not dropped")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s, err = Open(ctx, o); err != nil {
		t.Fatal(err)
	}
	s.waitScrub()
	if done, dmg := s.Verified(); !done || dmg != nil || dump(s) != want || !s.denseOnDisk {
		t.Fatalf("reopened after the repair: verified %v, %v; same %v; adopted dense.idx %v", done, dmg, dump(s) == want, s.denseOnDisk)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	good, err = os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	damage(true)
	if s, err = Open(ctx, o); err != nil {
		t.Fatal(err)
	}
	if _, err := search(s, chunks[0]); !errors.Is(err, retrieval.ErrCorrupt) {
		t.Fatalf("search over a copy and original both damaged: %v", err)
	}
	s.waitScrub()
	if done, dmg := s.Verified(); !done || !errors.As(dmg, &ce) || ce.File != denseName || ce.Rewritten {
		t.Fatalf("Verified: %v, %v", done, dmg)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err == nil {
		t.Fatal("the damaged dense.idx is still there")
	}
	if s, err = Open(ctx, o); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if dump(s) != want {
		t.Fatal("the store built from its snapshot differs from the one written")
	}
	got, err := search(s, chunks[1])
	if exp, _ := search(intact, chunks[1]); err != nil || !slices.Equal(got, exp) {
		t.Fatalf("after the rebuild: %v, %v; the intact file %v", got, err, exp)
	}
}
