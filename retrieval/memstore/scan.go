package memstore

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"github.com/adaptrag/adaptrag/retrieval"
)

// damage describes bytes of a log that are not an intact record in
// sequence, as scanLog found them.
type damage struct {
	off     int64  // where the damage starts
	reason  string // what is wrong there
	next    int64  // offset of the next intact record after it, -1 if none
	nextSeq uint64 // that record's sequence number
	// torn reports that the damage has the shape a crash during the last
	// write leaves (see tornAt), and nothing intact follows it.
	torn bool
}

// scanLog walks the records of a log of the given version from off (just
// after the header, or after the last record already applied) up to size,
// calling fn for each intact record that follows the previous one in
// sequence; seq is the sequence number of the record before off. It
// returns where the last intact record ends and its sequence number.
//
// It stops at the first bytes that are not such a record and describes
// them in a *damage, including whether an intact record follows further
// on (which tells a damaged middle from a torn tail). An error returned by
// fn, or a read error, ends the scan with that error.
func scanLog(ctx context.Context, r io.ReaderAt, version uint32, off, size int64, seq uint64,
	fn func(seq uint64, payload []byte, end int64) error) (end int64, last uint64, dmg *damage, err error) {
	var buf []byte
	for n := 0; ; n++ {
		if n&255 == 0 {
			if err := ctx.Err(); err != nil {
				return off, seq, nil, err
			}
		}
		rseq, payload, next, err := readRecordAt(r, version, off, size, buf)
		if err == io.EOF {
			return off, seq, nil, nil
		}
		var bad *errBadRecord
		if errors.As(err, &bad) {
			d := &damage{off: off, reason: bad.reason, next: -1}
			d.next, d.nextSeq = findRecord(r, version, off+1, size, seq, true)
			d.torn = d.next < 0 && tornAt(r, version, off, size)
			return off, seq, d, nil
		}
		if err != nil {
			return off, seq, nil, err
		}
		buf = payload[:0]
		if version == formatV1 {
			rseq = seq + 1
		} else if rseq != seq+1 {
			d := &damage{off: off, reason: fmt.Sprintf("record %d found where record %d belongs", rseq, seq+1), next: -1}
			if rseq > seq+1 {
				d.next, d.nextSeq = off, rseq
			} else {
				d.next, d.nextSeq = findRecord(r, version, off+1, size, seq, true)
			}
			return off, seq, d, nil
		}
		if err := fn(rseq, payload, next); err != nil {
			return off, seq, nil, err
		}
		off, seq = next, rseq
	}
}

// tornAt reports whether the bad bytes from off to the end of a log can
// be what a crash during the last write leaves. Records are written one at
// a time, each after the previous one was flushed, so a crash can only
// leave the file ending inside the last record as its header declares it
// (the write was cut short), or, after a power loss, a tail of zeros (space
// the file system allotted but never wrote). A bad record with more data
// after its declared end was written whole and damaged later.
func tornAt(r io.ReaderAt, version uint32, off, size int64) bool {
	hl := recordHeaderLen(version)
	if size-off < hl {
		return true
	}
	var h [4]byte
	if _, err := r.ReadAt(h[:], off); err != nil {
		return false
	}
	if n := int64(binary.LittleEndian.Uint32(h[:])); n > 0 && n <= maxRecord && off+hl+n >= size {
		return true
	}
	buf := make([]byte, min(size-off, 1<<16))
	for p := off; p < size; p += int64(len(buf)) {
		b := buf[:min(int64(len(buf)), size-p)]
		if _, err := r.ReadAt(b, p); err != nil && err != io.EOF {
			return false
		}
		for _, c := range b {
			if c != 0 {
				return false
			}
		}
	}
	return true
}

// findRecord looks for the first offset at or after from where an intact
// record starts whose sequence number is above after (format 2; any record
// for format 1) and whose payload decodes. bounded limits the sequence
// numbers considered to those that the bytes between could have held,
// which rules out nearly every false candidate cheaply. It returns -1 when
// there is none.
func findRecord(r io.ReaderAt, version uint32, from, size int64, after uint64, bounded bool) (int64, uint64) {
	hl := int64(recHeaderLen)
	if version == formatV1 {
		hl = recHeaderV1
	}
	window := min(1<<20, max(size-from, 1))
	buf := make([]byte, window+recHeaderLen)
	var payload []byte
	for base := from; base+hl <= size; base += window {
		n, err := r.ReadAt(buf[:min(int64(len(buf)), size-base)], base)
		if err != nil && err != io.EOF {
			return -1, 0
		}
		for i := 0; i < min(n, int(window)) && int64(i)+hl <= int64(n); i++ {
			p := base + int64(i)
			h := buf[i:]
			ln := int64(binary.LittleEndian.Uint32(h))
			if ln == 0 || ln > maxRecord || p+hl+ln > size {
				continue
			}
			var seq uint64
			if version != formatV1 {
				seq = binary.LittleEndian.Uint64(h[8:])
				if seq <= after {
					continue
				}
				if bounded && seq > after+2+uint64(p-from)/uint64(recHeaderLen+1) {
					continue
				}
			}
			s, pl, _, err := readRecordAt(r, version, p, size, payload)
			if err != nil {
				continue
			}
			payload = pl[:0]
			if _, err := decodeOp(pl); err != nil {
				continue
			}
			if version == formatV1 {
				s = after + 1
			}
			return p, s
		}
	}
	return -1, 0
}

// ---- snapshot ----

// snapDamage is a damaged range of a snapshot.
type snapDamage struct {
	off, n int64
	reason string
}

func (d *snapDamage) Error() string { return d.reason }

// readSnapshot streams the chunks of a snapshot whose header is h to fn,
// in batches, verifying every checksum. The first damage is returned as a
// *snapDamage; fn may have seen chunks before it, so a caller that fails
// on damage must discard what it built. Each chunk is decoded into memory
// of its own, which fn may keep.
func readSnapshot(ctx context.Context, r io.ReaderAt, size int64, h snapHeader, fn func([]retrieval.Chunk) error) error {
	_, err := streamSnapshot(ctx, r, size, h, nil, fn)
	return err
}

// loadSnapshot is readSnapshot for a load, which decodes through ld (see
// loadDecoder: the vectors of a batch share memory that the next batch
// reuses) and checks the frames' checksums lazily: the checksum of the
// whole file covers every byte of them, so the frames are checked only
// when something fails, to report the damage readSnapshot reports. That
// saves a second pass over every byte; the price is that fn may also see
// chunks of a damaged frame before the damage is reported, which a caller
// that discards what it built on damage does not mind.
func loadSnapshot(ctx context.Context, r io.ReaderAt, size int64, h snapHeader, ld *loadDecoder, fn func([]retrieval.Chunk) error) error {
	upto, err := streamSnapshot(ctx, r, size, h, ld, fn)
	var sd *snapDamage
	if ld != nil && h.version != formatV1 && errors.As(err, &sd) {
		if d := firstBadFrame(r, size, h, upto); d != nil {
			return d
		}
	}
	return err
}

// firstBadFrame returns the damage of the first of the first upto frames
// of a format-2 snapshot that fails its checksum, if one does before a
// frame cannot be read.
func firstBadFrame(r io.ReaderAt, size int64, h snapHeader, upto uint64) *snapDamage {
	off := h.len
	var buf []byte
	for i := uint64(0); i < upto; i++ {
		var fh [frameLen]byte
		if _, err := r.ReadAt(fh[:], off); err != nil {
			return nil
		}
		n := int64(binary.LittleEndian.Uint32(fh[:]))
		if n == 0 || n > maxRecord || n > size-off-frameLen {
			return nil
		}
		if int64(cap(buf)) < n {
			buf = make([]byte, n)
		}
		p := buf[:n]
		if _, err := r.ReadAt(p, off+frameLen); err != nil {
			return nil
		}
		if crc(p) != binary.LittleEndian.Uint32(fh[4:]) {
			return &snapDamage{off, frameLen + n, fmt.Sprintf("chunk %d of %d fails its checksum", i+1, h.count)}
		}
		off += frameLen + n
	}
	return nil
}

// snapBatch is a batch of chunks decoded from a snapshot.
type snapBatch struct {
	chunks []retrieval.Chunk
	slab   []float32 // the batch's vectors (loadDecoder.slab)
	end    uint64    // how many frames were read once it was full
}

// batchLen is the number of chunks in a batch handed to fn.
const batchLen = 1024

// streamSnapshot is readSnapshot, through ld when not nil, which also
// leaves the frames' checksums unchecked (loadSnapshot). It returns how
// many frames it read before it stopped. A load's decoding runs on a
// goroutine of its own, a batch ahead of fn: decoding and applying take
// about as long, and the indexes read beside it finish first.
func streamSnapshot(ctx context.Context, r io.ReaderAt, size int64, h snapHeader, ld *loadDecoder, fn func([]retrieval.Chunk) error) (uint64, error) {
	if ld == nil || h.version == formatV1 {
		b := &snapBatch{}
		next := func(prev *snapBatch) *snapBatch {
			if prev != nil {
				clear(prev.chunks)
				prev.chunks = prev.chunks[:0]
			}
			return b
		}
		return scanSnapshot(r, nil, size, h, ld, next, func(b *snapBatch) error {
			if err := fn(b.chunks); err != nil {
				return err
			}
			return ctx.Err()
		})
	}
	const buffers = 3 // one being decoded, one waiting, one being applied
	out := make(chan *snapBatch, 1)
	free := make(chan *snapBatch, buffers)
	for range buffers {
		free <- &snapBatch{}
	}
	stop := make(chan struct{})
	var perr error
	var pend uint64
	go func() {
		defer close(out)
		// The snapshot is read through a mapping when the platform has
		// one: the frames are parsed where the page cache holds them.
		// Snapshots are replaced by renaming, never changed in place, but
		// one cut short by another hand under the mapping would fault on
		// the pages past its end: that fault is this goroutine's panic,
		// turned into an error.
		var mapped []byte
		if f, ok := r.(*os.File); ok {
			if b, unmap, err := mapFile(f, size); err == nil {
				mapped = b
				defer unmap()
			}
		}
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer func() {
			if p := recover(); p != nil {
				if e, ok := p.(interface{ Addr() uintptr }); ok && mapped != nil {
					perr = fmt.Errorf("reading %s through its mapping faulted at %#x: was the file cut short?", snapName, e.Addr())
					return
				}
				panic(p)
			}
		}()
		next := func(*snapBatch) *snapBatch {
			select {
			case b := <-free:
				return b
			case <-stop:
				return nil
			}
		}
		pend, perr = scanSnapshot(r, mapped, size, h, ld, next, func(b *snapBatch) error {
			select {
			case out <- b:
				return nil
			case <-stop:
				return errStopped
			}
		})
	}()
	fail := func(end uint64, err error) (uint64, error) {
		close(stop)
		for range out {
		}
		return end, err
	}
	for b := range out {
		if err := fn(b.chunks); err != nil {
			return fail(b.end, err)
		}
		if err := ctx.Err(); err != nil {
			return fail(b.end, err)
		}
		clear(b.chunks)
		b.chunks, b.slab = b.chunks[:0], b.slab[:0]
		free <- b
	}
	return pend, perr
}

// errStopped ends a snapshot's decoding whose batches are no longer
// wanted.
var errStopped = errors.New("stopped")

// scanSnapshot decodes the chunks of a snapshot into batches, which next
// gives (the batch just handed on, nil at first; nil back means stop)
// and emit hands on; it checks every checksum, but not the frames' when
// ld is set. It returns how many frames it read before it stopped.
//
// mapped, when not nil, is the file's contents, which the frames are read
// from instead of r.
func scanSnapshot(r io.ReaderAt, mapped []byte, size int64, h snapHeader, ld *loadDecoder, next func(*snapBatch) *snapBatch, emit func(*snapBatch) error) (uint64, error) {
	var (
		cr *crcReader   // format 1: a stream the chunks are decoded from
		br *blockReader // format 2: frames read as views of its buffer
		rd *reader      // format 1's decoder
	)
	if h.version == formatV1 {
		cr = &crcReader{br: bufio.NewReaderSize(io.NewSectionReader(r, 0, size), int(min(1<<20, size)))}
		if _, err := io.ReadFull(cr, make([]byte, h.len)); err != nil {
			return 0, &snapDamage{0, size, "header: " + err.Error()}
		}
		rd = newReader(cr)
		rd.ld = ld
	} else {
		br = &blockReader{r: r, size: size}
		if mapped != nil {
			br.buf, br.hi, br.pos, br.mapped = mapped, len(mapped), size, true
		} else {
			br.buf = make([]byte, min(4<<20, size))
		}
		if _, err := br.next(int(h.len)); err != nil {
			return 0, &snapDamage{0, size, "header: " + err.Error()}
		}
	}
	off := h.len
	b := next(nil)
	if b == nil {
		return 0, errStopped
	}
	start := func(b *snapBatch) {
		if b.chunks == nil {
			b.chunks = make([]retrieval.Chunk, 0, batchLen)
		}
		if ld != nil {
			ld.slab = b.slab[:0]
		}
	}
	start(b)
	flush := func(end uint64) error {
		if len(b.chunks) == 0 {
			return nil
		}
		if ld != nil {
			b.slab = ld.slab
		}
		b.end = end
		if err := emit(b); err != nil {
			return err
		}
		if b = next(b); b == nil {
			return errStopped
		}
		start(b)
		return nil
	}
	for i := uint64(0); i < h.count; i++ {
		var c retrieval.Chunk
		if rd != nil {
			c = rd.chunk()
			if rd.err != nil {
				return i + 1, &snapDamage{off, size - off, fmt.Sprintf("chunk %d of %d: %v", i+1, h.count, rd.err)}
			}
		} else {
			fh, err := br.next(frameLen)
			if err != nil {
				return i + 1, &snapDamage{off, size - off, fmt.Sprintf("chunk %d of %d cut short", i+1, h.count)}
			}
			n := int64(binary.LittleEndian.Uint32(fh))
			sum := binary.LittleEndian.Uint32(fh[4:])
			if n == 0 || n > maxRecord || n > size-off-frameLen {
				return i + 1, &snapDamage{off, size - off, fmt.Sprintf("chunk %d of %d has an impossible length %d", i+1, h.count, n)}
			}
			// A view of the block, valid until the next read: the decoder
			// copies what it keeps.
			payload, err := br.next(int(n))
			if err != nil {
				return i + 1, &snapDamage{off, size - off, fmt.Sprintf("chunk %d of %d cut short", i+1, h.count)}
			}
			if ld == nil && crc(payload) != sum {
				return i + 1, &snapDamage{off, frameLen + n, fmt.Sprintf("chunk %d of %d fails its checksum", i+1, h.count)}
			}
			if c, err = decodeChunkInto(payload, ld); err != nil {
				return i + 1, &snapDamage{off, frameLen + n, fmt.Sprintf("chunk %d of %d: %v", i+1, h.count, err)}
			}
			off += frameLen + n
		}
		b.chunks = append(b.chunks, c)
		if len(b.chunks) == batchLen {
			if err := flush(i + 1); err != nil {
				return i + 1, err
			}
		}
	}
	if err := flush(h.count); err != nil {
		return h.count, err
	}
	var sum uint32
	var tail []byte
	var err error
	if rd != nil {
		off = size - 4 // format 1 has no frames: only the total is checked
		sum = cr.crc
		tail = make([]byte, 4)
		_, err = io.ReadFull(cr.br, tail)
	} else {
		sum = br.crc
		tail, err = br.next(4)
	}
	if err != nil {
		return h.count, &snapDamage{off, size - off, "the closing checksum is missing"}
	}
	if binary.LittleEndian.Uint32(tail) != sum {
		return h.count, &snapDamage{off, 4, "checksum of the whole file mismatch"}
	}
	stray := false
	if rd != nil {
		_, err := cr.br.ReadByte()
		stray = err != io.EOF
	} else {
		stray = br.consumed() != size
	}
	if stray {
		return h.count, &snapDamage{off + 4, size - off - 4, "stray bytes after the closing checksum"}
	}
	return h.count, nil
}

// blockReader reads a file of size bytes in large blocks and hands out
// views of them, feeding every byte it hands out through a CRC: a frame
// is parsed where it was read, without a copy into a buffer of its own.
type blockReader struct {
	r      io.ReaderAt
	size   int64
	buf    []byte
	lo, hi int    // buf[lo:hi] is read and not yet handed out
	pos    int64  // the file offset of buf[hi]
	crc    uint32 // of every byte handed out
	// mapped: buf is a mapping of the whole file (mapFile), read in
	// place; buf[:released] was handed out and dropped from memory.
	mapped   bool
	released int
}

// releaseEvery is how much of a mapped file is read between releases of
// the pages behind.
const releaseEvery = 16 << 20

// next returns the next n bytes, which stay valid until the next call;
// io.ErrUnexpectedEOF when fewer are left.
func (b *blockReader) next(n int) ([]byte, error) {
	if b.hi-b.lo < n {
		if int64(n-(b.hi-b.lo)) > b.size-b.pos {
			return nil, io.ErrUnexpectedEOF
		}
		b.hi = copy(b.buf, b.buf[b.lo:b.hi])
		b.lo = 0
		if n > len(b.buf) {
			b.buf = append(b.buf[:b.hi], make([]byte, n-b.hi)...)
		}
		for b.hi < n {
			want := int(min(int64(len(b.buf)-b.hi), b.size-b.pos))
			m, err := b.r.ReadAt(b.buf[b.hi:b.hi+want], b.pos)
			b.hi += m
			b.pos += int64(m)
			if b.hi < n && err != nil {
				if err == io.EOF {
					err = io.ErrUnexpectedEOF
				}
				return nil, err
			}
		}
	}
	if b.mapped && b.lo-b.released >= releaseEvery {
		// Every view handed out before this one is dead (the decoder
		// copies what it keeps): its pages may go.
		end := b.lo &^ (os.Getpagesize() - 1)
		releaseMapped(b.buf[b.released:end])
		b.released = end
	}
	p := b.buf[b.lo : b.lo+n : b.lo+n]
	b.lo += n
	b.crc = crc32Update(b.crc, p)
	return p, nil
}

// consumed returns the file offset of the next byte next would hand out.
func (b *blockReader) consumed() int64 { return b.pos - int64(b.hi-b.lo) }

// salvageSnapshot reads every intact chunk frame of a format-2 snapshot,
// skipping damaged ranges by looking for the next intact frame. It reports
// the ranges it could not read. Without a readable header it scans from
// the start.
func salvageSnapshot(ctx context.Context, r io.ReaderAt, size int64, h *snapHeader, fn func(retrieval.Chunk)) (found uint64, lost []snapDamage, err error) {
	end := size - 4 // the closing checksum
	var buf []byte
	off := int64(0)
	if h != nil {
		off = h.len
	} else {
		// The header is unreadable: start at the first intact frame,
		// counting as lost only what lies past where the header ends.
		if off = findFrame(r, 0, end); off < 0 {
			off = end
		}
		if off > snapHeaderLen {
			lost = append(lost, snapDamage{snapHeaderLen, off - snapHeaderLen, "damaged chunk data"})
		}
	}
	for off < end {
		if err := ctx.Err(); err != nil {
			return found, lost, err
		}
		c, next, ok := readFrameAt(r, off, end, &buf)
		if ok {
			fn(c)
			found++
			off = next
			continue
		}
		at := findFrame(r, off+1, end)
		if at < 0 {
			lost = append(lost, snapDamage{off, size - off, "no intact chunk after this point"})
			return found, lost, nil
		}
		lost = append(lost, snapDamage{off, at - off, "damaged chunk data"})
		off = at
	}
	if off > end { // the last frame ran into the closing checksum
		lost = append(lost, snapDamage{end, size - end, "the closing checksum is missing"})
	}
	return found, lost, nil
}

// readFrameAt reads the snapshot chunk frame at off, before limit.
func readFrameAt(r io.ReaderAt, off, limit int64, buf *[]byte) (retrieval.Chunk, int64, bool) {
	var fh [frameLen]byte
	if limit-off < frameLen {
		return retrieval.Chunk{}, 0, false
	}
	if _, err := r.ReadAt(fh[:], off); err != nil {
		return retrieval.Chunk{}, 0, false
	}
	n := int64(binary.LittleEndian.Uint32(fh[:]))
	if n == 0 || n > maxRecord || n > limit-off-frameLen {
		return retrieval.Chunk{}, 0, false
	}
	if int64(cap(*buf)) < n {
		*buf = make([]byte, n)
	}
	p := (*buf)[:n]
	if _, err := r.ReadAt(p, off+frameLen); err != nil || crc(p) != binary.LittleEndian.Uint32(fh[4:]) {
		return retrieval.Chunk{}, 0, false
	}
	c, err := decodeChunk(p)
	if err != nil {
		return retrieval.Chunk{}, 0, false
	}
	return c, off + frameLen + n, true
}

// findFrame returns the first offset in [from, limit) where an intact
// frame starts, or -1.
func findFrame(r io.ReaderAt, from, limit int64) int64 {
	window := min(1<<20, max(limit-from, 1))
	win := make([]byte, window+frameLen)
	var buf []byte
	for base := from; base+frameLen < limit; base += window {
		n, err := r.ReadAt(win[:min(int64(len(win)), limit-base)], base)
		if err != nil && err != io.EOF {
			return -1
		}
		for i := 0; i < min(n, int(window)) && i+frameLen <= n; i++ {
			p := base + int64(i)
			ln := int64(binary.LittleEndian.Uint32(win[i:]))
			if ln == 0 || ln > limit-p-frameLen {
				continue
			}
			if _, _, ok := readFrameAt(r, p, limit, &buf); ok {
				return p
			}
		}
	}
	return -1
}

// decodeChunk decodes one chunk that must fill b exactly.
func decodeChunk(b []byte) (retrieval.Chunk, error) { return decodeChunkInto(b, nil) }

// decodeChunkInto is decodeChunk as a load decodes, with ld when not nil.
func decodeChunkInto(b []byte, ld *loadDecoder) (retrieval.Chunk, error) {
	var src *byteSlice
	var r *reader
	if ld != nil {
		// A load reuses its source and reader: two allocations a chunk.
		ld.src.b = b
		src = &ld.src
		ld.rd = reader{r: src, br: src, mem: src, ld: ld}
		r = &ld.rd
	} else {
		src = &byteSlice{b}
		r = newReader(src)
	}
	c := r.chunk()
	if r.err != nil {
		return c, r.err
	}
	if len(src.b) != 0 {
		return c, fmt.Errorf("%d stray bytes after the chunk", len(src.b))
	}
	return c, nil
}

// crcReader feeds what it reads through a CRC, so that a streamed snapshot
// is checked without holding it in memory.
type crcReader struct {
	br  *bufio.Reader
	crc uint32
}

func (r *crcReader) Read(p []byte) (int, error) {
	n, err := r.br.Read(p)
	r.crc = crc32Update(r.crc, p[:n])
	return n, err
}

func (r *crcReader) ReadByte() (byte, error) {
	c, err := r.br.ReadByte()
	if err == nil {
		r.crc = crc32Update(r.crc, []byte{c})
	}
	return c, err
}
