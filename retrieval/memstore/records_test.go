package memstore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/adaptrag/adaptrag/retrieval"
)

// lowAdopt makes every store large enough to save and adopt its records
// file, for the test.
func lowAdopt(t *testing.T) {
	t.Helper()
	old, delay := adoptMinBytes, scrubDelay
	adoptMinBytes, scrubDelay = 0, 0
	t.Cleanup(func() { adoptMinBytes, scrubDelay = old, delay })
}

// waitScrub waits for the end of the background check of an open that
// adopted the records file, if there is one.
func (s *Store) waitScrub() {
	if s.scrubEnd != nil {
		<-s.scrubEnd
	}
}

// fullDump is dump with the payload index, the tenants and the number of
// live chunks, which a load from the records file builds on its own.
func fullDump(s *Store) string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	// Three digits: a vector read back from an index is rounded
	// otherwise than the one written.
	out := strings.Join(recordLines(s, "%.3f"), "\n")
	ids := func(set *idSet) string {
		var keys []string
		set.each(func(iid uint32) {
			r := &s.recs[iid]
			keys = append(keys, r.Tenant+"/"+r.ID)
		})
		slices.Sort(keys)
		return strings.Join(keys, ",")
	}
	tname := map[uint32]string{}
	for name, tid := range s.tenants {
		tname[tid] = name
	}
	var lines []string
	for dk, set := range s.byDoc {
		lines = append(lines, fmt.Sprintf("doc %q/%q: %s", dk.tenant, dk.doc, ids(set)))
	}
	for sk, set := range s.bySource {
		lines = append(lines, fmt.Sprintf("source %q/%q: %s", tname[sk.tenant], sk.source, ids(set)))
	}
	for tid, set := range s.byTenant {
		lines = append(lines, fmt.Sprintf("tenant %q: %s", tname[tid], ids(set)))
	}
	for iid := range s.recs {
		if r := &s.recs[iid]; r.live && tname[s.tenantOf[iid]] != r.Tenant {
			lines = append(lines, fmt.Sprintf("record %d: tenant %q interned as %q", iid, r.Tenant, tname[s.tenantOf[iid]]))
		}
	}
	slices.Sort(lines)
	return fmt.Sprintf("%s\n%d live\n%s", out, s.nLive, strings.Join(lines, "\n"))
}

// recordsStore builds a store with deletes and a replacement (so that
// internal ids are reused and some are free), closes it and returns its
// directory and what a full load of it holds.
func recordsStore(t *testing.T) (string, string) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(3, 4))
	s := mustOpen(t, Options{Dir: dir, NoSync: true, CompactBytes: -1})
	cs := denseChunks(rng, 600, 8, 0)
	for i := range cs {
		cs[i].Source = fmt.Sprintf("src%d", i%4)
		cs[i].Meta = map[string]string{"k": fmt.Sprint(i % 5)}
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.Upsert(ctx, cs[:300]))
	must(s.Compact(ctx))
	must(s.Upsert(ctx, cs[300:]))
	must(s.DeleteDocument(ctx, retrieval.Scope{Tenant: "t1"}, "d2"))
	must(s.DeleteDocument(ctx, retrieval.Scope{Tenant: "t0"}, "d9"))
	repl := denseChunks(rng, 5, 8, 1)
	for i := range repl {
		repl[i].ID, repl[i].Tenant, repl[i].DocID = fmt.Sprintf("d4-new%d", i), "t2", "d4"
	}
	must(s.ReplaceDocument(ctx, retrieval.Scope{Tenant: "t2"}, "d4", repl))
	must(s.Close())
	if _, err := os.Stat(filepath.Join(dir, recordsName)); err != nil {
		t.Fatalf("Close saved no records file: %v", err)
	}
	return dir, loadFull(t, dir)
}

// loadFull is the full dump of dir read from its snapshot and log.
func loadFull(t *testing.T, dir string) string {
	t.Helper()
	s, err := Open(context.Background(), Options{Dir: copyDir(t, dir, recordsName), ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.recordsOnDisk {
		t.Fatal("a store without records.idx claims to have adopted one")
	}
	return fullDump(s)
}

// openRecords opens dir and returns its full dump and whether it adopted
// the records file; a writable Store is returned open.
func openRecords(t *testing.T, dir string, ro bool) (*Store, string, bool) {
	t.Helper()
	s, err := Open(context.Background(), Options{Dir: dir, ReadOnly: ro, NoSync: true, CompactBytes: -1})
	if err != nil {
		t.Fatalf("open (read-only %v): %v", ro, err)
	}
	s.mu.RLock()
	adopted := s.recordsOnDisk
	s.mu.RUnlock()
	// A writer's check may already have found damage and compacted,
	// dropping the file: it ran only for an adopting open.
	s.bgMu.Lock()
	adopted = adopted || s.scrubFiles
	s.bgMu.Unlock()
	return s, fullDump(s), adopted
}

func TestRecordsFileSavedAndAdopted(t *testing.T) {
	lowAdopt(t)
	ctx := context.Background()
	dir, want := recordsStore(t)
	for _, ro := range []bool{true, false} {
		s, got, adopted := openRecords(t, dir, ro)
		if !adopted {
			t.Fatalf("read-only %v: the records file was not adopted", ro)
		}
		if got != want {
			t.Fatalf("read-only %v: the store read from records.idx differs from the one read from its files", ro)
		}
		s.waitScrub()
		done, dmg := s.Verified()
		if done == ro || dmg != nil {
			t.Fatalf("read-only %v: Verified() = %v, %v", ro, done, dmg)
		}
		// It searches like the store read from the files.
		hits, err := s.SearchSparse(ctx, retrieval.Request{Scope: retrieval.Scope{Tenant: "t1"}, Text: "chunk revision", K: 5,
			Filter: retrieval.Filter{Must: []retrieval.Condition{{Key: "source", Values: []string{"src1"}}}}})
		if err != nil || len(hits) != 5 {
			t.Fatalf("read-only %v: %d hits, %v", ro, len(hits), err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	// A write after an adopting open removes the file before it is logged;
	// the ids it reuses are the ones a full load would have free.
	s, _, _ := openRecords(t, dir, false)
	if err := s.Upsert(ctx, docChunks("new", 3)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, recordsName)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("records.idx is still there after a write: %v", err)
	}
	after := fullDump(s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if got := loadFull(t, dir); got != after {
		t.Fatal("the files do not hold what the writer held")
	}
	r, got, adopted := openRecords(t, dir, true)
	r.Close()
	if !adopted || got != after {
		t.Fatalf("after the Close that saved it again: adopted %v, same %v", adopted, got == after)
	}
}

func TestRecordsFileThreshold(t *testing.T) {
	old := adoptMinBytes
	adoptMinBytes = 0
	dir, _ := recordsStore(t) // saved with the threshold lowered
	adoptMinBytes = old
	// A small store is read from its files, and its writer's Close removes
	// the records file instead of saving it.
	s, _, adopted := openRecords(t, dir, false)
	if adopted {
		t.Fatal("a store below adoptMinBytes adopted its records file")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, recordsName)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("records.idx of a small store: %v", err)
	}
}

func TestRecordsFileStale(t *testing.T) {
	lowAdopt(t)
	ctx := context.Background()
	dir, _ := recordsStore(t)
	old, err := os.ReadFile(filepath.Join(dir, recordsName))
	if err != nil {
		t.Fatal(err)
	}
	// A writer that writes and then crashes (its files are left as they
	// are; the removal of records.idx is lost), for each kind of write.
	writes := []func(*Store) error{
		func(s *Store) error { return s.Upsert(ctx, docChunks("late", 2)) },
		func(s *Store) error { return s.DeleteDocument(ctx, retrieval.Scope{Tenant: "t0"}, "d1") },
		func(s *Store) error { return s.Compact(ctx) },
	}
	for i, write := range writes {
		d := copyDir(t, dir)
		s := mustOpen(t, Options{Dir: d, NoSync: true, CompactBytes: -1})
		if err := write(s); err != nil {
			t.Fatal(err)
		}
		want := fullDump(s)
		s.disk.closeFiles() // a crash: no Close
		s.releaseVec()
		if err := os.WriteFile(filepath.Join(d, recordsName), old, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, ro := range []bool{true, false} {
			s, got, adopted := openRecords(t, d, ro)
			s.Close()
			if adopted || got != want {
				t.Fatalf("write %d, read-only %v: stale records.idx adopted %v, state right %v", i, ro, adopted, got == want)
			}
		}
	}
	// The records file of another state put back after a Close: the tag
	// does not match. The later write changes a text and nothing else, so
	// that only the tag tells the two states apart.
	d := copyDir(t, dir)
	s := mustOpen(t, Options{Dir: d, NoSync: true, CompactBytes: -1})
	v := []float32{1, 2, 3, 4, 5, 6, 7, 8}
	if err := s.Upsert(ctx, []retrieval.Chunk{{ID: "c10", Tenant: "t1", DocID: "d0", Text: "rewritten", Vector: v}}); err != nil {
		t.Fatal(err)
	}
	want := fullDump(s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, recordsName), old, 0o644); err != nil {
		t.Fatal(err)
	}
	r, got, adopted := openRecords(t, d, true)
	r.Close()
	if adopted || got != want {
		t.Fatalf("records.idx of an older state: adopted %v, state right %v", adopted, got == want)
	}
}

// TestRecordsFileDamaged damages every part of the file (flipped bytes
// across the header, body and checksum, truncations, bytes appended) and
// also rewrites its body with its checksum made to match (so that the
// decoder, not the checksum, meets the damage): every open must ignore
// it, hold the state of the files and never fail.
func TestRecordsFileDamaged(t *testing.T) {
	lowAdopt(t)
	dir, want := recordsStore(t)
	orig, err := os.ReadFile(filepath.Join(dir, recordsName))
	if err != nil {
		t.Fatal(err)
	}
	n := len(orig)
	type variant struct {
		name string
		b    []byte
		// forged: the checksum made to match, so that a flip in a text
		// is a valid file of another store, which may be adopted; every
		// other variant must be ignored.
		forged bool
	}
	var vs []variant
	flip := func(off int, fix bool) {
		b := slices.Clone(orig)
		b[off] ^= 0x5a
		if fix {
			binary.LittleEndian.PutUint32(b[n-4:], crc(b[:n-4]))
		}
		vs = append(vs, variant{fmt.Sprintf("flip at %d (checksum fixed %v)", off, fix), b, fix})
	}
	offs := []int{0, 7, 8, 15, 16, 23, 24, 27, 28, 31, recordsHeadLen, recordsHeadLen + 1, n / 3, n / 2, n - 5, n - 4, n - 1}
	r := rand.New(rand.NewPCG(9, 9))
	for range 40 {
		offs = append(offs, r.IntN(n))
	}
	for _, off := range offs {
		flip(off, false)
		if off < n-4 {
			flip(off, true)
		}
	}
	for _, l := range []int{0, 1, recordsHeadLen - 1, recordsHeadLen, recordsHeadLen + 4, n / 2, n - 5, n - 4, n - 1} {
		vs = append(vs, variant{fmt.Sprintf("cut to %d bytes", l), orig[:l], false})
	}
	vs = append(vs, variant{"one byte appended", append(slices.Clone(orig), 0), false})
	extra := append(slices.Clone(orig[:n-4]), 0)
	vs = append(vs, variant{"one byte appended before a matching checksum", binary.LittleEndian.AppendUint32(extra, crc(extra)), true})
	vs = append(vs, variant{"deleted", nil, false})
	var forgedAdopted, forgedIgnored int
	for _, v := range vs {
		d := copyDir(t, dir, recordsName)
		if v.b != nil {
			if err := os.WriteFile(filepath.Join(d, recordsName), v.b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		for _, ro := range []bool{true, false} {
			before := fileState(t, d)
			s, got, adopted := openRecords(t, d, ro)
			switch {
			case adopted && !v.forged:
				t.Fatalf("%s, read-only %v: adopted a damaged file", v.name, ro)
			case adopted:
				forgedAdopted++
			case got != want:
				t.Fatalf("%s, read-only %v: the store differs", v.name, ro)
			case v.forged:
				forgedIgnored++
			}
			s.Close()
			if ro && !maps.Equal(before, fileState(t, d)) {
				t.Fatalf("%s: the read-only open changed the directory", v.name)
			}
		}
	}
	t.Logf("%d variants; with the checksum made to match, %d opens saw the damage and ignored the file, %d read a valid file of another content", len(vs), forgedIgnored, forgedAdopted)
}

// TestRecordsFileOverDamagedFiles adopts the records file over a damaged
// snapshot or log: the writer's check finds it, compacts, and the files
// then hold everything; a reader reports the check not done.
func TestRecordsFileOverDamagedFiles(t *testing.T) {
	lowAdopt(t)
	dir, want := recordsStore(t)
	for _, name := range []string{snapName, walName} {
		d := copyDir(t, dir)
		st, err := os.Stat(filepath.Join(d, name))
		if err != nil {
			t.Fatal(err)
		}
		mutate(t, d, name, func(b []byte) []byte { b[st.Size()*2/3] ^= 0x10; return b })
		rd, got, adopted := openRecords(t, d, true)
		if done, _ := rd.Verified(); !adopted || got != want || done {
			t.Fatalf("%s damaged, read-only: adopted %v, same %v, check done %v", name, adopted, got == want, done)
		}
		rd.Close()
		s, got, adopted := openRecords(t, d, false)
		if !adopted || got != want {
			t.Fatalf("%s damaged: adopted %v, same %v", name, adopted, got == want)
		}
		s.waitScrub()
		done, dmg := s.Verified()
		var ce *CorruptError
		if !done || !errors.As(dmg, &ce) || ce.File != name {
			t.Fatalf("%s damaged: Verified() = %v, %v", name, done, dmg)
		}
		if !ce.Rewritten || strings.Contains(dmg.Error(), "repair") {
			t.Fatalf("%s damaged: the report does not say the file was rewritten: %v", name, dmg)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if got := loadFull(t, d); got != want {
			t.Fatalf("%s damaged: after the check's compaction the files hold another state", name)
		}
	}
}

// TestRecordsFileRefresh: a reader that adopted the records file follows
// a writer's later records and compaction.
func TestRecordsFileRefresh(t *testing.T) {
	lowAdopt(t)
	ctx := context.Background()
	dir, _ := recordsStore(t)
	rd, _, adopted := openRecords(t, dir, true)
	defer rd.Close()
	if !adopted {
		t.Fatal("the reader did not adopt the records file")
	}
	w, _, _ := openRecords(t, dir, false)
	defer w.Close()
	check := func(when string) {
		t.Helper()
		if err := rd.Refresh(ctx); err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		if fullDump(rd) != fullDump(w) {
			t.Fatalf("%s: the reader differs from the writer", when)
		}
	}
	check("no write")
	if err := w.Upsert(ctx, docChunks("r1", 4)); err != nil {
		t.Fatal(err)
	}
	if err := w.DeleteDocument(ctx, retrieval.Scope{Tenant: "t1"}, "d5"); err != nil {
		t.Fatal(err)
	}
	check("after writes")
	if err := w.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	if err := w.Upsert(ctx, docChunks("r2", 2)); err != nil {
		t.Fatal(err)
	}
	check("after a compaction")
}

// TestRecordsFileCheckTiming: the check waits scrubDelay; a Close before
// it leaves it not done, and a compaction before it leaves nothing to
// check, the damage gone with the files it rewrote.
func TestRecordsFileCheckTiming(t *testing.T) {
	lowAdopt(t)
	scrubDelay = 300 * time.Millisecond
	ctx := context.Background()
	dir, want := recordsStore(t)
	mutate(t, dir, snapName, func(b []byte) []byte { b[len(b)/2] ^= 0x10; return b })
	s, _, adopted := openRecords(t, dir, false)
	if done, _ := s.Verified(); !adopted || done {
		t.Fatalf("right after the open: adopted %v, check done %v", adopted, done)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s.waitScrub()
	if done, dmg := s.Verified(); done || dmg != nil {
		t.Fatalf("closed before the check: Verified() = %v, %v", done, dmg)
	}
	s, _, adopted = openRecords(t, dir, false)
	if !adopted {
		t.Fatal("not adopted again")
	}
	if err := s.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	s.waitScrub()
	if done, dmg := s.Verified(); !done || dmg != nil {
		t.Fatalf("compacted before the check: Verified() = %v, %v", done, dmg)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if got := loadFull(t, dir); got != want {
		t.Fatal("after the compaction the files hold another state")
	}
}

// TestRecordsFileSkipsKeyTable: an open that adopts the records file
// reads neither dense.idx's key table nor its keys, which the records
// file vouches for (the key table's checksum and the head's length);
// one that cannot adopt it reads the table after all and adopts the
// dense index as before.
func TestRecordsFileSkipsKeyTable(t *testing.T) {
	lowAdopt(t)
	dir, want := recordsStore(t)

	hinted, err := openDense(dir, readRecordsHint(dir))
	if err != nil {
		t.Fatal(err)
	}
	hinted.close()
	read, err := openDense(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	read.close()
	if hinted.keys != nil || read.keys == nil {
		t.Fatalf("keys read with the hint %v, without %v", hinted.keys != nil, read.keys != nil)
	}
	if hinted.head != read.head || hinted.keySum != read.keySum || hinted.nKeys != read.nKeys || hinted.tag != read.tag {
		t.Fatalf("the hint gives head %d, sum %x, %d ids, %v; the table %d, %x, %d, %v",
			hinted.head, hinted.keySum, hinted.nKeys, hinted.tag, read.head, read.keySum, read.nKeys, read.tag)
	}

	// Records too small to adopt: the hint still skips the table at
	// first, and adopting the dense index reads it.
	small := copyDir(t, dir)
	adoptMinBytes = 1 << 40
	s, got, adopted := openRecords(t, small, true)
	dense := s.denseOnDisk
	s.Close()
	adoptMinBytes = 0
	if adopted || !dense || got != want {
		t.Fatalf("not adoptable: records adopted %v, dense adopted %v, same %v", adopted, dense, got == want)
	}

	// A records file naming another key table (its head's length
	// changed, and its checksum made right again) is not adopted, and the
	// dense index is adopted through its keys.
	other := copyDir(t, dir)
	b, err := os.ReadFile(filepath.Join(other, recordsName))
	if err != nil {
		t.Fatal(err)
	}
	at := len(recordsMagic) + 8 + 8 + 4 + 4 + 4
	binary.LittleEndian.PutUint64(b[at:], binary.LittleEndian.Uint64(b[at:])+1)
	n := len(b) - 4
	binary.LittleEndian.PutUint32(b[n:], crc(b[:n]))
	if err := os.WriteFile(filepath.Join(other, recordsName), b, 0o644); err != nil {
		t.Fatal(err)
	}
	s, got, adopted = openRecords(t, other, true)
	dense = s.denseOnDisk
	s.Close()
	if adopted || !dense || got != want {
		t.Fatalf("another key table named: records adopted %v, dense adopted %v, same %v", adopted, dense, got == want)
	}

	// A byte of the key table damaged: an adopting open never reads it;
	// without the records file the table's checksum rejects the dense
	// index, which is built from the records instead.
	path := filepath.Join(dir, denseName)
	d, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	d[denseHeadLen+int(read.head-int64(denseHeadLen))/2] ^= 0x40
	if err := os.WriteFile(path, d, 0o644); err != nil {
		t.Fatal(err)
	}
	s, got, adopted = openRecords(t, dir, true)
	s.Close()
	if !adopted || got != want {
		t.Fatalf("key table damaged, records file there: adopted %v, same %v", adopted, got == want)
	}
	bare := copyDir(t, dir, recordsName)
	if _, err := openDense(bare, nil); err == nil {
		t.Fatalf("a damaged key table read: %v", err)
	}
	s, got, _ = openRecords(t, bare, true)
	dense = s.denseOnDisk
	s.Close()
	if dense || got != want {
		t.Fatalf("key table damaged, no records file: dense adopted %v, same %v", dense, got == want)
	}
}

// TestRecordsFileInPieces: read a few bytes at a time, with a margin
// shorter than every record (each of which is then decoded again once
// the whole file is read, which fails if the retry keeps the error of
// the first attempt), or longer, the records file is adopted and its
// damage found as when it is read in one piece.
func TestRecordsFileInPieces(t *testing.T) {
	defer func(m, p int) { recordMargin, fillPiece = m, p }(recordMargin, fillPiece)
	for _, sizes := range [][2]int{{8, 13}, {1 << 10, 3000}} {
		recordMargin, fillPiece = sizes[0], sizes[1]
		t.Run(fmt.Sprintf("margin %d piece %d", sizes[0], sizes[1]), func(t *testing.T) {
			t.Run("adopted", TestRecordsFileSavedAndAdopted)
			t.Run("damaged", TestRecordsFileDamaged)
		})
	}
}
