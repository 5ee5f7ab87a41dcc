package memstore

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/adaptrag/adaptrag/retrieval/bm25"
)

// The keyword index file. Once the dense index is read from dense.idx,
// re-tokenising every text into the BM25 index is most of what opening a
// store costs, so a writer's Close saves that index too, and the next open
// adopts it instead. It is derived data under the rules of dense.idx: it
// is used only when it indexes exactly the state loaded, is ignored (and
// the index built from the records) when stale or damaged, and is removed
// by the first write or compaction after an open. Its ids are the
// writer's internal ids, which it renames through dense.idx's key table:
// it is written with that file and names it by its checksum and length,
// so that it is never read against another writer's table.
//
// Layout: magic, snapshot generation and sequence number (u64 each), the
// CRC-32C and number of ids of dense.idx's key table (u32 each), a CRC-32C
// of all of that, then the index as bm25.WriteTo writes it (with its own
// version and checksums), and nothing after it.
const (
	sparseName    = "sparse.idx"
	sparseMagic   = "ADRGSPR1"
	sparseHeadLen = len(sparseMagic) + 8 + 8 + 4 + 4 + 4
)

// errSparseStale reports a keyword index file that does not index the
// state loaded, or cannot be read; the caller builds the index from the
// records instead.
var errSparseStale = errors.New("memstore: keyword index file does not match the store")

// sparseHead is what a keyword index file says it indexes.
type sparseHead struct {
	tag    denseTag
	keySum uint32 // CRC-32C of the key table of the dense.idx it goes with
	nKeys  uint32 // and its number of ids
}

// writeSparse saves the keyword index beside the dense index file the
// same Close has just written, whose key table has checksum keySum: under
// a temporary name, synced, renamed into place. The caller holds the
// write lock.
func (s *Store) writeSparse(keySum uint32) error {
	d := s.disk
	b := make([]byte, 0, sparseHeadLen)
	b = append(b, sparseMagic...)
	b = binary.LittleEndian.AppendUint64(b, d.snapGen)
	b = binary.LittleEndian.AppendUint64(b, d.seq)
	b = binary.LittleEndian.AppendUint32(b, keySum)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(s.recs)))
	b = binary.LittleEndian.AppendUint32(b, crc32Update(0, b))
	err := d.writeAtomic(sparseName, 1<<20, func(w io.Writer) error {
		if _, err := w.Write(b); err != nil {
			return err
		}
		_, err := s.lex.WriteTo(w)
		return err
	})
	if err != nil {
		return err
	}
	s.sparseOnDisk = true
	return nil
}

// writeIndexes saves both index files at a writer's clean Close, and the
// records file beside them (records.go) for a store past adoptMinBytes.
// The keyword index names the key table of the dense index file, so when
// it must be written the dense one is written again with this process's
// internal ids; failing to save any loses nothing (the next open builds
// what is missing), so a failed file is removed and not reported.
func (s *Store) writeIndexes() {
	d := s.disk
	if d == nil || d.ro || d.broken != nil {
		return
	}
	s.writeIndexFiles()
	switch {
	case s.recordsOnDisk && s.denseOnDisk:
	case s.denseOnDisk && d.gen == d.snapGen && d.snapSize+d.walSize >= adoptMinBytes:
		if err := s.writeRecords(); err != nil {
			_ = os.Remove(d.path(recordsName))
		}
	default:
		_ = os.Remove(d.path(recordsName))
	}
}

// writeIndexFiles saves the dense and the keyword index files.
func (s *Store) writeIndexFiles() {
	d := s.disk
	if !s.sparseOnDisk {
		// Whatever is there is stale: gone before the dense index file it
		// would no longer match is replaced.
		_ = os.Remove(d.path(sparseName))
		s.denseOnDisk = false
	}
	keySum, wrote, err := s.writeDense()
	if err != nil {
		_ = os.Remove(d.path(denseName))
		return
	}
	if !wrote {
		return
	}
	if err := s.writeSparse(keySum); err != nil {
		_ = os.Remove(d.path(sparseName))
	}
}

// readSparseHead reads the head of dir's keyword index file and leaves
// the file positioned at its index.
func readSparseHead(dir string) (sparseHead, *os.File, *bufio.Reader, error) {
	f, err := os.Open(filepath.Join(dir, sparseName))
	if err != nil {
		return sparseHead{}, nil, nil, err
	}
	r := bufio.NewReaderSize(f, 1<<20)
	b := make([]byte, sparseHeadLen)
	if _, err := io.ReadFull(r, b); err != nil {
		f.Close()
		return sparseHead{}, nil, nil, fmt.Errorf("%w: %w", errSparseStale, err)
	}
	n := sparseHeadLen - 4
	if string(b[:len(sparseMagic)]) != sparseMagic || crc32Update(0, b[:n]) != binary.LittleEndian.Uint32(b[n:]) {
		f.Close()
		return sparseHead{}, nil, nil, fmt.Errorf("%w: bad magic or head checksum", errSparseStale)
	}
	b = b[len(sparseMagic):]
	h := sparseHead{
		tag:    denseTag{binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:])},
		keySum: binary.LittleEndian.Uint32(b[16:]),
		nKeys:  binary.LittleEndian.Uint32(b[20:]),
	}
	return h, f, r, nil
}

// sparseRead is a keyword index file being read in the background while
// the store loads.
type sparseRead struct {
	done chan struct{}
	ix   *bm25.Index
	err  error
}

// startSparse starts reading dir's keyword index file when its head says
// it goes with df, the dense index file about to be adopted; it returns
// nil when it does not or cannot be read, and the index is then built
// from the records. The file is mapped, copy-on-write, and the index uses
// its arrays where they lie (bm25.ReadIndexInPlace): at a million chunks
// that is 330 MB neither copied nor held twice, and readers of one store
// share its pages. A writer leaves part of the file's checks to the
// background check (checkSparse), so what they read (150 MB at a million
// chunks) is not read at the open; a reader, which runs no background
// check, makes them all. Where mapping is not available the file is read.
func startSparse(dir string, df *denseFile, p bm25.Params, writable bool) *sparseRead {
	h, f, r, err := readSparseHead(dir)
	if err != nil {
		return nil
	}
	if h.tag != df.tag || h.keySum != df.keySum || int(h.nKeys) != df.nKeys {
		f.Close()
		return nil
	}
	sr := &sparseRead{done: make(chan struct{})}
	if sr.startInPlace(f, p, writable) {
		return sr
	}
	go func() {
		defer close(sr.done)
		defer f.Close()
		read := bm25.ReadIndex
		if writable {
			read = bm25.ReadIndexDeferred
		}
		ix, err := read(r, p)
		if err == nil {
			if _, extra := r.ReadByte(); extra == nil {
				err = errors.New("trailing bytes")
			}
		}
		if err != nil {
			sr.err = fmt.Errorf("%w: %w", errSparseStale, err)
			return
		}
		sr.ix = ix
	}()
	return sr
}

// startInPlace maps f, a keyword index file whose head was read,
// copy-on-write, closes it, and reads the index in the mapping in the
// background, with every check for a reader (not writable); false, with
// f open, when it cannot be mapped.
func (sr *sparseRead) startInPlace(f *os.File, p bm25.Params, writable bool) bool {
	st, err := f.Stat()
	if err != nil {
		return false
	}
	m, unmap, err := mapPrivate(f, st.Size())
	if err != nil {
		return false
	}
	f.Close()
	go func() {
		defer close(sr.done)
		ix, err := bm25.ReadIndexInPlace(m[sparseHeadLen:], p, func() { _ = unmap() })
		if err != nil {
			_ = unmap()
			sr.err = fmt.Errorf("%w: %w", errSparseStale, err)
			return
		}
		if !writable {
			// Dropped when it fails: the mapping goes with it.
			if err := ix.Check(context.Background()); err != nil {
				sr.err = fmt.Errorf("%w: %w", errSparseStale, err)
				return
			}
		}
		sr.ix = ix
	}()
	return true
}

// wait returns the index read, or why it cannot be used.
func (sr *sparseRead) wait() (*bm25.Index, error) {
	<-sr.done
	return sr.ix, sr.err
}

// adoptSparse makes the index read by sr the store's, its ids renamed to
// the ones this load assigned through rename (the internal id this load
// gave each of the writer's, as adoptDense matched them; false when
// none). The load must hold exactly the chunks the index holds.
func (s *Store) adoptSparse(sr *sparseRead, rename func(old uint32) (uint32, bool)) error {
	ix, err := sr.wait()
	if err != nil {
		return err
	}
	if ix.Len() != s.nLive {
		return fmt.Errorf("%w: %d chunks indexed, %d loaded", errSparseStale, ix.Len(), s.nLive)
	}
	if err := ix.Remap(rename); err != nil {
		return fmt.Errorf("%w: %w", errSparseStale, err)
	}
	s.lex = ix
	s.sparseOnDisk = true
	return nil
}

// rebuildSparse builds the keyword index from the records, for a load
// that skipped it to adopt a file it could not use.
func (s *Store) rebuildSparse() {
	s.lex = bm25.New(s.opts.BM25)
	s.lex.Grow(s.nLive)
	for iid := range s.recs {
		if r := &s.recs[iid]; r.live {
			s.lex.Add(uint32(iid), lexText(&r.Chunk))
		}
	}
}

// checkSparse runs the checks of the keyword index that the open left to
// the background (bm25.Index.Check), beside searches and writes: they
// read only the arrays the file was read into, which no Add changes (a
// Remove waits for them). Damage found is a *CorruptError: the index is
// built again from the records' texts, under the write lock (at a
// million chunks, seconds of tokenising), and the file dropped, so that
// Close writes it anew from memory.
func (s *Store) checkSparse(ctx context.Context) error {
	s.mu.RLock()
	ix := s.lex
	s.mu.RUnlock()
	err := ix.Check(ctx)
	if err == nil || !errors.Is(err, bm25.ErrCorrupt) {
		return err // nil, or stopped by Close
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	if s.lex == ix {
		s.rebuildSparse()
	}
	derr := s.dropSparse()
	ce := &CorruptError{Dir: s.disk.dir, File: sparseName, Offset: -1, Rewritten: derr == nil,
		Reason: fmt.Sprintf("%v; the keyword index was built again from the chunks' texts", err)}
	return errors.Join(ce, derr)
}

// dropSparse removes the keyword index file before the first write after
// an open that adopted it, or wrote it (see dropDense).
func (s *Store) dropSparse() error { return s.dropIndexFile(sparseName, &s.sparseOnDisk) }

// dropIndexFile removes the derived index file name of a writer when
// *onDisk says the directory holds it, and clears *onDisk.
func (s *Store) dropIndexFile(name string, onDisk *bool) error {
	if !*onDisk || s.disk == nil || s.disk.ro {
		return nil
	}
	if err := os.Remove(s.disk.path(name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	*onDisk = false
	return nil
}
