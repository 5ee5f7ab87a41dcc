package vector

import (
	"fmt"
	"math"
	"slices"
	"testing"
)

// checkGroups verifies that every list is in the group of its nearest
// pivot, as a grouping computed afresh from the centroids would put it,
// and that each group's arrays mirror its members' centroid codes.
func (ix *Index) checkGroups() error {
	gr := &ix.groups
	if want := (len(ix.lists) + groupEvery - 1) / groupEvery; len(gr.g) != want {
		return fmt.Errorf("%d groups for %d lists, want %d", len(gr.g), len(ix.lists), want)
	}
	if len(gr.of) != len(ix.lists) {
		return fmt.Errorf("%d group entries for %d lists", len(gr.of), len(ix.lists))
	}
	members := 0
	for l := range ix.lists {
		best, bg := float32(math.Inf(-1)), -1
		for g := range gr.g {
			if s := ix.pivotScore(l, g*groupEvery); s > best || bg < 0 {
				best, bg = s, g
			}
		}
		if int(gr.of[l]) != bg || gr.best[l] != best {
			return fmt.Errorf("list %d in group %d (score %v), nearest pivot is group %d (%v)", l, gr.of[l], gr.best[l], bg, best)
		}
		G := &gr.g[bg]
		p := int(gr.pos[l])
		if p >= len(G.lists) || int(G.lists[p]) != l {
			return fmt.Errorf("list %d not at position %d of group %d", l, p, bg)
		}
		if !slices.Equal(G.codes[p*ix.words:(p+1)*ix.words], ix.ccodes[l*ix.words:(l+1)*ix.words]) ||
			G.factor[p] != ix.cfactor[l] || G.pop[p] != ix.cpop[l] || G.half[p] != ix.lists[l].half {
			return fmt.Errorf("group %d holds stale codes for list %d", bg, l)
		}
	}
	for g := range gr.g {
		G := &gr.g[g]
		members += len(G.lists)
		if len(G.codes) != len(G.lists)*ix.words || len(G.factor) != len(G.lists) || len(G.pop) != len(G.lists) || len(G.half) != len(G.lists) {
			return fmt.Errorf("group %d: arrays of unequal length", g)
		}
		p := g * groupEvery
		if !slices.Equal(gr.pcodes[g*ix.words:(g+1)*ix.words], ix.ccodes[p*ix.words:(p+1)*ix.words]) ||
			gr.pfactor[g] != ix.cfactor[p] || gr.ppop[g] != ix.cpop[p] {
			return fmt.Errorf("group %d holds a stale pivot code", g)
		}
	}
	if members != len(ix.lists) {
		return fmt.Errorf("groups hold %d lists of %d", members, len(ix.lists))
	}
	return nil
}

// groupedIndex builds an index with lists small enough to be grouped, by
// batches, then replaces and removes some vectors.
func groupedIndex(t *testing.T, vecs [][]float32) *Index {
	t.Helper()
	ix := New(len(vecs[0]), Options{ListSize: 16})
	ids := make([]uint32, len(vecs))
	for i := range ids {
		ids[i] = uint32(i)
	}
	for i := 0; i < len(vecs); i += 500 {
		if err := ix.AddBatch(ids[i:min(i+500, len(vecs))], vecs[i:min(i+500, len(vecs))]); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < len(vecs); i += 9 {
		ix.Remove(uint32(i))
	}
	for i := 1; i < len(vecs); i += 13 {
		if err := ix.Add(uint32(i), vecs[(i*7)%len(vecs)]); err != nil {
			t.Fatal(err)
		}
	}
	return ix
}

// Lists are grouped around their pivots however the index got its
// centroids, and an insert into many lists finds the nearest centroid
// nearly always.
func TestGroups(t *testing.T) {
	vecs := clustered(31, 12000, 32, 40)
	ix := groupedIndex(t, vecs)
	if len(ix.lists) < 2*groupFrom {
		t.Fatalf("%d lists, want at least %d for the test to group them", len(ix.lists), 2*groupFrom)
	}
	if err := ix.check(); err != nil {
		t.Fatal(err)
	}
	if err := ix.checkGroups(); err != nil {
		t.Fatal(err)
	}
	// The nearest centroid by exact distances over every list.
	exact := func(v []float32) int {
		best, bl := float32(math.Inf(-1)), 0
		for l, L := range ix.lists {
			if d := dot(v, L.centroid) - L.half; d > best {
				best, bl = d, l
			}
		}
		return bl
	}
	// The ranking of every centroid by its code, as below groupFrom.
	scanned := func(u, rv []float32) int {
		qp := quantize(rv, ix.assign.planes, ix.words)
		est := make([]float32, len(ix.lists))
		qp.scan(ix.ccodes, ix.cfactor, ix.cpop, 0, est)
		short := topK{k: nearestShort}
		for l, e := range est {
			short.push(Scored{ID: uint32(l), Score: e - ix.lists[l].half})
		}
		best, bl := float32(math.Inf(-1)), 0
		for _, it := range short.items {
			L := ix.lists[it.ID]
			if d := dot(u, L.centroid) - L.half; d > best || (d == best && int(it.ID) < bl) {
				best, bl = d, int(it.ID)
			}
		}
		return bl
	}
	grouped, full, n := 0, 0, 0
	for _, v := range clustered(32, 2000, 32, 40) {
		u := unit(slices.Clone(v))
		rv := ix.assign.rotated(ix, u)
		e := exact(u)
		if ix.nearest(u, rv) == e {
			grouped++
		}
		if scanned(u, rv) == e {
			full++
		}
		n++
	}
	t.Logf("nearest centroid found for %d of %d vectors by groups, %d by a scan of every centroid", grouped, n, full)
	if grouped < full-n/50 {
		t.Fatalf("groups found the nearest centroid for %d of %d vectors, a scan of every centroid for %d", grouped, n, full)
	}
}

// An index read from a file groups its lists as the one that wrote it, so
// both assign later writes alike.
func TestGroupsPersistThenWrite(t *testing.T) {
	vecs := clustered(33, 14000, 32, 40)
	a := groupedIndex(t, vecs[:10000])
	b := roundTrip(t, a)
	if err := b.checkGroups(); err != nil {
		t.Fatal(err)
	}
	for _, ix := range []*Index{a, b} {
		for i := 10000; i < 14000; i++ {
			if err := ix.Add(uint32(i), vecs[i]); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, ix := range []*Index{a, b} {
		if err := ix.checkGroups(); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(a.groups.of, b.groups.of) {
		t.Fatal("the reloaded index grouped its lists otherwise")
	}
	sameIndex(t, a, b, clustered(34, 20, 32, 40))
}
