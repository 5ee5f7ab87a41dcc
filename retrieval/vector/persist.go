package vector

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/adaptrag/adaptrag/internal/hugemem"
	"github.com/adaptrag/adaptrag/internal/slots"
	"hash"
	"hash/crc32"
	"io"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"sync/atomic"
	"unsafe"
)

// ErrCorrupt reports an index file that ReadIndex cannot trust: a wrong
// magic or version, a failed checksum, a truncation or inconsistent
// contents.
var ErrCorrupt = errors.New("vector: corrupt index file")

// File format (little endian): the 8-byte magic, a header of fixed-size
// fields followed by the CRC-32C of the magic and header (checked before
// anything is allocated from the header's counts), then the sections of
// the index as raw arrays, then the CRC-32C of every byte before it except
// the float32 vectors and (version 3) their int8 copies. The vectors are
// followed by a CRC-32C of each, then (version 3) a CRC-32C of each int8
// copy, then the copies and their scales, so that ReadIndexAt can skip
// the vectors, and map the copies without reading them, and still check
// each one before its first use. Version 2 had the int8 copies under the
// file's checksum, version 1 the vectors too and no copies; both are
// still read.
const (
	fileMagic   = "ADRGVEC\x00"
	fileVersion = 3
	fileV2      = 2
	fileV1      = 1
	// Sanity bounds, so that a damaged header that passes its checksum by
	// chance still cannot ask for absurd allocations.
	maxFileDim = 1 << 16
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// hostLittle is true when the machine stores numbers little endian, as the
// file does: then arrays are read and written in place, without a copy.
var hostLittle = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()

// fileWriter writes little-endian values and arrays through a checksum.
type fileWriter struct {
	w   *bufio.Writer
	crc hash.Hash32
	n   int64
	err error
	buf [8]byte
	// raw, while set, keeps what is written out of the checksum.
	raw bool
}

func (fw *fileWriter) write(p []byte) {
	if fw.err != nil {
		return
	}
	if !fw.raw {
		fw.crc.Write(p)
	}
	m, err := fw.w.Write(p)
	fw.n += int64(m)
	fw.err = err
}

func (fw *fileWriter) u32(x uint32) {
	binary.LittleEndian.PutUint32(fw.buf[:4], x)
	fw.write(fw.buf[:4])
}

func (fw *fileWriter) u64(x uint64) {
	binary.LittleEndian.PutUint64(fw.buf[:8], x)
	fw.write(fw.buf[:8])
}

// array writes the elements of a slice of fixed-size numbers.
func writeArray[T int8 | uint16 | uint32 | uint64 | float32](fw *fileWriter, a []T) {
	if len(a) == 0 {
		return
	}
	size := int(unsafe.Sizeof(a[0]))
	if hostLittle {
		fw.write(unsafe.Slice((*byte)(unsafe.Pointer(&a[0])), len(a)*size))
		return
	}
	b := make([]byte, 0, 64<<10)
	for i, x := range a {
		b = appendLE(b, x)
		if len(b) == cap(b) || i == len(a)-1 {
			fw.write(b)
			b = b[:0]
		}
	}
}

func appendLE[T int8 | uint16 | uint32 | uint64 | float32](b []byte, x T) []byte {
	switch v := any(x).(type) {
	case int8:
		return append(b, byte(v))
	case uint16:
		return binary.LittleEndian.AppendUint16(b, v)
	case uint32:
		return binary.LittleEndian.AppendUint32(b, v)
	case uint64:
		return binary.LittleEndian.AppendUint64(b, v)
	default:
		return binary.LittleEndian.AppendUint32(b, math.Float32bits(any(x).(float32)))
	}
}

// fileReader reads what fileWriter wrote, through the same checksum. Its
// first error sticks; every later read is a no-op.
type fileReader struct {
	r   *bufio.Reader
	crc hash.Hash32
	err error
	buf [8]byte
	raw bool  // as fileWriter's
	pos int64 // bytes consumed
	// sr, when reading from a file section, lets skip seek.
	sr *io.SectionReader
}

func (fr *fileReader) read(p []byte) {
	if fr.err != nil {
		return
	}
	if _, err := io.ReadFull(fr.r, p); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			err = fmt.Errorf("%w: truncated: %w", ErrCorrupt, err)
		}
		fr.err = err
		return
	}
	fr.pos += int64(len(p))
	if !fr.raw {
		fr.crc.Write(p)
	}
}

// skip passes over n bytes that stay out of the checksum: by a seek when
// reading a file section, else by reading them.
func (fr *fileReader) skip(n int64) {
	if fr.err != nil {
		return
	}
	if fr.sr == nil {
		m, err := io.CopyN(io.Discard, fr.r, n)
		fr.pos += m
		if err != nil {
			fr.fail("truncated: %v", err)
		}
		return
	}
	fr.pos += n
	if _, err := fr.sr.Seek(fr.pos, io.SeekStart); err != nil {
		fr.err = err
		return
	}
	fr.r.Reset(fr.sr)
}

func (fr *fileReader) u32() uint32 {
	fr.read(fr.buf[:4])
	if fr.err != nil {
		return 0
	}
	return binary.LittleEndian.Uint32(fr.buf[:4])
}

func (fr *fileReader) u64() uint64 {
	fr.read(fr.buf[:8])
	if fr.err != nil {
		return 0
	}
	return binary.LittleEndian.Uint64(fr.buf[:8])
}

func (fr *fileReader) fail(format string, args ...any) {
	if fr.err == nil {
		fr.err = fmt.Errorf("%w: "+format, append([]any{ErrCorrupt}, args...)...)
	}
}

// checksum reads a stored CRC-32C and compares it with the one of every
// byte read so far.
func (fr *fileReader) checksum(what string) {
	sum := fr.crc.Sum32()
	if fr.err != nil {
		return
	}
	var b [4]byte
	if _, err := io.ReadFull(fr.r, b[:]); err != nil {
		fr.err = fmt.Errorf("%w: truncated %s checksum: %w", ErrCorrupt, what, err)
		return
	}
	fr.pos += 4
	fr.crc.Write(b[:])
	if got := binary.LittleEndian.Uint32(b[:]); got != sum {
		fr.err = fmt.Errorf("%w: %s checksum %#08x, computed %#08x", ErrCorrupt, what, got, sum)
	}
}

// readArray reads n elements into a new slice of exactly n. The counts
// come from a header whose checksum has been verified, so a damaged file
// cannot ask for more than its writer stored.
func readArray[T int8 | uint16 | uint32 | uint64 | float32](fr *fileReader, n int) []T {
	if fr.err != nil || n == 0 {
		return nil
	}
	out := hugemem.Make[T](n)
	if readInto(fr, out); fr.err != nil {
		return nil
	}
	return out
}

// readInto fills out with the next len(out) values of T.
func readInto[T int8 | uint16 | uint32 | uint64 | float32](fr *fileReader, out []T) {
	n := len(out)
	if fr.err != nil || n == 0 {
		return
	}
	size := int(unsafe.Sizeof(out[0]))
	if hostLittle {
		fr.read(unsafe.Slice((*byte)(unsafe.Pointer(&out[0])), n*size))
	} else {
		const piece = 1 << 16
		b := make([]byte, piece*size)
		for i := 0; i < n && fr.err == nil; i += piece {
			part := out[i:min(i+piece, n)]
			fr.read(b[:len(part)*size])
			for j := range part {
				part[j] = fromLE[T](b[j*size:])
			}
		}
	}
}

// arena hands out consecutive pieces of one slice, each with no room to
// grow into the next: a piece that grows moves out by append.
type arena[T any] struct{ buf []T }

func (a *arena[T]) take(n int) []T {
	if n > len(a.buf) {
		return make([]T, n) // only for counts a checked reader rejects
	}
	p := a.buf[:n:n]
	a.buf = a.buf[n:]
	return p
}

func fromLE[T int8 | uint16 | uint32 | uint64 | float32](b []byte) T {
	var x T
	switch p := any(&x).(type) {
	case *int8:
		*p = int8(b[0])
	case *uint16:
		*p = binary.LittleEndian.Uint16(b)
	case *uint32:
		*p = binary.LittleEndian.Uint32(b)
	case *uint64:
		*p = binary.LittleEndian.Uint64(b)
	case *float32:
		*p = math.Float32frombits(binary.LittleEndian.Uint32(b))
	}
	return x
}

// countingWriter adapts the header writes into WriteTo's byte count.
func newFileWriter(w io.Writer) *fileWriter {
	return &fileWriter{w: bufio.NewWriterSize(w, 1<<20), crc: crc32.New(castagnoli)}
}

func newFileReader(r io.Reader) *fileReader {
	fr := &fileReader{r: bufio.NewReaderSize(r, 1<<20), crc: crc32.New(castagnoli)}
	fr.sr, _ = r.(*io.SectionReader)
	return fr
}

const (
	flagTrained = 1 << iota
	flagExact
)

// WriteTo writes the index to w in a versioned, checksummed binary form
// that ReadIndex reads back without re-encoding or retraining anything. It
// returns the bytes written. Like Search, it may run concurrently with
// other reads but not with Add or Remove.
func (ix *Index) WriteTo(w io.Writer) (int64, error) {
	fw := newFileWriter(w)
	fw.write([]byte(fileMagic))
	fw.u32(fileVersion)
	var flags uint32
	if ix.trained {
		flags |= flagTrained
	}
	if ix.exact {
		flags |= flagExact
	}
	fw.u32(uint32(max(ix.dim, 0)))
	fw.u32(flags)
	fw.u64(ix.seed)
	fw.u64(uint64(int64(ix.threshold)))
	fw.u64(uint64(len(ix.ids)))
	fw.u64(uint64(ix.listMax))
	fw.u64(uint64(len(ix.lists)))
	fw.u32(fw.crc.Sum32())

	writeArray(fw, ix.ids)
	if err := ix.writeVectors(fw); err != nil {
		return fw.n, fmt.Errorf("vector: write index: %w", err)
	}
	if len(ix.ids) > 0 {
		sum := make([]uint64, ix.dim)
		for i, x := range ix.sum {
			sum[i] = math.Float64bits(x)
		}
		writeArray(fw, sum)
	}
	for _, L := range ix.lists {
		writeArray(fw, L.centroid)
		fw.u64(math.Float64bits(L.resid))
		fw.u64(uint64(len(L.slots)))
		writeArray(fw, L.slots)
		writeArray(fw, L.codes)
		writeArray(fw, L.factor)
		writeArray(fw, L.pop)
		writeArray(fw, L.fine)
	}
	fw.u32(fw.crc.Sum32())
	if fw.err == nil {
		fw.err = fw.w.Flush()
	}
	if fw.err != nil {
		return fw.n, fmt.Errorf("vector: write index: %w", fw.err)
	}
	return fw.n, nil
}

// ReadIndex reads an index written by WriteTo, every vector into memory.
// The dimension, seed, threshold and exactness come from the file; o
// supplies the search-time settings (Oversample, Rerank). Damage of any
// kind (bad magic, version or checksum, truncation, inconsistent contents)
// returns an error matching ErrCorrupt; other read errors are returned
// wrapped.
func ReadIndex(r io.Reader, o Options) (*Index, error) {
	return readIndex(newFileReader(r), o, nil, 0)
}

// ReadIndexAt is ReadIndex for an index written by WriteTo at offset off
// of r, which may leave the float32 vectors in r: when the index holds
// more than o.ResidentLimit of them (and has its lists), it keeps an int8
// copy of each in memory (a quarter of the size) that searches score, and
// reads an original from r only when it is asked for (Vector, ReadVector,
// WriteTo), checking it against its CRC-32C. r must then stay readable,
// and its bytes unchanged, for as long as the index is used; Resident
// reports whether it does not depend on r.
func ReadIndexAt(r io.ReaderAt, off int64, o Options) (*Index, error) {
	if off < 0 {
		return nil, fmt.Errorf("vector: read index: negative offset %d", off)
	}
	return readIndex(newFileReader(io.NewSectionReader(r, off, math.MaxInt64-off)), o, r, off)
}

// Resident reports whether every vector of the index is in memory: false
// for an index that ReadIndexAt left partly in its file.
func (ix *Index) Resident() bool { return ix.sp == nil }

func readIndex(fr *fileReader, o Options, at io.ReaderAt, off int64) (*Index, error) {
	var magic [len(fileMagic)]byte
	fr.read(magic[:])
	if fr.err == nil && string(magic[:]) != fileMagic {
		fr.fail("bad magic %q", magic[:])
	}
	version := fr.u32()
	if fr.err == nil && version != fileVersion && version != fileV2 && version != fileV1 {
		fr.fail("version %d, want %d", version, fileVersion)
	}
	dim, flags, seed := fr.u32(), fr.u32(), fr.u64()
	threshold, n, listMax, nlists := int64(fr.u64()), fr.u64(), fr.u64(), fr.u64()
	fr.checksum("header")
	trained := flags&flagTrained != 0
	if fr.err == nil && (dim == 0 || dim > maxFileDim || flags&^(flagTrained|flagExact) != 0 || n > math.MaxUint32 ||
		seed == 0 || listMax == 0 || listMax > math.MaxUint32 || nlists > n+1 || trained != (nlists > 0)) {
		fr.fail("header out of range: dim %d, flags %#x, %d vectors, %d lists", dim, flags, n, nlists)
	}
	if fr.err != nil {
		return nil, fmt.Errorf("vector: read index: %w", fr.err)
	}
	o.Seed, o.Exact, o.ExactThreshold, o.ListSize = seed, flags&flagExact != 0, int(threshold), int(listMax)
	ix := New(int(dim), o)
	count := int(n)
	ix.ids = readArray[uint32](fr, count)
	if version == fileV1 {
		ix.readBlocks(fr, count)
	} else {
		ix.readVectors(fr, version, count, o.residentLimit(), trained, at, off)
	}
	if count > 0 {
		ix.sum = make([]float64, ix.dim)
		for i, b := range readArray[uint64](fr, ix.dim) {
			ix.sum[i] = math.Float64frombits(b)
		}
	}
	if trained {
		ix.trained = true
		ix.encBuf = make([]float32, ix.pdim)
		ix.lists = make([]*list, 0, nlists)
		// The lists' arrays are cut from one slice each, made for all of
		// them: made list by list (tens of kilobytes each), every page of
		// the hundred megabytes at a million vectors took its own fault,
		// a fifth of the CPU time of opening the index.
		slotsA := arena[uint32]{hugemem.Make[uint32](count)}
		codesA := arena[uint64]{hugemem.Make[uint64](count * ix.words)}
		factorA := arena[float32]{hugemem.Make[float32](count)}
		popA := arena[uint16]{hugemem.Make[uint16](count)}
		fineA := arena[uint64]{hugemem.Make[uint64](count * ix.fineStride())}
		total := 0
		for range nlists {
			c := readArray[float32](fr, ix.dim)
			resid := math.Float64frombits(fr.u64())
			size := fr.u64()
			if fr.err == nil && size > uint64(count-total) {
				fr.fail("lists hold more than %d vectors", count)
			}
			for _, x := range c {
				if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
					fr.fail("centroid not finite")
					break
				}
			}
			if fr.err != nil {
				break
			}
			m := int(size)
			total += m
			L := ix.lists[ix.addList(c)]
			L.resid = resid
			L.slots = slotsA.take(m)
			L.codes = codesA.take(m * ix.words)
			L.factor = factorA.take(m)
			L.pop = popA.take(m)
			L.fine = fineA.take(m * ix.fineStride())
			readInto(fr, L.slots)
			readInto(fr, L.codes)
			readInto(fr, L.factor)
			readInto(fr, L.pop)
			readInto(fr, L.fine)
		}
		if fr.err == nil && total != count {
			fr.fail("lists hold %d vectors, want %d", total, count)
		}
	}
	fr.checksum("file")
	if fr.err == nil {
		if _, err := fr.r.Read(fr.buf[:1]); err != io.EOF {
			fr.fail("data after the end of the index")
		}
	}
	if fr.err != nil {
		return nil, fmt.Errorf("vector: read index: %w", fr.err)
	}
	if err := ix.rebuildWhere(); err != nil {
		return nil, fmt.Errorf("vector: read index: %w", err)
	}
	ix.slot = slots.Table{}
	growSlots(&ix.slot, ix.ids)
	for s, id := range ix.ids {
		if _, dup := ix.slot.Get(id); dup {
			return nil, fmt.Errorf("vector: read index: %w: id %d stored twice", ErrCorrupt, id)
		}
		ix.slot.Set(id, uint32(s), slotReach(&ix.slot))
	}
	return ix, nil
}

// rebuildWhere derives each slot's list and position from the lists and
// checks that every slot is in exactly one list.
func (ix *Index) rebuildWhere() error {
	if !ix.trained {
		return nil
	}
	n := len(ix.ids)
	ix.where = hugemem.Make[loc](n)
	seen := make([]bool, n)
	for l, L := range ix.lists {
		L.ids = make([]uint32, len(L.slots))
		for p, s := range L.slots {
			if int(s) >= n || seen[s] {
				return fmt.Errorf("%w: slot %d listed twice or out of range", ErrCorrupt, s)
			}
			seen[s] = true
			L.ids[p] = ix.ids[s]
			ix.where[s] = loc{list: uint32(l), pos: uint32(p)}
		}
	}
	return nil
}

// Remap renames every stored id through f, for an owner whose ids changed
// while the index was on disk (a store that numbers its records afresh on
// each load). f must be one to one over the stored ids; Remap fails,
// leaving the index unusable, when f rejects an id or maps two ids to one.
// It costs one pass over the ids: no vector is read or re-encoded.
func (ix *Index) Remap(f func(old uint32) (uint32, bool)) error {
	var slot slots.Table
	slot.Grow(len(ix.ids))
	for s, old := range ix.ids {
		id, ok := f(old)
		if !ok {
			return fmt.Errorf("vector: remap: id %d has no new id", old)
		}
		if _, dup := slot.Get(id); dup {
			return fmt.Errorf("vector: remap: two ids map to %d", id)
		}
		ix.ids[s] = id
		slot.Set(id, uint32(s), slotReach(&slot))
	}
	ix.slot = slot
	for _, L := range ix.lists {
		for i, s := range L.slots {
			L.ids[i] = ix.ids[s]
		}
	}
	return nil
}

// growSlots makes t's table as long as the ids need, when they are
// within the reach Set would grow it to for all of them: grown by Set,
// one doubling after another, it was a tenth of the CPU time of reading
// a million vectors' index.
func growSlots(t *slots.Table, ids []uint32) {
	var top uint32
	for _, id := range ids {
		top = max(top, id)
	}
	if len(ids) > 0 && int64(top) < 4*int64(len(ids)+1)+1024 {
		t.Grow(int(top) + 1)
	}
}

// readBlocks reads count vectors into memory, in blocks.
func (ix *Index) readBlocks(fr *fileReader, count int) {
	for off := 0; off < count && fr.err == nil; off += vecBlock {
		ix.vecs = append(ix.vecs, readArray[float32](fr, min(vecBlock, count-off)*ix.dim))
	}
}

// readVectors reads the vectors of a version-2 or 3 file and their
// checksums and int8 copies: the vectors into memory, checked one by one,
// or, when the index may be left partly on disk (more than limit vectors,
// lists built, and a file to come back to), past them, into a spill. The
// copies of a version-3 file are then mapped unread, each checked before
// its first use (spill.code), or read and checked at once when they
// cannot be mapped.
func (ix *Index) readVectors(fr *fileReader, version uint32, count, limit int, trained bool, at io.ReaderAt, off int64) {
	vbytes := int64(count) * int64(ix.dim) * 4
	spilled := at != nil && trained && count > limit
	base := off + fr.pos
	if spilled {
		fr.skip(vbytes)
	} else {
		fr.raw = true
		ix.readBlocks(fr, count)
		fr.raw = false
	}
	sums := readArray[uint32](fr, count)
	var rowSums []uint32
	if version >= 3 {
		rowSums = readArray[uint32](fr, count)
	}
	if !spilled && fr.err == nil {
		var b []byte
		for s := range count {
			b = floatBytes(b[:0], ix.vec(uint32(s)))
			if got := crc32.Checksum(b, castagnoli); got != sums[s] {
				fr.fail("vector %d: checksum %#08x, stored %#08x", s, got, sums[s])
				return
			}
		}
	}
	if !spilled {
		// The int8 copies are for an index left on disk; this one
		// checks them (each, or version 2 with the file) and drops them.
		if version >= 3 {
			fr.raw = true
			c := make([]byte, ix.dim)
			for s := range count {
				if fr.read(c); fr.err == nil && crc32.Checksum(c, castagnoli) != rowSums[s] {
					fr.fail("int8 copy %d: checksum %#08x, stored %#08x", s, crc32.Checksum(c, castagnoli), rowSums[s])
				}
				if fr.err != nil {
					break
				}
			}
			fr.raw = false
			fr.discard(int64(count) * 4)
		} else {
			fr.discard(int64(count) * int64(ix.dim+4))
		}
		return
	}
	fr.raw = rowSums != nil
	q8, unmap := mapInt8(fr, at, off, count*ix.dim)
	lazy := q8 != nil && rowSums != nil
	if q8 == nil {
		q8 = readArray[int8](fr, count*ix.dim)
	}
	fr.raw = false
	scale := readArray[float32](fr, count)
	if fr.err == nil && rowSums != nil && !lazy {
		for s := range count {
			if got := rowSum(q8[s*ix.dim : (s+1)*ix.dim]); got != uint64(rowSums[s]) {
				fr.fail("int8 copy %d: checksum %#x, stored %#08x", s, got, rowSums[s])
				break
			}
		}
	}
	if fr.err != nil {
		if unmap != nil {
			unmap()
		}
		return
	}
	src := make([]uint32, count)
	for i := range src {
		src[i] = uint32(i)
	}
	ix.sp = &spill{n: count, dim: ix.dim, q8: q8, scale: scale, src: src, r: at, base: base, sums: sums, mapped: unmap != nil}
	if lazy {
		ix.sp.rowSums = rowSums
		ix.sp.checked = make([]atomic.Uint32, (count+31)/32)
	}
	if unmap != nil {
		// The mapping lives as long as the spill: only the spill's own
		// slices point into it, and no search can hold them past it.
		runtime.AddCleanup(ix.sp, func(unmap func() error) { _ = unmap() }, unmap)
	}
	ix.nsp = uint32(count)
}

// mapMin is the size from which the int8 copies are mapped from the file
// rather than read into memory.
var mapMin = 8 << 20

// mapInt8 returns the n int8 copies at fr's position as a copy-on-write
// mapping of the file at (when at is a file it can map, on a
// little-endian machine, and they take mapMin bytes or more), checked
// through fr's checksum and passed over, with the function that unmaps
// them; or nil, nil with fr untouched, for the caller to read them.
// Reading a file into fresh memory costs its pages' first touch: at a
// million 384-dimensional vectors, mapping their 384 MB took the first
// open of a store in a process from 2.2–2.4 s to 1.9 s, and its system
// CPU from 1.7 to 0.9 s (docs/benchmarks.md). A read error of the file
// under the checksum becomes fr's error, not a fault.
func mapInt8(fr *fileReader, at io.ReaderAt, off int64, n int) ([]int8, func() error) {
	f, ok := at.(*os.File)
	if !ok || !hostLittle || n < mapMin || n == 0 || fr.err != nil || fr.sr == nil {
		return nil, nil
	}
	b, unmap, err := mapFile(f, off+fr.pos, n)
	if err != nil {
		return nil, nil
	}
	if err := checkMapped(fr, b); err != nil {
		unmap()
		fr.err = err
		return nil, nil
	}
	fr.skip(int64(n))
	if fr.err != nil {
		unmap()
		return nil, nil
	}
	return unsafe.Slice((*int8)(unsafe.Pointer(unsafe.SliceData(b))), n), unmap
}

// checkMapped adds the mapped bytes b to fr's checksum. A page the file
// cannot give (a read error, or a file cut short since it was opened)
// faults: that becomes an error here instead of a crash.
func checkMapped(fr *fileReader, b []byte) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: reading the int8 copies: %v", ErrCorrupt, r)
		}
	}()
	if !fr.raw {
		fr.crc.Write(b)
	}
	return nil
}

// discard reads n bytes through the checksum and drops them.
func (fr *fileReader) discard(n int64) {
	var b [64 << 10]byte
	for n > 0 && fr.err == nil {
		m := min(n, int64(len(b)))
		fr.read(b[:m])
		n -= m
	}
}

// floatBytes appends the little-endian bytes of v to b.
func floatBytes(b []byte, v []float32) []byte {
	if hostLittle && len(v) > 0 {
		return append(b, unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 4*len(v))...)
	}
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return b
}

// writeVectors writes the vectors (outside the file's checksum), a
// CRC-32C of each, and their int8 copies and scales. The originals of a
// spill are read back from its file.
func (ix *Index) writeVectors(fw *fileWriter) error {
	n := len(ix.ids)
	sums := make([]uint32, n)
	var (
		v   []float32
		b   []byte
		err error
	)
	fw.raw = true
	for s := range uint32(n) {
		if s < ix.nsp {
			if v, err = ix.sp.original(v[:0], s); err != nil {
				return err
			}
		} else {
			v = ix.vec(s)
		}
		b = floatBytes(b[:0], v)
		sums[s] = crc32.Checksum(b, castagnoli)
		fw.write(b)
	}
	fw.raw = false
	writeArray(fw, sums)
	// The int8 copies, outside the file's checksum after one of each:
	// made twice for the vectors in memory (for their checksums, then to
	// write them) rather than held, a quarter of the vectors' size.
	rowSums := make([]uint32, n)
	scales := make([]float32, n)
	q := make([]int8, ix.dim)
	copyOf := func(s uint32) []int8 {
		if s < ix.nsp {
			return ix.sp.code(s)
		}
		quantize8(q, ix.vec(s))
		return q
	}
	for s := range uint32(n) {
		if s < ix.nsp {
			scales[s] = ix.sp.scale[s]
		} else {
			scales[s] = quantize8(q, ix.vec(s))
		}
		rowSums[s] = uint32(rowSum(copyOf(s)))
	}
	if err := ix.Damage(); err != nil {
		return err
	}
	writeArray(fw, rowSums)
	fw.raw = true
	for s := range uint32(n) {
		writeArray(fw, copyOf(s))
	}
	fw.raw = false
	writeArray(fw, scales)
	return nil
}
