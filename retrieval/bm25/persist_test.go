package bm25

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/adaptrag/adaptrag/retrieval/analysis"
)

// churned returns an index of about n random documents after additions,
// replacements and removals (enough of them to compact at least once
// when many is set), and the analyzer it was built with.
func churned(seed uint64, n int, many bool) (*Index, analysis.Analyzer) {
	an := analysis.Whitespace()
	r := rand.New(rand.NewPCG(seed, 11))
	z := rand.NewZipf(r, 1.2, 1, 400)
	ix := New(Params{Analyzer: an})
	for range n {
		ix.Add(uint32(r.IntN(n)), randomText(r, z, 30))
	}
	for range n / 3 {
		ix.Remove(uint32(r.IntN(n)))
	}
	if many {
		for id := range uint32(n) {
			if id%5 != 0 {
				ix.Remove(id)
			}
		}
		for range 50 {
			ix.Add(uint32(r.IntN(2*n)), randomText(r, z, 30))
		}
	}
	ix.Add(uint32(n+1), "") // a document without terms
	// A term repeated past 255 times makes the file store wider
	// frequencies.
	ix.Add(uint32(n+2), randomText(r, z, 5)+" "+string(bytes.Repeat([]byte("w1 "), 300)))
	return ix, an
}

func encode(t *testing.T, ix *Index) []byte {
	t.Helper()
	var buf bytes.Buffer
	n, err := ix.WriteTo(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(buf.Len()) {
		t.Fatalf("WriteTo reported %d bytes, wrote %d", n, buf.Len())
	}
	return buf.Bytes()
}

// sameResults fails unless a and b answer every query alike, scores
// included to the bit (the term ids, hence the summation order, are the
// same).
func sameResults(t *testing.T, a, b *Index, r *rand.Rand, z *rand.Zipf) {
	t.Helper()
	if a.Len() != b.Len() {
		t.Fatalf("Len %d, want %d", b.Len(), a.Len())
	}
	var among []uint32
	for id := range idSlots(a) {
		if r.IntN(4) == 0 {
			among = append(among, id)
		}
	}
	slices.Sort(among)
	for qi := range 60 {
		q := randomText(r, z, 1+r.IntN(5))
		k := []int{1, 5, 20, 1000}[qi%4]
		accept := func(id uint32) bool { return id%3 != 0 }
		for _, acc := range []func(uint32) bool{nil, accept} {
			x, y := a.Search(q, k, acc), b.Search(q, k, acc)
			if !slices.Equal(x, y) {
				t.Fatalf("query %q k %d: read index gives %v, written one %v", q, k, y, x)
			}
		}
		x, y := a.SearchAmong(q, k, among), b.SearchAmong(q, k, among)
		if !slices.Equal(x, y) {
			t.Fatalf("query %q k %d among: read index gives %v, written one %v", q, k, y, x)
		}
	}
}

// sameState fails unless b holds what a holds, field by field: what
// searches do not show (a bound too high only costs time) included.
func sameState(t *testing.T, a, b *Index) {
	t.Helper()
	if !maps.Equal(a.dict, b.dict) || !maps.Equal(idSlots(a), idSlots(b)) || len(a.terms) != len(b.terms) {
		t.Fatal("dictionaries, id maps or term counts differ")
	}
	for i := range a.terms {
		x, y := &a.terms[i], &b.terms[i]
		if x.df != y.df || !slices.Equal(x.slots, y.slots) || !slices.Equal(x.tfs, y.tfs) || !slices.Equal(x.front, y.front) {
			t.Fatalf("term %d differs: %+v, want %+v", i, *y, *x)
		}
	}
	if !slices.Equal(a.ids, b.ids) || !slices.Equal(a.lens, b.lens) || !slices.Equal(a.live, b.live) ||
		!slices.Equal(a.fwd.bytes(), b.fwd.bytes()) || !slices.Equal(a.fwdOff, b.fwdOff) || a.nLive != b.nLive || a.sumLive != b.sumLive {
		t.Fatal("per-document arrays or totals differ")
	}
}

// readModes are the ways an index file is read: copied with every check
// at once, copied with the checks deferred, in place (its arrays views of
// the bytes read), and in place at an address that leaves the uint32
// arrays unaligned (copied then).
var readModes = []string{"copied", "deferred", "in place", "in place, unaligned"}

// readAs reads the index file b as mode says; the bytes read in place
// are a copy, which the index then owns.
func readAs(mode string, b []byte, p Params) (*Index, error) {
	switch mode {
	case "copied":
		return ReadIndex(bytes.NewReader(b), p)
	case "deferred":
		return ReadIndexDeferred(bytes.NewReader(b), p)
	case "in place":
		return ReadIndexInPlace(slices.Clone(b), p, nil)
	default:
		buf := make([]byte, len(b)+1)[1:]
		copy(buf, b)
		return ReadIndexInPlace(buf, p, nil)
	}
}

func TestWriteReadSearchesAlike(t *testing.T) {
	for _, many := range []bool{false, true} {
		for seed := range uint64(len(readModes)) {
			// Each seed reads another way: the index must be the same
			// before the deferred checks run, and Remove runs them.
			mode := readModes[seed]
			t.Run(fmt.Sprintf("many=%v/seed=%d/%s", many, seed, mode), func(t *testing.T) {
				n := 300
				if many {
					n = 4000
				}
				ix, an := churned(seed, n, many)
				b := encode(t, ix)
				got, err := readAs(mode, b, Params{Analyzer: an})
				if err != nil {
					t.Fatal(err)
				}
				if deferred := mode != "copied"; got.Unchecked() != deferred {
					t.Fatalf("Unchecked = %v after a read %s", got.Unchecked(), mode)
				}
				r := rand.New(rand.NewPCG(seed, 12))
				z := rand.NewZipf(r, 1.2, 1, 450)
				sameResults(t, ix, got, r, z)
				sameState(t, ix, got)
				if again := encode(t, got); !bytes.Equal(again, b) {
					t.Fatal("the read index writes other bytes than the ones it was read from")
				}
				// Both keep working alike under writes: a read index's
				// postings share arrays, which an Add must not overwrite.
				for i := range 2000 {
					id := uint32(r.IntN(5000))
					if i%4 == 3 {
						ix.Remove(id)
						got.Remove(id)
						continue
					}
					text := randomText(r, z, 20)
					ix.Add(id, text)
					got.Add(id, text)
				}
				sameResults(t, ix, got, r, z)
				sameState(t, ix, got)
			})
		}
	}
}

func TestReadEmptyIndex(t *testing.T) {
	ix := New(Params{})
	got, err := ReadIndex(bytes.NewReader(encode(t, ix)), Params{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Len() != 0 || got.Search("anything", 10, nil) != nil {
		t.Fatal("an empty index read back is not empty")
	}
	got.Add(7, "some words")
	if res := got.Search("words", 10, nil); len(res) != 1 || res[0].ID != 7 {
		t.Fatalf("a read empty index cannot take documents: %v", res)
	}
}

func TestReadWithOtherParams(t *testing.T) {
	ix := New(Params{})
	ix.Add(1, "The Quick brown foxes")
	b := encode(t, ix)
	if _, err := ReadIndex(bytes.NewReader(b), Params{}); err != nil {
		t.Fatalf("the same (default) parameters: %v", err)
	}
	for name, p := range map[string]Params{
		"k1":       {K1: 1.5},
		"b":        {B: 0.5},
		"repeated": {CountRepeatedQueryTerms: true},
		"analyzer": {Analyzer: analysis.Whitespace()},
	} {
		if _, err := ReadIndex(bytes.NewReader(b), p); !errors.Is(err, ErrParams) {
			t.Errorf("%s: got %v, want ErrParams", name, err)
		}
	}
}

// Every cut and every flipped bit of a file is refused, never read as an
// index that would answer otherwise.
func TestReadDamaged(t *testing.T) {
	ix, an := churned(5, 40, false)
	good := encode(t, ix)
	p := Params{Analyzer: an}
	for n := range len(good) {
		// A small buffer of the caller's is used as it is, which keeps
		// these thousands of reads quick.
		if _, err := ReadIndex(bufio.NewReader(bytes.NewReader(good[:n])), p); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("cut at %d of %d: got %v, want ErrCorrupt", n, len(good), err)
		}
	}
	// Read in place, a cut file, or one with bytes after the index, is
	// refused at once.
	for n := range len(good) + 1 {
		b := slices.Clone(good[:n])
		if n == len(good) {
			b = append(b, 0)
		}
		if _, err := ReadIndexInPlace(b, p, nil); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("%d of %d bytes read in place: got %v, want ErrCorrupt", len(b), len(good), err)
		}
	}
	r := rand.New(rand.NewPCG(5, 6))
	for i := range len(good) {
		b := slices.Clone(good)
		b[i] ^= 1 << r.IntN(8)
		if _, err := ReadIndex(bufio.NewReader(bytes.NewReader(b)), p); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("bit flipped in byte %d of %d: got %v, want ErrCorrupt", i, len(good), err)
		}
		// Read in place, the body's checksum is Check's.
		refusedOrFound(t, fmt.Sprintf("bit flipped in byte %d of %d", i, len(good)), b, p)
	}
}

// An index read in place uses the bytes it was given for its arrays, and
// releases them once it is unreachable, not before; a failed read leaves
// them to the caller.
func TestReadInPlaceOwnsItsBytes(t *testing.T) {
	ix, an := churned(3, 2000, true)
	good := encode(t, ix)
	p := Params{Analyzer: an}
	buf := slices.Clone(good)
	released := make(chan struct{})
	got, err := ReadIndexInPlace(buf, p, func() { close(released) })
	if err != nil {
		t.Fatal(err)
	}
	in := func(s []uint32) bool {
		a := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
		lo := uintptr(unsafe.Pointer(unsafe.SliceData(buf)))
		return a >= lo && a < lo+uintptr(len(buf))
	}
	if !in(got.terms[0].slots) || !in(got.lens) {
		t.Fatal("the postings or lengths were copied out of the bytes given")
	}
	if in(got.ids) {
		t.Fatal("the ids, which a Remap rewrites whole, were not copied")
	}
	r := rand.New(rand.NewPCG(3, 4))
	z := rand.NewZipf(r, 1.2, 1, 450)
	sameResults(t, ix, got, r, z)
	runtime.GC()
	select {
	case <-released:
		t.Fatal("released while the index is reachable")
	default:
	}
	runtime.KeepAlive(got)
	got = nil
	deadline := time.After(10 * time.Second)
	for done := false; !done; {
		runtime.GC()
		select {
		case <-released:
			done = true
		case <-deadline:
			t.Fatal("not released once unreachable")
		case <-time.After(10 * time.Millisecond):
		}
	}

	bad := slices.Clone(good)
	bad[len(fileMagic)] ^= 1 // the version, under the header's checksum
	var calls atomic.Int32
	if _, err := ReadIndexInPlace(bad, p, func() { calls.Add(1) }); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("damaged header: got %v, want ErrCorrupt", err)
	}
	runtime.GC()
	runtime.GC()
	if calls.Load() != 0 {
		t.Fatal("a failed read released the caller's bytes")
	}
}

// reseal rewrites the checksums of an encoded index after its header or
// body was changed on purpose, as a forger (or a bug) would.
func reseal(b []byte) {
	h := len(fileMagic) + 4 + headerLen
	binary.LittleEndian.PutUint32(b[h:], crc32.Checksum(b[:h], castagnoli))
	binary.LittleEndian.PutUint32(b[len(b)-4:], crc32.Checksum(b[:len(b)-4], castagnoli))
}

// Contents that pass the checksums but contradict themselves are refused
// too, and a header's counts are checked before they size anything.
func TestReadInconsistent(t *testing.T) {
	ix := New(Params{Analyzer: analysis.Whitespace()})
	ix.Add(10, "a b b")
	ix.Add(11, "b c")
	good := encode(t, ix)
	p := Params{Analyzer: analysis.Whitespace()}
	if _, err := ReadIndex(bytes.NewReader(good), p); err != nil {
		t.Fatal(err)
	}
	hdr := len(fileMagic) + 4
	body := hdr + headerLen + 4
	// The body starts with the ids of the 2 slots, then their lengths and
	// live bytes (see WriteTo).
	lensAt := body + 8
	liveAt := body + 16
	for name, edit := range map[string]func(b []byte){
		"version 1":        func(b []byte) { binary.LittleEndian.PutUint32(b[len(fileMagic):], 1) },
		"huge term count":  func(b []byte) { binary.LittleEndian.PutUint32(b[hdr+28:], 1<<31) },
		"huge posting cnt": func(b []byte) { binary.LittleEndian.PutUint64(b[hdr+40:], 1<<40) },
		"large tf count":   func(b []byte) { binary.LittleEndian.PutUint64(b[hdr+56:], 1) },
		"forward bytes":    func(b []byte) { binary.LittleEndian.PutUint64(b[hdr+64:], 1<<40) },
		"unknown flag":     func(b []byte) { b[hdr+16] |= 4 },
		"live byte":        func(b []byte) { b[liveAt] = 2 },
		"length":           func(b []byte) { binary.LittleEndian.PutUint32(b[lensAt:], 7) },
		"same id twice":    func(b []byte) { copy(b[body+4:body+8], b[body:body+4]) },
		"padding":          func(b []byte) { b[liveAt+2] = 1 }, // after the 2 live bytes
		// The file ends with the forward lists, slot 0's (a 1, b 2) as
		// delta, frequency pairs 0 1 1 2, slot 1's (b 1, c 1) as 1 1 1 1,
		// then the checksum.
		"forward repeat":    func(b []byte) { b[len(b)-6] = 0 },
		"forward range":     func(b []byte) { b[len(b)-6] = 2 },
		"forward term":      func(b []byte) { b[len(b)-8] = 0 },
		"forward length":    func(b []byte) { b[len(b)-5] = 2 },
		"forward frequency": func(b []byte) { b[len(b)-11], b[len(b)-9] = 2, 1 },
	} {
		b := slices.Clone(good)
		edit(b)
		reseal(b)
		if _, err := ReadIndex(bytes.NewReader(b), p); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: got %v, want ErrCorrupt", name, err)
		}
		refusedOrFound(t, name, b, p)
	}
	// An intact file passes the deferred checks.
	for _, mode := range readModes[1:] {
		x, err := readAs(mode, good, p)
		if err != nil {
			t.Fatal(err)
		}
		if err := x.Check(context.Background()); err != nil || x.Unchecked() {
			t.Fatalf("intact file read %s: Check gave %v, unchecked %v", mode, err, x.Unchecked())
		}
	}
}

// refusedOrFound checks that the damaged file b, read with the checks
// deferred (copied or in place), is refused at once or found damaged by
// Check; before that, searching and removing do not trip on it, and the
// index is not written again.
func refusedOrFound(t *testing.T, name string, b []byte, p Params) {
	t.Helper()
	for _, mode := range readModes[1:] {
		x, err := readAs(mode, b, p)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Errorf("%s read %s: got %v, want ErrCorrupt", name, mode, err)
			}
			continue
		}
		x.Search("a b c", 10, nil)
		x.Remove(10)
		x.Search("a b c", 10, nil)
		if err := x.Check(context.Background()); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s read %s: Check gave %v, want ErrCorrupt", name, mode, err)
		}
		if x.Unchecked() {
			t.Errorf("%s read %s: still unchecked after Check", name, mode)
		}
		if _, err := x.WriteTo(io.Discard); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s read %s: WriteTo gave %v, want ErrCorrupt", name, mode, err)
		}
	}
}

// Check runs beside searches and Adds (the store's background check);
// a Remove waits for it. Run under -race.
func TestCheckBesideWrites(t *testing.T) {
	ix, an := churned(5, 3000, true)
	b := encode(t, ix)
	got, err := ReadIndexDeferred(bytes.NewReader(b), Params{Analyzer: an})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- got.Check(context.Background()) }()
	r := rand.New(rand.NewPCG(5, 13))
	z := rand.NewZipf(r, 1.2, 1, 450)
	for i := range 300 {
		id := uint32(10_000 + i)
		text := randomText(r, z, 20)
		ix.Add(id, text)
		got.Add(id, text)
		q := randomText(r, z, 4)
		if !slices.Equal(got.Search(q, 10, nil), ix.Search(q, 10, nil)) {
			t.Fatalf("query %q differs beside the check", q)
		}
	}
	got.Remove(want1(t, got))
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestRemap(t *testing.T) {
	ix, an := churned(7, 300, false)
	b := encode(t, ix)
	got, err := ReadIndex(bytes.NewReader(b), Params{Analyzer: an})
	if err != nil {
		t.Fatal(err)
	}
	if err := got.Remap(func(old uint32) (uint32, bool) { return old + 100_000, true }); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(7, 8))
	z := rand.NewZipf(r, 1.2, 1, 400)
	for range 50 {
		q := randomText(r, z, 3)
		want := ix.Search(q, 20, nil)
		for i := range want {
			want[i].ID += 100_000
		}
		if res := got.Search(q, 20, nil); !slices.Equal(res, want) {
			t.Fatalf("query %q: remapped index gives %v, want %v", q, res, want)
		}
	}
	// The renamed ids are the ones Remove and SearchAmong know.
	id := want1(t, got)
	got.Remove(id)
	if _, ok := got.slotOf.Get(id); ok {
		t.Fatal("Remove by a renamed id left the document")
	}

	bad := func(f func(uint32) (uint32, bool)) error {
		x, err := ReadIndex(bytes.NewReader(b), Params{Analyzer: an})
		if err != nil {
			t.Fatal(err)
		}
		return x.Remap(f)
	}
	live := want1(t, ix)
	if bad(func(old uint32) (uint32, bool) { return old, old != live }) == nil {
		t.Error("a mapping that rejects a live id was accepted")
	}
	if bad(func(uint32) (uint32, bool) { return 1, true }) == nil {
		t.Error("a mapping of every id to one was accepted")
	}
}

// want1 returns some live id of ix.
func want1(t *testing.T, ix *Index) uint32 {
	t.Helper()
	for id := range idSlots(ix) {
		return id
	}
	t.Fatal("no live document")
	return 0
}

// idSlots returns the slot of every live id of ix, checking that the id
// map agrees with the slots.
func idSlots(ix *Index) map[uint32]uint32 {
	m := make(map[uint32]uint32)
	for s, id := range ix.ids {
		if ix.live[s] {
			m[id] = uint32(s)
		}
	}
	if len(m) != ix.slotOf.Len() {
		panic("the id map holds other ids than the live slots")
	}
	for id, s := range m {
		if got, ok := ix.slotOf.Get(id); !ok || got != s {
			panic("the id map disagrees with the slots")
		}
	}
	return m
}

// Frequencies too large for a byte stay exact through a write and a read,
// and through the compaction that renumbers slots.
func TestLargeFrequencies(t *testing.T) {
	an := analysis.Whitespace()
	text := func(i int) string { return "y " + strings.Repeat("x ", i%700) }
	ix := New(Params{Analyzer: an})
	for i := range 2000 {
		ix.Add(uint32(i), text(i))
	}
	fresh := New(Params{Analyzer: an})
	for i := range 2000 {
		if i >= 1500 || i%7 == 0 {
			fresh.Add(uint32(i), text(i))
			continue
		}
		ix.Remove(uint32(i))
	}
	if len(ix.ids) >= 2000 {
		t.Fatalf("%d slots for %d documents: the removals did not compact", len(ix.ids), ix.nLive)
	}
	read, err := ReadIndex(bytes.NewReader(encode(t, ix)), Params{Analyzer: an})
	if err != nil {
		t.Fatal(err)
	}
	want := fresh.Search("x", 2000, nil)
	if len(want) < 500 {
		t.Fatalf("the fresh index ranks %d documents, first %v", len(want), want[:1])
	}
	for name, x := range map[string]*Index{"compacted": ix, "read": read} {
		if got := x.Search("x", 2000, nil); !slices.Equal(got, want) {
			t.Fatalf("%s: the ranking differs from the fresh index's", name)
		}
		if got, want := x.SearchAmong("x", 5, []uint32{699, 1399, 1, 1998}), fresh.SearchAmong("x", 5, []uint32{699, 1399, 1, 1998}); !slices.Equal(got, want) {
			t.Fatalf("%s among: %v, want %v", name, got, want)
		}
	}
}
