package memstore

import (
	"math/bits"
	"slices"
)

// idSet is a set of internal ids: a sorted slice while it is sparse, a
// bitmap once it holds more than one id in 32 of the id range (from which
// the bitmap is the smaller of the two). Both enumerate in ascending order,
// which is the order the indexes store ids in.
type idSet struct {
	ids  []uint32 // sorted; unused while bits is non-nil
	bits []uint64
	n    int
}

// bitmapMin is the size below which a set stays a slice whatever its
// density: small sets are cheap either way and a slice costs no id range.
const bitmapMin = 256

func (s *idSet) len() int {
	if s == nil {
		return 0
	}
	return s.n
}

func (s *idSet) has(id uint32) bool {
	if s.bits != nil {
		w := int(id >> 6)
		return w < len(s.bits) && s.bits[w]&(1<<(id&63)) != 0
	}
	_, ok := slices.BinarySearch(s.ids, id)
	return ok
}

func (s *idSet) add(id uint32) {
	if s.bits != nil {
		w := int(id >> 6)
		if w >= len(s.bits) {
			s.bits = append(s.bits, make([]uint64, w+1-len(s.bits))...)
		}
		if m := uint64(1) << (id & 63); s.bits[w]&m == 0 {
			s.bits[w] |= m
			s.n++
		}
		return
	}
	// Ingest mostly appends ids above every other: the common case is O(1).
	if n := len(s.ids); n == 0 || s.ids[n-1] < id {
		s.ids = append(s.ids, id)
	} else {
		i, ok := slices.BinarySearch(s.ids, id)
		if ok {
			return
		}
		s.ids = slices.Insert(s.ids, i, id)
	}
	s.n++
	if s.n >= bitmapMin && uint64(s.n)*32 >= uint64(s.ids[s.n-1]) {
		s.bits = make([]uint64, s.ids[s.n-1]/64+1)
		for _, x := range s.ids {
			s.bits[x>>6] |= 1 << (x & 63)
		}
		s.ids = nil
	}
}

func (s *idSet) remove(id uint32) {
	if s.bits != nil {
		w := int(id >> 6)
		if m := uint64(1) << (id & 63); w < len(s.bits) && s.bits[w]&m != 0 {
			s.bits[w] &^= m
			s.n--
		}
		// Back to a slice once it is four times sparser than the switch
		// point, so that a set shrinking and growing near it does not
		// convert on every write.
		if s.n < bitmapMin/4 || uint64(s.n)*128 < uint64(len(s.bits))*64 {
			s.ids = s.appendTo(make([]uint32, 0, s.n))
			s.bits = nil
		}
		return
	}
	if i, ok := slices.BinarySearch(s.ids, id); ok {
		s.ids = slices.Delete(s.ids, i, i+1)
		s.n--
	}
}

// appendTo appends the ids of s to dst in ascending order.
func (s *idSet) appendTo(dst []uint32) []uint32 {
	if s == nil {
		return dst
	}
	if s.bits == nil {
		return append(dst, s.ids...)
	}
	for w, word := range s.bits {
		for word != 0 {
			dst = append(dst, uint32(w<<6+bits.TrailingZeros64(word)))
			word &= word - 1
		}
	}
	return dst
}

// each calls fn for every id of s in ascending order.
func (s *idSet) each(fn func(uint32)) {
	if s.bits == nil {
		for _, id := range s.ids {
			fn(id)
		}
		return
	}
	for w, word := range s.bits {
		for word != 0 {
			fn(uint32(w<<6 + bits.TrailingZeros64(word)))
			word &= word - 1
		}
	}
}

// srcKey keys the source posting lists: a tenant (interned) and a source.
type srcKey struct {
	tenant uint32
	source string
}

// linkCache is the posting lists linkWith added the last record to, for a
// batch whose records share them: each a map lookup saved.
type linkCache struct {
	tenant *idSet
	tid    uint32
	source *idSet
	src    srcKey
	doc    *idSet
	dk     docKey
	// docCap, when set, is the room a new document's list starts with:
	// a load knows the mean size of a document, and growing a million
	// ids' lists from one id was a fifth of linking them.
	docCap int
}

// tenantCache is the last tenant tenantID looked up: consecutive records
// nearly always share it.
type tenantCache struct {
	name string
	tid  uint32
	ok   bool
}

// tenantID returns the id of tenant name, giving it one if it has none.
func (s *Store) tenantID(tc *tenantCache, name string) uint32 {
	if tc.ok && tc.name == name {
		return tc.tid
	}
	tid, ok := s.tenants[name]
	if !ok {
		tid = uint32(len(s.tenants))
		s.tenants[name] = tid
	}
	*tc = tenantCache{name: name, tid: tid, ok: true}
	return tid
}

// linkRecord notes the tenant of iid, a live record, and adds it to the
// payload index (see tenantID and linkWith).
func (s *Store) linkRecord(tc *tenantCache, lc *linkCache, iid uint32) {
	r := &s.recs[iid]
	tid := s.tenantID(tc, r.Tenant)
	s.tenantOf[iid] = tid
	s.linkWith(lc, iid, tid, r)
}

// linkWith adds iid, a live record of tenant tid, to the payload index,
// through lc, which must be reset when a list may have been dropped from
// its map (unlink) since it was filled.
func (s *Store) linkWith(lc *linkCache, iid, tid uint32, c *record) {
	if lc.tenant == nil || lc.tid != tid {
		lc.tenant, lc.tid = set(s.byTenant, tid), tid
	}
	lc.tenant.add(iid)
	if sk := (srcKey{tid, c.Source}); lc.source == nil || lc.src != sk {
		lc.source, lc.src = set(s.bySource, sk), sk
	}
	lc.source.add(iid)
	if dk := (docKey{c.Tenant, c.DocID}); lc.doc == nil || lc.dk != dk {
		lc.doc, lc.dk = set(s.byDoc, dk), dk
		if lc.docCap > 0 && lc.doc.n == 0 && lc.doc.bits == nil {
			lc.doc.ids = make([]uint32, 0, lc.docCap)
		}
	}
	lc.doc.add(iid)
}

// unlink removes iid, the record r of tenant tid, from the payload index,
// dropping posting lists left empty so that deleted values cost nothing.
func (s *Store) unlink(iid, tid uint32, r *record) {
	unset(s.byTenant, tid, iid)
	unset(s.bySource, srcKey{tid, r.Source}, iid)
	unset(s.byDoc, docKey{r.Tenant, r.DocID}, iid)
}

func set[K comparable](m map[K]*idSet, k K) *idSet {
	p := m[k]
	if p == nil {
		p = &idSet{}
		m[k] = p
	}
	return p
}

func unset[K comparable](m map[K]*idSet, k K, iid uint32) {
	if p := m[k]; p != nil {
		p.remove(iid)
		if p.n == 0 {
			delete(m, k)
		}
	}
}
