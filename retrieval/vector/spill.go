package vector

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"sync"
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

func (sp *spill) code(s uint32) []int8 {
	o := int(s) * sp.dim
	return sp.q8[o : o+sp.dim : o+sp.dim]
}

// set makes v (normalized, and owned by sp from now on) the vector of
// spilled slot s.
func (sp *spill) set(s uint32, v []float32) {
	sp.scale[s] = quantize8(sp.code(s), v)
	if sp.over == nil {
		sp.over = make(map[uint32][]float32)
	}
	sp.over[s] = v
}

// move copies spilled slot from into spilled slot to.
func (sp *spill) move(to, from uint32) {
	copy(sp.code(to), sp.code(from))
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
