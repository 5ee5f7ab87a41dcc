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

	"github.com/adaptrag/adaptrag/retrieval"
)

// Directory layout and file formats.
//
//	LOCK        empty; held with flock while a Store has the directory open
//	store.snap  magic "ADRGSNP\0", version u32, generation u64, dim u32,
//	            count u64, count chunks (codec.go), CRC-32C u32 of all before
//	store.wal   magic "ADRGWAL\0", version u32, generation u64, then records:
//	            payload length u32, CRC-32C u32 of the payload, payload
//
// A payload is an operation byte then its body: opUpsert, a uvarint count
// and that many chunks; or opDelete, the tenant and the document id.
//
// The generation ties a log to the snapshot it continues. Compaction writes
// snapshot g+1 and then log g+1; a crash between the two leaves log g
// beside snapshot g+1, and since the snapshot already holds everything the
// log says, Open discards that log.
const (
	snapName      = "store.snap"
	walName       = "store.wal"
	lockName      = "LOCK"
	snapMagic     = "ADRGSNP\x00"
	walMagic      = "ADRGWAL\x00"
	formatVersion = 1
	walHeaderLen  = 8 + 4 + 8
	maxRecord     = 1 << 30

	opUpsert byte = 1
	opDelete byte = 2
)

// disk is the persistent side of a Store. Its methods run under the
// Store's locks: append under the write lock, compact under the read lock
// plus the compaction mutex (so never concurrently with append).
type disk struct {
	dir     string
	sync    bool
	lock    *os.File
	wal     *os.File
	walSize int64
	gen     uint64
}

func encodeUpsert(chunks []retrieval.Chunk) []byte {
	b := []byte{opUpsert}
	b = binary.AppendUvarint(b, uint64(len(chunks)))
	for i := range chunks {
		b = appendChunk(b, &chunks[i])
	}
	return b
}

func encodeDelete(tenant, docID string) []byte {
	return appendString(appendString([]byte{opDelete}, tenant), docID)
}

// openDisk locks dir, loads its snapshot and log into s, and opens the log
// for appending.
func openDisk(ctx context.Context, dir string, s *Store, sync bool) (_ *disk, err error) {
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
	for _, name := range []string{snapName + ".tmp", walName + ".tmp"} {
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	snapGen, err := loadSnapshot(ctx, filepath.Join(dir, snapName), s)
	if err != nil {
		return nil, err
	}
	d.gen = snapGen
	if err := d.openLog(ctx, s); err != nil {
		return nil, err
	}
	return d, nil
}

func (d *disk) path(name string) string { return filepath.Join(d.dir, name) }

// openLog replays the log of the current generation, cuts a torn tail and
// leaves the file open for appending; a missing or stale log is replaced
// by an empty one.
func (d *disk) openLog(ctx context.Context, s *Store) error {
	f, err := os.OpenFile(d.path(walName), os.O_RDWR, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return d.newLog()
	}
	if err != nil {
		return err
	}
	var hdr [walHeaderLen]byte
	if _, err := io.ReadFull(f, hdr[:]); err != nil {
		f.Close()
		// newLog writes the header before the file gets its name, so a
		// short header is damage, not a crash.
		return fmt.Errorf("%w: log header: %v", retrieval.ErrCorrupt, err)
	}
	if string(hdr[:8]) != walMagic {
		f.Close()
		return fmt.Errorf("%w: %s is not a memstore log", retrieval.ErrCorrupt, walName)
	}
	if v := binary.LittleEndian.Uint32(hdr[8:]); v != formatVersion {
		f.Close()
		return fmt.Errorf("%w: log format version %d, want %d", retrieval.ErrCorrupt, v, formatVersion)
	}
	gen := binary.LittleEndian.Uint64(hdr[12:])
	switch {
	case gen < d.gen:
		f.Close()
		return d.newLog() // superseded by the snapshot
	case gen > d.gen:
		f.Close()
		return fmt.Errorf("%w: log generation %d is newer than snapshot generation %d", retrieval.ErrCorrupt, gen, d.gen)
	}
	good, err := replay(ctx, f, s)
	if err != nil {
		f.Close()
		return err
	}
	if st, err := f.Stat(); err != nil {
		f.Close()
		return err
	} else if st.Size() > good {
		// A torn or corrupt tail: the write it held never returned success.
		if err := f.Truncate(good); err != nil {
			f.Close()
			return err
		}
		if err := f.Sync(); err != nil {
			f.Close()
			return err
		}
	}
	if _, err := f.Seek(good, io.SeekStart); err != nil {
		f.Close()
		return err
	}
	d.wal, d.walSize = f, good
	return nil
}

// replay applies the records of f, positioned after the header, to s and
// returns the offset after the last intact record.
func replay(ctx context.Context, f *os.File, s *Store) (int64, error) {
	br := bufio.NewReaderSize(f, 1<<20)
	off := int64(walHeaderLen)
	var hdr [8]byte
	var payload []byte
	for n := 0; ; n++ {
		if n&255 == 0 {
			if err := ctx.Err(); err != nil {
				return 0, err
			}
		}
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			return off, nil // clean end, or a torn record header
		}
		size := binary.LittleEndian.Uint32(hdr[:4])
		if size == 0 || size > maxRecord {
			return off, nil
		}
		if cap(payload) < int(size) {
			payload = make([]byte, size)
		}
		payload = payload[:size]
		if _, err := io.ReadFull(br, payload); err != nil {
			return off, nil // torn payload
		}
		if crc32.Checksum(payload, castagnoli) != binary.LittleEndian.Uint32(hdr[4:]) {
			return off, nil
		}
		if err := applyRecord(s, payload); err != nil {
			// The checksum matched, so this is not a torn write.
			return 0, fmt.Errorf("%w: log record at offset %d: %w", retrieval.ErrCorrupt, off, err)
		}
		off += int64(len(hdr)) + int64(size)
	}
}

// byteSlice reads a payload held in memory.
type byteSlice struct{ b []byte }

func (r *byteSlice) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.b)
	r.b = r.b[n:]
	return n, nil
}

func (r *byteSlice) ReadByte() (byte, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c, nil
}

// decodeRecord parses a log payload. It never panics on bad input.
func decodeRecord(payload []byte) (op byte, chunks []retrieval.Chunk, tenant, docID string, err error) {
	if len(payload) == 0 {
		return 0, nil, "", "", errShort
	}
	src := &byteSlice{payload[1:]}
	r := newReader(src)
	switch op = payload[0]; op {
	case opUpsert:
		n := r.uvarint()
		if r.err == nil && n > uint64(len(payload)) { // every chunk takes bytes
			return 0, nil, "", "", fmt.Errorf("%d chunks in a %d-byte record", n, len(payload))
		}
		for i := uint64(0); i < n && r.err == nil; i++ {
			chunks = append(chunks, r.chunk())
		}
	case opDelete:
		tenant, docID = r.str(), r.str()
	default:
		return 0, nil, "", "", fmt.Errorf("unknown operation %d", op)
	}
	if r.err != nil {
		return 0, nil, "", "", r.err
	}
	if len(src.b) != 0 {
		return 0, nil, "", "", fmt.Errorf("%d stray bytes after the record", len(src.b))
	}
	return op, chunks, tenant, docID, nil
}

func applyRecord(s *Store, payload []byte) error {
	op, chunks, tenant, docID, err := decodeRecord(payload)
	if err != nil {
		return err
	}
	switch op {
	case opUpsert:
		if err := s.checkLoaded(chunks); err != nil {
			return err
		}
		if len(chunks) > 0 {
			s.applyUpsert(chunks)
		}
	case opDelete:
		s.applyDelete(tenant, docID)
	}
	return nil
}

// checkLoaded validates chunks read from disk against the store's dimension.
func (s *Store) checkLoaded(chunks []retrieval.Chunk) error {
	for i := range chunks {
		c := &chunks[i]
		want := s.dim
		if want == 0 {
			want = len(chunks[0].Vector)
		}
		if c.ID == "" || len(c.Vector) == 0 {
			return errors.New("chunk without id or vector")
		}
		if len(c.Vector) != want {
			return fmt.Errorf("%w: stored chunk %q has %d dimensions, want %d", retrieval.ErrDimension, c.ID, len(c.Vector), want)
		}
	}
	return nil
}

// newLog replaces the log by an empty one of the current generation,
// written under a temporary name and renamed, so that a log file always
// has a complete header.
func (d *disk) newLog() error {
	tmp := d.path(walName + ".tmp")
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	hdr := make([]byte, 0, walHeaderLen)
	hdr = append(hdr, walMagic...)
	hdr = binary.LittleEndian.AppendUint32(hdr, formatVersion)
	hdr = binary.LittleEndian.AppendUint64(hdr, d.gen)
	if _, err := f.Write(hdr); err != nil {
		f.Close()
		return err
	}
	if err := d.syncFile(f); err != nil {
		f.Close()
		return err
	}
	if err := os.Rename(tmp, d.path(walName)); err != nil {
		f.Close()
		return err
	}
	if err := d.syncDir(); err != nil {
		f.Close()
		return err
	}
	if d.wal != nil {
		d.wal.Close()
	}
	d.wal, d.walSize = f, walHeaderLen
	return nil
}

// append writes one record and, unless NoSync, fsyncs it.
func (d *disk) append(payload []byte) error {
	if len(payload) > maxRecord {
		return fmt.Errorf("%w: batch of %d bytes exceeds the %d-byte record limit", retrieval.ErrInvalid, len(payload), maxRecord)
	}
	buf := make([]byte, 8, 8+len(payload))
	binary.LittleEndian.PutUint32(buf[:4], uint32(len(payload)))
	binary.LittleEndian.PutUint32(buf[4:], crc32.Checksum(payload, castagnoli))
	buf = append(buf, payload...)
	if _, err := d.wal.Write(buf); err != nil {
		d.rollback()
		return fmt.Errorf("write log: %w", err)
	}
	if err := d.syncFile(d.wal); err != nil {
		d.rollback()
		return fmt.Errorf("sync log: %w", err)
	}
	d.walSize += int64(len(buf))
	return nil
}

// rollback cuts a partly written record, so that later appends do not
// follow it; if that fails too, replay will stop at the damage anyway.
func (d *disk) rollback() {
	if d.wal.Truncate(d.walSize) == nil {
		_, _ = d.wal.Seek(d.walSize, io.SeekStart)
	}
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
// that generation. The caller holds s.mu for reading.
func (d *disk) compact(ctx context.Context, s *Store) error {
	gen := d.gen + 1
	tmp := d.path(snapName + ".tmp")
	if err := d.writeSnapshot(ctx, tmp, gen, s); err != nil {
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
	// is in place leaves a stale log that Open discards.
	d.gen = gen
	return d.newLog()
}

func (d *disk) writeSnapshot(ctx context.Context, path string, gen uint64, s *Store) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	crc := crc32.New(castagnoli)
	w := bufio.NewWriterSize(io.MultiWriter(f, crc), 1<<20)
	hdr := make([]byte, 0, 32)
	hdr = append(hdr, snapMagic...)
	hdr = binary.LittleEndian.AppendUint32(hdr, formatVersion)
	hdr = binary.LittleEndian.AppendUint64(hdr, gen)
	hdr = binary.LittleEndian.AppendUint32(hdr, uint32(s.dim))
	hdr = binary.LittleEndian.AppendUint64(hdr, uint64(s.nLive))
	if _, err := w.Write(hdr); err != nil {
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
		buf = appendChunk(buf[:0], &c)
		if _, err := w.Write(buf); err != nil {
			return err
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if _, err := f.Write(binary.LittleEndian.AppendUint32(nil, crc.Sum32())); err != nil {
		return err
	}
	if err := d.syncFile(f); err != nil {
		return err
	}
	return f.Close()
}

// crcReader feeds what it reads through a CRC, so that a streamed snapshot
// is checked without holding it in memory.
type crcReader struct {
	br  *bufio.Reader
	crc uint32
}

func (r *crcReader) Read(p []byte) (int, error) {
	n, err := r.br.Read(p)
	r.crc = crc32.Update(r.crc, castagnoli, p[:n])
	return n, err
}

func (r *crcReader) ReadByte() (byte, error) {
	c, err := r.br.ReadByte()
	if err == nil {
		r.crc = crc32.Update(r.crc, castagnoli, []byte{c})
	}
	return c, err
}

// loadSnapshot applies the snapshot at path to s and returns its
// generation; a missing snapshot is generation 0. Chunks are applied as
// they are read and the checksum is verified at the end: on a mismatch the
// whole Open fails, so the partly loaded store is never used.
func loadSnapshot(ctx context.Context, path string, s *Store) (uint64, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer f.Close()
	cr := &crcReader{br: bufio.NewReaderSize(f, 1<<20)}
	corrupt := func(format string, a ...any) error {
		return fmt.Errorf("%w: snapshot: %s", retrieval.ErrCorrupt, fmt.Sprintf(format, a...))
	}
	hdr := make([]byte, 8+4+8+4+8)
	if _, err := io.ReadFull(cr, hdr); err != nil {
		return 0, corrupt("header: %v", err)
	}
	if string(hdr[:8]) != snapMagic {
		return 0, corrupt("not a memstore snapshot")
	}
	if v := binary.LittleEndian.Uint32(hdr[8:]); v != formatVersion {
		return 0, corrupt("format version %d, want %d", v, formatVersion)
	}
	gen := binary.LittleEndian.Uint64(hdr[12:])
	dim := int(binary.LittleEndian.Uint32(hdr[20:]))
	count := binary.LittleEndian.Uint64(hdr[24:])
	if s.dim != 0 && dim != 0 && dim != s.dim {
		return 0, fmt.Errorf("%w: snapshot has dimension %d, options say %d", retrieval.ErrDimension, dim, s.dim)
	}
	if s.dim == 0 && dim != 0 {
		s.setDim(dim)
	}
	r := newReader(cr)
	batch := make([]retrieval.Chunk, 0, 1024)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		if err := s.checkLoaded(batch); err != nil {
			return corrupt("%v", err)
		}
		s.applyUpsert(batch)
		batch = batch[:0]
		return ctx.Err()
	}
	for range count {
		c := r.chunk()
		if r.err != nil {
			return 0, corrupt("%v", r.err)
		}
		batch = append(batch, c)
		if len(batch) == cap(batch) {
			if err := flush(); err != nil {
				return 0, err
			}
		}
	}
	if err := flush(); err != nil {
		return 0, err
	}
	sum := cr.crc
	var tail [4]byte
	if _, err := io.ReadFull(cr.br, tail[:]); err != nil {
		return 0, corrupt("missing checksum")
	}
	if binary.LittleEndian.Uint32(tail[:]) != sum {
		return 0, corrupt("checksum mismatch")
	}
	if _, err := cr.br.ReadByte(); err != io.EOF {
		return 0, corrupt("stray bytes after the checksum")
	}
	return gen, nil
}

// close syncs and closes the log and releases the lock.
func (d *disk) close() error {
	var err error
	if d.wal != nil {
		err = d.syncFile(d.wal)
	}
	return errors.Join(err, d.closeFiles())
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
