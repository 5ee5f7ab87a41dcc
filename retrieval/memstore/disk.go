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
	"time"

	"github.com/adaptrag/adaptrag/retrieval"
)

// disk is the persistent side of a Store. A writer's methods run under the
// Store's locks: append under the write lock, compact under the read lock
// plus the compaction mutex (so never concurrently with append). A
// reader's (ro) fields are used by Refresh under Store.refreshMu.
type disk struct {
	dir  string
	sync bool
	ro   bool

	lock    *os.File // the writer's flock; nil for a reader
	wal     *os.File // the writer's log; nil for a reader
	walSize int64    // writer: log size; reader: offset after the last record applied
	gen     uint64   // generation of the log (and, but after a failed compaction, of the snapshot)
	snapGen uint64   // generation of the snapshot, >= gen
	// snapSize is the size of the snapshot: the log may grow to half of
	// it before a compaction, so that compactions rewrite the store a
	// bounded number of times however large it grows.
	snapSize int64
	base     uint64 // sequence number the log starts after
	seq      uint64 // sequence number of the last record written or applied
	version  uint32 // format of the log
	logInfo  os.FileInfo

	noteSized bool  // LOCK has the length of a mark
	broken    error // a failed write left the log in an unknown state

	// releaseStep is how much of a file a compaction replaced it frees at
	// a time (releaseFile); tests make it small.
	releaseStep int64
	// writes tells a compaction whether writers are active (pacer); nil
	// for a reader.
	writes *writeClock
}

// openWriter locks dir, loads its store into s (creating an empty store
// when there is none), and readies the log for appending.
func openWriter(ctx context.Context, dir string, s *Store, sync bool) (_ *disk, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	d := &disk{dir: dir, sync: sync, releaseStep: releaseStep, writes: new(writeClock)}
	if d.lock, err = lockDir(filepath.Join(dir, lockName)); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			d.closeFiles()
		}
	}()
	for _, name := range []string{snapName + ".tmp", walName + ".tmp", manifestName + ".tmp", denseName + ".tmp", sparseName + ".tmp", recordsName + ".tmp"} {
		if err := os.Remove(d.path(name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	l, err := loadDir(ctx, dir, s, true)
	if err != nil {
		return nil, err
	}
	if l.unchecked != nil {
		s.unchecked = l.unchecked
	} else {
		// Not adopted, so stale or of no use: gone before anything is
		// written (failing to remove it is harmless: its state is not
		// the store's once anything is).
		_ = os.Remove(d.path(recordsName))
	}
	if l.none {
		if l.log != nil {
			l.log.Close()
		}
		// The log first, then the manifest: a manifest promises a log.
		if err := d.newLog(); err != nil {
			return nil, err
		}
		if err := d.writeManifest(); err != nil {
			return nil, err
		}
		return d, d.writeNote(true)
	}
	d.wal, d.walSize, d.version = l.log, l.end, l.hdr.version
	d.gen, d.base, d.seq = l.gen, l.base, l.seq
	d.snapGen, d.snapSize = l.gen, l.snapSize
	if !l.stale {
		d.base = l.hdr.base
	}
	switch {
	case l.stale:
		// The snapshot is newer than the log: the log's records after
		// the snapshot's (written while it was being made) move to a
		// log of the snapshot's generation.
		if err := d.newLogFrom(l.log, l.tailOff, l.end); err != nil {
			return nil, err
		}
	case l.torn:
		// Cut the torn tail so that new records follow the last intact one.
		if err := d.wal.Truncate(l.end); err != nil {
			return nil, err
		}
		if err := d.syncFile(d.wal); err != nil {
			return nil, err
		}
	}
	if err := d.writeNote(true); err != nil {
		return nil, err
	}
	if l.legacy {
		if err := d.writeManifest(); err != nil {
			return nil, err
		}
	}
	if d.version != formatVersion {
		// A format-1 log cannot take format-2 records: upgrade by
		// compacting, which writes both files anew.
		if err := d.compact(ctx, s); err != nil {
			return nil, fmt.Errorf("upgrade to format %d: %w", formatVersion, err)
		}
	}
	return d, nil
}

func (d *disk) path(name string) string { return filepath.Join(d.dir, name) }

// writeManifest writes MANIFEST atomically.
func (d *disk) writeManifest() error {
	return d.writeFileAtomic(manifestName, encodeManifest(time.Now()))
}

// writeFileAtomic writes data to name under a temporary name, syncs it and
// renames it into place, then syncs the directory.
func (d *disk) writeFileAtomic(name string, data []byte) error {
	return d.writeAtomic(name, len(data), func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// writeAtomic is writeFileAtomic for a file that write produces, through
// a buffer of size bytes: what is written aside is synced and renamed into
// place, then the directory is synced; on any failure the temporary file
// is removed and name is left as it was.
func (d *disk) writeAtomic(name string, size int, write func(w io.Writer) error) error {
	tmp := d.path(name + ".tmp")
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, size)
	err = write(w)
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = d.syncFile(f)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, d.path(name))
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return d.syncDir()
}

// newLog replaces the log by an empty one of the current generation,
// starting after record d.seq, written under a temporary name and renamed,
// so that a log file always has a complete header.
func (d *disk) newLog() error {
	tmp := d.path(walName + ".tmp")
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	fail := func(err error) error {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if _, err := f.Write(encodeLogHeader(d.gen, d.seq)); err != nil {
		return fail(err)
	}
	if err := d.syncFile(f); err != nil {
		return fail(err)
	}
	if err := os.Rename(tmp, d.path(walName)); err != nil {
		return fail(err)
	}
	if err := d.syncDir(); err != nil {
		f.Close()
		return err
	}
	if d.wal != nil {
		d.wal.Close()
	}
	d.wal, d.walSize, d.base, d.version = f, walHeaderLen, d.seq, formatVersion
	return nil
}

// A record is appended in two halves, write and then commit, so that the
// Store can apply it while the fsync runs (logThen). A write that fails is
// cut off again, so that later records follow the last intact one; a
// failed fsync leaves the file in an unknown state, so the store then
// refuses writes until it is reopened.
//
// write writes the record of payload after the last one and returns its
// length, for commit. The caller holds the write lock until commit
// returns.
func (d *disk) write(payload []byte) (int64, error) {
	if d.broken != nil {
		return 0, d.broken
	}
	if len(payload) > maxRecord {
		return 0, fmt.Errorf("%w: batch of %d bytes exceeds the %d-byte record limit", retrieval.ErrInvalid, len(payload), maxRecord)
	}
	buf := appendFrame(make([]byte, 0, recHeaderLen+len(payload)), d.seq+1, payload)
	if _, err := d.wal.WriteAt(buf, d.walSize); err != nil {
		if terr := d.wal.Truncate(d.walSize); terr != nil {
			d.broken = fmt.Errorf("memstore: log %s left damaged by a failed write (%v, then %v): reopen the store", d.path(walName), err, terr)
		}
		return 0, fmt.Errorf("write log: %w", err)
	}
	return int64(len(buf)), nil
}

// commit fsyncs (unless NoSync) the record write wrote, n bytes, and
// counts it in.
func (d *disk) commit(n int64) error {
	if err := d.syncFile(d.wal); err != nil {
		d.broken = fmt.Errorf("memstore: sync of log %s failed (%v): reopen the store", d.path(walName), err)
		return fmt.Errorf("sync log: %w", err)
	}
	d.walSize += n
	d.seq++
	d.writes.tick()
	// Raise the high-water mark. It is not synced: a mark lost in a
	// crash only claims less. Nor can it fail the write, which is
	// already durable.
	_ = d.writeNote(false)
	return nil
}

func (d *disk) logSize() int64 { return d.walSize }

func (d *disk) syncFile(f *os.File) error {
	if !d.sync {
		return nil
	}
	return f.Sync()
}

// syncDir makes a rename durable.
func (d *disk) syncDir() error {
	if !d.sync {
		return nil
	}
	f, err := os.Open(d.dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// newLogFrom replaces the log by one of generation d.gen that starts
// after record d.base and holds the bytes [from, to) of src, whole
// records of a log, verbatim (a record frame carries its own sequence
// number and checksum). It is written under a temporary name, synced and
// renamed.
func (d *disk) newLogFrom(src *os.File, from, to int64) error {
	f, err := d.startLog(d.gen, d.base, src, from, to, nil)
	if err != nil {
		return err
	}
	old, err := d.installLog(f, d.base, walHeaderLen+to-from)
	if old != nil {
		old.Close()
	}
	return err
}

// startLog writes the temporary log of generation gen after record base,
// holding the bytes [from, to) of src, and syncs it, paced by p (nil:
// flat out).
func (d *disk) startLog(gen, base uint64, src *os.File, from, to int64, p *pacer) (*os.File, error) {
	tmp := d.path(walName + ".tmp")
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	_, err = f.Write(encodeLogHeader(gen, base))
	if err == nil {
		err = d.copyLog(f, src, from, to, p)
	}
	if err != nil {
		f.Close()
		os.Remove(tmp)
		return nil, err
	}
	return f, nil
}

// copyLog appends the bytes [from, to) of src to the end of f and syncs
// them, a syncEvery piece at a time: on ext4 (data=ordered) a writer's
// log fsync meanwhile waits for whatever of f is dirty, and a
// compaction's copy is the records of several seconds of writes (160 MB
// at 300k chunks), which as one fsync held a log fsync up to 270 ms. f
// is synced at least once, so that with nothing to copy what was written
// to it before is durable too. p paces the pieces (nil: flat out).
func (d *disk) copyLog(f, src *os.File, from, to int64, p *pacer) error {
	for {
		n := max(min(to-from, syncEvery), 0)
		if n > 0 {
			if _, err := io.Copy(f, io.NewSectionReader(src, from, n)); err != nil {
				return err
			}
		}
		if err := d.syncFile(f); err != nil {
			return err
		}
		if from += n; from >= to {
			return nil
		}
		// A pause is as long as a piece at most: not worth a context.
		if err := p.wait(context.Background()); err != nil {
			return err
		}
	}
}

// installLog renames the temporary log f into place as the log, of size
// bytes, starting after record base. It returns the log it replaced (nil
// if none) for the caller to close, outside the write lock if it holds
// it: closing the last reference to an unlinked log frees its pages and
// blocks, which took 80 to 160 ms for the log of a 300k-chunk store.
func (d *disk) installLog(f *os.File, base uint64, size int64) (*os.File, error) {
	tmp := d.path(walName + ".tmp")
	if err := os.Rename(tmp, d.path(walName)); err != nil {
		f.Close()
		os.Remove(tmp)
		return nil, err
	}
	if err := d.syncDir(); err != nil {
		f.Close()
		return nil, err
	}
	old := d.wal
	d.wal, d.walSize, d.base, d.version = f, size, base, formatVersion
	return old, nil
}

// compactAt is the log size past which a write starts a compaction: the
// configured size, or half the snapshot when that is larger, so that the
// store is rewritten O(log n) times as it grows to n chunks, not O(n).
func (s *Store) compactAt() int64 {
	return max(s.opts.CompactBytes, s.disk.snapSize/2)
}

// catchUpRounds bounds the rounds in which a compaction copies the
// records written since its cut to the new log outside the write lock;
// it stops once less than catchUpRest is left for the copy under it.
const (
	catchUpRounds = 8
	catchUpRest   = 1 << 20
)

// snapPiece is how many records a compaction reads under one read lock:
// writers wait at most for one piece.
const snapPiece = 2048

// syncEvery is how much of a snapshot is written between its fsyncs. On
// ext4 (data=ordered) a writer's log fsync waits for the dirty pages of
// the snapshot too, so the less of it is dirty the shorter the write. An
// ad hoc ingest test (not kept in the tree; `adaptrag bench retrieval`
// reports the same ingest and longest-write figures) of
// 150,000 fsynced chunks in batches of 1000 under a background compaction
// (load average 5 to 6) ingested 6.1k/s with 37 writes over 200 ms at
// 32 MiB, 8.3k to 10.5k/s with 7 to 15 at 4 MiB, and 7.5k/s with 15 at
// 1 MiB (more fsyncs of the snapshot).
const syncEvery = 4 << 20

// cowState is what a compaction under way needs writers to keep: the
// records it has not written yet, as they were when it began. Writers
// change a record only after preserve saved it.
type cowState struct {
	limit  uint32 // ids below it existed when the compaction began
	cursor uint32 // ids below it are written
	saved  map[uint32]preimage
	// err is the first vector preserve could not read (from a dense index
	// left on disk): the snapshot would lack it, so the compaction fails.
	err error
	// pace spreads the compaction's work out while writers are active.
	pace *pacer
}

// preimage is a record as it was when the compaction began.
type preimage struct {
	live  bool
	chunk retrieval.Chunk
	vec   []float32
}

// preserve saves record iid for the compaction under way, if it has yet to
// write it; a writer calls it under the write lock before changing iid.
func (s *Store) preserve(iid uint32) {
	c := s.cow
	if c == nil || iid >= c.limit || iid < c.cursor {
		return
	}
	if _, ok := c.saved[iid]; ok {
		return
	}
	r := &s.recs[iid]
	p := preimage{live: r.live}
	if r.live {
		p.chunk = r.Chunk
		var err error
		if p.vec, _, err = s.vec.ReadVector(nil, iid); err != nil && c.err == nil {
			c.err = fmt.Errorf("vector of chunk %q: %w", r.ID, err)
		}
	}
	c.saved[iid] = p
}

// compact writes the snapshot of the state at the current record into a
// new generation and then the log of that generation, which holds the
// records written meanwhile. Writers go on while it runs: the snapshot is
// read in pieces of snapPiece records under the read lock, records that
// writers change before they are read are saved for it (preserve), and
// the log's new records are copied outside the lock. Only the renames,
// and the copy of what was written during the last of it, take the write
// lock. The caller holds s.compMu.
func (d *disk) compact(ctx context.Context, s *Store) (err error) {
	s.mu.Lock()
	if err := s.writable(); err != nil {
		s.mu.Unlock()
		return err
	}
	if d.broken != nil {
		s.mu.Unlock()
		return d.broken
	}
	// A new snapshot generation: the saved dense index no longer matches.
	if err := s.dropDense(); err != nil {
		s.mu.Unlock()
		return err
	}
	gen := max(d.gen, d.snapGen) + 1
	seq, count, dim := d.seq, uint64(s.nLive), s.dim
	tailOff, oldLog := d.walSize, d.wal
	cut := &cowState{limit: uint32(len(s.recs)), saved: make(map[uint32]preimage), pace: newPacer(d.writes, paceShare)}
	s.cow = cut
	s.mu.Unlock()
	tmpSnap, tmpLog := d.path(snapName+".tmp"), d.path(walName+".tmp")
	var logF *os.File
	defer func() {
		if err != nil {
			os.Remove(tmpSnap)
			if logF != nil {
				logF.Close()
				os.Remove(tmpLog)
			}
		}
		s.mu.Lock()
		s.cow = nil
		s.mu.Unlock()
	}()
	size, err := writeSnapshot(ctx, tmpSnap, gen, seq, dim, count, s, cut, d.sync)
	s.mu.Lock()
	if err == nil {
		err = cut.err // every record is written: no preserve runs now
	}
	err = s.vectorDamage(err)
	s.mu.Unlock()
	if err != nil {
		return err
	}
	// The snapshot goes into place first, without the write lock: beside
	// the old log, of an older generation, it is a valid store (Open
	// applies the log's records after seq), whatever happens next. Should
	// the new log fail, writes go on to the old one. The snapshot it
	// replaces is kept open across the rename, which would otherwise free
	// it all at once, and freed at the end (releaseFile).
	oldSnap, _ := os.OpenFile(d.path(snapName), os.O_RDWR, 0) // nil if none
	defer func() {
		if oldSnap != nil {
			oldSnap.Close()
		}
	}()
	if err := os.Rename(tmpSnap, d.path(snapName)); err != nil {
		return err
	}
	s.mu.Lock()
	d.snapGen, d.snapSize = gen, size
	s.mu.Unlock()
	if err := d.syncDir(); err != nil {
		return err
	}
	// The records written since the cut go to the new log outside the
	// lock, a few rounds while writers go on, so that only a small rest
	// is copied under it. The rounds after the first are not paced: each
	// copies what writers wrote during the last, and paced they fell
	// behind (at 730k chunks, 42 MB were left after three rounds, copied
	// in 190 ms under the write lock); unpaced, a round is a fraction of
	// the writers' own time.
	s.mu.RLock()
	mid := d.walSize
	s.mu.RUnlock()
	if logF, err = d.startLog(gen, seq, oldLog, tailOff, mid, cut.pace); err != nil {
		return err
	}
	for range catchUpRounds {
		s.mu.RLock()
		end := d.walSize
		s.mu.RUnlock()
		if end-mid < catchUpRest {
			break
		}
		if err := d.copyLog(logF, oldLog, mid, end, nil); err != nil {
			return err
		}
		mid = end
	}
	var replaced *os.File
	if err := func() error {
		s.mu.Lock()
		defer s.mu.Unlock()
		if d.broken != nil {
			return d.broken
		}
		end := d.walSize
		if err := d.copyLog(logF, oldLog, mid, end, nil); err != nil { // not paced under the lock
			return err
		}
		f := logF
		logF = nil // installLog owns it now
		// The rename is synced before any write to the new log returns.
		var err error
		if replaced, err = d.installLog(f, seq, walHeaderLen+end-tailOff); err != nil {
			return err
		}
		d.gen = gen
		return d.writeNote(false)
	}(); err != nil {
		return err
	}
	// The mark is synced outside the lock: until it is, a crash only
	// leaves a mark that promises less.
	if err := d.syncFile(d.lock); err != nil {
		if replaced != nil {
			replaced.Close()
		}
		return err
	}
	// The replaced files go last, outside the lock and a piece at a
	// time, while writers go on (their failure loses nothing).
	_ = releaseFile(ctx, replaced, d.path(walName), d.releaseStep)
	f := oldSnap
	oldSnap = nil
	_ = releaseFile(ctx, f, d.path(snapName), d.releaseStep)
	return nil
}

// writeSnapshot writes the state of s as of a compaction's cut (or, with
// cut nil, the state of a Store nobody else uses) to path in format 2,
// syncs it and returns its size. With a cut it reads s in pieces under
// the read lock, taking the records writers changed since from the cut.
func writeSnapshot(ctx context.Context, path string, gen, seq uint64, dim int, count uint64, s *Store, cut *cowState, sync bool) (int64, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sum := crc32.New(castagnoli)
	w := bufio.NewWriterSize(io.MultiWriter(f, sum), 1<<20)
	if _, err := w.Write(encodeSnapHeader(gen, seq, dim, count)); err != nil {
		return 0, err
	}
	var limit int
	if cut != nil {
		limit = int(cut.limit)
	} else {
		limit = len(s.recs) // nobody else uses s
	}
	var buf, piece []byte
	var vbuf []float32 // the vector of the chunk being encoded, reused
	written := uint64(0)
	var unsynced int64
	for lo := 0; lo < limit; lo += snapPiece {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		hi := min(lo+snapPiece, limit)
		// The piece's buffer is made, and its pages touched, before the
		// read lock: grown by append under it, the first piece (3 MB at
		// 384 dimensions) took 60 to 120 ms of page faults while writers
		// waited (1M bench, ad hoc timing, not kept).
		if est := snapPiece * (4*dim + 256); cap(piece) < est {
			piece = touched(2 * est)
		}
		piece = piece[:0]
		if cut != nil {
			s.mu.RLock()
		}
		for iid := lo; iid < hi; iid++ {
			var c retrieval.Chunk
			if p, ok := cut.savedAt(uint32(iid)); ok {
				if !p.live {
					continue
				}
				c = p.chunk
				c.Vector = p.vec
			} else {
				r := &s.recs[iid]
				if !r.live {
					continue
				}
				c = r.Chunk
				// appendChunk copies it, so one buffer serves every chunk
				// (a copy each was 1.5 GB of garbage a compaction at 1M).
				// A vector the dense index left in its file is read from
				// there, checked.
				var (
					ok   bool
					verr error
				)
				if vbuf, ok, verr = s.vec.ReadVector(vbuf[:0], uint32(iid)); verr != nil {
					if cut != nil {
						s.mu.RUnlock()
					}
					return 0, fmt.Errorf("vector of chunk %q: %w", c.ID, verr)
				}
				if ok {
					c.Vector = vbuf
				}
			}
			buf = appendChunk(append(buf[:0], 0, 0, 0, 0, 0, 0, 0, 0), &c)
			body := buf[frameLen:]
			binary.LittleEndian.PutUint32(buf[0:], uint32(len(body)))
			binary.LittleEndian.PutUint32(buf[4:], crc(body))
			piece = append(piece, buf...)
			written++
		}
		if cut != nil {
			cut.cursor = uint32(hi)
			for iid := lo; iid < hi; iid++ {
				delete(cut.saved, uint32(iid))
			}
			s.mu.RUnlock()
		}
		if _, err := w.Write(piece); err != nil {
			return 0, err
		}
		if unsynced += int64(len(piece)); sync && unsynced >= syncEvery {
			// Flushed as it goes, so that the log's fsyncs meanwhile do
			// not wait behind a gigabyte of dirty snapshot pages.
			if err := w.Flush(); err != nil {
				return 0, err
			}
			if err := f.Sync(); err != nil {
				return 0, err
			}
			unsynced = 0
		}
		if cut != nil {
			if err := cut.pace.wait(ctx); err != nil {
				return 0, err
			}
		}
	}
	if written != count {
		return 0, fmt.Errorf("snapshot of %d chunks holds %d: the records changed under the compaction", count, written)
	}
	if err := w.Flush(); err != nil {
		return 0, err
	}
	if _, err := f.Write(binary.LittleEndian.AppendUint32(nil, sum.Sum32())); err != nil {
		return 0, err
	}
	if sync {
		if err := f.Sync(); err != nil {
			return 0, err
		}
	}
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return st.Size(), f.Close()
}

// touched returns an empty byte slice of capacity n whose pages have
// been written, so that filling it takes no page fault.
func touched(n int) []byte {
	b := make([]byte, n)
	touchPages(b)
	return b[:0]
}

// savedAt returns the preimage of iid, if c holds one (c may be nil).
func (c *cowState) savedAt(iid uint32) (preimage, bool) {
	if c == nil {
		return preimage{}, false
	}
	p, ok := c.saved[iid]
	return p, ok
}

// close syncs and closes the log, syncs the high-water mark in LOCK and
// releases the lock.
func (d *disk) close() error {
	if d.ro {
		return nil
	}
	var err error
	if d.wal != nil && d.broken == nil {
		if err = d.syncFile(d.wal); err == nil {
			err = d.writeNote(true)
		}
	}
	return errors.Join(err, d.closeFiles())
}

// writeNote records in LOCK where the log's acknowledged records end: the
// high-water mark that tells an acknowledged record that was damaged or
// cut off from the torn tail a crash leaves. It is written in place, after
// the records it covers are durable, so it never claims more than the log
// holds; a mark torn by a crash fails its checksum and only means "no
// promise".
func (d *disk) writeNote(sync bool) error {
	note := cleanNote{gen: d.gen, size: uint64(d.walSize), seq: d.seq}.encode()
	if _, err := d.lock.WriteAt(note, 0); err != nil {
		return err
	}
	if !d.noteSized {
		if err := d.lock.Truncate(int64(len(note))); err != nil {
			return err
		}
		d.noteSized = true
	}
	if !sync {
		return nil
	}
	return d.syncFile(d.lock)
}

func (d *disk) closeFiles() error {
	var errs []error
	if d.wal != nil {
		errs = append(errs, d.wal.Close())
		d.wal = nil
	}
	if d.lock != nil {
		errs = append(errs, unlockDir(d.lock))
		d.lock = nil
	}
	return errors.Join(errs...)
}
