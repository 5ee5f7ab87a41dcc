package vector

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/adaptrag/adaptrag/retrieval"
)

func addBatches(t *testing.T, ix *Index, ids []uint32, vs [][]float32, size int) {
	t.Helper()
	for i := 0; i < len(ids); i += size {
		j := min(i+size, len(ids))
		if err := ix.AddBatch(ids[i:j], vs[i:j]); err != nil {
			t.Fatal(err)
		}
	}
}

// TestAddBatch: an index built by batches (new ids, then replacements of
// existing ones, then removals) keeps every invariant, finds what one
// built by Add finds, and is the same index for the same batches.
func TestAddBatch(t *testing.T) {
	const n, dim = 12000, 32
	vecs := clustered(51, n+3000, dim, 60)
	ids := make([]uint32, n)
	for i := range ids {
		ids[i] = uint32(i)
	}
	build := func() *Index {
		ix := New(dim, Options{})
		addBatches(t, ix, ids, vecs[:n], 500)
		// Replace 3000 existing ids with new vectors, in batches.
		r := rand.New(rand.NewPCG(52, 53))
		var rid []uint32
		for _, p := range r.Perm(n)[:3000] {
			rid = append(rid, uint32(p))
		}
		addBatches(t, ix, rid, vecs[n:], 300)
		for _, p := range r.Perm(n)[:1000] {
			ix.Remove(uint32(p))
		}
		return ix
	}
	a, b := build(), build()
	if err := a.check(); err != nil {
		t.Fatal(err)
	}
	var wa, wb bytes.Buffer
	if _, err := a.WriteTo(&wa); err != nil {
		t.Fatal(err)
	}
	if _, err := b.WriteTo(&wb); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(wa.Bytes(), wb.Bytes()) {
		t.Error("two builds from the same batches differ")
	}
	if a.Len() != n-1000 || len(a.lists) < 8 {
		t.Fatalf("Len %d (want %d), %d lists", a.Len(), n-1000, len(a.lists))
	}
	one := New(dim, Options{})
	for i := range n {
		if err := one.Add(uint32(i), vecs[i]); err != nil {
			t.Fatal(err)
		}
	}
	queries := clustered(54, 60, dim, 60)
	fresh := New(dim, Options{})
	addBatches(t, fresh, ids, vecs[:n], 1000)
	rb, ra := recallOf(fresh, queries, 20), recallOf(one, queries, 20)
	if rb < ra-0.02 {
		t.Errorf("recall@20 built by batches %.3f, one at a time %.3f", rb, ra)
	}
	t.Logf("recall@20: batches %.3f, one at a time %.3f", rb, ra)
}

// TestAddBatchRejects: a bad vector anywhere in the batch fails it before
// anything changes; a batch repeating an id keeps the last vector.
func TestAddBatchRejects(t *testing.T) {
	const dim = 16
	vecs := clustered(61, 3000, dim, 10)
	ix := New(dim, Options{})
	ids := make([]uint32, 2000)
	for i := range ids {
		ids[i] = uint32(i)
	}
	addBatches(t, ix, ids, vecs[:2000], 2000)
	var before bytes.Buffer
	if _, err := ix.WriteTo(&before); err != nil {
		t.Fatal(err)
	}
	bad := make([][]float32, 100)
	copy(bad, vecs[2000:2100])
	bad[70] = make([]float32, dim) // zero
	bids := make([]uint32, 100)
	for i := range bids {
		bids[i] = uint32(5000 + i)
	}
	if err := ix.AddBatch(bids, bad); !errors.Is(err, retrieval.ErrInvalid) {
		t.Fatalf("zero vector: err = %v, want ErrInvalid", err)
	}
	bad[70] = vecs[0][:dim-1]
	if err := ix.AddBatch(bids, bad); !errors.Is(err, retrieval.ErrDimension) {
		t.Fatalf("short vector: err = %v, want ErrDimension", err)
	}
	if err := ix.AddBatch(bids[:3], bad); !errors.Is(err, retrieval.ErrInvalid) {
		t.Fatalf("3 ids for 100 vectors: err = %v, want ErrInvalid", err)
	}
	var after bytes.Buffer
	if _, err := ix.WriteTo(&after); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before.Bytes(), after.Bytes()) {
		t.Fatal("a rejected batch changed the index")
	}
	rep := make([]uint32, 100)
	for i := range rep {
		rep[i] = uint32(7000 + i%50) // each id twice
	}
	if err := ix.AddBatch(rep, vecs[2000:2100]); err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		got, ok := ix.Vector(uint32(7000 + i))
		if !ok || cosine(got, vecs[2050+i]) < 0.99999 {
			t.Fatalf("id %d does not hold the batch's last vector for it", 7000+i)
		}
	}
	if err := ix.check(); err != nil {
		t.Fatal(err)
	}
}
