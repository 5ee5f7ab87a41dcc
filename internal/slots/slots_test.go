package slots

import (
	"math/rand/v2"
	"testing"
)

// Random sets and deletes of dense, just-past and scattered ids agree with
// a map, through the growth of the array (by Set and by Grow) and the
// moves out of the overflow map, with a reach that grows as the caller's
// slots do.
func TestTable(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var tab Table
	want := map[uint32]uint32{}
	slots := 0
	for step := range 200_000 {
		var id uint32
		switch r.IntN(10) {
		case 0:
			id = r.Uint32() // scattered: the map
		case 1:
			id = uint32(len(want) + r.IntN(5000)) // just past the array
		case 2:
			id = uint32(200_000 + r.IntN(100_000)) // far until the reach catches up
		default:
			id = uint32(r.IntN(len(want) + 10)) // dense
		}
		switch op := r.IntN(8); {
		case op < 2:
			tab.Del(id)
			delete(want, id)
		case op == 2 && step%97 == 0:
			tab.Grow(len(want) + 2048)
		default:
			slots += 3
			s := r.Uint32() >> 1
			tab.Set(id, s, 2*int64(slots)+1024)
			want[id] = s
		}
		if step%5000 == 0 || step == 199_999 {
			if tab.Len() != len(want) {
				t.Fatalf("step %d: Len %d, want %d", step, tab.Len(), len(want))
			}
			for id, s := range want {
				if got, ok := tab.Get(id); !ok || got != s {
					t.Fatalf("step %d: Get(%d) = %d, %v; want %d", step, id, got, ok, s)
				}
			}
			seen := 0
			tab.Each(func(id, s uint32) {
				seen++
				if want[id] != s {
					t.Fatalf("step %d: Each gave %d -> %d, want %d", step, id, s, want[id])
				}
			})
			if seen != len(want) {
				t.Fatalf("step %d: Each saw %d of %d", step, seen, len(want))
			}
		}
	}
	if len(tab.dense) > 4*len(want)+2*slots+1024+2048 {
		t.Fatalf("the array holds %d entries for %d ids", len(tab.dense), len(want))
	}
	if _, ok := tab.Get(1<<32 - 1); ok {
		if _, in := want[1<<32-1]; !in {
			t.Fatal("absent id found")
		}
	}
}
