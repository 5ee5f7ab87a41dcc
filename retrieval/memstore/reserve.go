package memstore

import (
	"sync"
	"time"
	"unsafe"

	"github.com/adaptrag/adaptrag/internal/hugemem"
)

// reserveMin is the capacity (in records) from which the record table is
// grown ahead of need (reserve); below it append's own growth is quick.
const reserveMin = 64 << 10

// recSpare is the bigger record table made ahead of need, in the
// background, once the table is three quarters full, in huge pages where
// the kernel gives them and faulted in a piece at a time (touchPaced),
// with time to spare before it is needed. Appending past the
// capacity under the write lock allocated a new table and copied into it:
// at 800k records (160 bytes each) 280 ms, of which 225 ms went to
// allocating and first touching the new memory (page faults) and 12 ms to
// the copy (ad hoc test, not kept); in the 1M bench one such write took
// 400-510 ms, and 290-530 ms with the allocation moved before the lock
// (a write that pays for it waits as long). Made ahead, only the copy is
// left to the write that needs the room.
type recSpare struct {
	mu    sync.Mutex
	busy  bool     // being made
	table []record // made and touched; nil if none
}

// reserve readies s.recs for a write of n more records; the caller holds
// no lock. When the table is nearly full it has a bigger one made in the
// background; when the write would outgrow it, the spare table (or a new
// one, if there is none yet) takes the records under the write lock.
func (s *Store) reserve(n int) {
	if s.opts.ReadOnly {
		return
	}
	s.mu.RLock()
	l, c, closed := len(s.recs), cap(s.recs), s.closed
	s.mu.RUnlock()
	if c < reserveMin || closed {
		return
	}
	g := &s.spare
	if l+n <= c {
		if l+n > c-c/4 {
			g.mu.Lock()
			if !g.busy && len(g.table) <= c {
				g.busy, g.table = true, nil
				// The growth append would choose for a table this large
				// (a quarter), and room for this write.
				size := c + c/4 + n
				go func() {
					t := hugemem.Make[record](size)
					touchPaced(t)
					g.mu.Lock()
					g.busy, g.table = false, t
					g.mu.Unlock()
				}()
			}
			g.mu.Unlock()
		}
		return
	}
	g.mu.Lock()
	fresh := g.table
	g.table = nil
	g.mu.Unlock()
	if len(fresh) < l+n {
		fresh = hugemem.Make[record](l + n + (l+n)/4)
		touchPages(fresh)
	}
	s.mu.Lock()
	if l := len(s.recs); l+n > cap(s.recs) && l+n <= len(fresh) {
		copy(fresh, s.recs)
		s.recs = fresh[:l]
	}
	s.mu.Unlock()
}

// touchPaced is touchPages a piece of spareTouch bytes at a time,
// resting as long as each took: faulting in a spare table of 150 MB at
// once held the writes beside it up to 200 ms (1M bench, ad hoc timing).
func touchPaced(rs []record) {
	step := max(1, spareTouch/int(unsafe.Sizeof(record{})))
	for i := 0; i < len(rs); i += step {
		t := time.Now()
		touchPages(rs[i:min(i+step, len(rs))])
		time.Sleep(time.Since(t))
	}
}

// spareTouch is how many bytes of a spare table touchPaced touches at a
// time: a few huge pages.
const spareTouch = 8 << 20

// touchPages writes one element in every page of s, so that the page
// faults of new memory are taken now rather than by the copy into it.
func touchPages[T any](s []T) {
	var zero T
	step := max(1, 4096/int(unsafe.Sizeof(zero)))
	for i := 0; i < len(s); i += step {
		s[i] = zero
	}
}
