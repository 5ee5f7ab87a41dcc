package vector

// slotTable maps ids to slots. Ids below len(dense) live in dense (slot+1,
// 0 for none): a store numbers its vectors densely from 0, and there an
// array costs 4 bytes an id and one memory access, where a map cost about
// five times that and was a sixth of a filtered search listing 10,000 ids
// at a million vectors. Ids that would make the array sparse (above four
// times the ids held, plus some room) live in the map instead.
type slotTable struct {
	dense []uint32
	other map[uint32]uint32
	n     int
}

func (t *slotTable) get(id uint32) (uint32, bool) {
	if int64(id) < int64(len(t.dense)) {
		s := t.dense[id]
		return s - 1, s != 0
	}
	s, ok := t.other[id]
	return s, ok
}

// set records slot s for id, which may already have one.
func (t *slotTable) set(id, s uint32) {
	if int64(id) >= int64(len(t.dense)) {
		t.grow(id)
	}
	if int64(id) < int64(len(t.dense)) {
		if t.dense[id] == 0 {
			t.n++
		}
		t.dense[id] = s + 1
		return
	}
	if t.other == nil {
		t.other = make(map[uint32]uint32)
	}
	if _, ok := t.other[id]; !ok {
		t.n++
	}
	t.other[id] = s
}

func (t *slotTable) del(id uint32) {
	if int64(id) < int64(len(t.dense)) {
		if t.dense[id] != 0 {
			t.n--
		}
		t.dense[id] = 0
		return
	}
	if _, ok := t.other[id]; ok {
		t.n--
		delete(t.other, id)
	}
}

func (t *slotTable) len() int { return t.n }

// grow extends dense to cover id when that keeps it at most four times the
// ids held (plus room for a small index), moving the ids of other it now
// covers.
func (t *slotTable) grow(id uint32) {
	limit := 4*int64(t.n+1) + 1024
	if int64(id) >= limit {
		return
	}
	size := min(max(2*int64(len(t.dense)), int64(id)+1, 1024), limit)
	d := make([]uint32, size)
	copy(d, t.dense)
	t.dense = d
	for oid, s := range t.other {
		if int64(oid) < size {
			t.dense[oid] = s + 1
			delete(t.other, oid)
		}
	}
}

// each calls fn for every id and its slot, in no particular order.
func (t *slotTable) each(fn func(id, s uint32)) {
	for id, s := range t.dense {
		if s != 0 {
			fn(uint32(id), s-1)
		}
	}
	for id, s := range t.other {
		fn(id, s)
	}
}
