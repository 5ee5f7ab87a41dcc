package memstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"path/filepath"
	"time"

	"github.com/adaptrag/adaptrag/retrieval"
)

// Directory layout and file formats (format 2). All integers are
// little-endian; every CRC is CRC-32C (Castagnoli).
//
//	MANIFEST    written once, when the store is created:
//	            magic "ADRGMAN\0", version u32, created unix-nanoseconds
//	            i64, CRC u32 of the preceding bytes
//	store.snap  the state at the last compaction:
//	            header: magic "ADRGSNP\0", version u32, generation u64,
//	            sequence u64 (of the last record it includes), dim u32,
//	            count u64, CRC u32 of the header;
//	            count frames: length u32, CRC u32 of the chunk, chunk;
//	            trailer: CRC u32 of everything before it
//	store.wal   the records written since:
//	            header: magic "ADRGWAL\0", version u32, generation u64,
//	            base sequence u64 (the snapshot's), CRC u32 of the header;
//	            records: length u32, CRC u32 of (length, sequence,
//	            payload), sequence u64, payload
//	LOCK        held with flock by the one writer, and holding its
//	            high-water mark: where the acknowledged records of the log
//	            end, rewritten after every write (synced at open, after a
//	            compaction and at Close): magic "ADRGCLN\0", generation
//	            u64, log size u64, last sequence u64, CRC u32
//
// Sequence numbers count records from 1 over the life of the store, across
// compactions: a log of generation g holds records base+1, base+2, ... and
// the snapshot of generation g holds everything up to base. A record is an
// operation byte then its body (see encodeUpsert, encodeDelete,
// encodeReplace).
//
// Format 1 (no manifest, no sequence numbers, no header or per-chunk
// checksums) is still read; a writable open upgrades it to format 2.
const (
	manifestName = "MANIFEST"
	snapName     = "store.snap"
	walName      = "store.wal"
	lockName     = "LOCK"

	manifestMagic = "ADRGMAN\x00"
	snapMagic     = "ADRGSNP\x00"
	walMagic      = "ADRGWAL\x00"
	cleanMagic    = "ADRGCLN\x00"

	formatVersion = 2 // written
	formatV1      = 1 // still read

	manifestLen   = 8 + 4 + 8 + 4
	walHeaderLen  = 8 + 4 + 8 + 8 + 4
	walHeaderV1   = 8 + 4 + 8
	snapHeaderLen = 8 + 4 + 8 + 8 + 4 + 8 + 4
	snapHeaderV1  = 8 + 4 + 8 + 4 + 8
	cleanLen      = 8 + 8 + 8 + 8 + 4
	recHeaderLen  = 4 + 4 + 8 // length, CRC, sequence
	recHeaderV1   = 4 + 4     // length, CRC
	frameLen      = 4 + 4     // snapshot chunk frame: length, CRC
	maxRecord     = 1 << 30

	opUpsert  byte = 1
	opDelete  byte = 2
	opReplace byte = 3
)

// CorruptError reports damaged or inconsistent store files. It matches
// retrieval.ErrCorrupt with errors.Is. Open never modifies a store it
// reports as corrupt; Repair salvages what is intact.
type CorruptError struct {
	Dir    string // the store directory
	File   string // the file at fault, relative to Dir
	Offset int64  // where the damage starts, -1 when it concerns the whole file
	Reason string
	// Rewritten says the store wrote the damaged file anew from memory,
	// which held every record, after it reported the damage (dense.idx:
	// removed it, for Close to write anew): nothing was lost (the
	// background check of Verified; otherwise always false).
	Rewritten bool
}

func (e *CorruptError) Error() string {
	where := e.File
	if e.Offset >= 0 {
		where = fmt.Sprintf("%s at offset %d", e.File, e.Offset)
	}
	if e.Rewritten {
		return fmt.Sprintf("%v: %s: %s (the store rewrote it from memory; nothing was lost)",
			retrieval.ErrCorrupt, filepath.Join(e.Dir, where), e.Reason)
	}
	return fmt.Sprintf("%v: %s: %s (nothing was changed; to salvage every intact record run: adaptrag repair --store embedded:%s)",
		retrieval.ErrCorrupt, filepath.Join(e.Dir, where), e.Reason, e.Dir)
}

// Unwrap makes a CorruptError match retrieval.ErrCorrupt.
func (e *CorruptError) Unwrap() error { return retrieval.ErrCorrupt }

func corruptf(dir, file string, off int64, format string, a ...any) *CorruptError {
	return &CorruptError{Dir: dir, File: file, Offset: off, Reason: fmt.Sprintf(format, a...)}
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func crc(b ...[]byte) uint32 {
	var c uint32
	for _, p := range b {
		c = crc32.Update(c, castagnoli, p)
	}
	return c
}

// ---- manifest ----

func encodeManifest(created time.Time) []byte {
	b := make([]byte, 0, manifestLen)
	b = append(b, manifestMagic...)
	b = binary.LittleEndian.AppendUint32(b, formatVersion)
	b = binary.LittleEndian.AppendUint64(b, uint64(created.UnixNano()))
	return binary.LittleEndian.AppendUint32(b, crc(b))
}

// checkManifest validates a manifest's bytes.
func checkManifest(b []byte) error {
	switch {
	case len(b) != manifestLen:
		return fmt.Errorf("%d bytes, want %d", len(b), manifestLen)
	case string(b[:8]) != manifestMagic:
		return errors.New("not a memstore manifest")
	case crc(b[:manifestLen-4]) != binary.LittleEndian.Uint32(b[manifestLen-4:]):
		return errors.New("checksum mismatch")
	case binary.LittleEndian.Uint32(b[8:]) > formatVersion:
		return fmt.Errorf("format version %d is newer than this program's %d", binary.LittleEndian.Uint32(b[8:]), formatVersion)
	}
	return nil
}

// ---- log header ----

type logHeader struct {
	version uint32
	gen     uint64
	base    uint64 // sequence of the snapshot the log continues (format 2)
	len     int64  // header length: where the first record starts
}

func encodeLogHeader(gen, base uint64) []byte {
	b := make([]byte, 0, walHeaderLen)
	b = append(b, walMagic...)
	b = binary.LittleEndian.AppendUint32(b, formatVersion)
	b = binary.LittleEndian.AppendUint64(b, gen)
	b = binary.LittleEndian.AppendUint64(b, base)
	return binary.LittleEndian.AppendUint32(b, crc(b))
}

// readLogHeader reads and checks the header at the start of r.
func readLogHeader(r io.ReaderAt) (logHeader, error) {
	var b [walHeaderLen]byte
	n, err := r.ReadAt(b[:], 0)
	if n < walHeaderV1 {
		if err == nil || err == io.EOF {
			err = fmt.Errorf("the header is cut short (%d bytes)", n)
		}
		return logHeader{}, err
	}
	if string(b[:8]) != walMagic {
		return logHeader{}, errors.New("not a memstore log (bad magic)")
	}
	h := logHeader{version: binary.LittleEndian.Uint32(b[8:]), gen: binary.LittleEndian.Uint64(b[12:])}
	switch h.version {
	case formatV1:
		h.len = walHeaderV1
	case formatVersion:
		if n < walHeaderLen {
			return logHeader{}, fmt.Errorf("the header is cut short (%d bytes)", n)
		}
		if crc(b[:walHeaderLen-4]) != binary.LittleEndian.Uint32(b[walHeaderLen-4:]) {
			return logHeader{}, errors.New("header checksum mismatch")
		}
		h.base = binary.LittleEndian.Uint64(b[20:])
		h.len = walHeaderLen
	default:
		return logHeader{}, fmt.Errorf("format version %d is not one this program reads (%d, %d)", h.version, formatV1, formatVersion)
	}
	return h, nil
}

// ---- log records ----

// appendFrame appends a format-2 record to b.
func appendFrame(b []byte, seq uint64, payload []byte) []byte {
	var h [recHeaderLen]byte
	binary.LittleEndian.PutUint32(h[0:], uint32(len(payload)))
	binary.LittleEndian.PutUint64(h[8:], seq)
	binary.LittleEndian.PutUint32(h[4:], crc(h[0:4], h[8:16], payload))
	return append(append(b, h[:]...), payload...)
}

// errBadRecord reports bytes that are not an intact record: cut short, a
// checksum mismatch, an impossible length.
type errBadRecord struct{ reason string }

func (e *errBadRecord) Error() string { return e.reason }

func badRecord(format string, a ...any) error { return &errBadRecord{fmt.Sprintf(format, a...)} }

// readRecordAt reads the record at off of a log of the given version whose
// readable size is size. It returns the record's sequence number (format 1
// has none: 0), its payload and the offset after it; an error of type
// *errBadRecord when the bytes there are not an intact record, or io.EOF
// when off is the end.
func readRecordAt(r io.ReaderAt, version uint32, off, size int64, buf []byte) (seq uint64, payload []byte, next int64, err error) {
	if off >= size {
		return 0, nil, off, io.EOF
	}
	hl := int64(recHeaderLen)
	if version == formatV1 {
		hl = recHeaderV1
	}
	var h [recHeaderLen]byte
	if size-off < hl {
		return 0, nil, 0, badRecord("a record header cut short (%d bytes)", size-off)
	}
	if _, err := r.ReadAt(h[:hl], off); err != nil {
		return 0, nil, 0, err
	}
	n := int64(binary.LittleEndian.Uint32(h[0:]))
	if n == 0 || n > maxRecord {
		return 0, nil, 0, badRecord("impossible record length %d", n)
	}
	if size-off-hl < n {
		return 0, nil, 0, badRecord("a record of %d bytes cut short at %d", n, size-off-hl)
	}
	if int64(cap(buf)) < n {
		buf = make([]byte, n)
	}
	payload = buf[:n]
	if _, err := r.ReadAt(payload, off+hl); err != nil {
		return 0, nil, 0, err
	}
	want := binary.LittleEndian.Uint32(h[4:])
	if version == formatV1 {
		if crc(payload) != want {
			return 0, nil, 0, badRecord("record checksum mismatch")
		}
		return 0, payload, off + hl + n, nil
	}
	if crc(h[0:4], h[8:16], payload) != want {
		return 0, nil, 0, badRecord("record checksum mismatch")
	}
	return binary.LittleEndian.Uint64(h[8:]), payload, off + hl + n, nil
}

// ---- snapshot header ----

type snapHeader struct {
	version uint32
	gen     uint64
	seq     uint64 // last record included (format 2)
	dim     int
	count   uint64
	len     int64
}

func encodeSnapHeader(gen, seq uint64, dim int, count uint64) []byte {
	b := make([]byte, 0, snapHeaderLen)
	b = append(b, snapMagic...)
	b = binary.LittleEndian.AppendUint32(b, formatVersion)
	b = binary.LittleEndian.AppendUint64(b, gen)
	b = binary.LittleEndian.AppendUint64(b, seq)
	b = binary.LittleEndian.AppendUint32(b, uint32(dim))
	b = binary.LittleEndian.AppendUint64(b, count)
	return binary.LittleEndian.AppendUint32(b, crc(b))
}

func readSnapHeader(r io.ReaderAt) (snapHeader, error) {
	var b [snapHeaderLen]byte
	n, err := r.ReadAt(b[:], 0)
	if n < snapHeaderV1 {
		if err == nil || err == io.EOF {
			err = fmt.Errorf("the header is cut short (%d bytes)", n)
		}
		return snapHeader{}, err
	}
	if string(b[:8]) != snapMagic {
		return snapHeader{}, errors.New("not a memstore snapshot (bad magic)")
	}
	h := snapHeader{version: binary.LittleEndian.Uint32(b[8:]), gen: binary.LittleEndian.Uint64(b[12:])}
	switch h.version {
	case formatV1:
		h.dim = int(binary.LittleEndian.Uint32(b[20:]))
		h.count = binary.LittleEndian.Uint64(b[24:])
		h.len = snapHeaderV1
	case formatVersion:
		if n < snapHeaderLen {
			return snapHeader{}, fmt.Errorf("the header is cut short (%d bytes)", n)
		}
		if crc(b[:snapHeaderLen-4]) != binary.LittleEndian.Uint32(b[snapHeaderLen-4:]) {
			return snapHeader{}, errors.New("header checksum mismatch")
		}
		h.seq = binary.LittleEndian.Uint64(b[20:])
		h.dim = int(binary.LittleEndian.Uint32(b[28:]))
		h.count = binary.LittleEndian.Uint64(b[32:])
		h.len = snapHeaderLen
	default:
		return snapHeader{}, fmt.Errorf("format version %d is not one this program reads (%d, %d)", h.version, formatV1, formatVersion)
	}
	if h.dim > maxVector {
		return snapHeader{}, fmt.Errorf("dimension %d exceeds the limit", h.dim)
	}
	return h, nil
}

// ---- clean-close note ----

// cleanNote is the high-water mark a writer keeps in LOCK: the log of
// generation gen holds acknowledged records up to seq, ending at size
// bytes. An open can then tell a log that was cut short, or whose last
// acknowledged record was damaged, from the torn tail a crash leaves
// (which lies past the mark).
type cleanNote struct {
	gen, size, seq uint64
}

func (n cleanNote) encode() []byte {
	b := make([]byte, 0, cleanLen)
	b = append(b, cleanMagic...)
	b = binary.LittleEndian.AppendUint64(b, n.gen)
	b = binary.LittleEndian.AppendUint64(b, n.size)
	b = binary.LittleEndian.AppendUint64(b, n.seq)
	return binary.LittleEndian.AppendUint32(b, crc(b))
}

// decodeCleanNote returns the note in b; ok is false when there is none
// or it is damaged, which means "no promise": the crash rules apply.
func decodeCleanNote(b []byte) (n cleanNote, ok bool) {
	if len(b) != cleanLen || string(b[:8]) != cleanMagic || crc(b[:cleanLen-4]) != binary.LittleEndian.Uint32(b[cleanLen-4:]) {
		return cleanNote{}, false
	}
	return cleanNote{
		gen:  binary.LittleEndian.Uint64(b[8:]),
		size: binary.LittleEndian.Uint64(b[16:]),
		seq:  binary.LittleEndian.Uint64(b[24:]),
	}, true
}

func crc32Update(c uint32, p []byte) uint32 { return crc32.Update(c, castagnoli, p) }
