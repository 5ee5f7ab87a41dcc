package vector

import (
	"math/rand/v2"
	"testing"
)

// TestSlotTable: random sets and deletes of dense and scattered ids agree
// with a map, through the growth of the array and the moves out of the
// overflow map.
func TestSlotTable(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var tab slotTable
	want := map[uint32]uint32{}
	for step := range 200000 {
		var id uint32
		switch r.IntN(10) {
		case 0:
			id = r.Uint32() // scattered: the map
		case 1:
			id = uint32(len(want) + r.IntN(5000)) // just past the array
		default:
			id = uint32(r.IntN(len(want) + 10)) // dense
		}
		if r.IntN(4) == 0 {
			tab.del(id)
			delete(want, id)
		} else {
			s := r.Uint32() >> 1
			tab.set(id, s)
			want[id] = s
		}
		if step%5000 == 0 || step == 199999 {
			if tab.len() != len(want) {
				t.Fatalf("step %d: len %d, want %d", step, tab.len(), len(want))
			}
			for id, s := range want {
				if got, ok := tab.get(id); !ok || got != s {
					t.Fatalf("step %d: get(%d) = %d, %v; want %d", step, id, got, ok, s)
				}
			}
			seen := 0
			tab.each(func(id, s uint32) {
				seen++
				if want[id] != s {
					t.Fatalf("step %d: each gave %d -> %d, want %d", step, id, s, want[id])
				}
			})
			if seen != len(want) {
				t.Fatalf("step %d: each saw %d of %d", step, seen, len(want))
			}
		}
	}
	if _, ok := tab.get(1<<32 - 1); ok {
		if _, in := want[1<<32-1]; !in {
			t.Fatal("absent id found")
		}
	}
}
