package vector

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"
)

// touch reads every vector score reads, in memory and left on disk, at a
// dimension that is no multiple of the cache line: the sum of the bytes
// and float bits at the offsets it documents.
func TestTouch(t *testing.T) {
	const dim = 100
	r := rand.New(rand.NewPCG(85, 86))
	ix := New(dim, Options{ExactThreshold: -1}) // trained: spilled past the limit
	v := make([]float32, dim)
	add := func(ix *Index, id uint32) {
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		if err := ix.Add(id, v); err != nil {
			t.Fatal(err)
		}
	}
	for id := range uint32(50) {
		add(ix, id)
	}
	var buf bytes.Buffer
	if _, err := ix.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	ix, err := ReadIndexAt(bytes.NewReader(buf.Bytes()), 0, Options{ResidentLimit: 1})
	if err != nil {
		t.Fatal(err)
	}
	add(ix, 50) // a slot in memory after the 50 on disk
	slots := []uint32{0, 7, 49, 50}
	var want uint64
	for _, s := range slots {
		if s < ix.nsp {
			c := ix.sp.code(s)
			for _, o := range []int{0, 64, dim - 1} {
				want += uint64(c[o])
			}
			continue
		}
		f := ix.vec(s)
		for _, o := range []int{0, 16, 32, 48, 64, 80, 96, dim - 1} {
			want += uint64(math.Float32bits(f[o]))
		}
	}
	if ix.nsp != 50 {
		t.Fatalf("nsp %d, want 50", ix.nsp)
	}
	if got := ix.touch(slots); got != want {
		t.Fatalf("touch %d, want %d", got, want)
	}
}
