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
	gen     uint64   // generation of the snapshot (and of the log)
	base    uint64   // sequence number the log starts after
	seq     uint64   // sequence number of the last record written or applied
	version uint32   // format of the log
	logInfo os.FileInfo

	needLog   bool  // compaction replaced the snapshot but not the log yet
	noteSized bool  // LOCK has the length of a mark
	broken    error // a failed write left the log in an unknown state
}

// openWriter locks dir, loads its store into s (creating an empty store
// when there is none), and readies the log for appending.
func openWriter(ctx context.Context, dir string, s *Store, sync bool) (_ *disk, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	d := &disk{dir: dir, sync: sync}
	if d.lock, err = lockDir(filepath.Join(dir, lockName)); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			d.closeFiles()
		}
	}()
	for _, name := range []string{snapName + ".tmp", walName + ".tmp", manifestName + ".tmp"} {
		if err := os.Remove(d.path(name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	l, err := loadDir(ctx, dir, s, true)
	if err != nil {
		return nil, err
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
	if !l.stale {
		d.base = l.hdr.base
	}
	switch {
	case l.stale:
		if err := d.newLog(); err != nil {
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
	tmp := d.path(name + ".tmp")
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
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

// append writes one record and, unless NoSync, fsyncs it. A write that
// fails is cut off again, so that later records follow the last intact
// one; a failed fsync leaves the file in an unknown state, so the store
// then refuses writes until it is reopened.
func (d *disk) append(payload []byte) error {
	if d.broken != nil {
		return d.broken
	}
	if len(payload) > maxRecord {
		return fmt.Errorf("%w: batch of %d bytes exceeds the %d-byte record limit", retrieval.ErrInvalid, len(payload), maxRecord)
	}
	if d.needLog {
		if err := d.newLog(); err != nil {
			return fmt.Errorf("start a new log after compaction: %w", err)
		}
		d.needLog = false
	}
	buf := appendFrame(make([]byte, 0, recHeaderLen+len(payload)), d.seq+1, payload)
	if _, err := d.wal.WriteAt(buf, d.walSize); err != nil {
		if terr := d.wal.Truncate(d.walSize); terr != nil {
			d.broken = fmt.Errorf("memstore: log %s left damaged by a failed write (%v, then %v): reopen the store", d.path(walName), err, terr)
		}
		return fmt.Errorf("write log: %w", err)
	}
	if err := d.syncFile(d.wal); err != nil {
		d.broken = fmt.Errorf("memstore: sync of log %s failed (%v): reopen the store", d.path(walName), err)
		return fmt.Errorf("sync log: %w", err)
	}
	d.walSize += int64(len(buf))
	d.seq++
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

// compact writes the snapshot of generation gen+1 and then an empty log of
// that generation. The caller holds s.mu for reading, so no record is
// written meanwhile.
func (d *disk) compact(ctx context.Context, s *Store) error {
	if d.broken != nil {
		return d.broken
	}
	if d.needLog {
		if err := d.newLog(); err != nil {
			return err
		}
		d.needLog = false
	}
	gen := d.gen + 1
	tmp := d.path(snapName + ".tmp")
	if err := writeSnapshot(ctx, tmp, gen, d.seq, s, d.sync); err != nil {
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
	// From here the snapshot holds everything: a crash before the new log
	// is in place leaves a stale log that Open discards. Until the new log
	// is in place nothing may be appended to the old one, whose records
	// the next Open would discard as stale.
	d.gen = gen
	if err := d.newLog(); err != nil {
		d.needLog = true
		return err
	}
	return d.writeNote(true)
}

// writeSnapshot writes the state of s to path in format 2 and syncs it.
func writeSnapshot(ctx context.Context, path string, gen, seq uint64, s *Store, sync bool) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	sum := crc32.New(castagnoli)
	w := bufio.NewWriterSize(io.MultiWriter(f, sum), 1<<20)
	if _, err := w.Write(encodeSnapHeader(gen, seq, s.dim, uint64(s.nLive))); err != nil {
		return err
	}
	var buf []byte
	n := 0
	for iid := range s.recs {
		r := &s.recs[iid]
		if !r.live {
			continue
		}
		if n++; n&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		c := r.Chunk
		c.Vector, _ = s.vec.Vector(uint32(iid))
		buf = appendChunk(append(buf[:0], 0, 0, 0, 0, 0, 0, 0, 0), &c)
		body := buf[frameLen:]
		binary.LittleEndian.PutUint32(buf[0:], uint32(len(body)))
		binary.LittleEndian.PutUint32(buf[4:], crc(body))
		if _, err := w.Write(buf); err != nil {
			return err
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if _, err := f.Write(binary.LittleEndian.AppendUint32(nil, sum.Sum32())); err != nil {
		return err
	}
	if sync {
		if err := f.Sync(); err != nil {
			return err
		}
	}
	return f.Close()
}

// close syncs and closes the log, syncs the high-water mark in LOCK and
// releases the lock.
func (d *disk) close() error {
	if d.ro {
		return nil
	}
	var err error
	if d.wal != nil && d.broken == nil && !d.needLog {
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
