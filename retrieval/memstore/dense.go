package memstore

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"unsafe"

	"github.com/adaptrag/adaptrag/retrieval/vector"
)

// The dense index file. Building the dense index is most of what opening
// a large store costs (a million vectors: well over a minute), so a
// writer's Close saves it, and the next open adopts it instead of adding
// every vector again. It is derived data: an open uses it only when it
// indexes exactly the state loaded (the snapshot generation and the last
// record's sequence number it was written at), and otherwise, or when it
// is damaged, ignores it and builds the index from the records. It never
// makes an open fail and never changes what a store holds.
//
// Layout: magic, snapshot generation and sequence number (u64 each), the
// number of internal ids n (u32), then for each id a live byte and, when
// live, the tenant and the id of its chunk (u32 length and bytes each),
// a CRC-32C of all of that, and the vector index as vector.WriteTo writes
// it (with its own checksums). The chunk keys map the writer's internal
// ids to the ones a load from the snapshot and the log assigns, which
// differ; a load from the records file (records.go) numbers the chunks
// as the writer did and needs no key.
const (
	denseName  = "dense.idx"
	denseMagic = "ADRGDNS1"
)

// denseTag is the state a dense index file indexes.
type denseTag struct{ gen, seq uint64 }

// writeDense saves the dense index of a writer that is closing cleanly:
// under a temporary name, synced, renamed into place. It reports whether
// it wrote the file and the CRC-32C of its key table, which sparse.idx
// and records.idx name (records.idx also the length of the head, in
// s.denseHead). The caller holds the write lock.
func (s *Store) writeDense() (keySum uint32, wrote bool, err error) {
	d := s.disk
	if d == nil || d.ro || d.broken != nil || s.denseOnDisk || s.vec == nil || s.vec.Len() == 0 {
		return 0, false, nil
	}
	var head int64
	err = d.writeAtomic(denseName, 1<<20, func(w io.Writer) error {
		var b []byte
		b = append(b, denseMagic...)
		b = binary.LittleEndian.AppendUint64(b, d.snapGen)
		b = binary.LittleEndian.AppendUint64(b, d.seq)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(s.recs)))
		sum, n, err := s.writeTable(w, b, func(b []byte, r *record) []byte {
			b = binary.LittleEndian.AppendUint32(b, uint32(len(r.Tenant)))
			b = append(b, r.Tenant...)
			b = binary.LittleEndian.AppendUint32(b, uint32(len(r.ID)))
			return append(b, r.ID...)
		})
		if err != nil {
			return err
		}
		keySum, head = sum, n
		_, err = s.vec.WriteTo(w)
		return err
	})
	if err != nil {
		return 0, false, err
	}
	s.denseOnDisk, s.denseSum, s.denseHead = true, keySum, head
	return keySum, true, nil
}

// writeTable writes head, then for each internal id a live byte and, for
// a live record, what entry appends for it, then the CRC-32C of all of
// that; it returns the checksum and the number of bytes written. The
// table of dense.idx and records.idx.
func (s *Store) writeTable(w io.Writer, head []byte, entry func(b []byte, r *record) []byte) (uint32, int64, error) {
	c := &crcWriter{w: w}
	b := head
	for i := range s.recs {
		r := &s.recs[i]
		if !r.live {
			b = append(b, 0)
		} else {
			b = entry(append(b, 1), r)
		}
		if len(b) > 1<<16 {
			c.Write(b)
			b = b[:0]
		}
	}
	c.Write(b)
	if c.err != nil {
		return 0, 0, c.err
	}
	_, err := w.Write(binary.LittleEndian.AppendUint32(nil, c.sum))
	return c.sum, c.n + 4, err
}

// crcWriter writes through to w, keeping a CRC-32C and the count of what
// it wrote and the first error.
type crcWriter struct {
	w   io.Writer
	sum uint32
	n   int64
	err error
}

func (c *crcWriter) Write(p []byte) {
	if c.err != nil {
		return
	}
	c.sum = crc32Update(c.sum, p)
	var n int
	n, c.err = c.w.Write(p)
	c.n += int64(n)
}

// errDenseStale reports a dense index file that does not index the state
// loaded; the caller builds the index from the records instead.
var errDenseStale = errors.New("memstore: dense index file does not match the store")

// denseFile is a dense index file read up to its vector index: the state
// it indexes and the chunk key of each of the writer's internal ids.
type denseFile struct {
	tag     denseTag
	nKeys   int    // internal ids in the key table
	headSum uint32 // CRC-32C of the header, where the key table's starts
	// keys is the key table, by the writer's internal id; the zero key
	// for a dead one (a live chunk always has an id). It is nil when the
	// open skipped it (a records file vouched for it, keyHint) until
	// loadKeys reads it.
	keys   []key
	keySum uint32 // CRC-32C of the key table
	// rename maps the writer's internal ids to the ones this load assigned
	// (false: none), once adoptDense has matched them.
	rename func(old uint32) (uint32, bool)
	f      *os.File
	head   int64 // length of the head: the vector index starts there
	// The vector index, read in the background while the store loads
	// (readVectors): done is closed once vec or vecErr is set.
	done   chan struct{}
	vec    *vector.Index
	vecErr error
}

// readVectors starts reading df's vector index in the background.
func (df *denseFile) readVectors(o vector.Options) {
	df.done = make(chan struct{})
	f, head := df.f, df.head
	go func() {
		defer close(df.done)
		// Read in place, a large index leaves its float32 vectors in the
		// file (vector.ReadIndexAt): the store then keeps the file open.
		df.vec, df.vecErr = vector.ReadIndexAt(f, head, o)
	}()
}

// close waits for the background read, if any, and closes the file
// unless the store adopted an index that reads from it.
func (df *denseFile) close() {
	if df.done != nil {
		<-df.done
	}
	if df.f != nil {
		df.f.Close()
	}
}

// noIID marks a writer's internal id that has no chunk in the load.
const noIID = ^uint32(0)

// denseHeadLen is the length of dense.idx's header, before the key table's
// entries.
const denseHeadLen = len(denseMagic) + 8 + 8 + 4

// keyHint is what a records file says of the dense index file written
// by the same Close (recordsHead): its state, number of internal ids, key
// table checksum and head length.
type keyHint struct {
	tag    denseTag
	nKeys  int
	keySum uint32
	head   int64
}

// openDense reads the head of dir's dense index file, if there is one
// that is whole up to its vector index. With a hint that matches the
// file's header and the checksum stored at the end of its key table, it
// reads neither the table nor its checksum: an open that adopts the
// records file needs no key (the records are numbered as the writer
// numbered them), and one that does not reads the table then (loadKeys).
// At a million chunks the table is 20 MB in a million entries, parsed
// before anything else of the open could start.
func openDense(dir string, hint *keyHint) (*denseFile, error) {
	f, err := os.Open(filepath.Join(dir, denseName))
	if err != nil {
		return nil, err
	}
	df := &denseFile{f: f}
	if err := df.readHead(hint); err != nil {
		f.Close()
		return nil, err
	}
	return df, nil
}

// readHead reads df's header, then its key table unless hint vouches for
// it.
func (df *denseFile) readHead(hint *keyHint) error {
	var head [denseHeadLen]byte
	if _, err := df.f.ReadAt(head[:], 0); err != nil {
		return err
	}
	if string(head[:len(denseMagic)]) != denseMagic {
		return fmt.Errorf("%w: bad magic", errDenseStale)
	}
	h := head[len(denseMagic):]
	df.tag = denseTag{binary.LittleEndian.Uint64(h), binary.LittleEndian.Uint64(h[8:])}
	n := binary.LittleEndian.Uint32(h[16:])
	if n > 1<<28 {
		return fmt.Errorf("%w: %d ids", errDenseStale, n)
	}
	df.nKeys, df.headSum = int(n), crc32Update(0, head[:])
	if hint != nil && hint.tag == df.tag && hint.nKeys == df.nKeys && hint.head > int64(denseHeadLen)+4 {
		var sum [4]byte
		if _, err := df.f.ReadAt(sum[:], hint.head-4); err == nil && binary.LittleEndian.Uint32(sum[:]) == hint.keySum {
			df.keySum, df.head = hint.keySum, hint.head
			return nil
		}
	}
	return df.loadKeys()
}

// loadKeys reads df's key table, whose header readHead has read, and
// checks it: its checksum, and the head's length when a hint set it.
func (df *denseFile) loadKeys() error {
	r := bufio.NewReaderSize(io.NewSectionReader(df.f, int64(denseHeadLen), 1<<62), 1<<20)
	w := &window{r: r, sum: df.headSum, n: int64(denseHeadLen)}
	n := df.nKeys
	// The keys' bytes go into one arena, and the keys become strings over
	// it once it is whole: two allocations for the table, not two a key.
	type span struct{ t0, t1, i1 int }
	spans := make([]span, n)
	arena := make([]byte, 0, 64<<10)
	str := func() (int, error) {
		b, err := w.next(4)
		if err != nil {
			return 0, err
		}
		l := int(binary.LittleEndian.Uint32(b))
		if l > 1<<20 {
			return 0, fmt.Errorf("%w: a key of %d bytes", errDenseStale, l)
		}
		if b, err = w.next(l); err != nil {
			return 0, err
		}
		arena = append(arena, b...)
		return len(arena), nil
	}
	for i := range spans {
		live, err := w.next(1)
		if err != nil {
			return err
		}
		if live[0] == 0 {
			spans[i] = span{-1, -1, -1}
			continue
		}
		t0 := len(arena)
		t1, err := str()
		if err != nil {
			return err
		}
		i1, err := str()
		if err != nil {
			return err
		}
		if i1 == t1 {
			return fmt.Errorf("%w: a live entry without an id", errDenseStale)
		}
		spans[i] = span{t0, t1, i1}
	}
	sum := w.done()
	var want [4]byte
	if _, err := io.ReadFull(r, want[:]); err != nil {
		return err
	}
	if binary.LittleEndian.Uint32(want[:]) != sum {
		return fmt.Errorf("%w: key table checksum", errDenseStale)
	}
	// With the head known (a hint set it, and the vector index may be
	// being read from there), the table must end there.
	switch head := w.n + int64(len(want)); {
	case df.head == 0:
		df.head, df.keySum = head, sum
	case df.head != head || df.keySum != sum:
		return fmt.Errorf("%w: the key table is not the one the records file names", errDenseStale)
	}
	// The arena is never written again: strings may share it.
	str8 := func(a, b int) string {
		if a == b {
			return ""
		}
		return unsafe.String(&arena[a], b-a)
	}
	df.keys = make([]key, n)
	for i, sp := range spans {
		if sp.t0 >= 0 {
			df.keys[i] = key{str8(sp.t0, sp.t1), str8(sp.t1, sp.i1)}
		}
	}
	return nil
}

// adoptDense reads the vector index of df and makes it the store's, its
// ids renamed to the ones this load assigned: the state loaded (tag) must
// be the one df indexes, with the same live chunks. same says the load
// numbered the chunks as the writer did (it adopted the records file
// written with df): the ids stay, and every one must be a live record's.
func (s *Store) adoptDense(df *denseFile, tag denseTag, same bool) error {
	if df.tag != tag {
		return fmt.Errorf("%w: written at %v, loaded %v", errDenseStale, df.tag, tag)
	}
	if !same {
		if df.keys == nil {
			if err := df.loadKeys(); err != nil {
				return err
			}
		}
		live := 0
		for _, k := range df.keys {
			if k.id != "" {
				live++
			}
		}
		if live != s.nLive {
			return fmt.Errorf("%w: %d chunks indexed, %d loaded", errDenseStale, live, s.nLive)
		}
	}
	<-df.done
	ix, err := df.vec, df.vecErr
	if err != nil {
		return fmt.Errorf("%w: %w", errDenseStale, err)
	}
	if ix.Dim() != s.dim || ix.Len() != s.nLive {
		return fmt.Errorf("%w: %d vectors of %d dimensions, the store has %d of %d", errDenseStale, ix.Len(), ix.Dim(), s.nLive, s.dim)
	}
	if same {
		// As many vectors as live records, each a live record's, none
		// twice (Remap checks): one vector for each record.
		df.rename = func(old uint32) (uint32, bool) {
			return old, int(old) < len(s.recs) && s.recs[old].live
		}
	} else {
		// The keys are matched once, for this index and the keyword one.
		iids := make([]uint32, len(df.keys))
		for old, k := range df.keys {
			iids[old] = noIID
			if k.id == "" {
				continue
			}
			// A load after a compaction numbers the chunks as the writer
			// did: check the same id first, and look the key up only when
			// it holds another chunk.
			if old < len(s.recs) {
				if r := &s.recs[old]; r.live && r.ID == k.id && r.Tenant == k.tenant {
					iids[old] = uint32(old)
					continue
				}
			}
			if iid, ok := s.byKey.get(s.recs, k.tenant, k.id); ok {
				iids[old] = iid
			}
		}
		df.rename = func(old uint32) (uint32, bool) {
			if int(old) >= len(iids) || iids[old] == noIID {
				return 0, false
			}
			return iids[old], true
		}
	}
	if err := ix.Remap(df.rename); err != nil {
		return fmt.Errorf("%w: %w", errDenseStale, err)
	}
	s.vec = ix
	s.denseSum, s.denseHead = df.keySum, df.head
	if !ix.Resident() {
		s.vecFile, df.f = df.f, nil
	}
	return nil
}

// vectorDamage turns an error reading a vector that the dense index left
// in its file into a *CorruptError naming that file, and removes the file
// (when it is still in place) so that the next open builds the index from
// the records, which hold every vector: the store loses nothing, but its
// compactions fail until it is opened again. Other errors pass unchanged.
func (s *Store) vectorDamage(err error) error {
	if !errors.Is(err, vector.ErrCorrupt) || s.disk == nil {
		return err
	}
	if rerr := s.dropIndexFile(denseName, &s.denseOnDisk); rerr != nil {
		err = errors.Join(err, rerr)
	}
	return corruptf(s.disk.dir, denseName, -1, "%v; the next open builds the dense index from the records", err)
}

// releaseVec closes the file that the dense index reads its vectors from,
// once nothing uses that index.
func (s *Store) releaseVec() {
	if s.vecFile != nil {
		s.vecFile.Close()
		s.vecFile = nil
	}
}

// loadDir loads dir into s (see loadFiles), adopting the dense index file
// when it indexes exactly what was loaded; when it does not, or cannot be
// read, the store is loaded again with its dense index built from the
// records, so the file only ever saves time.
func loadDir(ctx context.Context, dir string, s *Store, writable bool) (*loaded, error) {
	df, err := openDense(dir, readRecordsHint(dir))
	if err != nil {
		return loadFiles(ctx, dir, s, writable)
	}
	defer df.close()
	note, hasNote := readCleanNote(dir)
	if hasNote && note.seq != df.tag.seq {
		// Written before the last records: stale, not worth a try.
		return loadFiles(ctx, dir, s, writable)
	}
	// Both index files are read beside the load, which neither adds
	// the vectors nor tokenises the texts while they may be adopted.
	df.readVectors(s.opts.Vector)
	sr := startSparse(dir, df, s.opts.BM25, writable)
	if hasNote {
		// The records file, when it holds the state of the files, stands
		// in for them (records.go).
		l, err := adoptRecords(dir, s, writable, note, df)
		switch {
		case l != nil && s.adoptDense(df, df.tag, true) == nil:
			s.denseOnDisk, s.recordsOnDisk = true, true
			if sr == nil || s.adoptSparse(sr, df.rename) != nil {
				s.rebuildSparse()
			}
			return l, nil
		case l != nil:
			// The dense index may be half renamed: the files are loaded
			// and indexed from scratch.
			l.log.Close()
			if sr != nil {
				sr.wait()
			}
			s.resetState()
			return loadFiles(ctx, dir, s, writable)
		case err != nil:
			s.resetState()
		}
	}
	s.skipDense, s.skipSparse = true, sr != nil
	l, err := loadFiles(ctx, dir, s, writable)
	s.skipDense, s.skipSparse = false, false
	if err != nil || l.none {
		if sr != nil {
			sr.wait()
		}
		return l, err
	}
	if s.adoptDense(df, denseTag{l.gen, l.seq}, false) == nil {
		s.denseOnDisk = true
		if sr != nil && s.adoptSparse(sr, df.rename) != nil {
			s.rebuildSparse()
		}
		return l, nil
	}
	if sr != nil {
		sr.wait()
	}
	if l.log != nil {
		l.log.Close()
	}
	s.resetState()
	return loadFiles(ctx, dir, s, writable)
}

// dropDense removes the dense index file, the keyword one and the records
// file before
// the first write after an open that adopted them: from then on they no
// longer index the store.
func (s *Store) dropDense() error {
	if err := s.dropIndexFile(recordsName, &s.recordsOnDisk); err != nil {
		return err
	}
	if err := s.dropSparse(); err != nil {
		return err
	}
	return s.dropIndexFile(denseName, &s.denseOnDisk)
}

// window parses a run of small fields from a buffered reader, a buffer at
// a time: each field is a view of the buffer, and the checksum and the
// count of bytes are taken once per buffer rather than once per field (a
// key table of a million entries is five million fields).
type window struct {
	r   *bufio.Reader
	buf []byte // what r has buffered, of which pos bytes are taken
	pos int
	sum uint32 // CRC-32C of the bytes taken, up to the buffer
	n   int64  // bytes taken, up to the buffer
}

// next takes the next k bytes, at most r's buffer size; they are valid
// until the next call.
func (w *window) next(k int) ([]byte, error) {
	if len(w.buf)-w.pos < k {
		w.flush()
		b, err := w.r.Peek(max(k, w.r.Buffered(), min(w.r.Size(), 64<<10)))
		if len(b) < k {
			if err == nil || err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
		w.buf = b
	}
	b := w.buf[w.pos : w.pos+k : w.pos+k]
	w.pos += k
	return b, nil
}

// flush passes the bytes taken through the checksum and drops them from r.
func (w *window) flush() {
	w.sum = crc32Update(w.sum, w.buf[:w.pos])
	w.n += int64(w.pos)
	_, _ = w.r.Discard(w.pos) // buffered: cannot fail
	w.buf, w.pos = nil, 0
}

// done flushes w and returns the checksum of every byte taken; r is then
// at the first byte not taken.
func (w *window) done() uint32 {
	w.flush()
	return w.sum
}
