package memstore

import "testing"

// TestReserve: a write that would outgrow a large record table gets a
// bigger one with the same records before it takes the lock; one that
// fits, or a small table, is left alone.
func TestReserve(t *testing.T) {
	s := newStore(Options{})
	s.recs = make([]record, reserveMin-5, reserveMin)
	s.recs[7] = record{live: true}
	s.recs[7].ID = "seven"
	first := &s.recs[0]
	s.reserve(5)
	if &s.recs[0] != first {
		t.Fatal("reserve replaced a table with room enough")
	}
	s.reserve(6)
	if got := cap(s.recs); got < reserveMin+1+(reserveMin+1)/4 {
		t.Fatalf("capacity after reserve(6): %d, want at least %d", got, reserveMin+1+(reserveMin+1)/4)
	}
	if len(s.recs) != reserveMin-5 || &s.recs[0] == first {
		t.Fatalf("after reserve: len %d (want %d), new table %v", len(s.recs), reserveMin-5, &s.recs[0] != first)
	}
	if r := s.recs[7]; !r.live || r.ID != "seven" {
		t.Errorf("record 7 after reserve: %+v", r)
	}
	small := newStore(Options{})
	small.recs = make([]record, 10, 10)
	small.reserve(100)
	if cap(small.recs) != 10 {
		t.Errorf("a small table was grown ahead: capacity %d", cap(small.recs))
	}
}
