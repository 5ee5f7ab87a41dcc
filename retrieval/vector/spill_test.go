package vector

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// spillFile writes ix to a file after a prefix of junk (as the store's
// dense index file has its key table first) and returns the file, open,
// and the offset of the index in it.
func spillFile(t *testing.T, ix *Index) (*os.File, int64) {
	t.Helper()
	var buf bytes.Buffer
	buf.WriteString("a prefix that is not part of the index\x00")
	off := int64(buf.Len())
	if _, err := ix.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "vec.idx")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f, off
}

// An index read by ReadIndexAt past its resident limit keeps only int8
// copies in memory: Vector still returns the exact originals, searches
// find what the resident index finds, and the index writes itself out
// whole again.
func TestSpilledIndex(t *testing.T) {
	vecs := clustered(51, 6000, 48, 40)
	ix := buildIndex(t, vecs, Options{ListSize: 256})
	f, off := spillFile(t, ix)
	sp, err := ReadIndexAt(f, off, Options{ResidentLimit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if sp.Resident() || !ix.Resident() {
		t.Fatalf("Resident: spilled %v, built %v", sp.Resident(), ix.Resident())
	}
	if err := sp.check(); err != nil {
		t.Fatal(err)
	}
	for id := range uint32(len(vecs)) {
		want, _ := ix.Vector(id)
		got, ok, err := sp.ReadVector(nil, id)
		if err != nil || !ok || !slices.Equal(got, want) {
			t.Fatalf("vector %d: %v %v, differs: %v", id, ok, err, !slices.Equal(got, want))
		}
	}
	queries := clustered(52, 40, 48, 40)
	var same, total int
	for _, q := range queries {
		a, b := ix.Search(q, 20, nil), sp.Search(q, 20, nil)
		ids := map[uint32]float32{}
		for _, h := range a {
			ids[h.ID] = h.Score
		}
		for _, h := range b {
			if s, ok := ids[h.ID]; ok {
				same++
				if d := s - h.Score; d > 0.01 || d < -0.01 {
					t.Fatalf("id %d scores %v from its int8 copy, %v exactly", h.ID, h.Score, s)
				}
			}
		}
		total += len(a)
	}
	if r := float64(same) / float64(total); r < 0.95 {
		t.Fatalf("spilled index finds %.3f of the resident one's top 20", r)
	}
	back := roundTrip(t, sp)
	if !back.Resident() {
		t.Fatal("ReadIndex left vectors on disk")
	}
	sameIndex(t, ix, back, queries)
	// A reader that only reads: ReadIndexAt at the resident limit keeps all.
	res, err := ReadIndexAt(f, off, Options{ResidentLimit: len(vecs)})
	if err != nil || !res.Resident() {
		t.Fatalf("at the limit: resident %v, %v", res != nil && res.Resident(), err)
	}
	sameIndex(t, ix, res, queries)
}

// Writes to a spilled index (replacements, removals that move the last
// vector into the freed slot, from the file or from memory, and inserts,
// one at a time and by batch) keep the invariants and every vector exact,
// through WriteTo and another ReadIndexAt.
func TestSpilledWrites(t *testing.T) {
	const dim = 32
	vecs := clustered(53, 9000, dim, 30)
	built := buildIndex(t, vecs[:5000], Options{ListSize: 200})
	f, off := spillFile(t, built)
	ix, err := ReadIndexAt(f, off, Options{ResidentLimit: 100})
	if err != nil {
		t.Fatal(err)
	}
	live := map[uint32]int{}
	for i := range 5000 {
		live[uint32(i)] = i
	}
	r := rand.New(rand.NewPCG(54, 55))
	next := 5000
	for step := range 6000 {
		switch op := r.IntN(10); {
		case op < 3: // replace a stored id
			id, v := uint32(r.IntN(5000)), r.IntN(len(vecs))
			if err := ix.Add(id, vecs[v]); err != nil {
				t.Fatal(err)
			}
			live[id] = v
		case op < 6:
			id := uint32(r.IntN(next))
			ix.Remove(id)
			delete(live, id)
		case op < 9 && next < len(vecs):
			if err := ix.Add(uint32(next), vecs[next]); err != nil {
				t.Fatal(err)
			}
			live[uint32(next)] = next
			next++
		default:
			var ids []uint32
			var vs [][]float32
			for range batchMin {
				id, v := uint32(r.IntN(9000)), r.IntN(len(vecs))
				if _, dup := slices.BinarySearch(ids, id); dup || slices.Contains(ids, id) {
					continue
				}
				ids, vs = append(ids, id), append(vs, vecs[v])
				live[id] = v
			}
			if err := ix.AddBatch(ids, vs); err != nil {
				t.Fatal(err)
			}
		}
		if step%1000 == 999 {
			if err := ix.check(); err != nil {
				t.Fatalf("step %d: %v", step, err)
			}
		}
	}
	exact := func(ix *Index, what string) {
		t.Helper()
		if ix.Len() != len(live) {
			t.Fatalf("%s: %d vectors, want %d", what, ix.Len(), len(live))
		}
		for id, v := range live {
			got, ok, err := ix.ReadVector(nil, id)
			if err != nil || !ok || cosine(got, vecs[v]) < 0.999999 {
				t.Fatalf("%s: id %d: %v %v", what, id, ok, err)
			}
		}
	}
	exact(ix, "after the writes")
	f2, off2 := spillFile(t, ix)
	again, err := ReadIndexAt(f2, off2, Options{ResidentLimit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if err := again.check(); err != nil {
		t.Fatal(err)
	}
	exact(again, "written and read again")
	again.setSearch(Options{Probe: 1e9})
	for id, v := range live {
		if h := again.Search(vecs[v], 1, nil); len(h) != 1 || h[0].Score < 0.99 {
			t.Fatalf("id %d: its own vector's best hit is %v", id, h)
		}
	}
}

// A damaged vector in the file is found when it is read, never returned:
// ReadVector reports ErrCorrupt, WriteTo fails, and ReadIndex (which reads
// every vector) rejects the file.
func TestSpilledCorrupt(t *testing.T) {
	ix := buildIndex(t, clustered(56, 3000, 16, 10), Options{})
	var buf bytes.Buffer
	if _, err := ix.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	file := buf.Bytes()
	// The vectors follow the 72-byte header and the ids.
	at := 72 + 4*3000 + 16*4*1234 + 5
	file[at] ^= 0x40
	sp, err := ReadIndexAt(bytes.NewReader(file), 0, Options{ResidentLimit: 10})
	if err != nil {
		t.Fatalf("the vectors are not read at open: %v", err)
	}
	id := sp.ids[1234]
	if _, ok, err := sp.ReadVector(nil, id); ok || !errors.Is(err, ErrCorrupt) {
		t.Fatalf("damaged vector: ok %v, err %v", ok, err)
	}
	if _, ok := sp.Vector(id); ok {
		t.Fatal("Vector returned a damaged vector")
	}
	if _, err := sp.WriteTo(&bytes.Buffer{}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("WriteTo: %v", err)
	}
	if _, err := ReadIndex(bytes.NewReader(file), Options{}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("ReadIndex: %v", err)
	}
	// A file cut short of its vectors fails at open.
	if _, err := ReadIndexAt(bytes.NewReader(file[:at]), 0, Options{ResidentLimit: 10}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("cut short: %v", err)
	}
}
