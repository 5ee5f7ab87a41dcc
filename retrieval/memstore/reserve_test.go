package memstore

import (
	"testing"
	"time"
)

// TestReserve: a nearly full large record table gets a bigger one made in
// the background, which a write that would outgrow the table then takes,
// with the same records; a small table is left alone.
func TestReserve(t *testing.T) {
	s := newStore(Options{})
	s.recs = make([]record, reserveMin-5, reserveMin)
	s.recs[7] = record{live: true}
	s.recs[7].ID = "seven"
	first := &s.recs[0]
	s.reserve(5) // fits, but leaves the table over 7/8 full
	if &s.recs[0] != first {
		t.Fatal("reserve replaced a table with room enough")
	}
	var spare *record
	for deadline := time.Now().Add(10 * time.Second); spare == nil; {
		s.spare.mu.Lock()
		if len(s.spare.table) > 0 {
			spare = &s.spare.table[0]
		}
		s.spare.mu.Unlock()
		if time.Now().After(deadline) {
			t.Fatal("no spare table was made for a table 7/8 full")
		}
		time.Sleep(time.Millisecond)
	}
	s.reserve(6) // outgrows it
	if &s.recs[0] != spare {
		t.Fatal("a write that outgrew the table did not take the spare one")
	}
	if want := reserveMin + reserveMin/4 + 5; cap(s.recs) != want {
		t.Errorf("capacity after reserve: %d, want %d", cap(s.recs), want)
	}
	if len(s.recs) != reserveMin-5 {
		t.Errorf("length after reserve: %d, want %d", len(s.recs), reserveMin-5)
	}
	if r := s.recs[7]; !r.live || r.ID != "seven" {
		t.Errorf("record 7 after reserve: %+v", r)
	}
	// Without a spare the write makes the bigger table itself.
	s.recs = s.recs[:cap(s.recs)]
	s.spare.mu.Lock()
	s.spare.table = nil
	s.spare.mu.Unlock()
	s.reserve(1)
	if got, l := cap(s.recs), len(s.recs); got < l+1 {
		t.Errorf("capacity %d after reserve(1) of a full table of %d", got, l)
	}
	small := newStore(Options{})
	small.recs = make([]record, 10)
	small.reserve(100)
	if cap(small.recs) != 10 {
		t.Errorf("a small table was grown ahead: capacity %d", cap(small.recs))
	}
}
