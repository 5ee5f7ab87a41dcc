package feature

import (
	"cmp"
	"math/bits"
	"slices"
)

// table maps a key to the positions recorded under it: a small
// open-addressing hash table, built once per query and read for every
// token of every passage, where it is several times faster than a Go map.
// Keys are never 0 (they carry a key-space tag in their top bits), so 0
// marks an empty slot.
type table struct {
	keys  []uint64
	spans []span
	pos   []int32
	shift uint
}

type span struct{ off, n int32 }

type entry struct {
	key uint64
	pos int32
}

// newTable builds a table from (key, position) entries, which it sorts.
// Positions of one key keep ascending order.
func newTable(es []entry) table {
	if len(es) == 0 {
		return table{}
	}
	slices.SortStableFunc(es, func(a, b entry) int { return cmp.Compare(a.key, b.key) })
	size := 1 << bits.Len(uint(2*len(es))) // load factor <= 1/2
	t := table{keys: make([]uint64, size), spans: make([]span, size), pos: make([]int32, len(es)),
		shift: uint(64 - bits.Len(uint(size-1)))}
	for i := 0; i < len(es); {
		j := i
		for j < len(es) && es[j].key == es[i].key {
			t.pos[j] = es[j].pos
			j++
		}
		h := t.slot(es[i].key)
		for t.keys[h] != 0 {
			h = (h + 1) & (size - 1)
		}
		t.keys[h], t.spans[h] = es[i].key, span{int32(i), int32(j - i)}
		i = j
	}
	return t
}

func (t *table) slot(k uint64) int {
	return int((k * 0x9E3779B97F4A7C15) >> t.shift)
}

// get returns the positions recorded under k (nil, false when none).
func (t *table) get(k uint64) ([]int32, bool) {
	if len(t.keys) == 0 {
		return nil, false
	}
	mask := len(t.keys) - 1
	for h := t.slot(k); ; h = (h + 1) & mask {
		switch t.keys[h] {
		case k:
			s := t.spans[h]
			return t.pos[s.off : s.off+s.n], true
		case 0:
			return nil, false
		}
	}
}
