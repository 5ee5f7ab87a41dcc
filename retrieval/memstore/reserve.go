package memstore

import "unsafe"

// reserveMin is the capacity (in records) from which a write grows the
// record table ahead of the write lock (reserve); below it append's own
// growth is quick.
const reserveMin = 64 << 10

// reserve makes room in s.recs for n more records when a write of n
// chunks could outgrow it, so that the write lock is held only for the
// copy. Appending past the capacity under the lock allocated a new table
// and copied into it: at 800k records (160 bytes each) 280 ms, of which
// 225 ms went to allocating and first touching the new memory (page
// faults) and 12 ms to the copy (ad hoc test, not kept); in the 1M bench
// one such write took 400-510 ms. Here the new table is allocated and
// touched before the lock, and copied under it only if it is still needed
// (another write may have grown the table meanwhile).
func (s *Store) reserve(n int) {
	s.mu.RLock()
	need, have, closed := len(s.recs)+n, cap(s.recs), s.closed
	s.mu.RUnlock()
	if need <= have || have < reserveMin || closed || s.opts.ReadOnly {
		return
	}
	// The growth append would choose for a table this large (a quarter).
	fresh := make([]record, need+need/4)
	touchPages(fresh)
	s.mu.Lock()
	if l := len(s.recs); l+n > cap(s.recs) && l <= len(fresh) {
		copy(fresh, s.recs)
		s.recs = fresh[:l]
	}
	s.mu.Unlock()
}

// touchPages writes one record in every page of rs, so that the page faults of
// new memory are taken now rather than by the copy into it.
func touchPages(rs []record) {
	step := max(1, 4096/int(unsafe.Sizeof(record{})))
	for i := 0; i < len(rs); i += step {
		rs[i] = record{}
	}
}
