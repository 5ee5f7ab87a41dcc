package memstore

import (
	"hash/maphash"
	"math/bits"

	"github.com/adaptrag/adaptrag/internal/hugemem"
)

// keyTable maps the key of each live record (tenant, chunk id) to its
// internal id. It stores no key: a slot holds 32 bits of the key's hash
// and the id, and a slot whose hash bits match is confirmed against the
// record the id names, so the caller passes the records in. That makes a
// slot 8 bytes where a map[key]uint32 entry is about 48 with its two
// string headers, and loading a million chunks inserts into 16 MB
// instead of rehashing a 60 MB map: 0.7 s of a warm reopen at 1M chunks.
//
// Open addressing with linear probing, at most 3/4 full; a removal
// shifts the run after it back (no tombstones), which it can do from the
// stored hash bits alone. Not safe for concurrent writes (the Store's
// write lock serialises them).
type keyTable struct {
	seed  maphash.Seed
	slots []uint64 // hash bits << 32 | id+1; 0 is an empty slot
	n     int
}

func newKeyTable(n int) keyTable {
	t := keyTable{seed: maphash.MakeSeed()}
	t.grow(n)
	return t
}

func (t *keyTable) hash(tenant, id string) uint32 {
	h := maphash.String(t.seed, id)
	if tenant != "" {
		h ^= maphash.String(t.seed, tenant) * 0x9e3779b97f4a7c15
	}
	return uint32(h ^ h>>32)
}

func (t *keyTable) len() int { return t.n }

// grow makes room for n keys without a rehash.
func (t *keyTable) grow(n int) {
	size := 8
	for size*3/4 < n {
		size *= 2
	}
	if size <= len(t.slots) {
		return
	}
	old := t.slots
	t.slots = hugemem.Make[uint64](size)
	mask := uint32(size - 1)
	for _, e := range old {
		if e == 0 {
			continue
		}
		i := uint32(e>>32) & mask
		for t.slots[i] != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = e
	}
}

// find returns the slot holding the key, or the empty slot that ends its
// run, and whether it was found.
func (t *keyTable) find(recs []record, h uint32, tenant, id string) (uint32, bool) {
	mask := uint32(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		e := t.slots[i]
		if e == 0 {
			return i, false
		}
		if uint32(e>>32) == h {
			if r := &recs[uint32(e)-1]; r.ID == id && r.Tenant == tenant {
				return i, true
			}
		}
	}
}

// get returns the internal id of the key, if it has one.
func (t *keyTable) get(recs []record, tenant, id string) (uint32, bool) {
	if t.n == 0 {
		return 0, false
	}
	i, ok := t.find(recs, t.hash(tenant, id), tenant, id)
	return uint32(t.slots[i]) - 1, ok
}

// claim returns the internal id of the key and true when it has one;
// otherwise it gives the key iid and returns false. The record iid need
// not hold the key yet, but must before the next call.
func (t *keyTable) claim(recs []record, tenant, id string, iid uint32) (uint32, bool) {
	h := t.hash(tenant, id)
	i, ok := t.find(recs, h, tenant, id)
	if ok {
		return uint32(t.slots[i]) - 1, true
	}
	if (t.n+1)*4 > len(t.slots)*3 {
		t.grow(t.n + 1)
		i, _ = t.find(recs, h, tenant, id)
	}
	t.slots[i] = uint64(h)<<32 | uint64(iid+1)
	t.n++
	return iid, false
}

// del forgets the key, if it has an id; its record must still hold it.
func (t *keyTable) del(recs []record, tenant, id string) {
	if t.n == 0 {
		return
	}
	i, ok := t.find(recs, t.hash(tenant, id), tenant, id)
	if !ok {
		return
	}
	t.n--
	mask := uint32(len(t.slots) - 1)
	// Shift back every later slot of the run that may move into the
	// hole: one whose home is not in (hole, slot].
	for j := (i + 1) & mask; ; j = (j + 1) & mask {
		e := t.slots[j]
		if e == 0 {
			break
		}
		home := uint32(e>>32) & mask
		if (j-home)&mask >= (j-i)&mask {
			t.slots[i] = e
			i = j
		}
	}
	t.slots[i] = 0
}

// load gives the key of every live record of recs its internal id (its
// index) in t, which must be empty, and returns the id of a record whose
// key an earlier one holds, if there is one. Keys go in by the order of
// their home slots, so that the table fills from start to end: inserted
// in id order, each key's slot is a cache miss somewhere in the table (at
// a million keys, 16 MB), which made inserting them a quarter of reading
// a store's records file.
func (t *keyTable) load(recs []record) (dup uint32, found bool) {
	n := 0
	for i := range recs {
		if recs[i].live {
			n++
		}
	}
	t.grow(n)
	mask := uint32(len(t.slots) - 1)
	// Buckets of home slots, 64k at most: within one, keys land a few
	// cache lines apart.
	shift := max(bits.Len32(mask)-16, 0)
	start := make([]int32, mask>>shift+2)
	hs := hugemem.Make[uint32](len(recs))
	for iid := range recs {
		if r := &recs[iid]; r.live {
			h := t.hash(r.Tenant, r.ID)
			hs[iid] = h
			start[(h&mask)>>shift+1]++
		}
	}
	for b := 1; b < len(start); b++ {
		start[b] += start[b-1]
	}
	order := hugemem.Make[uint32](n)
	for iid := range recs {
		if recs[iid].live {
			b := (hs[iid] & mask) >> shift
			order[start[b]] = uint32(iid)
			start[b]++
		}
	}
	for _, iid := range order {
		// find, but reading the record (a cache miss) only when the
		// hash bits of a slot match.
		h := hs[iid]
		i := h & mask
		for ; t.slots[i] != 0; i = (i + 1) & mask {
			if e := t.slots[i]; uint32(e>>32) == h {
				a, b := &recs[iid], &recs[uint32(e)-1]
				if a.ID == b.ID && a.Tenant == b.Tenant {
					return iid, true
				}
			}
		}
		t.slots[i] = uint64(h)<<32 | uint64(iid+1)
		t.n++
	}
	return 0, false
}
