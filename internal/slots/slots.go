// Package slots maps the ids a store gives its records to the slots an
// index keeps them in. A store numbers its records densely from 0, so the
// ids index an array (4 bytes an id and one memory access, where a map
// costs about five times that); an id far beyond the others, which would
// make the array mostly empty, goes to a map instead.
package slots

import "github.com/adaptrag/adaptrag/internal/hugemem"

// Table maps ids to slots. The zero Table is empty and ready to use; it
// is not safe for concurrent writes.
type Table struct {
	dense []uint32 // by id: slot+1, 0 when the id has none
	far   map[uint32]uint32
	n     int
}

// Get returns the slot of id.
func (t *Table) Get(id uint32) (uint32, bool) {
	if int64(id) < int64(len(t.dense)) {
		s := t.dense[id]
		return s - 1, s != 0
	}
	s, ok := t.far[id]
	return s, ok
}

// Set records slot s for id, which may already have one. The array grows
// to cover id only while id is below reach, the caller's bound on how
// sparse it may become; a farther id goes to the map.
func (t *Table) Set(id, s uint32, reach int64) {
	if l := int64(len(t.dense)); int64(id) >= l && int64(id) < reach {
		t.Grow(int(min(max(2*l, int64(id)+1, 1024), reach)))
	}
	if int64(id) < int64(len(t.dense)) {
		if t.dense[id] == 0 {
			t.n++
		}
		t.dense[id] = s + 1
		return
	}
	if t.far == nil {
		t.far = make(map[uint32]uint32)
	}
	if _, ok := t.far[id]; !ok {
		t.n++
	}
	t.far[id] = s
}

// Del forgets id, if it has a slot.
func (t *Table) Del(id uint32) {
	if int64(id) < int64(len(t.dense)) {
		if t.dense[id] != 0 {
			t.dense[id] = 0
			t.n--
		}
		return
	}
	if _, ok := t.far[id]; ok {
		delete(t.far, id)
		t.n--
	}
}

// Len returns the number of ids mapped.
func (t *Table) Len() int { return t.n }

// Grow makes the array cover the ids below n (at least doubling it), and
// moves the ids of the map it now covers into it.
func (t *Table) Grow(n int) {
	if n <= len(t.dense) {
		return
	}
	n = max(n, 2*len(t.dense))
	// A new array of huge pages where large: a million-id table is
	// made at every open of a large store.
	dense := hugemem.Make[uint32](n)
	copy(dense, t.dense)
	t.dense = dense
	for id, s := range t.far {
		if int64(id) < int64(n) {
			t.dense[id] = s + 1
			delete(t.far, id)
		}
	}
}

// Each calls fn for every id and its slot, in no particular order.
func (t *Table) Each(fn func(id, s uint32)) {
	for id, s := range t.dense {
		if s != 0 {
			fn(uint32(id), s-1)
		}
	}
	for id, s := range t.far {
		fn(id, s)
	}
}
