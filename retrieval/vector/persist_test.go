package vector

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// sameIndex checks that b answers every query as a does and holds the same
// vectors.
func sameIndex(t *testing.T, a, b *Index, queries [][]float32) {
	t.Helper()
	if a.unexplained() != b.unexplained() {
		t.Fatalf("reloaded index leaves %v of the variance unexplained, want %v", b.unexplained(), a.unexplained())
	}
	if a.Len() != b.Len() || a.Dim() != b.Dim() {
		t.Fatalf("reloaded index has %d vectors of %d dims, want %d of %d", b.Len(), b.Dim(), a.Len(), a.Dim())
	}
	for _, q := range queries {
		if x, y := a.Search(q, 20, nil), b.Search(q, 20, nil); !slices.Equal(x, y) {
			t.Fatalf("reloaded index answers differently:\n%v\n%v", y, x)
		}
	}
	for _, id := range a.ids {
		x, _ := a.Vector(id)
		y, ok := b.Vector(id)
		if !ok || !slices.Equal(x, y) {
			t.Fatalf("vector %d differs after reload", id)
		}
	}
}

func roundTrip(t *testing.T, ix *Index) *Index {
	t.Helper()
	var buf bytes.Buffer
	n, err := ix.WriteTo(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(buf.Len()) {
		t.Fatalf("WriteTo reported %d bytes, wrote %d", n, buf.Len())
	}
	got, err := ReadIndex(&buf, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestPersistRoundTrip(t *testing.T) {
	queries := clustered(22, 10, 48, 8)
	for name, o := range map[string]Options{"small": {}, "trained": {}, "exact": {Exact: true}, "seed": {Seed: 77, ExactThreshold: -1}} {
		t.Run(name, func(t *testing.T) {
			n := 3000
			if name == "small" {
				n = 300
			}
			ix := buildIndex(t, clustered(21, n, 48, 8), o)
			got := roundTrip(t, ix)
			sameIndex(t, ix, got, queries)
			if got.trained != ix.trained || got.exact != ix.exact || got.seed != ix.seed {
				t.Fatalf("reloaded trained/exact/seed = %v/%v/%d, want %v/%v/%d", got.trained, got.exact, got.seed, ix.trained, ix.exact, ix.seed)
			}
		})
	}
	t.Run("empty", func(t *testing.T) {
		got := roundTrip(t, New(16, Options{}))
		if got.Len() != 0 || got.Dim() != 16 {
			t.Fatalf("empty index reloaded with %d vectors of %d dims", got.Len(), got.Dim())
		}
	})
}

// Writes after a reload keep the index consistent with one that never
// went through a file.
func TestPersistThenWrite(t *testing.T) {
	vecs := clustered(23, 4000, 32, 10)
	a := buildIndex(t, vecs[:3000], Options{})
	b := roundTrip(t, a)
	for _, ix := range []*Index{a, b} {
		for i := 3000; i < 4000; i++ {
			if err := ix.Add(uint32(i), vecs[i]); err != nil {
				t.Fatal(err)
			}
		}
		for i := 0; i < 4000; i += 7 {
			ix.Remove(uint32(i))
		}
		for i := 1; i < 4000; i += 11 { // replace
			if err := ix.Add(uint32(i), vecs[(i*13)%4000]); err != nil {
				t.Fatal(err)
			}
		}
	}
	sameIndex(t, a, b, clustered(24, 10, 32, 10))
	sameIndex(t, a, roundTrip(t, b), clustered(24, 10, 32, 10))
}

func TestReadCorrupt(t *testing.T) {
	ix := buildIndex(t, clustered(25, 2500, 16, 6), Options{})
	var buf bytes.Buffer
	if _, err := ix.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	file := buf.Bytes()
	// Every truncation, sampled, and a flipped bit at sampled offsets.
	for cut := 0; cut < len(file); cut += 1 + len(file)/97 {
		if _, err := ReadIndex(bytes.NewReader(file[:cut]), Options{}); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("file cut at %d of %d: err = %v, want ErrCorrupt", cut, len(file), err)
		}
	}
	for off := 0; off < len(file); off += 1 + len(file)/131 {
		bad := slices.Clone(file)
		bad[off] ^= 0x10
		if _, err := ReadIndex(bytes.NewReader(bad), Options{}); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("bit flipped at %d of %d: err = %v, want ErrCorrupt", off, len(file), err)
		}
	}
	if _, err := ReadIndex(bytes.NewReader(append(slices.Clone(file), 0)), Options{}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("trailing byte: err = %v, want ErrCorrupt", err)
	}
	if _, err := ReadIndex(bytes.NewReader(file), Options{}); err != nil {
		t.Fatalf("intact file: %v", err)
	}
	// Left on disk, the vectors are checked when read (TestSpilledCorrupt);
	// a flipped bit anywhere else fails the open.
	vecs := [2]int{72 + 4*ix.Len(), 72 + 4*ix.Len() + 4*ix.Dim()*ix.Len()}
	for off := 0; off < len(file); off += 1 + len(file)/131 {
		if off >= vecs[0] && off < vecs[1] {
			continue
		}
		bad := slices.Clone(file)
		bad[off] ^= 0x10
		if _, err := ReadIndexAt(bytes.NewReader(bad), 0, Options{ResidentLimit: 10}); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("left on disk, bit flipped at %d of %d: err = %v, want ErrCorrupt", off, len(file), err)
		}
	}
}

func FuzzReadIndex(f *testing.F) {
	for _, n := range []int{0, 5, 1200} {
		ix := New(8, Options{})
		for i, v := range clustered(26, n, 8, 3) {
			if err := ix.Add(uint32(i), v); err != nil {
				f.Fatal(err)
			}
		}
		var buf bytes.Buffer
		if _, err := ix.WriteTo(&buf); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes())
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ix, err := ReadIndex(bytes.NewReader(data), Options{})
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("err = %v, want ErrCorrupt", err)
			}
			return
		}
		// Whatever it accepted must be usable.
		q := make([]float32, ix.Dim())
		q[0] = 1
		ix.Search(q, 5, nil)
		ix.SearchAmong(q, 5, []uint32{0, 1, 2})
		// Left on disk, it is as usable, and its vectors read back or
		// fail cleanly.
		sp, err := ReadIndexAt(bytes.NewReader(data), 0, Options{ResidentLimit: 1})
		if err != nil {
			t.Fatalf("ReadIndex accepted what ReadIndexAt rejects: %v", err)
		}
		sp.Search(q, 5, nil)
		for _, id := range sp.ids {
			if _, _, err := sp.ReadVector(nil, id); err != nil {
				t.Fatalf("vector %d of a file ReadIndex accepted: %v", id, err)
			}
		}
	})
}

func TestSearchAmong(t *testing.T) {
	vecs := clustered(27, 3000, 32, 8)
	ix := buildIndex(t, vecs, Options{})
	ids := []uint32{5, 900, 17, 2999, 17, 123456, 40, 41, 42}
	in := map[uint32]bool{}
	for _, id := range ids {
		in[id] = true
	}
	for _, q := range clustered(28, 5, 32, 8) {
		got := ix.SearchAmong(q, 4, ids)
		want := ix.SearchExact(q, 4, func(id uint32) bool { return in[id] })
		if !slices.Equal(got, want) {
			t.Fatalf("SearchAmong = %v, want %v", got, want)
		}
		if all := ix.SearchAmong(q, 50, ids); len(all) != 7 {
			t.Fatalf("SearchAmong of 7 distinct present ids returned %d", len(all))
		}
	}
	if got := ix.SearchAmong(vecs[0], 5, []uint32{999_999}); got != nil {
		t.Errorf("absent ids only: %v, want nil", got)
	}
}

// TestSearchAmongCoded: past amongExactMax listed ids, SearchAmong ranks
// them by their codes and scores the best exactly; it must still return
// only listed ids, best first, and find nearly all of the exact top k.
func TestSearchAmongCoded(t *testing.T) {
	vecs := clustered(31, 20000, 64, 40)
	ix := buildIndex(t, vecs, Options{})
	var ids []uint32
	in := map[uint32]bool{}
	for id := uint32(1); id < 20000; id += 3 { // 6,667 listed
		ids = append(ids, id)
		in[id] = true
	}
	var hit, total int
	for _, q := range clustered(32, 40, 64, 40) {
		got := ix.SearchAmong(q, 50, ids)
		want := ix.SearchExact(q, 50, func(id uint32) bool { return in[id] })
		if len(got) != 50 {
			t.Fatalf("SearchAmong returned %d, want 50", len(got))
		}
		for i, r := range got {
			if !in[r.ID] {
				t.Fatalf("SearchAmong returned id %d, which is not listed", r.ID)
			}
			if i > 0 && r.Score > got[i-1].Score {
				t.Fatalf("results not best first at %d: %v", i, got[:i+1])
			}
		}
		found := map[uint32]bool{}
		for _, r := range got {
			found[r.ID] = true
		}
		for _, r := range want {
			if found[r.ID] {
				hit++
			}
		}
		total += len(want)
	}
	if r := float64(hit) / float64(total); r < 0.95 {
		t.Errorf("recall@50 of the coded SearchAmong = %.3f, want >= 0.95", r)
	} else {
		t.Logf("recall@50 %.3f over %d listed ids", r, len(ids))
	}
}

func TestRemap(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const n, dim = 3000, 32
	ix := New(dim, Options{})
	vecs := make([][]float32, n)
	for i := range vecs {
		vecs[i] = make([]float32, dim)
		for j := range vecs[i] {
			vecs[i][j] = float32(rng.NormFloat64())
		}
		if err := ix.Add(uint32(i), vecs[i]); err != nil {
			t.Fatal(err)
		}
	}
	// Old id i becomes n-1-i+100: a permutation onto other numbers.
	if err := ix.Remap(func(old uint32) (uint32, bool) { return n - 1 - old + 100, true }); err != nil {
		t.Fatal(err)
	}
	for i := range vecs {
		got, ok := ix.Vector(uint32(n - 1 - i + 100))
		if !ok {
			t.Fatalf("vector %d missing under its new id", i)
		}
		want := slices.Clone(vecs[i])
		var norm float64
		for _, x := range want {
			norm += float64(x) * float64(x)
		}
		for j := range want {
			want[j] = float32(float64(want[j]) / math.Sqrt(norm))
		}
		for j := range got {
			if math.Abs(float64(got[j]-want[j])) > 1e-6 {
				t.Fatalf("vector %d changed", i)
			}
		}
		if _, ok := ix.Vector(uint32(i)); ok && uint32(i) < 100 {
			t.Fatalf("old id %d still there", i)
		}
	}
	hits := ix.Search(vecs[5], 1, func(id uint32) bool { return id == n-1-5+100 })
	if len(hits) != 1 || hits[0].ID != n-1-5+100 {
		t.Fatalf("filtered search after remap: %v", hits)
	}
	if err := ix.Remap(func(uint32) (uint32, bool) { return 1, true }); err == nil {
		t.Fatal("a remap of every id to one id succeeded")
	}
}

// TestAmongCost: SearchAmong's choice between exact scoring and the codes
// weighs a listed vector by what exact scoring reads: its int8 copy on an
// index left on disk, eight times that for a float32 vector in memory.
func TestAmongCost(t *testing.T) {
	vecs := clustered(33, 3000, 64, 10)
	ix := buildIndex(t, vecs, Options{})
	var buf bytes.Buffer
	if _, err := ix.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	onDisk, err := ReadIndexAt(bytes.NewReader(buf.Bytes()), 0, Options{ResidentLimit: 1})
	if err != nil {
		t.Fatal(err)
	}
	slots := []uint32{0, 5, 17, 2999}
	if got := ix.amongCost(slots); got != 8*len(slots) {
		t.Errorf("in memory: cost %d, want %d", got, 8*len(slots))
	}
	if got := onDisk.amongCost(slots); got != len(slots) {
		t.Errorf("on disk: cost %d, want %d", got, len(slots))
	}
	// A vector written after the load is in memory again.
	if err := onDisk.Add(3000, vecs[1]); err != nil {
		t.Fatal(err)
	}
	s, _ := onDisk.slot.Get(3000)
	if got := onDisk.amongCost([]uint32{s}); got != 8 {
		t.Errorf("a vector written after the load: cost %d, want 8", got)
	}
}
