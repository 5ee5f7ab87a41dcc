package memstore

import (
	"iter"
	"maps"
	"math/rand/v2"
	"strconv"
	"testing"
)

// The key table agrees with a map through random inserts, re-inserts and
// removals, across growth, with few tenants and many ids; and in a table
// of 8 slots whose keys all have the same home slot, so that every key
// shares one run and each removal must shift the run back.
func TestKeyTableMatchesMap(t *testing.T) {
	for _, collide := range []bool{false, true} {
		r := rand.New(rand.NewPCG(91, 92))
		tab := newKeyTable(0)
		var recs []record
		ref := map[key]uint32{}
		var free []uint32
		ops, draw := 20000, func() key {
			return key{"t" + strconv.Itoa(r.IntN(3)), "c" + strconv.Itoa(r.IntN(5001))}
		}
		if collide {
			// Six ids (the most 8 slots hold at 3/4) with one home.
			var same []key
			for i := 0; len(same) < 6; i++ {
				if k := (key{"", "k" + strconv.Itoa(i)}); tab.hash(k.tenant, k.id)&7 == 3 {
					same = append(same, k)
				}
			}
			ops, draw = 3000, func() key { return same[r.IntN(len(same))] }
		}
		for op := range ops {
			k := draw()
			switch r.IntN(3) {
			case 0, 1:
				next := uint32(len(recs))
				if len(free) > 0 {
					next = free[len(free)-1]
				}
				iid, had := tab.claim(recs, k.tenant, k.id, next)
				want, wantHad := ref[k]
				if had != wantHad || had && iid != want {
					t.Fatalf("op %d: claim %v = %d %v, want %d %v", op, k, iid, had, want, wantHad)
				}
				if !had {
					if len(free) > 0 {
						free = free[:len(free)-1]
					} else {
						recs = append(recs, record{})
					}
					recs[iid].Tenant, recs[iid].ID = k.tenant, k.id
					ref[k] = iid
				}
			case 2:
				iid, ok := ref[k]
				tab.del(recs, k.tenant, k.id)
				if ok {
					delete(ref, k)
					recs[iid] = record{}
					free = append(free, iid)
				}
			}
			if tab.len() != len(ref) {
				t.Fatalf("op %d: %d keys, want %d", op, tab.len(), len(ref))
			}
			if op%97 == 0 {
				for k, want := range ref {
					if got, ok := tab.get(recs, k.tenant, k.id); !ok || got != want {
						t.Fatalf("op %d: get %v = %d %v, want %d", op, k, got, ok, want)
					}
				}
				if got := maps.Collect(tab.all(recs)); !maps.Equal(got, ref) {
					t.Fatalf("op %d: all yields %d keys, want %d", op, len(got), len(ref))
				}
			}
		}
		if _, ok := tab.get(recs, "t0", "absent"); ok {
			t.Fatal("an absent key was found")
		}
		if collide && len(tab.slots) != 8 {
			t.Fatalf("the colliding table grew to %d slots", len(tab.slots))
		}
	}
}

// all yields each key and its internal id, in no particular order.
func (t *keyTable) all(recs []record) iter.Seq2[key, uint32] {
	return func(yield func(key, uint32) bool) {
		for _, e := range t.slots {
			if e == 0 {
				continue
			}
			iid := uint32(e) - 1
			if !yield(key{recs[iid].Tenant, recs[iid].ID}, iid) {
				return
			}
		}
	}
}
