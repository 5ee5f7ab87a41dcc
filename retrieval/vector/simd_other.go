//go:build !amd64

package vector

import (
	"math"
	"unsafe"
)

// dot is the inner product of a and b[:len(a)], unrolled by eight with four
// accumulators so that the adds do not wait on one another.
func dot(a, b []float32) float32 {
	return dotTail(a, b[:len(a)], 0, [4]float32{})
}

// prefetch does nothing: the instruction is written for amd64 only.
func prefetch(p unsafe.Pointer, n int) {}

// dot8Q is dot8: the AVX2 kernel is for amd64 only.
func dot8Q(q []float32, c []int8) float32 { return dot8(q, c) }

// popcounts6 reports false: the AVX-512 kernel is for amd64 only.
func popcounts6(codes, planes []uint64, out []uint32) bool { return false }

// estimates16 does none: the AVX-512 kernel is for amd64 only.
func estimates16(counts []uint32, factor []float32, pop []uint16, k [4]float32) (n int, emin, emax float32) {
	return 0, float32(math.Inf(1)), float32(math.Inf(-1))
}
