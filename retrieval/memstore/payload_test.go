package memstore

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// idSet against a map, through growth past the bitmap switch, shrinking
// back, and ids inserted out of order.
func TestIDSet(t *testing.T) {
	for seed := range uint64(6) {
		r := rand.New(rand.NewPCG(seed, 3))
		var s idSet
		want := map[uint32]bool{}
		span := uint32([]int{300, 2000, 50_000}[seed%3])
		sawBits, sawBack := false, false
		for step := range 20_000 {
			id := uint32(r.IntN(int(span)))
			// Phases: mostly adds, then only removes.
			if (step/5000)%2 == 0 && r.IntN(10) < 9 {
				s.add(id)
				want[id] = true
			} else {
				if (step/5000)%2 == 1 {
					id = uint32(step*7) % span // sweeps every id: the set drains
				}
				s.remove(id)
				delete(want, id)
			}
			if s.bits != nil {
				sawBits = true
			} else if sawBits {
				sawBack = true
			}
			if step%997 == 0 || step == 19_999 {
				if s.len() != len(want) {
					t.Fatalf("seed %d step %d: len %d, want %d", seed, step, s.len(), len(want))
				}
				got := s.appendTo(nil)
				exp := make([]uint32, 0, len(want))
				for id := range want {
					exp = append(exp, id)
				}
				slices.Sort(exp)
				if !slices.Equal(got, exp) {
					t.Fatalf("seed %d step %d: ids differ", seed, step)
				}
				var each []uint32
				s.each(func(id uint32) { each = append(each, id) })
				if !slices.Equal(each, exp) {
					t.Fatalf("seed %d step %d: each differs", seed, step)
				}
				for range 50 {
					id := uint32(r.IntN(int(span) + 100))
					if s.has(id) != want[id] {
						t.Fatalf("seed %d step %d: has(%d) = %v", seed, step, id, !want[id])
					}
				}
			}
		}
		if seed%3 == 1 && (!sawBits || !sawBack) {
			t.Errorf("seed %d: the set never went to a bitmap and back (bits %v, back %v)", seed, sawBits, sawBack)
		}
	}
}
