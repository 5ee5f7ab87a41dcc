package bm25

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"math"
	"runtime"
	"sync"
	"unsafe"

	"github.com/adaptrag/adaptrag/internal/hugemem"
	"github.com/adaptrag/adaptrag/internal/slots"
)

// ErrCorrupt reports an index file that ReadIndex cannot trust: a wrong
// magic or version, a failed checksum, a truncation or inconsistent
// contents.
var ErrCorrupt = errors.New("bm25: corrupt index file")

// ErrParams reports an intact index file written with other parameters
// (k1, b, the repeated-term rule or an analyzer that tokenises
// differently) than the ones ReadIndex was given: its postings would rank
// otherwise than an index built with them, so it must be rebuilt.
var ErrParams = errors.New("bm25: index file written with other parameters")

// File format (little endian): the 8-byte magic and version, a header of
// fixed-size fields and its CRC-32C (checked before anything is allocated
// from its counts), then the index's arrays as it holds them, so that
// reading is reading arrays and checking them: per slot its id, length and
// live byte; the dictionary as the end offset of each term in one byte
// string, then that string; the end offset of each term's postings, the
// postings' slots and their one-byte term frequencies; the frequencies
// too large for a byte as (term, slot, tf) triples in term and slot
// order; the end offset of each term's frontier and its points' tf and
// dl; the end offset of each slot's forward list, then those lists; then
// the CRC-32C of every byte before it. Document frequencies and totals are
// derived on reading, in the pass that checks the postings. Each uint32
// array starts a multiple of 4 bytes from the magic: zero bytes pad the
// byte arrays before one (the live bytes, the dictionary string, the
// frequencies), so that a file read in place (ReadIndexInPlace) at an
// aligned address holds its arrays aligned.
//
// Version 2 had no padding, version 1 stored frequencies wider and no
// forward lists; such files are refused (ErrCorrupt) and their owner
// rebuilds the index.
const (
	fileMagic   = "ADRGBM25"
	fileVersion = 3
	headerLen   = 8 + 8 + 4 + 4 + 4 + 4 + 8 + 8 + 8 + 8 + 8
	// maxCount bounds every count of the header: arrays are indexed by
	// uint32, and a damaged header that passes its checksum by chance
	// still cannot ask for an absurd allocation.
	maxCount = math.MaxUint32
)

const flagDistinct = 1

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// hostLittle is true when the machine stores numbers little endian, as the
// file does: then uint32 arrays are read and written in place.
var hostLittle = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()

// probeText exercises what analyzers differ in (case, accents, width,
// stop words, plurals, numbers, punctuation, CJK), so that an index read
// with an analyzer that tokenises it differently is refused.
const probeText = "The QUICK brown Foxes didn't jump: Über naïve café, 42 3.14 e-mail x_y " +
	"ＡＢＣ ａｂｃ 東京都庁 données running runs ran ΑΘΗΝΑ Москва"

// analyzerPrint is the CRC-32C of the tokens the index's analyzer gives
// probeText.
func (ix *Index) analyzerPrint() uint32 {
	c := crc32.New(castagnoli)
	for _, t := range ix.an.Tokens(probeText) {
		c.Write([]byte(t))
		c.Write([]byte{0})
	}
	return c.Sum32()
}

type fileWriter struct {
	w   *bufio.Writer
	crc hash.Hash32
	n   int64
	err error
	buf []byte
}

func (fw *fileWriter) write(p []byte) {
	if fw.err != nil {
		return
	}
	fw.crc.Write(p)
	m, err := fw.w.Write(p)
	fw.n += int64(m)
	fw.err = err
}

// u32s writes a as little-endian uint32s in pieces through one buffer.
func (fw *fileWriter) u32s(a []uint32) {
	if hostLittle && len(a) > 0 {
		fw.write(unsafe.Slice((*byte)(unsafe.Pointer(&a[0])), 4*len(a)))
		return
	}
	for i := 0; i < len(a); i += 1 << 14 {
		b := fw.buf[:0]
		for _, x := range a[i:min(i+1<<14, len(a))] {
			b = binary.LittleEndian.AppendUint32(b, x)
		}
		fw.write(b)
		fw.buf = b
	}
}

// align writes the zero bytes that bring the file to a multiple of 4
// bytes, before a uint32 array.
func (fw *fileWriter) align() {
	if k := fw.n % 4; k != 0 {
		fw.write(make([]byte, 4-k))
	}
}

func (fw *fileWriter) sum() {
	fw.write(binary.LittleEndian.AppendUint32(nil, fw.crc.Sum32()))
}

// WriteTo writes the index to w in a versioned, checksummed binary form
// that ReadIndex reads back without analysing any text. It returns the
// bytes written. Like Search, it may run concurrently with other reads but
// not with Add or Remove. The ids are written as they are; a caller whose
// ids change from one process to the next renames them after reading
// (Remap).
func (ix *Index) WriteTo(w io.Writer) (int64, error) {
	defer runtime.KeepAlive(ix)
	// An index read from a file that failed its checks is not written
	// again as if it were sound.
	if err := ix.Check(context.Background()); err != nil {
		return 0, err
	}
	var nPost, nFront, nBig uint64
	for t := range ix.terms {
		p := &ix.terms[t]
		nPost += uint64(len(p.slots))
		nFront += uint64(len(p.front))
		nBig += uint64(len(p.big))
	}
	var dictBytes uint64
	ends := make([]uint32, len(ix.terms))
	words := make([]string, len(ix.terms))
	for tok, t := range ix.dict {
		words[t] = tok
	}
	for t, tok := range words {
		dictBytes += uint64(len(tok))
		ends[t] = uint32(dictBytes)
	}
	if nPost > maxCount || dictBytes > maxCount || uint64(len(ix.ids)) > maxCount || 3*nBig > maxCount || 2*nFront > maxCount {
		return 0, fmt.Errorf("bm25: write index: too large (%d postings, %d bytes of terms)", nPost, dictBytes)
	}
	fw := &fileWriter{w: bufio.NewWriterSize(w, 1<<20), crc: crc32.New(castagnoli), buf: make([]byte, 0, 4<<14)}
	h := make([]byte, 0, len(fileMagic)+4+headerLen)
	h = append(h, fileMagic...)
	h = binary.LittleEndian.AppendUint32(h, fileVersion)
	h = binary.LittleEndian.AppendUint64(h, math.Float64bits(ix.k1))
	h = binary.LittleEndian.AppendUint64(h, math.Float64bits(ix.b))
	flags := uint32(0)
	if ix.distinct {
		flags |= flagDistinct
	}
	h = binary.LittleEndian.AppendUint32(h, flags)
	h = binary.LittleEndian.AppendUint32(h, ix.analyzerPrint())
	h = binary.LittleEndian.AppendUint32(h, uint32(len(ix.ids)))
	h = binary.LittleEndian.AppendUint32(h, uint32(len(ix.terms)))
	h = binary.LittleEndian.AppendUint64(h, dictBytes)
	h = binary.LittleEndian.AppendUint64(h, nPost)
	h = binary.LittleEndian.AppendUint64(h, nFront)
	h = binary.LittleEndian.AppendUint64(h, nBig)
	h = binary.LittleEndian.AppendUint64(h, uint64(ix.fwd.Len()))
	fw.write(h)
	fw.sum()

	fw.u32s(ix.ids)
	fw.u32s(ix.lens)
	live := make([]byte, len(ix.live))
	for s, ok := range ix.live {
		if ok {
			live[s] = 1
		}
	}
	fw.write(live)
	fw.align()
	fw.u32s(ends)
	for _, tok := range words {
		fw.write([]byte(tok))
	}
	fw.align()
	off := make([]uint32, len(ix.terms))
	n := uint32(0)
	for t := range ix.terms {
		n += uint32(len(ix.terms[t].slots))
		off[t] = n
	}
	fw.u32s(off)
	for t := range ix.terms {
		fw.u32s(ix.terms[t].slots)
	}
	for t := range ix.terms {
		fw.write(ix.terms[t].tfs)
	}
	fw.align()
	big := make([]uint32, 0, 3*nBig)
	for t := range ix.terms {
		for _, e := range ix.terms[t].big {
			big = append(big, uint32(t), e.slot, e.tf)
		}
	}
	fw.u32s(big)
	n = 0
	for t := range ix.terms {
		n += uint32(len(ix.terms[t].front))
		off[t] = n
	}
	fw.u32s(off)
	pts := make([]uint32, 0, 2*nFront)
	for t := range ix.terms {
		for _, p := range ix.terms[t].front {
			pts = append(pts, p.tf)
		}
	}
	for t := range ix.terms {
		for _, p := range ix.terms[t].front {
			pts = append(pts, p.dl)
		}
	}
	fw.u32s(pts)
	fw.u32s(ix.fwdOff[1:])
	for _, pg := range ix.fwd.pages {
		fw.write(pg)
	}
	fw.sum()
	if fw.err == nil {
		fw.err = fw.w.Flush()
	}
	if fw.err != nil {
		return fw.n, fmt.Errorf("bm25: write index: %w", fw.err)
	}
	return fw.n, nil
}

// fileReader reads what fileWriter wrote, through the same checksum. Its
// first error sticks; every later read is a no-op.
type fileReader struct {
	readState
	r   *bufio.Reader
	crc hash.Hash32
	n   int64 // bytes read
}

// readState is what both readers of a file (fileReader, viewReader) keep
// of its errors.
type readState struct{ err error }

func (rs *readState) failed() error { return rs.err }

func (rs *readState) fail(format string, args ...any) {
	if rs.err == nil {
		rs.err = fmt.Errorf("%w: "+format, append([]any{ErrCorrupt}, args...)...)
	}
}

// ends checks that a holds non-decreasing end offsets finishing at total.
func (rs *readState) ends(a []uint32, total uint64, what string) {
	if rs.err != nil {
		return
	}
	prev := uint32(0)
	for _, e := range a {
		if e < prev {
			rs.fail("%s offsets decrease", what)
			return
		}
		prev = e
	}
	if uint64(prev) != total {
		rs.fail("%s offsets end at %d, want %d", what, prev, total)
	}
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
	fr.n += int64(len(p))
	fr.crc.Write(p)
}

// align passes the zero padding before a uint32 array.
func (fr *fileReader) align() {
	if k := fr.n % 4; k != 0 && fr.err == nil {
		var pad [4]byte
		fr.read(pad[:4-k])
		if pad != [4]byte{} {
			fr.fail("padding at byte %d is not zero", fr.n-(4-k))
		}
	}
}

// checksum reads a stored CRC-32C and compares it with the one of every
// byte read so far.
func (fr *fileReader) checksum(what string) {
	sum := fr.crc.Sum32()
	var b [4]byte
	fr.read(b[:])
	if fr.err != nil {
		return
	}
	if got := binary.LittleEndian.Uint32(b[:]); got != sum {
		fr.fail("%s checksum %#08x, computed %#08x", what, got, sum)
	}
}

// u32s reads n little-endian uint32s into a new slice.
func (fr *fileReader) u32s(n int) []uint32 {
	if fr.err != nil || n == 0 {
		return nil
	}
	out := hugemem.Make[uint32](n)
	if hostLittle {
		fr.read(unsafe.Slice((*byte)(unsafe.Pointer(&out[0])), 4*n))
	} else {
		const piece = 1 << 16
		b := make([]byte, 4*piece)
		for i := 0; i < n && fr.err == nil; i += piece {
			part := out[i:min(i+piece, n)]
			fr.read(b[:4*len(part)])
			for j := range part {
				part[j] = binary.LittleEndian.Uint32(b[4*j:])
			}
		}
	}
	if fr.err != nil {
		return nil
	}
	return out
}

// bytes reads n bytes into a new slice.
func (fr *fileReader) bytes(n int) []byte {
	if fr.err != nil || n == 0 {
		return nil
	}
	out := hugemem.Make[byte](n)
	fr.read(out)
	if fr.err != nil {
		return nil
	}
	return out
}

// ReadIndex reads an index written by WriteTo, with the analyzer of p
// for the queries and the documents added later. A file that cannot be
// trusted is ErrCorrupt, one written with other parameters than p ErrParams
// (the analyzer is compared by the tokens it gives a probe text, so an
// analyzer changed only where the probe cannot see must not read files of
// the old one); other read errors are returned wrapped.
func ReadIndex(r io.Reader, p Params) (*Index, error) { return readIndex(r, p, false) }

// ReadIndexDeferred is ReadIndex leaving the checks that searches and
// Adds do not depend on for Check: the postings' frequencies and the
// forward lists, which Remove reads and which must hold what the
// postings hold (about a third of reading a large index). Searches are
// safe before it: every posting was checked to name a slot of the index,
// in order. An index whose Check fails ranks with frequencies that may
// be wrong and removes documents without updating the document
// frequencies; its owner rebuilds it.
func ReadIndexDeferred(r io.Reader, p Params) (*Index, error) { return readIndex(r, p, true) }

func readIndex(r io.Reader, p Params, deferred bool) (*Index, error) {
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReaderSize(r, 1<<20)
	}
	ix, err := decode(&fileReader{r: br, crc: crc32.New(castagnoli)}, p, deferred)
	if err != nil {
		return nil, fmt.Errorf("bm25: read index: %w", err)
	}
	return ix, nil
}

// ReadIndexInPlace is ReadIndexDeferred over b, a whole index file held
// in memory (a mapped file, say), whose arrays the index uses where they
// lie instead of copying them: opening a large index then touches only
// what its first checks read, and no memory of its own for the rest. The
// checksum of the file's body is left to Check as well.
//
// b is the index's until release is called: nothing else may change it,
// and the index writes into it as into arrays it owns (a private,
// writable mapping takes those writes in copies of its pages). The index
// calls release, from the runtime's cleanup goroutine, once it is
// unreachable; a nil release is never called. When ReadIndexInPlace
// fails, b is the caller's again and release is not called.
func ReadIndexInPlace(b []byte, p Params, release func()) (*Index, error) {
	vr := &viewReader{b: b}
	ix, err := decode(vr, p, true)
	if err == nil && vr.pos != len(b) {
		err = fmt.Errorf("%w: %d bytes after the index", ErrCorrupt, len(b)-vr.pos)
	}
	if err != nil {
		return nil, fmt.Errorf("bm25: read index: %w", err)
	}
	// Every id is renamed by an owner that numbers its records afresh
	// (Remap): a copy of its own, rather than a write into every page.
	ids := hugemem.Make[uint32](len(ix.ids))
	copy(ids, ix.ids)
	ix.ids = ids
	ix.pending.sums = vr.sums
	if release != nil {
		// Every method that reads the arrays keeps ix alive to its end
		// (runtime.KeepAlive), so release never runs under one.
		runtime.AddCleanup(ix, func(f func()) { f() }, release)
	}
	return ix, nil
}

// arrayReader is where decode takes the parts of an index file from, in
// order: a stream it copies them out of (fileReader) or the bytes of a
// whole file it views them in (viewReader).
type arrayReader interface {
	read(p []byte) // the next len(p) bytes, into p
	u32s(n int) []uint32
	bytes(n int) []byte
	align()               // passes the padding before a uint32 array
	checksum(what string) // checks, or leaves to Check, the stored CRC-32C next
	ends(a []uint32, total uint64, what string)
	fail(format string, args ...any)
	failed() error
}

// decode reads an index file from ar (see the file format).
func decode(ar arrayReader, p Params, deferred bool) (*Index, error) {
	ix := New(p)
	h := make([]byte, len(fileMagic)+4+headerLen)
	ar.read(h)
	ar.checksum("header")
	if err := ar.failed(); err != nil {
		return nil, err
	}
	if string(h[:len(fileMagic)]) != fileMagic {
		return nil, fmt.Errorf("%w: bad magic", ErrCorrupt)
	}
	h = h[len(fileMagic):]
	if v := binary.LittleEndian.Uint32(h); v != fileVersion {
		return nil, fmt.Errorf("%w: version %d, want %d", ErrCorrupt, v, fileVersion)
	}
	h = h[4:]
	k1, b := math.Float64frombits(binary.LittleEndian.Uint64(h)), math.Float64frombits(binary.LittleEndian.Uint64(h[8:]))
	flags, fp := binary.LittleEndian.Uint32(h[16:]), binary.LittleEndian.Uint32(h[20:])
	nSlots, nTerms := uint64(binary.LittleEndian.Uint32(h[24:])), uint64(binary.LittleEndian.Uint32(h[28:]))
	dictBytes, nPost, nFront := binary.LittleEndian.Uint64(h[32:]), binary.LittleEndian.Uint64(h[40:]), binary.LittleEndian.Uint64(h[48:])
	nBig, fwdBytes := binary.LittleEndian.Uint64(h[56:]), binary.LittleEndian.Uint64(h[64:])
	if want := ix.analyzerPrint(); k1 != ix.k1 || b != ix.b || (flags&flagDistinct != 0) != ix.distinct || fp != want {
		return nil, fmt.Errorf("%w: k1 %g, b %g, flags %#x, analyzer %#08x; want %g, %g, distinct %v, %#08x",
			ErrParams, k1, b, flags, fp, ix.k1, ix.b, ix.distinct, want)
	}
	// Every term has a posting and a frontier point, and every frontier
	// point and large frequency is a posting's; a forward entry is one
	// posting's term, in one to five bytes: a header that says otherwise
	// is damaged.
	if dictBytes > maxCount || nPost > maxCount || nTerms > nPost || nFront > nPost || nFront < nTerms ||
		nBig > nPost || fwdBytes < 2*nPost || fwdBytes > 10*nPost || fwdBytes > maxCount || flags&^flagDistinct != 0 {
		return nil, fmt.Errorf("%w: header counts (%d slots, %d terms, %d bytes of terms, %d postings, %d frontier points, %d large frequencies, %d forward bytes)",
			ErrCorrupt, nSlots, nTerms, dictBytes, nPost, nFront, nBig, fwdBytes)
	}

	ids := ar.u32s(int(nSlots))
	lens := ar.u32s(int(nSlots))
	live := ar.bytes(int(nSlots))
	ar.align()
	termEnd := ar.u32s(int(nTerms))
	ar.ends(termEnd, dictBytes, "term")
	blob := ar.bytes(int(dictBytes))
	ar.align()
	postEnd := ar.u32s(int(nTerms))
	ar.ends(postEnd, nPost, "posting")
	slots := ar.u32s(int(nPost))
	tfs := ar.bytes(int(nPost))
	ar.align()
	big := ar.u32s(int(3 * nBig))
	frontEnd := ar.u32s(int(nTerms))
	ar.ends(frontEnd, nFront, "frontier")
	pts := ar.u32s(int(2 * nFront))
	fwdEnd := ar.u32s(int(nSlots))
	ar.ends(fwdEnd, fwdBytes, "forward list")
	fwd := ar.bytes(int(fwdBytes))
	ar.checksum("index")
	if err := ar.failed(); err != nil {
		return nil, err
	}
	arr := fileArrays{ids: ids, lens: lens, live: live, termEnd: termEnd, blob: unsafeString(blob), postEnd: postEnd,
		slots: slots, tfs: tfs, big: big, frontEnd: frontEnd, pts: pts, fwdEnd: fwdEnd, fwd: fwd}
	if err := ix.assemble(&arr, deferred); err != nil {
		return nil, err
	}
	return ix, nil
}

// viewReader reads an index file held whole in memory: its arrays are
// views of those bytes (copies only where a uint32 array is not aligned
// in memory, or the machine is big endian), and the checksum of the body
// is left to Check (sums).
type viewReader struct {
	readState
	b    []byte
	pos  int
	sums []sumSpan
}

// sumSpan is a stored checksum left to Check: want is the CRC-32C of b.
type sumSpan struct {
	b    []byte
	want uint32
	what string
}

// take returns the next n bytes, a view with no room to grow.
func (vr *viewReader) take(n int) []byte {
	if vr.err != nil {
		return nil
	}
	if n < 0 || n > len(vr.b)-vr.pos {
		vr.fail("truncated: %d bytes wanted at byte %d of %d", n, vr.pos, len(vr.b))
		return nil
	}
	p := vr.b[vr.pos : vr.pos+n : vr.pos+n]
	vr.pos += n
	return p
}

func (vr *viewReader) read(p []byte) { copy(p, vr.take(len(p))) }

func (vr *viewReader) bytes(n int) []byte {
	if n == 0 {
		return nil
	}
	return vr.take(n)
}

func (vr *viewReader) u32s(n int) []uint32 {
	if n == 0 || vr.err != nil {
		return nil
	}
	if uint64(n) > uint64(len(vr.b)-vr.pos)/4 {
		vr.fail("truncated: %d values wanted at byte %d of %d", n, vr.pos, len(vr.b))
		return nil
	}
	b := vr.take(4 * n)
	if b == nil {
		return nil
	}
	if hostLittle && uintptr(unsafe.Pointer(&b[0]))%4 == 0 {
		return unsafe.Slice((*uint32)(unsafe.Pointer(&b[0])), n)
	}
	out := hugemem.Make[uint32](n)
	for i := range out {
		out[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return out
}

func (vr *viewReader) align() {
	if k := vr.pos % 4; k != 0 {
		at := vr.pos
		if pad := vr.take(4 - k); pad != nil && string(pad) != "\x00\x00\x00"[:4-k] {
			vr.fail("padding at byte %d is not zero", at)
		}
	}
}

// checksum checks the header's stored checksum at once (it guards the
// counts everything is sized by) and leaves the body's to Check.
func (vr *viewReader) checksum(what string) {
	covered := vr.b[:vr.pos]
	stored := vr.take(4)
	if stored == nil {
		return
	}
	want := binary.LittleEndian.Uint32(stored)
	if what != "header" {
		vr.sums = append(vr.sums, sumSpan{covered, want, what})
		return
	}
	if got := crc32.Checksum(covered, castagnoli); got != want {
		vr.fail("%s checksum %#08x, computed %#08x", what, want, got)
	}
}

// checkSums checks the stored checksums a read in place left, a piece at
// a time between looks at ctx.
func checkSums(ctx context.Context, sums []sumSpan) error {
	const piece = 16 << 20
	for _, sp := range sums {
		crc := uint32(0)
		for lo := 0; lo < len(sp.b); lo += piece {
			if err := ctx.Err(); err != nil {
				return err
			}
			crc = crc32.Update(crc, castagnoli, sp.b[lo:min(lo+piece, len(sp.b))])
		}
		if crc != sp.want {
			return fmt.Errorf("%w: %s checksum %#08x, computed %#08x", ErrCorrupt, sp.what, sp.want, crc)
		}
	}
	return nil
}

// unsafeString views b, which nothing else references or changes, as a
// string: the dictionary's keys are substrings of it, one allocation for
// all of them.
func unsafeString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// fileArrays are the arrays of an index file, in its order.
type fileArrays struct {
	ids, lens      []uint32
	live           []byte
	termEnd        []uint32
	blob           string
	postEnd, slots []uint32
	tfs            []uint8
	big            []uint32 // (term, slot, tf) triples
	frontEnd, pts  []uint32
	fwdEnd         []uint32
	fwd            []byte
}

// assemble fills the empty ix from the arrays of a file whose checksum
// and offsets were verified, in place, checking at once what a search
// or an Add of a damaged or forged file could trip on: ids, live bytes,
// the dictionary, postings in slot order within range, score bounds that
// are frontiers, and the large frequencies' places. What only a Remove
// or the ranking's exactness depends on (the postings' frequencies and
// the forward lists, which must hold the same triples) is checked by
// checkArrays, at once unless deferred, when it is left for Check.
func (ix *Index) assemble(a *fileArrays, deferred bool) error {
	nSlots, nTerms := len(a.ids), len(a.termEnd)
	ix.ids, ix.lens = a.ids, a.lens
	ix.live = hugemem.Make[bool](nSlots)
	ix.slotOf.Grow(nSlots)
	for s, l := range a.live {
		switch l {
		case 0:
			continue
		case 1:
		default:
			return fmt.Errorf("%w: slot %d has live byte %d", ErrCorrupt, s, l)
		}
		ix.live[s] = true
		ix.nLive++
		ix.sumLive += uint64(a.lens[s])
		id := a.ids[s]
		if _, dup := ix.slotOf.Get(id); dup {
			return fmt.Errorf("%w: id %d live in two slots", ErrCorrupt, id)
		}
		ix.slotOf.Set(id, uint32(s), 2*int64(nSlots)+denseReach)
	}

	// The large frequencies, in term and slot order, are given to their
	// terms; checkArrays matches them with the postings marked tfBig.
	bigs := make([]bigTF, len(a.big)/3)
	bigEnd := hugemem.Make[uint32](nTerms) // bigs[bigEnd[t-1]:bigEnd[t]] are term t's
	prevT, prevS := int64(-1), int64(-1)
	for i := range bigs {
		t, s, tf := a.big[3*i], a.big[3*i+1], a.big[3*i+2]
		if int(t) >= nTerms || int(s) >= nSlots || tf < tfBig || int64(t) < prevT || int64(t) == prevT && int64(s) <= prevS {
			return fmt.Errorf("%w: large frequency %d is out of order or range", ErrCorrupt, i)
		}
		prevT, prevS = int64(t), int64(s)
		bigs[i] = bigTF{s, tf}
		bigEnd[t] = uint32(i + 1)
	}
	for t := 1; t < nTerms; t++ {
		bigEnd[t] = max(bigEnd[t], bigEnd[t-1])
	}

	ix.dict = make(map[string]uint32, nTerms)
	ix.terms = hugemem.Make[postings](nTerms)
	nFront := len(a.pts) / 2
	tfAt, dlAt := a.pts[:nFront], a.pts[nFront:]
	// One array for every frontier, each term's capped at its length so
	// that frontier.add, which edits in place, cannot spill into the next.
	front := frontier(hugemem.Make[point](nFront))
	var wStart, pStart, fStart, bStart uint32
	for t := range nTerms {
		tok := a.blob[wStart:a.termEnd[t]]
		wStart = a.termEnd[t]
		if _, dup := ix.dict[tok]; dup {
			return fmt.Errorf("%w: term %q stored twice", ErrCorrupt, tok)
		}
		ix.dict[tok] = uint32(t)
		ps, pe := pStart, a.postEnd[t]
		pStart = pe
		if ps == pe {
			return fmt.Errorf("%w: term %d has no postings", ErrCorrupt, t)
		}
		p := &ix.terms[t]
		// Full slice expressions: an Add appends to a copy, not over the
		// next term's postings.
		p.slots, p.tfs = a.slots[ps:pe:pe], a.tfs[ps:pe:pe]
		if !ascendingBelow(p.slots, uint32(nSlots)) {
			return fmt.Errorf("%w: term %d lists slots out of order or range", ErrCorrupt, t)
		}
		// Every posting counts; the dead slots' are taken off below.
		p.df = len(p.slots)
		if be := bigEnd[t]; be > bStart {
			p.big = bigs[bStart:be:be]
			bStart = be
		}
		fs, fe := fStart, a.frontEnd[t]
		fStart = fe
		if fs == fe {
			return fmt.Errorf("%w: term %d has no score bound", ErrCorrupt, t)
		}
		p.front = front[fs:fe:fe]
		for i := range p.front {
			q := point{tfAt[int(fs)+i], dlAt[int(fs)+i]}
			if i > 0 && (q.tf <= p.front[i-1].tf || q.dl <= p.front[i-1].dl) {
				return fmt.Errorf("%w: term %d's score bound is not a frontier", ErrCorrupt, t)
			}
			p.front[i] = q
		}
	}
	// A dead slot's terms, from its forward list, lose it from their
	// document frequencies: a pass over the dead slots, not the postings.
	start := uint32(0)
	for s := range nSlots {
		end := a.fwdEnd[s]
		if !ix.live[s] {
			err := eachForward(a.fwd[start:end], uint64(nTerms), func(t, _ uint64) {
				ix.terms[t].df--
			})
			if err != nil {
				return fmt.Errorf("%w: slot %d's forward list %v", ErrCorrupt, s, err)
			}
		}
		start = end
	}
	for t := range ix.terms {
		if ix.terms[t].df < 0 {
			return fmt.Errorf("%w: term %d is in more dead slots than it has postings", ErrCorrupt, t)
		}
	}
	ix.fwd = pagedOf(a.fwd)
	ix.fwdOff = hugemem.Make[uint32](nSlots + 1)
	copy(ix.fwdOff[1:], a.fwdEnd)
	if !deferred {
		return checkArrays(context.Background(), a, bigs)
	}
	ix.pending = &pendingCheck{a: a, bigs: bigs}
	return nil
}

// ascendingBelow reports whether slots ascend strictly and stay below n.
func ascendingBelow(slots []uint32, n uint32) bool {
	prev := int64(-1)
	for _, s := range slots {
		if int64(s) <= prev {
			return false
		}
		prev = int64(s)
	}
	return prev < int64(n)
}

// eachForward calls f with the term id and frequency of each entry of a
// forward list, checking that the ids ascend below nTerms and that each
// frequency is a positive uint32; it returns what is wrong, if anything.
func eachForward(b []byte, nTerms uint64, f func(t, tf uint64)) error {
	t := uint64(0)
	for i := 0; len(b) > 0; i++ {
		d, tf, n := forwardEntry(b)
		if n <= 0 || d >= nTerms || tf == 0 || tf > math.MaxUint32 {
			return errors.New("is malformed")
		}
		b = b[n:]
		t += d
		if (i > 0 && d == 0) || t >= nTerms {
			return errors.New("is not ascending term ids")
		}
		f(t, tf)
	}
	return nil
}

// forwardEntry decodes the forward-list entry at the start of b: the
// term id's delta, the frequency, and the bytes they take (0 when b does
// not hold a whole entry).
func forwardEntry(b []byte) (d, tf uint64, n int) {
	// Nearly every delta takes one or two bytes, and every frequency one.
	d, k := uint64(b[0]), 1
	if d >= 0x80 {
		if len(b) > 1 && b[1] < 0x80 {
			d, k = d&0x7f|uint64(b[1])<<7, 2
		} else {
			d, k = binary.Uvarint(b)
		}
	}
	if k <= 0 || k >= len(b) {
		return 0, 0, 0
	}
	tf, m := uint64(b[k]), 1
	if tf >= 0x80 {
		tf, m = binary.Uvarint(b[k:])
	}
	if m <= 0 {
		return 0, 0, 0
	}
	return d, tf, k + m
}

// pendingCheck is what ReadIndexDeferred left for Check: the file's
// arrays, which no Add or Search writes (Remove, which would, waits for
// the check), and the large frequencies assemble sorted out.
type pendingCheck struct {
	mu   sync.Mutex
	a    *fileArrays // nil once checked
	bigs []bigTF
	sums []sumSpan // the stored checksums a read in place left
	err  error
}

// checkArrays checks what assemble left: every posting's frequency
// (positive, and exact in bigs when its byte is tfBig), each forward
// list (ascending term ids whose frequencies add up to its slot's
// length), and that the postings hold what the forward lists hold, slot
// by slot: the same (slot, term, frequency) triples, which both walks add
// up hashed, in the order they are stored, without a random access.
func checkArrays(ctx context.Context, a *fileArrays, bigs []bigTF) error {
	nSlots, nTerms := len(a.ids), len(a.termEnd)
	var sumPost, sumFwd uint64
	bi := 0
	pStart := uint32(0)
	for t := range nTerms {
		if t%checkEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		pe := a.postEnd[t]
		slots, tfs := a.slots[pStart:pe], a.tfs[pStart:pe]
		pStart = pe
		for i, s := range slots {
			tf := uint32(tfs[i])
			if tf == tfBig {
				if bi == len(bigs) || a.big[3*bi] != uint32(t) || bigs[bi].slot != s {
					return fmt.Errorf("%w: term %d's frequency in slot %d is missing or wrong", ErrCorrupt, t, s)
				}
				tf = bigs[bi].tf
				bi++
			}
			if tf == 0 {
				return fmt.Errorf("%w: term %d has frequency 0 in slot %d", ErrCorrupt, t, s)
			}
			sumPost += postHash(s, uint32(t), tf)
		}
	}
	if bi != len(bigs) {
		return fmt.Errorf("%w: %d large frequencies belong to no posting", ErrCorrupt, len(bigs)-bi)
	}
	start, nFwd := uint32(0), 0
	for s := range nSlots {
		if s%checkEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		end := a.fwdEnd[s]
		sum := uint64(0)
		err := eachForward(a.fwd[start:end], uint64(nTerms), func(t, tf uint64) {
			sum += tf
			sumFwd += postHash(uint32(s), uint32(t), uint32(tf))
			nFwd++
		})
		if err != nil {
			return fmt.Errorf("%w: slot %d's forward list %v", ErrCorrupt, s, err)
		}
		if sum != uint64(a.lens[s]) {
			return fmt.Errorf("%w: slot %d has %d tokens in its forward list, length %d", ErrCorrupt, s, sum, a.lens[s])
		}
		start = end
	}
	if nFwd != len(a.slots) || sumFwd != sumPost {
		return fmt.Errorf("%w: the forward lists (%d entries) disagree with the postings (%d)", ErrCorrupt, nFwd, len(a.slots))
	}
	return nil
}

// checkEvery is how many terms, then slots, checkArrays checks between
// two looks at its context.
const checkEvery = 1 << 14

// Check runs the checks that ReadIndexDeferred or ReadIndexInPlace left
// undone, once, and returns what they found (ErrCorrupt), also on later
// calls; for any other index it returns nil at once. When ctx ends first it returns
// ctx's error and the checks stay to be run. It may run beside searches
// and Adds; a Remove waits for it (or runs it), since removing reads the
// forward lists it checks.
func (ix *Index) Check(ctx context.Context) error {
	defer runtime.KeepAlive(ix)
	pc := ix.pending
	if pc == nil {
		return nil
	}
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if pc.a != nil {
		err := checkSums(ctx, pc.sums)
		if err == nil {
			err = checkArrays(ctx, pc.a, pc.bigs)
		}
		if err != nil && ctx.Err() != nil && !errors.Is(err, ErrCorrupt) {
			return fmt.Errorf("bm25: check index: %w", err)
		}
		if err != nil {
			pc.err = fmt.Errorf("bm25: check index: %w", err)
		}
		pc.a, pc.bigs, pc.sums = nil, nil, nil
	}
	return pc.err
}

// Unchecked reports whether checks that ReadIndexDeferred or
// ReadIndexInPlace left undone are still to run (Check).
func (ix *Index) Unchecked() bool {
	pc := ix.pending
	if pc == nil {
		return false
	}
	pc.mu.Lock()
	defer pc.mu.Unlock()
	return pc.a != nil
}

// postHash spreads a posting (slot, term, frequency) over 64 bits, so
// that sums of it over the same postings are equal and over different
// ones differ, but for a chance a damaged or buggy file does not court.
func postHash(s, t, tf uint32) uint64 {
	x := (uint64(s)<<32 | uint64(t)) ^ uint64(tf)*0x9e3779b97f4a7c15
	x *= 0xbf58476d1ce4e5b9
	return x ^ x>>31
}

// Remap renames the documents' ids: f maps each id the index holds to its
// new one (callers whose ids are assigned afresh by each load read an
// index written by another process and rename its ids). f must be one to
// one over the live ids; Remap fails, leaving the index unusable, when f
// rejects one or maps two to one. It costs one pass over the documents.
func (ix *Index) Remap(f func(old uint32) (uint32, bool)) error {
	defer runtime.KeepAlive(ix)
	var slotOf slots.Table
	slotOf.Grow(len(ix.ids))
	for s, old := range ix.ids {
		if !ix.live[s] {
			// A dead slot's id is never read; clear it so that no stale
			// id survives the renaming.
			ix.ids[s] = 0
			continue
		}
		id, ok := f(old)
		if !ok {
			return fmt.Errorf("bm25: remap: id %d has no new id", old)
		}
		if _, dup := slotOf.Get(id); dup {
			return fmt.Errorf("bm25: remap: two ids map to %d", id)
		}
		ix.ids[s] = id
		slotOf.Set(id, uint32(s), 2*int64(len(ix.ids)+denseReach))
	}
	ix.slotOf = slotOf
	return nil
}
