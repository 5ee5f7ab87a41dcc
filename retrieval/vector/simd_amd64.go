package vector

import (
	"math"
	"unsafe"

	"golang.org/x/sys/cpu"
)

// hasAVX selects the AVX kernel of dot (simd_amd64.s), which computes
// the Go loop's exact operations four lanes at a time.
var hasAVX = cpu.X86.HasAVX

// hasAVX2 selects the AVX2 kernel of dot8 (FMA, eight products an
// instruction; the compiler does not vectorize the Go loops).
var hasAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// hasPopcnt512 selects the AVX-512 popcount kernel of the 1-bit scan of
// 384-dimensional codes (six words each).
var hasPopcnt512 = cpu.X86.HasAVX512F && cpu.X86.HasAVX512DQ && cpu.X86.HasAVX512VPOPCNTDQ

//go:noescape
func popcounts6AVX512(codes, planes *uint64, n int, out *uint32)

// avx2MinCodes is the fewest codes popcounts6 hands the AVX2 kernel.
const avx2MinCodes = 16

//go:noescape
func popcounts6AVX2(codes, nib *uint64, n int, out *uint32)

// popcounts6 writes, for each six-word code, its weighted popcount against
// the four planes (24 words) to out, and reports whether it could (false:
// neither AVX-512 nor AVX2 here, the caller computes them).
func popcounts6(codes, planes []uint64, out []uint32) bool {
	// The AVX2 kernel first splits the planes into nibbles, which costs
	// as much as the Go loop's sums of a few codes: SearchAmong scans its
	// candidates a code at a time.
	if len(out) == 0 || !hasPopcnt512 && (!hasAVX2 || len(out) < avx2MinCodes) {
		return false
	}
	codes, planes = codes[:6*len(out)], planes[:24]
	if hasPopcnt512 {
		popcounts6AVX512(&codes[0], &planes[0], len(out), &out[0])
		return true
	}
	nib := nibblePlanes(planes)
	popcounts6AVX2(&codes[0], &nib[0], len(out), &out[0])
	return true
}

// nibblePlanes lays the four planes out as popcounts6AVX2 reads them:
// for plane p, at 16·p, the low nibbles of its six words, two zero words,
// then its high nibbles (shifted down) and two zero words.
func nibblePlanes(planes []uint64) (nib [64]uint64) {
	const low = 0x0f0f0f0f0f0f0f0f
	for p := range 4 {
		for w, x := range planes[6*p : 6*p+6] {
			nib[16*p+w] = x & low
			nib[16*p+8+w] = x >> 4 & low
		}
	}
	return nib
}

//go:noescape
func dot4AVX(a, b *float32, n int, acc *[4]float32)

//go:noescape
func dot8AVX2(q *float32, c *int8, n int) float32

// prefetch asks the caches for the n > 0 bytes at p, without waiting.
//
//go:noescape
func prefetch(p unsafe.Pointer, n int)

// dot is the inner product of a and b[:len(a)], unrolled by eight with four
// accumulators so that the adds do not wait on one another; the AVX
// kernel, where the machine has it, gives the same bits.
func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s [4]float32
	i := 0
	if hasAVX && len(a) >= 8 {
		i = len(a) &^ 7
		dot4AVX(&a[0], &b[0], i, &s)
	}
	return dotTail(a, b, i, s)
}

// dot8Q is dot8 by AVX2 when the machine has it.
func dot8Q(q []float32, c []int8) float32 {
	if !hasAVX2 || len(q) == 0 {
		return dot8(q, c)
	}
	c = c[:len(q)]
	return dot8AVX2(&q[0], &c[0], len(q))
}

//go:noescape
func estimatesAVX512(counts *uint32, factor *float32, pop *uint16, n int, k *[4]float32, mm *[32]float32)

// estimates16 turns the counts of the first slots, a multiple of 16 of
// them, into their estimates as the Go loop of estimates would, by
// AVX-512, and returns how many it did (0 without AVX-512) and their
// range.
func estimates16(counts []uint32, factor []float32, pop []uint16, k [4]float32) (n int, emin, emax float32) {
	emin, emax = float32(math.Inf(1)), float32(math.Inf(-1))
	if n = len(counts) &^ 15; !hasPopcnt512 || n == 0 {
		return 0, emin, emax
	}
	factor, pop = factor[:n], pop[:n]
	var mm [32]float32
	for i := range 16 {
		mm[i], mm[16+i] = emin, emax
	}
	estimatesAVX512(&counts[0], &factor[0], &pop[0], n, &k, &mm)
	for i := range 16 {
		emin, emax = min(emin, mm[i]), max(emax, mm[16+i])
	}
	return n, emin, emax
}
