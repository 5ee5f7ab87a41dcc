//go:build !amd64

package vector

// dotQ is dot: the AVX2 kernel is for amd64 only.
func dotQ(a, b []float32) float32 { return dot(a, b) }

// dot8Q is dot8: the AVX2 kernel is for amd64 only.
func dot8Q(q []float32, c []int8) float32 { return dot8(q, c) }

// popcounts6 reports false: the AVX-512 kernel is for amd64 only.
func popcounts6(codes, planes []uint64, out []uint32) bool { return false }
