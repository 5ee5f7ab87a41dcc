package vector

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"unsafe"
)

// spill holds the vectors of slots [0, n) of an index that ReadIndexAt
// left on disk: in memory, an int8 copy of each (one scale per vector) that
// search scores; in the file, the float32 originals, read back only when
// asked for (Vector, ReadVector, WriteTo) and checked against a CRC-32C
// each. A slot rewritten since the load (a replaced vector, or the last one
// moved into a freed slot) keeps its original in over instead.
type spill struct {
	n     int
	dim   int
	q8    []int8    // n·dim
	scale []float32 // n: the value of one int8 step
	src   []uint32  // slot -> the vector of the file holding its original
	over  map[uint32][]float32
	// The file: the float32 originals start at base, dim·4 bytes each;
	// sums[i] is the CRC-32C of vector i.
	r    io.ReaderAt
	base int64
	sums []uint32
	// mapped is set when q8 is a copy-on-write mapping of the file
	// (mapInt8), unmapped once the spill is unreachable.
	mapped bool
	// rowSums, when the open left the int8 copies unchecked (a mapped
	// version-3 file), holds the CRC-32C of each as the file stored it,
	// and checked has a bit set for each copy checked since (or written
	// in memory): a copy is checked before its first use (code), and one
	// that fails is made again from its original (repairRow). nil: every
	// copy was checked at open.
	rowSums []uint32
	checked []atomic.Uint32
	// checkMu orders the checks of copies (and their repairs) against one
	// another; repaired counts the copies made again, and damage keeps
	// the first copy whose original could not be read either.
	checkMu  sync.Mutex
	repaired atomic.Int64
	damage   atomic.Pointer[error]

	// A window of the file, so that reading the originals in order (a
	// snapshot, WriteTo) costs a read per window, not per vector.
	mu    sync.Mutex
	win   []byte
	winAt int64
}

// spillWindow is the size of the read window: a few hundred vectors.
const spillWindow = 256 << 10

// quantize8 writes the int8 copy of v to dst and returns its scale.
func quantize8(dst []int8, v []float32) float32 {
	var m float32
	for _, x := range v {
		m = max(m, abs32(x))
	}
	if m == 0 {
		clear(dst)
		return 0
	}
	inv := 127 / m
	for i, x := range v {
		dst[i] = int8(math.Round(float64(x * inv)))
	}
	return m / 127
}

// dot8 is the inner product of q and c[:len(q)], unrolled as dot is.
func dot8(q []float32, c []int8) float32 {
	c = c[:len(q)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+8 <= len(q); i += 8 {
		qq, cc := q[i:i+8:i+8], c[i:i+8:i+8]
		s0 += qq[0]*float32(cc[0]) + qq[4]*float32(cc[4])
		s1 += qq[1]*float32(cc[1]) + qq[5]*float32(cc[5])
		s2 += qq[2]*float32(cc[2]) + qq[6]*float32(cc[6])
		s3 += qq[3]*float32(cc[3]) + qq[7]*float32(cc[7])
	}
	for ; i < len(q); i++ {
		s0 += q[i] * float32(c[i])
	}
	return (s0 + s1) + (s2 + s3)
}

// code returns the int8 copy of slot s, checked first if it was not.
func (sp *spill) code(s uint32) []int8 {
	if sp.rowSums != nil && sp.checked[s/32].Load()&(1<<(s%32)) == 0 {
		sp.check(s)
	}
	return sp.row(s)
}

// row returns the int8 copy of slot s as it is, checked or not.
func (sp *spill) row(s uint32) []int8 {
	o := int(s) * sp.dim
	return sp.q8[o : o+sp.dim : o+sp.dim]
}

// mark records that the copy of slot s needs no check: checked, or
// written in memory.
func (sp *spill) mark(s uint32) {
	if sp.rowSums != nil {
		sp.checked[s/32].Or(1 << (s % 32))
	}
}

// check compares the copy of slot s with its stored checksum, once, and
// makes it again from its original when they differ. A copy whose
// original cannot be read either is cleared (it scores 0) and kept as the
// spill's damage, which the index's searches then report (Damage). A
// page of the mapping the file cannot give (a file cut short since the
// open) is damage too, not a fault.
func (sp *spill) check(s uint32) {
	sp.checkMu.Lock()
	defer sp.checkMu.Unlock()
	if sp.checked[s/32].Load()&(1<<(s%32)) != 0 {
		return
	}
	defer sp.mark(s)
	c := sp.row(s)
	if rowSum(c) == uint64(sp.rowSums[s]) {
		return
	}
	if err := sp.repairRow(s, c); err != nil {
		_ = writeRow(c, make([]int8, len(c)))
		sp.damage.CompareAndSwap(nil, &err)
		return
	}
	sp.repaired.Add(1)
}

// rowSum is the CRC-32C of an int8 copy, or a value no stored sum can
// match (it has a bit above 32) when reading the copy faults.
func rowSum(c []int8) (sum uint64) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if recover() != nil {
			sum = 1 << 32
		}
	}()
	return uint64(crc32.Checksum(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(c))), len(c)), castagnoli))
}

// repairRow makes the int8 copy c of slot s again from its float32
// original, which is still the file's vector s (a copy rewritten since
// the open needs no check). The copy the writer stored was made the same
// way from the same vector, so the scale, checked with the file, must
// come out the same.
func (sp *spill) repairRow(s uint32, c []int8) error {
	v, err := sp.original(nil, s)
	if err != nil {
		return fmt.Errorf("%w: int8 copy of vector %d damaged, and its original unreadable: %w", ErrCorrupt, s, err)
	}
	q := make([]int8, sp.dim)
	if sc := quantize8(q, v); sc != sp.scale[s] {
		return fmt.Errorf("%w: int8 copy of vector %d damaged, and its original does not give its scale", ErrCorrupt, s)
	}
	return writeRow(c, q)
}

// writeRow copies q over the copy c, a fault (see rowSum) becoming an
// error.
func writeRow(c, q []int8) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: writing an int8 copy: %v", ErrCorrupt, r)
		}
	}()
	copy(c, q)
	return nil
}

// checkRows checks the copies of slots [from, min(to, n)) that were not.
func (sp *spill) checkRows(from, to uint32) {
	if sp.rowSums == nil {
		return
	}
	for s := from; s < min(to, uint32(sp.n)); s++ {
		if sp.checked[s/32].Load()&(1<<(s%32)) == 0 {
			sp.check(s)
		}
	}
}

// set makes v (normalized, and owned by sp from now on) the vector of
// spilled slot s.
func (sp *spill) set(s uint32, v []float32) {
	sp.scale[s] = quantize8(sp.row(s), v)
	sp.mark(s)
	if sp.over == nil {
		sp.over = make(map[uint32][]float32)
	}
	sp.over[s] = v
}

// move copies spilled slot from into spilled slot to.
func (sp *spill) move(to, from uint32) {
	copy(sp.row(to), sp.code(from))
	sp.mark(to)
	sp.scale[to], sp.src[to] = sp.scale[from], sp.src[from]
	if v, ok := sp.over[from]; ok {
		sp.over[to] = v
		delete(sp.over, from)
	} else {
		delete(sp.over, to)
	}
}

// approx writes an approximation of slot s's vector to buf and returns it:
// the original when it is in memory, else the int8 copy scaled back. The
// index uses it where a rounding of a few thousandths does not matter
// (splitting and encoding lists, the running sum).
func (sp *spill) approx(s uint32, buf []float32) []float32 {
	if v, ok := sp.over[s]; ok {
		return v
	}
	buf = buf[:sp.dim]
	sc := sp.scale[s]
	for i, c := range sp.code(s) {
		buf[i] = float32(c) * sc
	}
	return buf
}

// original appends the float32 original of slot s to dst.
func (sp *spill) original(dst []float32, s uint32) ([]float32, error) {
	if v, ok := sp.over[s]; ok {
		return append(dst, v...), nil
	}
	i := int64(sp.src[s])
	size := int64(sp.dim) * 4
	at := sp.base + i*size
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if at < sp.winAt || at+size > sp.winAt+int64(len(sp.win)) {
		if cap(sp.win) < spillWindow {
			sp.win = make([]byte, spillWindow)
		}
		w := sp.win[:max(spillWindow/size, 1)*size]
		n, err := sp.r.ReadAt(w, at)
		if int64(n) < size {
			sp.win, sp.winAt = sp.win[:0], 0
			if err == nil || err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return dst, fmt.Errorf("vector: read vector %d of the index file: %w", i, err)
		}
		sp.win, sp.winAt = w[:n-n%int(size)], at
	}
	b := sp.win[at-sp.winAt : at-sp.winAt+size]
	if got := crc32.Checksum(b, castagnoli); got != sp.sums[i] {
		return dst, fmt.Errorf("%w: vector %d: checksum %#08x, stored %#08x", ErrCorrupt, i, got, sp.sums[i])
	}
	if hostLittle {
		return append(dst, unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), sp.dim)...), nil
	}
	for j := range sp.dim {
		dst = append(dst, math.Float32frombits(binary.LittleEndian.Uint32(b[4*j:])))
	}
	return dst, nil
}

// CheckCopies checks the int8 copies of slots [from, from+n) that a
// reopened index mapped from its file without reading them, as a search
// would before using them, and returns the slot to continue from, or -1
// past the last. The copies are checked in any case before their first
// use; this lets a caller check the rest in the background, a piece at a
// time, so that damage is found before a search meets it. Like Search,
// it may run concurrently with other reads but not with Add or Remove.
func (ix *Index) CheckCopies(from, n int) int {
	if ix.sp == nil || ix.sp.rowSums == nil || from < 0 || from >= int(ix.nsp) {
		return -1
	}
	to := min(from+max(n, 1), int(ix.nsp))
	ix.sp.checkRows(uint32(from), uint32(to))
	if to >= int(ix.nsp) {
		return -1
	}
	return to
}

// CopiesUnchecked reports whether some int8 copies were mapped from the
// file unchecked, for CheckCopies.
func (ix *Index) CopiesUnchecked() bool { return ix.sp != nil && ix.sp.rowSums != nil }

// Repaired reports how many int8 copies failed their check and were made
// again from their float32 originals since the index was read.
func (ix *Index) Repaired() int {
	if ix.sp == nil {
		return 0
	}
	return int(ix.sp.repaired.Load())
}

// Damage returns the first int8 copy found damaged whose float32 original
// could not be read or did not match either (ErrCorrupt), or nil. Such a
// copy scores 0, so a caller must not trust a search once Damage reports
// one: the index must be rebuilt from another copy of its vectors.
func (ix *Index) Damage() error {
	if ix.sp == nil {
		return nil
	}
	if p := ix.sp.damage.Load(); p != nil {
		return *p
	}
	return nil
}
