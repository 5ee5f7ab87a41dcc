package bm25

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"math"
	"unsafe"
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
// from its counts), then raw arrays: per slot its id, length and live
// byte; the dictionary as the end offset of each term in one byte string,
// then that string; the end offset of each term's postings, the postings'
// slots and their term frequencies (1, 2 or 4 bytes each, the least that
// holds the largest); the end offset of each term's frontier and its
// points' tf and dl; then the CRC-32C of every byte before it. The
// forward lists, document frequencies and totals are derived from these
// on reading, which is cheaper than storing them.
const (
	fileMagic   = "ADRGBM25"
	fileVersion = 1
	headerLen   = 8 + 8 + 4 + 4 + 4 + 4 + 8 + 8 + 8 + 4
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

// uints writes a with width bytes an element (1, 2 or 4).
func (fw *fileWriter) uints(a []uint32, width int) {
	if width == 4 {
		fw.u32s(a)
		return
	}
	for i := 0; i < len(a); i += 1 << 14 {
		b := fw.buf[:0]
		for _, x := range a[i:min(i+1<<14, len(a))] {
			if width == 1 {
				b = append(b, byte(x))
			} else {
				b = binary.LittleEndian.AppendUint16(b, uint16(x))
			}
		}
		fw.write(b)
		fw.buf = b
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
	var nPost, nFront uint64
	maxTF := uint32(0)
	for t := range ix.terms {
		p := &ix.terms[t]
		nPost += uint64(len(p.slots))
		nFront += uint64(len(p.front))
		for _, tf := range p.tfs {
			maxTF = max(maxTF, tf)
		}
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
	if nPost > maxCount || dictBytes > maxCount || len(ix.ids) > maxCount {
		return 0, fmt.Errorf("bm25: write index: too large (%d postings, %d bytes of terms)", nPost, dictBytes)
	}
	width := 4
	switch {
	case maxTF <= math.MaxUint8:
		width = 1
	case maxTF <= math.MaxUint16:
		width = 2
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
	h = binary.LittleEndian.AppendUint32(h, uint32(width))
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
	fw.u32s(ends)
	for _, tok := range words {
		fw.write([]byte(tok))
	}
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
		fw.uints(ix.terms[t].tfs, width)
	}
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
	r   *bufio.Reader
	crc hash.Hash32
	err error
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
	fr.crc.Write(p)
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
	return fr.uints(n, 4)
}

// uints reads n elements of width bytes (1, 2 or 4) into a new []uint32.
func (fr *fileReader) uints(n, width int) []uint32 {
	if fr.err != nil || n == 0 {
		return nil
	}
	out := make([]uint32, n)
	if width == 4 && hostLittle {
		fr.read(unsafe.Slice((*byte)(unsafe.Pointer(&out[0])), 4*n))
	} else {
		const piece = 1 << 16
		b := make([]byte, piece*width)
		for i := 0; i < n && fr.err == nil; i += piece {
			part := out[i:min(i+piece, n)]
			fr.read(b[:len(part)*width])
			for j := range part {
				switch width {
				case 1:
					part[j] = uint32(b[j])
				case 2:
					part[j] = uint32(binary.LittleEndian.Uint16(b[2*j:]))
				default:
					part[j] = binary.LittleEndian.Uint32(b[4*j:])
				}
			}
		}
	}
	if fr.err != nil {
		return nil
	}
	return out
}

// ends checks that a holds non-decreasing end offsets finishing at total.
func (fr *fileReader) ends(a []uint32, total uint64, what string) {
	prev := uint32(0)
	for _, e := range a {
		if e < prev {
			fr.fail("%s offsets decrease", what)
			return
		}
		prev = e
	}
	if uint64(prev) != total {
		fr.fail("%s offsets end at %d, want %d", what, prev, total)
	}
}

// ReadIndex reads an index written by WriteTo, with the analyzer of p
// for the queries and the documents added later. A file that cannot be
// trusted is ErrCorrupt, one written with other parameters than p ErrParams
// (the analyzer is compared by the tokens it gives a probe text, so an
// analyzer changed only where the probe cannot see must not read files of
// the old one); other read errors are returned wrapped.
func ReadIndex(r io.Reader, p Params) (*Index, error) {
	ix := New(p)
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReaderSize(r, 1<<20)
	}
	fr := &fileReader{r: br, crc: crc32.New(castagnoli)}
	h := make([]byte, len(fileMagic)+4+headerLen)
	fr.read(h)
	fr.checksum("header")
	if fr.err != nil {
		return nil, fmt.Errorf("bm25: read index: %w", fr.err)
	}
	if string(h[:len(fileMagic)]) != fileMagic {
		return nil, fmt.Errorf("bm25: read index: %w: bad magic", ErrCorrupt)
	}
	h = h[len(fileMagic):]
	if v := binary.LittleEndian.Uint32(h); v != fileVersion {
		return nil, fmt.Errorf("bm25: read index: %w: version %d, want %d", ErrCorrupt, v, fileVersion)
	}
	h = h[4:]
	k1, b := math.Float64frombits(binary.LittleEndian.Uint64(h)), math.Float64frombits(binary.LittleEndian.Uint64(h[8:]))
	flags, fp := binary.LittleEndian.Uint32(h[16:]), binary.LittleEndian.Uint32(h[20:])
	nSlots, nTerms := uint64(binary.LittleEndian.Uint32(h[24:])), uint64(binary.LittleEndian.Uint32(h[28:]))
	dictBytes, nPost, nFront := binary.LittleEndian.Uint64(h[32:]), binary.LittleEndian.Uint64(h[40:]), binary.LittleEndian.Uint64(h[48:])
	width := int(binary.LittleEndian.Uint32(h[56:]))
	if want := ix.analyzerPrint(); k1 != ix.k1 || b != ix.b || (flags&flagDistinct != 0) != ix.distinct || fp != want {
		return nil, fmt.Errorf("bm25: read index: %w: k1 %g, b %g, flags %#x, analyzer %#08x; want %g, %g, distinct %v, %#08x",
			ErrParams, k1, b, flags, fp, ix.k1, ix.b, ix.distinct, want)
	}
	// Every term has a posting and a frontier point, and every frontier
	// point is a posting's: a header that says otherwise is damaged.
	if dictBytes > maxCount || nPost > maxCount || nTerms > nPost || nFront > nPost || nFront < nTerms ||
		(width != 1 && width != 2 && width != 4) || flags&^flagDistinct != 0 {
		return nil, fmt.Errorf("bm25: read index: %w: header counts (%d slots, %d terms, %d bytes of terms, %d postings, %d frontier points, width %d)",
			ErrCorrupt, nSlots, nTerms, dictBytes, nPost, nFront, width)
	}

	ids := fr.u32s(int(nSlots))
	lens := fr.u32s(int(nSlots))
	live := make([]byte, nSlots)
	fr.read(live)
	termEnd := fr.u32s(int(nTerms))
	fr.ends(termEnd, dictBytes, "term")
	blob := make([]byte, dictBytes)
	fr.read(blob)
	postEnd := fr.u32s(int(nTerms))
	fr.ends(postEnd, nPost, "posting")
	slots := fr.u32s(int(nPost))
	tfs := fr.uints(int(nPost), width)
	frontEnd := fr.u32s(int(nTerms))
	fr.ends(frontEnd, nFront, "frontier")
	pts := fr.u32s(int(2 * nFront))
	fr.checksum("index")
	if fr.err != nil {
		return nil, fmt.Errorf("bm25: read index: %w", fr.err)
	}
	if err := ix.assemble(ids, lens, live, termEnd, unsafeString(blob), postEnd, slots, tfs, frontEnd, pts); err != nil {
		return nil, fmt.Errorf("bm25: read index: %w", err)
	}
	return ix, nil
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

// assemble fills the empty ix from the arrays of a file whose checksum
// and offsets were verified, checking what a damaged or forged file
// could get wrong that would make a search misbehave.
func (ix *Index) assemble(ids, lens []uint32, live []byte, termEnd []uint32, blob string,
	postEnd, slots, tfs, frontEnd, pts []uint32) error {
	nSlots, nTerms := len(ids), len(termEnd)
	ix.ids, ix.lens = ids, lens
	ix.live = make([]bool, nSlots)
	nLive := 0
	for s, l := range live {
		switch l {
		case 0:
		case 1:
			ix.live[s] = true
			nLive++
			ix.sumLive += uint64(lens[s])
		default:
			return fmt.Errorf("%w: slot %d has live byte %d", ErrCorrupt, s, l)
		}
	}
	ix.nLive = nLive
	ix.slotOf = make(map[uint32]uint32, nLive)
	for s, id := range ids {
		if !ix.live[s] {
			continue
		}
		if _, dup := ix.slotOf[id]; dup {
			return fmt.Errorf("%w: id %d live in two slots", ErrCorrupt, id)
		}
		ix.slotOf[id] = uint32(s)
	}

	ix.dict = make(map[string]uint32, nTerms)
	ix.terms = make([]postings, nTerms)
	// acc[s] counts slot s's distinct terms and tokens, which must add up
	// to its length (then no frequency exceeds it): one array, so that
	// the walk over the postings misses the cache once per posting.
	acc := make([]slotAcc, nSlots)
	nFront := len(pts) / 2
	tfAt, dlAt := pts[:nFront], pts[nFront:]
	// One array for every frontier, each term's capped at its length so
	// that frontier.add, which edits in place, cannot spill into the next.
	front := make(frontier, nFront)
	var wStart, pStart, fStart uint32
	for t := range nTerms {
		tok := blob[wStart:termEnd[t]]
		wStart = termEnd[t]
		if _, dup := ix.dict[tok]; dup {
			return fmt.Errorf("%w: term %q stored twice", ErrCorrupt, tok)
		}
		ix.dict[tok] = uint32(t)
		ps, pe := pStart, postEnd[t]
		pStart = pe
		if ps == pe {
			return fmt.Errorf("%w: term %d has no postings", ErrCorrupt, t)
		}
		p := &ix.terms[t]
		// Full slice expressions: an Add appends to a copy, not over the
		// next term's postings.
		p.slots, p.tfs = slots[ps:pe:pe], tfs[ps:pe:pe]
		prev := int64(-1)
		for i, s := range p.slots {
			if int64(s) <= prev || int(s) >= nSlots {
				return fmt.Errorf("%w: term %d lists slot %d out of order or range", ErrCorrupt, t, s)
			}
			prev = int64(s)
			a := &acc[s]
			tf := p.tfs[i]
			a.n++
			a.sum += tf
			if tf == 0 || a.sum < tf {
				return fmt.Errorf("%w: term %d has frequency %d in slot %d", ErrCorrupt, t, tf, s)
			}
			if ix.live[s] {
				p.df++
			}
		}
		fs, fe := fStart, frontEnd[t]
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
	// The forward lists: fwdOff[s] starts at the end of slot s's list and
	// is moved back over it as the terms are walked from the last, which
	// leaves each list sorted, as Add does, and fwdOff[s] at its start.
	ix.fwdOff = make([]uint32, nSlots+1)
	off := uint32(0)
	for s := range nSlots {
		if acc[s].sum != lens[s] {
			return fmt.Errorf("%w: slot %d has %d tokens in its postings, length %d", ErrCorrupt, s, acc[s].sum, lens[s])
		}
		off += acc[s].n
		ix.fwdOff[s] = off
	}
	ix.fwdOff[nSlots] = off
	ix.fwd = make([]uint32, off)
	for t := len(ix.terms) - 1; t >= 0; t-- {
		for _, s := range ix.terms[t].slots {
			ix.fwdOff[s]--
			ix.fwd[ix.fwdOff[s]] = uint32(t)
		}
	}
	return nil
}

// slotAcc is what assemble adds up for one slot.
type slotAcc struct{ n, sum uint32 }

// Remap renames the documents' ids: f maps each id the index holds to its
// new one (callers whose ids are assigned afresh by each load read an
// index written by another process and rename its ids). f must be one to
// one over the live ids; Remap fails, leaving the index unusable, when f
// rejects one or maps two to one. It costs one pass over the documents.
func (ix *Index) Remap(f func(old uint32) (uint32, bool)) error {
	// The map is refilled, not made again: it already has room for every
	// live id, and growing a second one is most of the cost.
	slotOf := ix.slotOf
	clear(slotOf)
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
		if _, dup := slotOf[id]; dup {
			return fmt.Errorf("bm25: remap: two ids map to %d", id)
		}
		ix.ids[s] = id
		slotOf[id] = uint32(s)
	}
	return nil
}
