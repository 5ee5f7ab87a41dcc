package memstore

import (
	"iter"
	"maps"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/adaptrag/adaptrag/retrieval"
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

// Loading records at once gives every live key the id a claim would, in
// a table large enough that keys go in by buckets of home slots (more
// slots than 2^16) and in small ones; it names a key held twice; and
// the loaded table takes later claims and removals like a claimed one.
func TestKeyTableLoad(t *testing.T) {
	for _, n := range []int{0, 5, 200_000} {
		r := rand.New(rand.NewPCG(uint64(n), 7))
		recs := make([]record, n)
		for i := range recs {
			if r.IntN(10) > 0 {
				recs[i] = record{Chunk: retrieval.Chunk{Tenant: "t" + strconv.Itoa(r.IntN(4)), ID: "c" + strconv.Itoa(i)}, live: true}
			}
		}
		tab := newKeyTable(0)
		if iid, dup := tab.load(recs); dup {
			t.Fatalf("n=%d: distinct keys reported %d as held twice", n, iid)
		}
		ref := map[key]uint32{}
		for i, rec := range recs {
			if rec.live {
				ref[key{rec.Tenant, rec.ID}] = uint32(i)
			}
		}
		if got := maps.Collect(tab.all(recs)); tab.len() != len(ref) || !maps.Equal(got, ref) {
			t.Fatalf("n=%d: loaded %d keys (%d yielded), want %d", n, tab.len(), len(got), len(ref))
		}
		for k, want := range ref {
			if got, ok := tab.get(recs, k.tenant, k.id); !ok || got != want {
				t.Fatalf("n=%d: get %v = %d %v, want %d", n, k, got, ok, want)
			}
		}
		// Remove a third, then claim new keys and old ones.
		for k, iid := range ref {
			if iid%3 == 0 {
				tab.del(recs, k.tenant, k.id)
				delete(ref, k)
			}
		}
		for i := range 1000 {
			k := key{"t9", "new" + strconv.Itoa(i)}
			iid := uint32(len(recs))
			recs = append(recs, record{Chunk: retrieval.Chunk{Tenant: k.tenant, ID: k.id}, live: true})
			if got, had := tab.claim(recs, k.tenant, k.id, iid); had || got != iid {
				t.Fatalf("n=%d: claim of a new key = %d %v", n, got, had)
			}
			ref[k] = iid
		}
		for k, want := range ref {
			if got, had := tab.claim(recs, k.tenant, k.id, 0); !had || got != want {
				t.Fatalf("n=%d: claim of a held key %v = %d %v, want %d", n, k, got, had, want)
			}
		}
		if tab.len() != len(ref) {
			t.Fatalf("n=%d: %d keys after the changes, want %d", n, tab.len(), len(ref))
		}
	}

	// The same key in two live records: the later one is named (whichever
	// goes in second), and a dead record's key does not count.
	recs := []record{
		{Chunk: retrieval.Chunk{Tenant: "a", ID: "x"}, live: true},
		{Chunk: retrieval.Chunk{Tenant: "a", ID: "x"}},
		{Chunk: retrieval.Chunk{Tenant: "b", ID: "x"}, live: true},
		{Chunk: retrieval.Chunk{Tenant: "a", ID: "y"}, live: true},
	}
	tab := newKeyTable(0)
	if iid, dup := tab.load(recs); dup {
		t.Fatalf("a dead record's key counted: %d", iid)
	}
	recs[1].live = true
	tab = newKeyTable(0)
	if iid, dup := tab.load(recs); !dup || (iid != 0 && iid != 1) {
		t.Fatalf("load of a key held twice = %d %v, want 0 or 1 and true", iid, dup)
	}
}
