package memstore

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/adaptrag/adaptrag/internal/hugemem"
	"github.com/adaptrag/adaptrag/retrieval"
)

// The records file. With dense.idx and sparse.idx adopted, what is left
// of opening a large store is reading the snapshot and the log, whose
// float32 vectors are nine tenths of their bytes and which no adopted
// index needs, to rebuild the record table. So a writer's Close also
// saves that table, vectors left out, under each internal id: an open
// that adopts it with the two index files reads neither the snapshot
// nor the log (a million chunks: a quarter of the bytes, and no key is
// looked up in another writer's table).
//
// It is derived data under the rules of dense.idx: used only when it
// holds exactly the state the store's files hold, which the high-water
// mark in LOCK and the headers of the snapshot and the log tell without
// reading their records (nothing written since the Close that saved
// it), and only together with dense.idx of that state, which holds the
// vectors; removed by the first write or compaction after an open (a
// writable open that does not adopt it removes it at once); ignored when
// stale or damaged, and then the files are read as before. It never
// makes an open fail and never changes what a store holds. It is saved
// and used only for stores past adoptMinBytes on disk: a smaller one
// costs little to read, and reading it checks every record.
//
// An open that adopts it leaves the snapshot's and the log's checksums
// unchecked. A writer checks them in the background (scrub); damage there
// cannot lose anything the records file holds, so the writer compacts at
// once, which writes both files anew from memory, and Verified reports
// the damage. A read-only open leaves that check to the writer.
//
// Layout: magic, snapshot generation and sequence number (u64 each),
// dimension and number of internal ids (u32 each), the checksum of
// dense.idx's key table (u32) and the length of dense.idx's head (u64),
// the dense index file written by the same Close, the number of
// documents (u32: the payload index's map is made that size), then for
// each id a
// live byte and, when live, its chunk as the snapshot encodes it, with
// an empty vector; a CRC-32C of everything before it ends the file. An
// open that adopts it reads neither dense.idx's key table nor the keys:
// the records are numbered as the writer numbered them.
const (
	recordsName    = "records.idx"
	recordsMagic   = "ADRGREC2"
	recordsHeadLen = len(recordsMagic) + 8 + 8 + 4 + 4 + 4 + 8 + 4
)

// adoptMinBytes is the size of a snapshot and log from which an open
// adopts the records file instead of reading them; tests lower it.
var adoptMinBytes int64 = 64 << 20

// errRecordsStale reports a records file that does not hold the state of
// the store's files, or cannot be read; the caller loads the files.
var errRecordsStale = errors.New("memstore: records file does not match the store")

// writeRecords saves the record table of a writer closing cleanly, beside
// the index files, naming the dense one (s.denseSum, s.denseHead). The
// caller holds the write lock.
func (s *Store) writeRecords() error {
	d := s.disk
	err := d.writeAtomic(recordsName, 1<<20, func(w io.Writer) error {
		b := make([]byte, 0, 1<<17)
		b = append(b, recordsMagic...)
		b = binary.LittleEndian.AppendUint64(b, d.snapGen)
		b = binary.LittleEndian.AppendUint64(b, d.seq)
		b = binary.LittleEndian.AppendUint32(b, uint32(s.dim))
		b = binary.LittleEndian.AppendUint32(b, uint32(len(s.recs)))
		b = binary.LittleEndian.AppendUint32(b, s.denseSum)
		b = binary.LittleEndian.AppendUint64(b, uint64(s.denseHead))
		b = binary.LittleEndian.AppendUint32(b, uint32(len(s.byDoc)))
		_, _, err := s.writeTable(w, b, func(b []byte, r *record) []byte { return appendChunk(b, &r.Chunk) })
		return err
	})
	if err != nil {
		return err
	}
	s.recordsOnDisk = true
	return nil
}

// scrubPlan is what an open that adopted the records file left unread
// of the snapshot and the log, for the background check (scrub): the
// generation of both, the snapshot's size (0: none), and the log's records
// from hdrLen to end, which follow record base up to record seq.
type scrubPlan struct {
	snapSize, hdrLen, end int64
	gen, base, seq        uint64
}

// adoptRecords loads s from dir's records file instead of its snapshot
// and log when the store's files show exactly the state the file and the
// index files (df) were written at: the high-water mark in LOCK (note),
// the log's header and size and the snapshot's header. It returns nil,
// nil when they do not, or when the store is too small to bother, and s
// is untouched: the caller loads the files. An error means the file
// could not be used, and s holds a partial state the caller resets. A
// panic decoding the file is such an error.
func adoptRecords(dir string, s *Store, writable bool, note cleanNote, df *denseFile) (_ *loaded, err error) {
	tag := df.tag
	if note.gen != tag.gen || note.seq != tag.seq {
		return nil, nil
	}
	if ok, err := readManifest(dir); err != nil || !ok {
		return nil, nil // the full load reports it
	}
	flag := os.O_RDONLY
	if writable {
		flag = os.O_RDWR
	}
	log, err := os.OpenFile(filepath.Join(dir, walName), flag, 0)
	if err != nil {
		return nil, nil
	}
	keep := false
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v", errRecordsStale, r)
		}
		if !keep || err != nil {
			log.Close()
		}
	}()
	l := &loaded{log: log}
	st, err := log.Stat()
	if err != nil {
		return nil, nil
	}
	l.size = st.Size()
	if l.hdr, err = readLogHeader(log); err != nil || l.hdr.version != formatVersion ||
		l.hdr.gen != note.gen || uint64(l.size) != note.size {
		return nil, nil
	}
	sdim := 0
	snap, err := os.Open(filepath.Join(dir, snapName))
	switch {
	case err == nil:
		defer snap.Close()
		sst, err := snap.Stat()
		if err != nil {
			return nil, nil
		}
		sh, err := readSnapHeader(snap)
		if err != nil || sh.version != formatVersion || sh.gen != l.hdr.gen || sh.seq != l.hdr.base {
			return nil, nil
		}
		l.snapSize, sdim = sst.Size(), sh.dim
	case !errors.Is(err, fs.ErrNotExist) || l.hdr.gen != 0 || l.hdr.base != 0:
		return nil, nil
	}
	if l.snapSize+l.size < adoptMinBytes {
		return nil, nil
	}
	if err := s.readRecords(dir, df, sdim); err != nil {
		return nil, err
	}
	l.gen, l.base = l.hdr.gen, l.hdr.base
	l.end, l.seq = l.size, note.seq
	l.unchecked = &scrubPlan{snapSize: l.snapSize, hdrLen: l.hdr.len, end: l.end, gen: l.gen, base: l.hdr.base, seq: l.seq}
	keep = true
	return l, nil
}

// recordsHead is the header of a records file, unchecked.
type recordsHead struct {
	tag       denseTag
	dim, ids  int
	keySum    uint32 // of dense.idx's key table
	denseHead int64  // the length of dense.idx's head
	docs      int
}

// parseRecordsHead reads the header at the start of b, which holds at
// least recordsHeadLen bytes; false when the magic is not a records file's.
func parseRecordsHead(b []byte) (recordsHead, bool) {
	if string(b[:len(recordsMagic)]) != recordsMagic {
		return recordsHead{}, false
	}
	h := b[len(recordsMagic):]
	return recordsHead{
		tag:       denseTag{binary.LittleEndian.Uint64(h), binary.LittleEndian.Uint64(h[8:])},
		dim:       int(binary.LittleEndian.Uint32(h[16:])),
		ids:       int(binary.LittleEndian.Uint32(h[20:])),
		keySum:    binary.LittleEndian.Uint32(h[24:]),
		denseHead: int64(binary.LittleEndian.Uint64(h[28:]) & (1<<62 - 1)),
		docs:      int(binary.LittleEndian.Uint32(h[36:])),
	}, true
}

// readRecordsHint reads what dir's records file says of the dense index
// file written beside it, unchecked (the whole file's checksum is checked
// when it is read); nil when it cannot be read.
func readRecordsHint(dir string) *keyHint {
	f, err := os.Open(filepath.Join(dir, recordsName))
	if err != nil {
		return nil
	}
	defer f.Close()
	var b [recordsHeadLen]byte
	if _, err := io.ReadFull(f, b[:]); err != nil {
		return nil
	}
	h, ok := parseRecordsHead(b[:])
	if !ok {
		return nil
	}
	return &keyHint{tag: h.tag, nKeys: h.ids, keySum: h.keySum, head: h.denseHead}
}

// readRecords reads dir's records file into s, which must be empty. It
// must have been written with df, the dense index file (the same state,
// internal ids, key table checksum and head length), and dim, when not 0,
// is its dimension (the snapshot's).
func (s *Store) readRecords(dir string, df *denseFile, dim int) error {
	f, err := os.Open(filepath.Join(dir, recordsName))
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if st.Size() < int64(recordsHeadLen)+4 || st.Size() > 1<<40 {
		return fmt.Errorf("%w: %d bytes", errRecordsStale, st.Size())
	}
	// The file is read whole into one allocation, and the records' strings
	// are views of it (loadDecoder.keep): a string allocated for each
	// chunk was half of decoding it, much of it the first growth of the
	// heap. The price: the bytes of a chunk deleted or replaced later
	// stay in memory until the store is closed, as much as the file at
	// most. It is read in the background (fill) and the records decoded
	// as their bytes arrive; its checksum is checked at the end, and the
	// records decoded are dropped if it fails (the caller resets s).
	b := hugemem.Make[byte](int(st.Size()))
	fl := fill(f, b)
	defer fl.stop()
	n := len(b) - 4
	if err := fl.wait(recordsHeadLen); err != nil {
		return err
	}
	h, ok := parseRecordsHead(b)
	if !ok {
		return fmt.Errorf("%w: bad magic", errRecordsStale)
	}
	if h.tag != df.tag {
		return fmt.Errorf("%w: written at %v, the store is at %v", errRecordsStale, h.tag, df.tag)
	}
	fdim, ids := h.dim, h.ids
	if fdim <= 0 || fdim > maxVector || dim != 0 && fdim != dim || ids != df.nKeys || ids > n-recordsHeadLen {
		return fmt.Errorf("%w: dimension %d, %d ids", errRecordsStale, fdim, ids)
	}
	if h.keySum != df.keySum || h.denseHead != df.head {
		return fmt.Errorf("%w: written beside another dense index file", errRecordsStale)
	}
	s.setDim(fdim)
	// src holds the bytes read and not yet decoded, up to lim; ensure
	// makes k of them (or all up to the checksum) available.
	lim := recordsHeadLen
	src := &byteSlice{}
	ensure := func(k int) error {
		pos := lim - src.Len()
		if lim == n || lim-pos >= k {
			return nil
		}
		err := fl.wait(min(pos+k, n))
		lim = min(fl.filled(), n)
		src.b = b[pos:lim]
		return err
	}
	rd := newReader(src)
	rd.ld = &loadDecoder{skipVec: true, keep: true}
	s.recs = hugemem.Make[record](ids)
	s.tenantOf = make([]uint32, ids)
	// Made at its size: growing it a table split at a time was a fifth of
	// reading the file (a million chunks in 125k documents, ad hoc).
	docs := min(h.docs, ids)
	s.byDoc = make(map[docKey]*idSet, docs)
	docCap := 0
	if docs > 0 {
		docCap = min((ids+docs-1)/docs, 64)
	}
	// The payload index is built behind the decoding, on another
	// goroutine (startLinker), and the key table after it beside the rest of
	// that: at a million chunks each is about a third of decoding's time.
	lk := startLinker(s, docCap)
	defer lk.stop()
	for iid := range ids {
		if iid%linkPiece == 0 {
			lk.upTo(iid)
		}
		if err := ensure(recordMargin); err != nil {
			return err
		}
		live, err := src.ReadByte()
		if err != nil {
			return fmt.Errorf("%w: ends at id %d of %d", errRecordsStale, iid, ids)
		}
		if live == 0 {
			s.tenantOf[iid] = noTenant
			s.free = append(s.free, uint32(iid))
			continue
		}
		if live != 1 {
			return fmt.Errorf("%w: id %d: live byte %d", errRecordsStale, iid, live)
		}
		pos := lim - src.Len()
		c := rd.chunk()
		if rd.err != nil && lim < n {
			// Longer than the margin and past the bytes read: decode
			// it again once the whole file is.
			if err := ensure(n); err != nil {
				return err
			}
			src.b, rd.err = b[pos:n], nil
			c = rd.chunk()
		}
		if rd.err != nil {
			return fmt.Errorf("%w: id %d: %w", errRecordsStale, iid, rd.err)
		}
		if c.ID == "" || len(c.Vector) != 0 {
			return fmt.Errorf("%w: id %d holds no chunk", errRecordsStale, iid)
		}
		s.recs[iid] = record{Chunk: c, live: true}
		s.nLive++
	}
	lk.upTo(ids)
	if err := ensure(n); err != nil {
		return err
	}
	if src.Len() != 0 {
		return fmt.Errorf("%w: %d bytes after the last id", errRecordsStale, src.Len())
	}
	if err := fl.wait(len(b)); err != nil {
		return err
	}
	if fl.sum != binary.LittleEndian.Uint32(b[n:]) {
		return fmt.Errorf("%w: checksum", errRecordsStale)
	}
	lk.close()
	if iid, dup := s.byKey.load(s.recs); dup {
		return fmt.Errorf("%w: chunk %q twice", errRecordsStale, s.recs[iid].ID)
	}
	if err := lk.stop(); err != nil {
		return err
	}
	// Reused ids are taken from the end of the free list: lowest first.
	slices.Reverse(s.free)
	return nil
}

// linkPiece is how many records readRecords decodes between two hand-offs
// to its linker.
const linkPiece = 8192

// linker adds the live records readRecords decoded to the payload index
// (linkRecord), on its own goroutine, up to the id it was last told.
// Only it touches the payload index and the tenants while it runs; the
// records below that id are not written again.
type linker struct {
	upto chan int
	done chan struct{}
	err  error // a panic while linking, after done
}

func startLinker(s *Store, docCap int) *linker {
	upto := make(chan int, 64)
	lk := &linker{upto: upto, done: make(chan struct{})}
	go func() {
		defer close(lk.done)
		defer func() {
			if p := recover(); p != nil {
				lk.err = fmt.Errorf("%w: linking the records: %v", errRecordsStale, p)
			}
		}()
		lc := linkCache{docCap: docCap}
		var tc tenantCache
		lo := 0
		for hi := range upto {
			for iid := lo; iid < hi; iid++ {
				if s.recs[iid].live {
					s.linkRecord(&tc, &lc, uint32(iid))
				}
			}
			lo = hi
		}
	}()
	return lk
}

// upTo hands the records below hi to the linker.
func (lk *linker) upTo(hi int) {
	if lk.upto != nil {
		lk.upto <- hi
	}
}

// close tells the linker no more records come.
func (lk *linker) close() {
	if lk.upto != nil {
		close(lk.upto)
		lk.upto = nil
	}
}

// stop waits for the linker to end and returns its error.
func (lk *linker) stop() error {
	lk.close()
	<-lk.done
	return lk.err
}

// scrubDelay is how long after an open the background check starts: the
// first seconds of a reopened store go to the searches it serves, not to
// reading 1.8 GB (a million chunks: about 1.5 s of CPU, paced to half a
// core). Tests set it to 0.
var scrubDelay = 10 * time.Second

// scrubHold, when set (by tests only), is called first by the background
// check, so that a test can see what the open left before the check
// changes it.
var scrubHold func()

// scrub starts the checks an open left undone, in the background of a
// writer: of the keyword index it read from sparse.idx (checkSparse) and
// of the int8 copies of vectors it mapped from dense.idx (checkCopies)
// at once, then, scrubDelay after the open, of the
// snapshot's and the log's checksums when it adopted the records file
// (p, else nil). Damage in
// the snapshot or the log loses nothing the store holds, so the writer
// compacts at once, rewriting both files from memory; the damage found
// is kept for Verified. A compaction before the check has rewritten both
// files from memory too, and leaves nothing to check. Close stops the
// check; the next open that leaves it undone starts it again.
func (s *Store) scrub(p *scrubPlan) {
	s.bgMu.Lock()
	s.scrubbing, s.scrubFiles = true, p != nil
	s.bgMu.Unlock()
	end := make(chan struct{})
	s.scrubEnd = end
	d, ctx := s.disk, s.bgCtx
	go func() {
		defer close(end)
		if scrubHold != nil {
			scrubHold()
		}
		start := time.Now()
		// At once, in this order: the keyword index's checks (a quarter
		// of a second of a core at a million chunks, and a Remove waits
		// for them), then the copies (a search that meets one unchecked
		// checks it, and reads it from disk when the open left the page
		// cache cold, which this pass, reading them in order, warms).
		var cerr error
		for _, check := range []func(context.Context) error{s.checkSparse, s.checkCopies} {
			cerr = errors.Join(cerr, check(ctx))
			if cerr != nil && ctx.Err() != nil && !errors.Is(cerr, retrieval.ErrCorrupt) {
				return // stopped by Close: not done
			}
		}
		if wait := scrubDelay - time.Since(start); p != nil && wait > 0 {
			t := time.NewTimer(wait)
			defer t.Stop()
			select {
			case <-ctx.Done():
				return // closed first: not done
			case <-t.C:
			}
		}
		s.compMu.Lock()
		defer s.compMu.Unlock()
		if ctx.Err() != nil {
			return
		}
		var err error
		if p != nil {
			s.mu.RLock()
			rewritten := d.gen != p.gen || d.snapGen != p.gen
			s.mu.RUnlock()
			if !rewritten {
				err = checkFiles(ctx, d.dir, *p)
			}
		}
		if err != nil && ctx.Err() != nil && !errors.Is(err, retrieval.ErrCorrupt) {
			return // stopped by Close: not done
		}
		if err != nil {
			cerr := s.compactLocked(ctx)
			if cerr != nil && ctx.Err() == nil {
				s.bgMu.Lock()
				s.bgErr = cerr
				s.bgMu.Unlock()
			}
			var ce *CorruptError
			if cerr == nil && errors.As(err, &ce) {
				ce.Rewritten = true
			}
		}
		err = errors.Join(err, cerr)
		s.bgMu.Lock()
		s.scrubbed, s.scrubDone = err, true
		s.bgMu.Unlock()
	}()
}

// checkCopies checks the int8 copies of vectors that the open mapped from
// dense.idx unchecked (vector.Index.CheckCopies), a piece at a time under
// the read lock, paced as checkFiles is. A search checks a copy before
// using it in any case; this finds the damage no search met yet. Damage
// found, by either, is a *CorruptError: copies that were made again from
// their float32 originals lose nothing, and the store drops dense.idx
// (with the files that go with it) so that Close writes it anew from
// memory; a copy whose original is damaged too makes every dense search
// fail with retrieval.ErrCorrupt until the store is opened again, and
// that open, without dense.idx, builds the index from the snapshot.
func (s *Store) checkCopies(ctx context.Context) error {
	rest := &idler{t: time.Now()}
	var (
		repaired int
		damage   error
	)
	for from := 0; from >= 0; rest.tick() {
		if err := ctx.Err(); err != nil {
			return err
		}
		s.mu.RLock()
		if s.closed || s.vec == nil {
			s.mu.RUnlock()
			return nil
		}
		from = s.vec.CheckCopies(from, copiesPiece)
		repaired, damage = s.vec.Repaired(), s.vec.Damage()
		s.mu.RUnlock()
	}
	if repaired == 0 && damage == nil {
		return nil
	}
	s.mu.Lock()
	err := s.dropDense()
	s.mu.Unlock()
	ce := &CorruptError{Dir: s.disk.dir, File: denseName, Offset: -1}
	if damage != nil {
		ce.Reason = fmt.Sprintf("%v; dense searches fail until the store is opened again, which builds the index from the snapshot", damage)
	} else {
		ce.Reason = fmt.Sprintf("%d int8 copies of vectors failed their checksums and were made again from their float32 originals", repaired)
		ce.Rewritten = err == nil
	}
	return errors.Join(ce, err)
}

// copiesPiece is how many int8 copies checkCopies checks under one hold
// of the read lock (about 400 KB at 384 dimensions).
const copiesPiece = 1024

// scrubWork is how long the background check works before it rests as
// long, so that it takes at most half a core from the searches that
// follow an open (at 1M chunks it reads 1.8 GB, about 1.5 s of CPU).
const scrubWork = 5 * time.Millisecond

// idler paces the background check (scrubWork).
type idler struct{ t time.Time }

// tick rests once the check has worked scrubWork since the last rest.
func (p *idler) tick() {
	if w := time.Since(p.t); w >= scrubWork {
		time.Sleep(w)
		p.t = time.Now()
	}
}

// checkFiles verifies what p describes of the files in dir: the
// snapshot's checksum, and the log's records, which must be intact and
// follow one another up to the high-water mark. Damage is a *CorruptError.
func checkFiles(ctx context.Context, dir string, p scrubPlan) error {
	hdrLen, end, base, seq, snapSize := p.hdrLen, p.end, p.base, p.seq, p.snapSize
	rest := &idler{t: time.Now()}
	if snapSize > 0 {
		f, err := os.Open(filepath.Join(dir, snapName))
		if err != nil {
			return err
		}
		err = checkSnapshot(ctx, f, snapSize, rest)
		f.Close()
		if err != nil && ctx.Err() != nil {
			return err
		}
		if err != nil {
			return corruptf(dir, snapName, -1, "%v", err)
		}
	}
	f, err := os.Open(filepath.Join(dir, walName))
	if err != nil {
		return err
	}
	defer f.Close()
	got, last, dmg, err := scanLog(ctx, f, formatVersion, hdrLen, end, base, func(uint64, []byte, int64) error {
		rest.tick()
		return nil
	})
	switch {
	case err != nil:
		return err
	case dmg != nil:
		return corruptf(dir, walName, dmg.off, "%s", dmg.reason)
	case got != end || last != seq:
		return corruptf(dir, walName, got, "the records end at record %d, the high-water mark says %d at %d bytes", last, seq, end)
	}
	return nil
}

// checkSnapshot checks the structure and the checksum of the snapshot
// f, of size bytes: a header, as many frames as it counts, and the
// CRC-32C of everything before it ending the file.
func checkSnapshot(ctx context.Context, f *os.File, size int64, rest *idler) error {
	h, err := readSnapHeader(f)
	if err != nil {
		return err
	}
	r := bufio.NewReaderSize(io.NewSectionReader(f, 0, size), 1<<20)
	var sum uint32
	buf := make([]byte, 1<<16)
	// through reads n bytes into the checksum, in pieces.
	through := func(n int64) error {
		for n > 0 {
			b := buf[:min(n, int64(len(buf)))]
			if _, err := io.ReadFull(r, b); err != nil {
				return err
			}
			sum = crc32Update(sum, b)
			n -= int64(len(b))
			rest.tick()
		}
		return nil
	}
	if err := through(h.len); err != nil {
		return err
	}
	off := h.len
	for i := uint64(0); i < h.count; i++ {
		if i&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		var fh [frameLen]byte
		if _, err := io.ReadFull(r, fh[:]); err != nil {
			return fmt.Errorf("chunk %d of %d cut short", i+1, h.count)
		}
		sum = crc32Update(sum, fh[:])
		n := int64(binary.LittleEndian.Uint32(fh[:]))
		if n == 0 || n > size-off-frameLen-4 {
			return fmt.Errorf("chunk %d of %d at offset %d: a frame of %d bytes", i+1, h.count, off, n)
		}
		if err := through(n); err != nil {
			return fmt.Errorf("chunk %d of %d cut short", i+1, h.count)
		}
		off += frameLen + n
	}
	if off != size-4 {
		return fmt.Errorf("%d bytes after the last chunk, where its checksum should end the file", size-off)
	}
	var tail [4]byte
	if _, err := io.ReadFull(r, tail[:]); err != nil {
		return err
	}
	if want := binary.LittleEndian.Uint32(tail[:]); sum != want {
		return fmt.Errorf("checksum of the whole file %08x, the file says %08x", sum, want)
	}
	return nil
}

// Verified reports the outcome of the checks that a writable Store makes
// in the background of what Open left unread: the snapshot and the log
// when Open adopted the records file saved by the last Close (a large
// store reopened with nothing written since), the int8 copies of
// vectors it mapped from dense.idx (checkCopies) and the half of the
// keyword index's checks that searches do not depend on (checkSparse).
// It returns done once they have run, and the damage they found (a
// *CorruptError matching retrieval.ErrCorrupt, or several joined):
// damage to the snapshot or the log the store then compacted away,
// losing nothing (memory held every chunk); damaged copies it made again
// from their originals; a keyword index it built again from the texts.
// The keyword index and the copies are checked at once, the files 10 s
// after Open, each check taking at most half a core; a compaction before the second leaves the
// files nothing to check (it wrote both anew from memory). A Store whose Open read every file reports
// done and nil: Open checked every record. A read-only Store that left
// a check undone leaves it to a writer and reports not done; so does a
// Store closed before the checks ended.
func (s *Store) Verified() (done bool, damage error) {
	s.bgMu.Lock()
	defer s.bgMu.Unlock()
	if s.scrubDone {
		return true, s.scrubbed
	}
	return !s.scrubbing, nil
}

// recordMargin is how many bytes past a record's start readRecords has
// read before it decodes the record, and fillPiece how many the
// background read reads at a time. A record longer than the margin is
// decoded again once the whole file is read. Tests make both small.
var (
	recordMargin = 1 << 20
	fillPiece    = 4 << 20
)

// filler reads a file into a buffer in the background, a piece at a time,
// so that its start can be used before its end is read: at a million
// chunks, reading the records file took a fifth of an open whose page
// cache was cold, before anything was decoded. It keeps the CRC-32C of
// all but the buffer's last 4 bytes, the file's checksum.
type filler struct {
	mu   sync.Mutex
	cond sync.Cond
	n    int   // bytes read
	err  error // why the read stopped short
	done chan struct{}
	halt atomic.Bool
	// sum is the CRC-32C, once the whole buffer is read (wait).
	sum uint32
}

// fill starts reading r into b.
func fill(r io.Reader, b []byte) *filler {
	fl := &filler{done: make(chan struct{})}
	fl.cond.L = &fl.mu
	go func() {
		defer close(fl.done)
		var sum uint32
		for n := 0; n < len(b); {
			if fl.halt.Load() {
				fl.finish(n, sum, errors.New("stopped"))
				return
			}
			k, err := io.ReadFull(r, b[n:min(n+fillPiece, len(b))])
			if n < len(b)-4 {
				sum = crc32.Update(sum, castagnoli, b[n:min(n+k, len(b)-4)])
			}
			n += k
			if err != nil {
				if errors.Is(err, io.EOF) {
					err = io.ErrUnexpectedEOF
				}
				fl.finish(n, sum, err)
				return
			}
			fl.finish(n, sum, nil)
		}
	}()
	return fl
}

// finish publishes the bytes read so far, their checksum and the error
// that ends the read, if any.
func (fl *filler) finish(n int, sum uint32, err error) {
	fl.mu.Lock()
	fl.n, fl.sum, fl.err = n, sum, err
	fl.mu.Unlock()
	fl.cond.Broadcast()
}

// wait waits until k bytes are read, or returns why they will not be.
func (fl *filler) wait(k int) error {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	for fl.n < k && fl.err == nil {
		fl.cond.Wait()
	}
	if fl.n >= k {
		return nil
	}
	return fmt.Errorf("%w: reading: %w", errRecordsStale, fl.err)
}

// filled returns how many bytes are read.
func (fl *filler) filled() int {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	return fl.n
}

// stop ends the read and waits for it.
func (fl *filler) stop() {
	fl.halt.Store(true)
	<-fl.done
}
