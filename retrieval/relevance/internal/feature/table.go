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

// newTables builds a table from each of two lists of (key, position)
// entries, which it sorts; positions of one key keep ascending order. The
// two share one allocation of each kind: a query builds two.
func newTables(a, b []entry) (table, table) {
	sa, sb := tableSize(len(a)), tableSize(len(b))
	keys := make([]uint64, sa+sb)
	spans := make([]span, sa+sb)
	pos := make([]int32, len(a)+len(b))
	return fill(a, keys[:sa:sa], spans[:sa:sa], pos[:len(a):len(a)]), fill(b, keys[sa:], spans[sa:], pos[len(a):])
}

// tableSize is the number of slots for n entries: a power of two, at a
// load factor of at most 1/2 (0 for none).
func tableSize(n int) int {
	if n == 0 {
		return 0
	}
	return 1 << bits.Len(uint(2*n))
}

func fill(es []entry, keys []uint64, spans []span, pos []int32) table {
	if len(es) == 0 {
		return table{}
	}
	slices.SortStableFunc(es, func(a, b entry) int { return cmp.Compare(a.key, b.key) })
	size := len(keys)
	t := table{keys: keys, spans: spans, pos: pos, shift: uint(64 - bits.Len(uint(size-1)))}
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
