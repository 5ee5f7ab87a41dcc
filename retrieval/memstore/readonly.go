package memstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// readAttempts bounds how often a reader loads again when what it read
// looks inconsistent. A writer working on the directory at the same time
// can make a read look so for a moment: a compaction between opening the
// log and the snapshot, a log cut back by the writer's own recovery while
// it was being read. Damage that is really there is reported after the
// last attempt.
var readAttempts = 5

// readPause is the first pause between attempts; it doubles each time.
var readPause = 5 * time.Millisecond

// loadReader loads the store in o.Dir into a new Store without taking any
// lock and without changing any file. It sees a consistent prefix of the
// records: the last intact record the log held when it was read, and
// nothing of a record still being written.
func loadReader(ctx context.Context, o Options) (*Store, error) {
	var lastErr error
	pause := readPause
	for attempt := 1; ; attempt++ {
		s := newStore(o)
		l, err := loadDir(ctx, o.Dir, s, false)
		if l != nil && l.log != nil {
			l.log.Close()
		}
		if err != nil || l.none || l.stale && attempt < readAttempts {
			s.releaseVec()
		}
		if err == nil {
			if l.none {
				return nil, ErrNoStore
			}
			if l.stale && attempt < readAttempts {
				// Either a compaction is under way (its new log will
				// appear) or one crashed (the snapshot holds everything).
				lastErr = nil
				time.Sleep(pause)
				continue
			}
			s.disk = &disk{dir: o.Dir, ro: true, walSize: l.end, gen: l.gen, base: l.base, seq: l.seq, version: l.hdr.version}
			// A reader leaves the check of the files it did not read to
			// the writer (see Verified).
			s.scrubbing = l.unchecked != nil || s.vec != nil && s.vec.CopiesUnchecked()
			if l.stale {
				s.disk.walSize = -1 // the log read is not this generation's
			} else {
				s.disk.logInfo, _ = l.log.Stat()
			}
			return s, nil
		}
		var ce *CorruptError
		if !errors.As(err, &ce) || attempt >= readAttempts {
			if errors.Is(err, fs.ErrNotExist) {
				if _, serr := os.Stat(o.Dir); serr != nil {
					return nil, ErrNoStore
				}
			}
			return nil, err
		}
		lastErr = err
		select {
		case <-ctx.Done():
			return nil, errors.Join(ctx.Err(), lastErr)
		case <-time.After(pause):
		}
		pause *= 2
	}
}

// Refresh brings a Store opened with Options.ReadOnly up to date with its
// directory, for readers that live long beside a writer in another
// process. It applies the records appended since the last load or
// Refresh, all at once under the write lock, so that searches see the
// state before or after them; when the writer has compacted (or the store
// was repaired) since, it loads the directory again and swaps the whole
// state in. If loading fails the Store keeps its current state and the
// error is returned. On a writable or in-memory Store, which is always
// current, Refresh does nothing.
func (s *Store) Refresh(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("memstore: refresh: %w", err)
	}
	s.mu.RLock()
	closed := s.closed
	s.mu.RUnlock()
	if closed {
		return fmt.Errorf("memstore: refresh: %w", ErrClosed)
	}
	if s.disk == nil || !s.disk.ro {
		return nil
	}
	s.refreshMu.Lock()
	defer s.refreshMu.Unlock()
	done, err := s.refreshTail(ctx)
	if err == nil && !done {
		err = s.reload(ctx)
	}
	if err != nil {
		return fmt.Errorf("memstore: refresh %s: %w", s.opts.Dir, err)
	}
	return nil
}

// refreshTail applies the records appended to the log this Store has
// read. done is false when the log is another one (a compaction or a
// repair replaced it), which needs a full reload.
func (s *Store) refreshTail(ctx context.Context) (done bool, err error) {
	d := s.disk
	f, err := os.Open(filepath.Join(d.dir, walName))
	if err != nil {
		return false, nil // the reload reports what is wrong
	}
	defer f.Close()
	hdr, err := readLogHeader(f)
	if err != nil || hdr.gen != d.gen {
		return false, nil
	}
	st, err := f.Stat()
	if err != nil {
		return false, err
	}
	start, seq := d.walSize, d.seq
	if d.logInfo == nil || !os.SameFile(st, d.logInfo) {
		// A new log of the generation already loaded: it continues the
		// snapshot, which is all this Store holds of that generation.
		if hdr.version != formatVersion || hdr.base != d.seq {
			return false, nil
		}
		start, seq = hdr.len, hdr.base
	}
	if start < 0 || st.Size() < start {
		return false, nil // position unknown, or the log was cut: reload
	}
	if st.Size() == start {
		d.walSize, d.seq, d.logInfo = start, seq, st
		return true, nil
	}
	var ops []logOp
	var dmg *damage
	var end int64
	var last uint64
	for attempt := 1; ; attempt++ {
		ops = ops[:0]
		end, last, dmg, err = scanLog(ctx, f, hdr.version, start, st.Size(), seq, func(seq uint64, payload []byte, end int64) error {
			op, err := decodeOp(payload)
			if err != nil {
				return corruptf(d.dir, walName, end-int64(len(payload))-recordHeaderLen(hdr.version), "record %d: %v", seq, err)
			}
			ops = append(ops, op)
			return nil
		})
		if err != nil {
			return false, err
		}
		if dmg == nil || dmg.torn || attempt >= readAttempts {
			break
		}
		time.Sleep(time.Duration(attempt) * readPause)
	}
	s.mu.Lock()
	for i, op := range ops {
		if err = s.applyOp(op); err != nil {
			// Records are applied whole, so the state is still a prefix.
			last = seq + uint64(i)
			end = -1
			err = corruptf(d.dir, walName, -1, "record %d: %v", last+1, err)
			break
		}
	}
	s.mu.Unlock()
	if end < 0 {
		d.walSize = -1 // unknown: the next Refresh reloads
		d.seq = last
		return true, err
	}
	d.walSize, d.seq, d.logInfo = end, last, st
	if dmg != nil && !dmg.torn {
		return true, corruptf(d.dir, walName, dmg.off, "%s, with more data after it that a crash cannot leave", dmg.reason)
	}
	return true, nil
}

// reload loads the directory into a new state and swaps it in.
func (s *Store) reload(ctx context.Context) error {
	n, err := loadReader(ctx, s.opts)
	if err != nil {
		return err
	}
	if s.opts.Dim > 0 && n.dim != 0 && n.dim != s.opts.Dim {
		n.releaseVec()
		return fmt.Errorf("the store now holds %d-dimensional vectors, options say %d", n.dim, s.opts.Dim)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		n.releaseVec()
		return ErrClosed
	}
	// Searches hold the read lock: the old index is no longer in use.
	s.releaseVec()
	s.vecFile = n.vecFile
	if n.dim == 0 && s.opts.Dim > 0 {
		n.setDim(s.opts.Dim)
	}
	s.dim, s.vec, s.lex = n.dim, n.vec, n.lex
	s.recs, s.tenantOf, s.tenants, s.free = n.recs, n.tenantOf, n.tenants, n.free
	s.byKey, s.byDoc, s.byTenant, s.bySource, s.nLive = n.byKey, n.byDoc, n.byTenant, n.bySource, n.nLive
	*s.disk = *n.disk
	s.bgMu.Lock()
	s.scrubbing, s.scrubDone, s.scrubbed = n.scrubbing, false, nil
	s.bgMu.Unlock()
	return nil
}
