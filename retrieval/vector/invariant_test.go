package vector

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// check verifies the index's internal invariants: every id maps to a slot
// holding it, and once trained every slot is in exactly one list, at the
// position where says, under its id, with codes of the list's length.
func (ix *Index) check() error {
	if ix.slot.Len() != len(ix.ids) {
		return fmt.Errorf("%d ids, %d map entries", len(ix.ids), ix.slot.Len())
	}
	// Every block but the last holds vecBlock vectors; together they hold
	// one per id, and no block is left empty but a first one.
	floats := 0
	for b, blk := range ix.vecs {
		if b < len(ix.vecs)-1 && len(blk) != vecBlock*ix.dim {
			return fmt.Errorf("block %d of %d holds %d floats, want %d", b, len(ix.vecs), len(blk), vecBlock*ix.dim)
		}
		if len(blk) == 0 && b > 0 {
			return fmt.Errorf("block %d is empty", b)
		}
		floats += len(blk)
	}
	if want := max(len(ix.ids)-int(ix.nsp), 0) * ix.dim; floats != want {
		return fmt.Errorf("%d ids (%d on disk), %d floats", len(ix.ids), ix.nsp, floats)
	}
	if ix.sp != nil {
		for s := range ix.sp.over {
			if s >= ix.nsp || int(s) >= len(ix.ids) {
				return fmt.Errorf("an original is kept for slot %d, past the %d slots on disk or the %d in use", s, ix.nsp, len(ix.ids))
			}
		}
	}
	var bad error
	ix.slot.Each(func(id, s uint32) {
		if bad == nil && (int(s) >= len(ix.ids) || ix.ids[s] != id) {
			bad = fmt.Errorf("id %d maps to slot %d", id, s)
		}
	})
	if bad != nil {
		return bad
	}
	if !ix.trained {
		return nil
	}
	if len(ix.where) != len(ix.ids) {
		return fmt.Errorf("%d where entries for %d slots", len(ix.where), len(ix.ids))
	}
	seen := 0
	for l, L := range ix.lists {
		m := len(L.slots)
		if len(L.ids) != m || len(L.codes) != m*ix.words || len(L.factor) != m || len(L.pop) != m || len(L.fine) != m*ix.fineStride() {
			return fmt.Errorf("list %d: arrays of unequal length", l)
		}
		if m > ix.listMax {
			return fmt.Errorf("list %d holds %d, more than %d", l, m, ix.listMax)
		}
		for p, s := range L.slots {
			if w := ix.where[s]; int(w.list) != l || int(w.pos) != p {
				return fmt.Errorf("slot %d in list %d at %d, where says %v", s, l, p, w)
			}
			if L.ids[p] != ix.ids[s] {
				return fmt.Errorf("list %d entry %d has id %d, slot %d holds %d", l, p, L.ids[p], s, ix.ids[s])
			}
			seen++
		}
	}
	if seen != len(ix.ids) {
		return fmt.Errorf("lists hold %d entries for %d slots", seen, len(ix.ids))
	}
	return nil
}

// Random inserts, replacements and removals, with a reload now and then,
// keep the invariants and keep every stored vector its own nearest hit.
func TestRandomWrites(t *testing.T) {
	vecs := clustered(31, 6000, 24, 30)
	ix := New(24, Options{ListSize: 256})
	r := rand.New(rand.NewPCG(5, 5))
	live := map[uint32]int{} // id -> index of its vector in vecs
	for step := range 12000 {
		id := uint32(r.IntN(4000))
		switch op := r.IntN(10); {
		case op < 6:
			v := r.IntN(len(vecs))
			if err := ix.Add(id, vecs[v]); err != nil {
				t.Fatal(err)
			}
			live[id] = v
		default:
			ix.Remove(id)
			delete(live, id)
		}
		if step%3000 == 2999 {
			ix = roundTrip(t, ix)
		}
		if step%500 == 0 {
			if err := ix.check(); err != nil {
				t.Fatalf("step %d: %v", step, err)
			}
		}
	}
	if err := ix.check(); err != nil {
		t.Fatal(err)
	}
	if ix.Len() != len(live) || !ix.trained || len(ix.lists) < 4 {
		t.Fatalf("Len %d for %d live ids, trained %v, %d lists", ix.Len(), len(live), ix.trained, len(ix.lists))
	}
	ix.setSearch(Options{Probe: 1e9}) // every list: an exact answer for a stored vector
	for id, v := range live {
		got, ok := ix.Vector(id)
		if !ok || cosine(got, vecs[v]) < 0.99999 {
			t.Fatalf("id %d: stored vector differs", id)
		}
		if h := ix.Search(vecs[v], 1, nil); len(h) != 1 || h[0].Score < 0.9999 {
			t.Fatalf("id %d: its own vector's best hit is %v", id, h)
		}
	}
}

// TestBlocks: vectors spanning several blocks survive removals that empty
// the last blocks, adds that refill them, and a round trip through a file.
func TestBlocks(t *testing.T) {
	const dim = 8
	r := rand.New(rand.NewPCG(41, 42))
	vecs := clustered(43, 3*vecBlock+500, dim, 6)
	ix := New(dim, Options{})
	for i, v := range vecs {
		if err := ix.Add(uint32(i), v); err != nil {
			t.Fatal(err)
		}
	}
	if len(ix.vecs) != 4 {
		t.Fatalf("%d blocks for %d vectors, want 4", len(ix.vecs), len(vecs))
	}
	live := map[uint32]bool{}
	for i := range vecs {
		live[uint32(i)] = true
	}
	for _, id := range r.Perm(len(vecs))[:2*vecBlock] {
		ix.Remove(uint32(id))
		delete(live, uint32(id))
	}
	if err := ix.check(); err != nil {
		t.Fatal(err)
	}
	for id := range 700 { // refill some of the removed
		if !live[uint32(id)] {
			if err := ix.Add(uint32(id), vecs[id]); err != nil {
				t.Fatal(err)
			}
			live[uint32(id)] = true
		}
	}
	ix = roundTrip(t, ix)
	if err := ix.check(); err != nil {
		t.Fatal(err)
	}
	if ix.Len() != len(live) {
		t.Fatalf("Len %d, want %d", ix.Len(), len(live))
	}
	for id := range live {
		got, ok := ix.Vector(id)
		if !ok || cosine(got, vecs[id]) < 0.99999 {
			t.Fatalf("vector %d lost or changed", id)
		}
		prefix := []float32{7}
		app, ok := ix.AppendVector(prefix, id)
		if !ok || len(app) != dim+1 || app[0] != 7 || !slices.Equal(app[1:], got) {
			t.Fatalf("AppendVector(%d) = %v, %v; want 7 then %v", id, app, ok, got)
		}
	}
	if app, ok := ix.AppendVector(nil, 1<<30); ok || app != nil {
		t.Fatalf("AppendVector of an absent id = %v, %v", app, ok)
	}
}
