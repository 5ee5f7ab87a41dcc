package memstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/adaptrag/adaptrag/retrieval"
)

// loaded is what loadDir found in a directory and loaded into a Store.
type loaded struct {
	none   bool // no store: nothing there, or a creation that never finished
	legacy bool // a format-1 store without a manifest

	log  *os.File // the open log (the caller closes it); nil when none
	hdr  logHeader
	gen  uint64 // generation of the state: the snapshot's
	base uint64 // sequence number of the snapshot's last record
	// stale reports a log older than the snapshot: a compaction renamed
	// its snapshot into place and stopped (crashed, or failed to write
	// the new log) before replacing the log. Its records up to the
	// snapshot's are in the snapshot; those after it, written while the
	// compaction ran, start at tailOff and are applied.
	stale    bool
	tailOff  int64
	snapSize int64  // size of the snapshot, 0 when none
	end      int64  // offset after the last intact record of the log
	seq      uint64 // sequence number of the last record applied
	size     int64  // size of the log as read
	torn     bool   // bytes after end are a torn tail
	// unchecked, when set, says the state was read from the records file
	// (records.go), leaving the snapshot's and the log's checksums
	// unchecked.
	unchecked *scrubPlan
}

// readManifest reports whether dir holds a valid manifest; a damaged one
// is a *CorruptError.
func readManifest(dir string) (bool, error) {
	b, err := os.ReadFile(filepath.Join(dir, manifestName))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := checkManifest(b); err != nil {
		return false, corruptf(dir, manifestName, -1, "%v", err)
	}
	return true, nil
}

// readCleanNote returns the note a clean Close left in LOCK, if any.
func readCleanNote(dir string) (cleanNote, bool) {
	b, err := os.ReadFile(filepath.Join(dir, lockName))
	if err != nil {
		return cleanNote{}, false
	}
	return decodeCleanNote(b)
}

// loadFiles reads the store in dir into s: it checks that the files agree,
// loads the snapshot and replays the log, and describes what it found. It
// never modifies a file: the caller acts on the description (truncating a
// torn tail, replacing a stale log) when it holds the directory for
// writing. Damage and disagreement are *CorruptError values; s then holds
// a partial state that must be discarded.
func loadFiles(ctx context.Context, dir string, s *Store, writable bool) (_ *loaded, err error) {
	l := &loaded{}
	defer func() {
		if err != nil && l.log != nil {
			l.log.Close()
			l.log = nil
		}
	}()
	// The high-water mark first: it only grows while the log of its
	// generation is in use, so the log read after it holds at least
	// what it promises.
	note, hasNote := readCleanNote(dir)
	created, err := readManifest(dir)
	if err != nil {
		return nil, err
	}
	// The log is opened before the snapshot: compaction renames the new
	// snapshot into place before the new log, so a log of generation g
	// opened first guarantees that the snapshot found next is of
	// generation g or later, never earlier.
	flag := os.O_RDONLY
	if writable {
		flag = os.O_RDWR
	}
	l.log, err = os.OpenFile(filepath.Join(dir, walName), flag, 0)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if l.log != nil {
		st, err := l.log.Stat()
		if err != nil {
			return nil, err
		}
		l.size = st.Size()
		if l.hdr, err = readLogHeader(l.log); err != nil {
			return nil, corruptf(dir, walName, 0, "%v", err)
		}
	}
	snap, err := os.Open(filepath.Join(dir, snapName))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if snap != nil {
		defer snap.Close()
	}
	var sh snapHeader
	var snapSize int64
	if snap != nil {
		st, err := snap.Stat()
		if err != nil {
			return nil, err
		}
		snapSize = st.Size()
		l.snapSize = snapSize
		if sh, err = readSnapHeader(snap); err != nil {
			return nil, corruptf(dir, snapName, 0, "%v", err)
		}
	}

	if !created {
		switch {
		case l.log == nil && snap == nil:
			l.none = true
			return l, nil
		case l.log != nil && l.hdr.version == formatV1:
			l.legacy = true
		case l.log != nil && snap == nil && l.hdr.gen == 0 && l.size == l.hdr.len:
			// Creation writes the empty log and then the manifest: a crash
			// in between leaves this, and nothing was ever acknowledged.
			l.none = true
			return l, nil
		default:
			return nil, corruptf(dir, manifestName, -1, "missing, yet the directory holds the files of a store (was it deleted?)")
		}
	}
	if l.log == nil {
		if snap != nil {
			return nil, corruptf(dir, walName, -1, "missing beside a snapshot of generation %d: a store always keeps its log", sh.gen)
		}
		return nil, corruptf(dir, walName, -1, "missing: the manifest says a store was created here, and a store always keeps its log")
	}
	switch {
	case snap == nil:
		if l.hdr.gen != 0 || l.hdr.base != 0 {
			return nil, corruptf(dir, snapName, -1, "missing: the log of generation %d continues a snapshot of that generation (records up to %d)", l.hdr.gen, l.hdr.base)
		}
	case l.hdr.gen == sh.gen:
		if l.hdr.version == formatVersion && sh.version == formatVersion && l.hdr.base != sh.seq {
			return nil, corruptf(dir, walName, 0, "the log continues record %d but the snapshot ends at record %d", l.hdr.base, sh.seq)
		}
	case l.hdr.gen > sh.gen:
		return nil, corruptf(dir, walName, 0, "log of generation %d is newer than the snapshot's generation %d", l.hdr.gen, sh.gen)
	case l.hdr.version == formatVersion && sh.version == formatVersion && l.hdr.base > sh.seq:
		return nil, corruptf(dir, walName, 0, "log of generation %d starts after record %d, which the newer snapshot (generation %d, up to record %d) does not hold", l.hdr.gen, l.hdr.base, sh.gen, sh.seq)
	default:
		// Compaction (or Repair) renamed the new snapshot into place and
		// stopped before the new log: the snapshot holds everything.
		l.stale = true
	}

	if snap != nil {
		if s.dim != 0 && sh.dim != 0 && sh.dim != s.dim {
			return nil, fmt.Errorf("%w: snapshot has dimension %d, options say %d", retrieval.ErrDimension, sh.dim, s.dim)
		}
		if s.dim == 0 && sh.dim != 0 {
			s.setDim(sh.dim)
		}
		// Sized once for the snapshot and what the log may add: a map
		// grown from the snapshot's count to the log's total rehashed
		// every key (half a second of a warm reopen at 1M).
		s.grow(sh.count+logChunks(l, s.dim, snapSize, sh.count), snapSize+max(l.size-l.hdr.len, 0))
		err := loadSnapshot(ctx, snap, snapSize, sh, &loadDecoder{skipVec: s.skipDense}, func(cs []retrieval.Chunk) error {
			if err := s.checkLoaded(cs); err != nil {
				return &snapDamage{-1, 0, err.Error()}
			}
			s.applyLoaded(cs)
			return nil
		})
		var sd *snapDamage
		if errors.As(err, &sd) {
			return nil, corruptf(dir, snapName, sd.off, "%s", sd.reason)
		}
		if err != nil {
			return nil, err
		}
		l.gen, l.base = sh.gen, sh.seq
	}
	var skip uint64 // records up to skip are in the snapshot already
	if l.stale {
		if hasNote && note.gen == sh.gen && note.seq > sh.seq {
			// The mark is written only once the new log is in place:
			// this log is not the one that compaction left.
			return nil, corruptf(dir, walName, 0, "log of generation %d found, but the log of generation %d held records up to %d: it was replaced by an older one", l.hdr.gen, note.gen, note.seq)
		}
		if l.hdr.version == formatV1 {
			// Format 1 compacted with writes stopped: the snapshot holds
			// the whole log.
			l.end, l.seq, l.tailOff = l.size, l.base, l.size
			return l, nil
		}
		skip, l.tailOff = sh.seq, l.hdr.len
	} else {
		l.gen, l.base = l.hdr.gen, l.hdr.base
	}

	if snap == nil {
		s.grow(logChunks(l, s.dim, 0, 0), l.size-l.hdr.len)
	}
	hasNote = hasNote && note.gen == l.hdr.gen
	landed := hasNote && note.size == uint64(l.hdr.len) && note.seq == l.hdr.base
	end, seq, dmg, err := replayLog(ctx, l, skip, s, func(seq uint64, end int64) {
		if hasNote && uint64(end) == note.size {
			landed = seq == note.seq
		}
	})
	if err != nil {
		var bad *badOp
		if errors.As(err, &bad) {
			// The checksum matched, so this is not a torn write.
			return nil, corruptf(dir, walName, bad.off, "record %d: %v", bad.seq, bad.err)
		}
		return nil, err
	}
	l.end, l.seq = end, seq
	if l.stale {
		if seq < skip {
			// The log ends before the snapshot does: nothing to carry.
			l.seq, l.tailOff = skip, end
		}
	}
	switch {
	case dmg != nil && dmg.next >= 0:
		return nil, corruptf(dir, walName, dmg.off, "%s, and intact records follow from offset %d (record %d on): %d bytes are damaged",
			dmg.reason, dmg.next, dmg.nextSeq, dmg.next-dmg.off)
	case dmg != nil && !dmg.torn:
		return nil, corruptf(dir, walName, dmg.off, "%s, with more data after it (%d bytes to the end): a crash cuts only the last write short, so this record was written whole and damaged later",
			dmg.reason, l.size-dmg.off)
	case hasNote && uint64(end) < note.size:
		what := "it ends there"
		if dmg != nil {
			what = dmg.reason
		}
		return nil, corruptf(dir, walName, end, "%s, but records up to %d, ending at %d bytes, were acknowledged: they are missing or damaged", what, note.seq, note.size)
	case hasNote && !landed:
		return nil, corruptf(dir, walName, end, "the records do not end where the acknowledged ones did (%d bytes, record %d)", note.size, note.seq)
	}
	// A torn tail (a last record cut short or damaged, with nothing intact
	// after it) is what a crash during a write leaves: that write never
	// returned success.
	l.torn = dmg != nil
	return l, nil
}

// logChunks estimates how many chunks the log of l may add, from its size
// and the snapshot's bytes per chunk (or a vector's, without a snapshot):
// growing the per-record slices and maps by appends copies them over and
// over, which for a log of half the snapshot's size was most of the
// garbage of a load.
func logChunks(l *loaded, dim int, snapSize int64, snapCount uint64) uint64 {
	logBytes := l.size - l.hdr.len
	if logBytes <= 0 {
		return 0
	}
	per := int64(4*dim + 64)
	if snapCount > 0 {
		per = max(snapSize/int64(snapCount), 1)
	}
	return uint64(logBytes / per)
}

// badOp is a log record, intact by its checksum, that does not decode or
// apply.
type badOp struct {
	seq uint64
	off int64 // where the record starts
	err error
}

func (e *badOp) Error() string { return fmt.Sprintf("record %d: %v", e.seq, e.err) }

// errReplayStopped ends the scan of a replay whose applier stopped.
var errReplayStopped = errors.New("replay stopped")

// replayLog applies the records of l's log after record skip to s, and
// calls seen with the sequence number and end of every intact record, in
// order (those up to skip too, which it otherwise passes over, the last
// one's end becoming l.tailOff). A goroutine reads, checks and decodes
// the records a few ahead of the one being applied: a reopen spends about
// as long on each half. It returns scanLog's results, or a *badOp.
func replayLog(ctx context.Context, l *loaded, skip uint64, s *Store, seen func(seq uint64, end int64)) (int64, uint64, *damage, error) {
	type item struct {
		op  logOp
		seq uint64
		off int64
		err error // the record does not decode
	}
	items, stop := make(chan item, 8), make(chan struct{})
	var (
		end     int64
		last    uint64
		dmg     *damage
		scanErr error
	)
	ld := &loadDecoder{skipVec: s.skipDense} // its vectors are never reused: see decodeOpWith
	hl := recordHeaderLen(l.hdr.version)
	go func() {
		defer close(items)
		end, last, dmg, scanErr = scanLog(ctx, l.log, l.hdr.version, l.hdr.len, l.size, l.hdr.base, func(seq uint64, payload []byte, e int64) error {
			seen(seq, e)
			if seq <= skip {
				l.tailOff = e
				return nil
			}
			op, err := decodeOpWith(payload, ld)
			select {
			case items <- item{op, seq, e - int64(len(payload)) - hl, err}:
			case <-stop:
				return errReplayStopped
			}
			if err != nil {
				return errReplayStopped
			}
			return nil
		})
	}()
	for it := range items {
		err := it.err
		if err == nil {
			err = s.applyOp(it.op)
		}
		if err != nil {
			close(stop)
			for range items { // until the reader has stopped
			}
			return 0, 0, nil, &badOp{it.seq, it.off, err}
		}
	}
	return end, last, dmg, scanErr
}

// recordHeaderLen is the length of a record header in a log of version v.
func recordHeaderLen(v uint32) int64 {
	if v == formatV1 {
		return recHeaderV1
	}
	return recHeaderLen
}
