package memstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/adaptrag/adaptrag/retrieval"
)

// RepairOptions configures Repair.
type RepairOptions struct {
	// DryRun reports what Repair would keep and lose without changing
	// anything (and without taking the writer's lock).
	DryRun bool
	// NoSync skips fsync, as Options.NoSync does.
	NoSync bool
}

// LostRange is a damaged range of a store file whose content Repair could
// not read.
type LostRange struct {
	File   string `json:"file"`
	Offset int64  `json:"offset"`
	Bytes  int64  `json:"bytes"`
	Reason string `json:"reason"`
	// FirstRecord and LastRecord are the sequence numbers of the log
	// records lost with the range, when they are known (0 otherwise).
	FirstRecord uint64 `json:"first_record,omitempty"`
	LastRecord  uint64 `json:"last_record,omitempty"`
}

// RepairReport says what Repair found, kept and lost.
type RepairReport struct {
	Dir string `json:"dir"`
	// Problems lists what was wrong besides the lost ranges (a missing
	// or damaged manifest or header, files that disagree), in plain
	// words. A store with no Problems and nothing Lost is healthy.
	Problems []string `json:"problems"`
	// SnapshotChunks is the number of chunks read intact from the
	// snapshot; RecordsKept the number of log records replayed after it.
	SnapshotChunks int `json:"snapshot_chunks"`
	RecordsKept    int `json:"records_kept"`
	// Chunks is the number of chunks in the repaired store.
	Chunks int `json:"chunks"`
	// Lost lists the damaged ranges; LostBytes adds them up.
	Lost      []LostRange `json:"lost"`
	LostBytes int64       `json:"lost_bytes"`
	// LostRecords counts log records known to be lost (from gaps in the
	// sequence numbers, or from what the high-water mark or a missing
	// snapshot says should be there); LostChunks counts snapshot chunks
	// known to be lost (from the count in its header).
	LostRecords uint64 `json:"lost_records"`
	LostChunks  uint64 `json:"lost_chunks"`
	// TornTail is the size of a torn last record that was dropped: a
	// write a crash interrupted, which never returned, so not a loss.
	TornTail int64 `json:"torn_tail_bytes"`
	// Rewritten reports that a fresh snapshot and log were written.
	Rewritten bool `json:"rewritten"`
	// SetAside maps each file that was replaced to the name it was kept
	// under; nothing is deleted.
	SetAside map[string]string `json:"set_aside,omitempty"`
	DryRun   bool              `json:"dry_run"`
}

// Clean reports whether nothing was lost.
func (r *RepairReport) Clean() bool {
	return len(r.Lost) == 0 && r.LostRecords == 0 && r.LostChunks == 0
}

// healthy reports whether nothing at all was wrong.
func (r *RepairReport) healthy() bool { return r.Clean() && len(r.Problems) == 0 }

func (r *RepairReport) lose(l LostRange) {
	r.Lost = append(r.Lost, l)
	r.LostBytes += l.Bytes
	if l.FirstRecord > 0 && l.LastRecord >= l.FirstRecord {
		r.LostRecords += l.LastRecord - l.FirstRecord + 1
	}
}

// Repair salvages the store in dir: it reads every intact chunk of the
// snapshot and then every intact log record, skipping damaged ranges by
// looking for the next intact record (records carry sequence numbers, so
// the ones lost in a range are known), and, if anything was wrong, writes
// a fresh snapshot and an empty log (a new generation, renamed into
// place), and a manifest. The files it replaces are kept beside, renamed
// with a ".before-repair-TIME" suffix. The report says what was kept and
// what was lost.
//
// A healthy store (including one with a torn tail or a stale log, which
// Open handles) is left alone. Repair takes the writer's lock: a store
// open for writing is ErrLocked. A directory without a store is
// ErrNoStore.
func Repair(ctx context.Context, dir string, o RepairOptions) (RepairReport, error) {
	rep := RepairReport{Dir: dir, DryRun: o.DryRun}
	if _, err := os.Stat(dir); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return rep, fmt.Errorf("memstore: repair %s: %w", dir, ErrNoStore)
		}
		return rep, fmt.Errorf("memstore: repair: %w", err)
	}
	d := &disk{dir: dir, sync: !o.NoSync}
	if !o.DryRun {
		var err error
		if d.lock, err = lockDir(filepath.Join(dir, lockName)); err != nil {
			return rep, fmt.Errorf("memstore: repair %s: %w", dir, err)
		}
		defer d.closeFiles()
	}
	sv, err := salvage(ctx, dir, &rep)
	if err != nil {
		return rep, fmt.Errorf("memstore: repair %s: %w", dir, err)
	}
	rep.Chunks = sv.s.nLive
	if rep.healthy() || o.DryRun {
		return rep, nil
	}
	if err := d.rewrite(ctx, sv, &rep); err != nil {
		return rep, fmt.Errorf("memstore: repair %s: %w", dir, err)
	}
	// Check the result as Open will read it.
	check := newStore(Options{})
	l, err := loadDir(ctx, dir, check, false)
	if l != nil && l.log != nil {
		l.log.Close()
	}
	if err != nil {
		return rep, fmt.Errorf("memstore: repair %s: the repaired store does not open: %w", dir, err)
	}
	if check.nLive != sv.s.nLive {
		return rep, fmt.Errorf("memstore: repair %s: the repaired store holds %d chunks, %d were salvaged", dir, check.nLive, sv.s.nLive)
	}
	return rep, nil
}

// salvaged is the state Repair read.
type salvaged struct {
	s   *Store
	gen uint64 // highest generation seen
	seq uint64 // last record applied
}

func salvage(ctx context.Context, dir string, rep *RepairReport) (*salvaged, error) {
	problem := func(format string, a ...any) { rep.Problems = append(rep.Problems, fmt.Sprintf(format, a...)) }
	sv := &salvaged{s: newStore(Options{})}
	s := sv.s

	manifestOK, err := readManifest(dir)
	var ce *CorruptError
	if err != nil && !errors.As(err, &ce) {
		return nil, err
	}
	if ce != nil {
		problem("%s: %s", manifestName, ce.Reason)
	}
	hasManifest := manifestOK || ce != nil

	logF, err := os.Open(filepath.Join(dir, walName))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if logF != nil {
		defer logF.Close()
	}
	snapF, err := os.Open(filepath.Join(dir, snapName))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if snapF != nil {
		defer snapF.Close()
	}
	if logF == nil && snapF == nil {
		if !hasManifest {
			return nil, ErrNoStore
		}
		rep.lose(LostRange{File: walName, Offset: -1, Reason: "missing, and so is " + snapName + ": the store's content is lost"})
		return sv, nil
	}
	legacy := false // a format-1 store has no manifest
	defer func() {
		if !hasManifest && !legacy {
			rep.Problems = append([]string{manifestName + " is missing"}, rep.Problems...)
		}
	}()

	// The snapshot.
	var (
		sh      snapHeader
		snapOK  bool // header readable
		snapSeq uint64
	)
	if snapF != nil {
		st, err := snapF.Stat()
		if err != nil {
			return nil, err
		}
		size := st.Size()
		sh, err = readSnapHeader(snapF)
		snapOK = err == nil
		if !snapOK {
			// The header's content can be rebuilt: the chunk frames
			// carry their own checksums.
			problem("%s: header: %v", snapName, err)
		} else {
			sv.gen, snapSeq = sh.gen, sh.seq
		}
		apply := func(c []retrieval.Chunk) {
			if err := s.checkLoaded(c); err != nil {
				rep.lose(LostRange{File: snapName, Offset: -1, Reason: err.Error()})
				return
			}
			s.applyUpsert(c)
			rep.SnapshotChunks += len(c)
		}
		if snapOK && sh.version == formatV1 {
			var batches [][]retrieval.Chunk
			err := readSnapshot(ctx, snapF, size, sh, func(cs []retrieval.Chunk) error {
				batches = append(batches, append([]retrieval.Chunk(nil), cs...))
				return nil
			})
			var sd *snapDamage
			if errors.As(err, &sd) {
				// Format 1 has no per-chunk checksums: nothing in it
				// can be trusted once the whole fails.
				rep.lose(LostRange{File: snapName, Offset: 0, Bytes: size, Reason: fmt.Sprintf("%s at offset %d (format 1 has no per-chunk checksums: the whole snapshot is unusable)", sd.reason, sd.off)})
				rep.LostChunks += sh.count
			} else if err != nil {
				return nil, err
			} else {
				for _, b := range batches {
					apply(b)
				}
			}
		} else {
			var hp *snapHeader
			if snapOK {
				hp = &sh
			}
			var found uint64
			found, lost, err := salvageSnapshot(ctx, snapF, size, hp, func(c retrieval.Chunk) { apply([]retrieval.Chunk{c}) })
			if err != nil {
				return nil, err
			}
			for _, l := range lost {
				rep.lose(LostRange{File: snapName, Offset: l.off, Bytes: l.n, Reason: l.reason})
			}
			if snapOK && found < sh.count {
				rep.LostChunks += sh.count - found
			}
			if snapOK && found > sh.count {
				problem("%s: %d chunks found, the header says %d", snapName, found, sh.count)
			}
		}
	}

	// The log.
	if logF == nil {
		l := LostRange{File: walName, Offset: -1, Reason: "missing: the records written since the last compaction are lost"}
		if note, ok := readCleanNote(dir); ok && snapOK && note.gen == sh.gen && note.seq > snapSeq {
			l.FirstRecord, l.LastRecord = snapSeq+1, note.seq
		}
		rep.lose(l)
		sv.seq = snapSeq
		return sv, nil
	}
	st, err := logF.Stat()
	if err != nil {
		return nil, err
	}
	size := st.Size()
	lh, lerr := readLogHeader(logF)
	version, off := uint32(formatVersion), int64(0)
	if lerr != nil {
		// Records are found without it, by their checksums and sequence
		// numbers.
		problem("%s: header: %v", walName, lerr)
	} else {
		version, off = lh.version, lh.len
		legacy = version == formatV1
		sv.gen = max(sv.gen, lh.gen)
		switch {
		case snapF == nil && lh.gen > 0:
			if lh.base > 0 {
				rep.lose(LostRange{File: snapName, Offset: -1, Reason: fmt.Sprintf("missing: the log continues a snapshot of generation %d", lh.gen), FirstRecord: 1, LastRecord: lh.base})
			} else {
				problem("%s is missing: the log continues a snapshot of generation %d", snapName, lh.gen)
			}
		case snapOK && lh.gen < sh.gen:
			// A stale log: the snapshot holds all of it. But if the mark
			// says the snapshot's own log held more, that log is gone.
			if note, ok := readCleanNote(dir); ok && note.gen == sh.gen && note.seq > snapSeq {
				rep.lose(LostRange{File: walName, Offset: -1, Reason: fmt.Sprintf("the log of generation %d was replaced by an older one", sh.gen), FirstRecord: snapSeq + 1, LastRecord: note.seq})
			}
			if version == formatV1 {
				sv.seq = snapSeq
				return sv, nil
			}
			// Its records after the snapshot's were written while the
			// compaction ran: the scan below keeps them.
		case snapOK && lh.gen > sh.gen:
			problem("%s: generation %d is newer than the snapshot's %d", walName, lh.gen, sh.gen)
		case snapOK && version == formatVersion && sh.version == formatVersion && lh.base != sh.seq:
			problem("%s: continues record %d, the snapshot ends at record %d", walName, lh.base, sh.seq)
		}
	}
	if version == formatV1 && snapOK {
		snapSeq = 0
	}
	note, hasNote := readCleanNote(dir)
	hasNote = hasNote && lerr == nil && note.gen == lh.gen
	cur := snapSeq
	if lerr == nil && !snapOK {
		// Without a readable snapshot header the log's tells where the
		// snapshot ended (a missing snapshot's loss is counted above).
		cur = lh.base
	}
	var buf []byte
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		rseq, payload, next, err := readRecordAt(logF, version, off, size, buf)
		if err == io.EOF {
			break
		}
		var bad *errBadRecord
		if err != nil && !errors.As(err, &bad) {
			return nil, err
		}
		if err == nil {
			buf = payload[:0]
			if version == formatV1 {
				rseq = cur + 1
			}
			if rseq <= cur {
				off = next // already in the snapshot, or a repeat
				continue
			}
			op, derr := decodeOp(payload)
			if derr == nil {
				derr = s.applyOp(op)
			}
			if derr != nil {
				rep.lose(LostRange{File: walName, Offset: off, Bytes: next - off, Reason: derr.Error(), FirstRecord: rseq, LastRecord: rseq})
			} else {
				if rseq > cur+1 {
					rep.lose(LostRange{File: walName, Offset: off, Reason: "records missing before this one", FirstRecord: cur + 1, LastRecord: rseq - 1})
				}
				rep.RecordsKept++
			}
			cur, off = rseq, next
			continue
		}
		// Damage: look for the next intact record.
		after := cur
		at, atSeq := findRecord(logF, version, off+1, size, after, lerr == nil)
		if at < 0 {
			switch {
			case hasNote && uint64(off) < note.size:
				rep.lose(LostRange{File: walName, Offset: off, Bytes: size - off, Reason: bad.reason + ", where acknowledged records went on", FirstRecord: cur + 1, LastRecord: note.seq})
			case lerr == nil && tornAt(logF, version, off, size):
				rep.TornTail = size - off
			default:
				rep.lose(LostRange{File: walName, Offset: off, Bytes: size - off, Reason: bad.reason + ", with more data after it than a crash leaves"})
			}
			off = size
			break
		}
		if off == 0 && lerr != nil && at <= walHeaderLen {
			off = at // only the header was damaged (reported above)
			continue
		}
		l := LostRange{File: walName, Offset: off, Bytes: at - off, Reason: bad.reason}
		if version == formatVersion && atSeq > cur+1 {
			l.FirstRecord, l.LastRecord = cur+1, atSeq-1
			cur = atSeq - 1 // counted here, not again as a gap
		}
		rep.lose(l)
		off = at
	}
	if hasNote && cur < note.seq && (len(rep.Lost) == 0 || rep.Lost[len(rep.Lost)-1].LastRecord < note.seq) {
		rep.lose(LostRange{File: walName, Offset: size, Reason: "cut short: acknowledged records are missing", FirstRecord: cur + 1, LastRecord: note.seq})
	}
	if version == formatV1 && rep.healthy() {
		// A healthy format-1 store: a writable Open upgrades it.
		return sv, nil
	}
	sv.seq = cur
	return sv, nil
}

// rewrite replaces the store's files by a snapshot of sv and an empty
// log of a new generation, keeping the old files beside.
func (d *disk) rewrite(ctx context.Context, sv *salvaged, rep *RepairReport) error {
	stamp := time.Now().UTC().Format("20060102T150405Z")
	rep.SetAside = map[string]string{}
	for _, name := range []string{manifestName, snapName, walName} {
		src := d.path(name)
		if _, err := os.Lstat(src); err != nil {
			continue
		}
		aside := name + ".before-repair-" + stamp
		if err := linkOrCopy(src, d.path(aside)); err != nil {
			return fmt.Errorf("keep %s aside: %w", name, err)
		}
		rep.SetAside[name] = aside
	}
	if err := d.syncDir(); err != nil {
		return err
	}
	if err := d.writeManifest(); err != nil {
		return err
	}
	// The snapshot first: beside the old log, of an older generation,
	// it is a valid store (a stale log) should the repair stop here.
	d.gen, d.seq = sv.gen+1, sv.seq
	tmp := d.path(snapName + ".tmp")
	if _, err := writeSnapshot(ctx, tmp, d.gen, d.seq, sv.s.dim, uint64(sv.s.nLive), sv.s, nil, d.sync); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, d.path(snapName)); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := d.syncDir(); err != nil {
		return err
	}
	if err := d.newLog(); err != nil {
		return err
	}
	if err := d.writeNote(true); err != nil {
		return err
	}
	rep.Rewritten = true
	return nil
}

// linkOrCopy makes dst a second name of src, or a copy where hard links
// are not supported.
func linkOrCopy(src, dst string) error {
	if err := os.Link(src, dst); err == nil {
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
