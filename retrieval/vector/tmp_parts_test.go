package vector

import "testing"

func dot8(a, b []int8) int32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 int32
	i := 0
	for ; i+8 <= len(a); i += 8 {
		aa, bb := a[i:i+8:i+8], b[i:i+8:i+8]
		s0 += int32(aa[0])*int32(bb[0]) + int32(aa[4])*int32(bb[4])
		s1 += int32(aa[1])*int32(bb[1]) + int32(aa[5])*int32(bb[5])
		s2 += int32(aa[2])*int32(bb[2]) + int32(aa[6])*int32(bb[6])
		s3 += int32(aa[3])*int32(bb[3]) + int32(aa[7])*int32(bb[7])
	}
	return s0 + s1 + s2 + s3
}

func BenchmarkTmpParts(b *testing.B) {
	d := workload(100_000)
	ix := d.index()
	q := d.w.Queries[0]
	i8 := make([]int8, len(ix.vecs))
	for i, x := range ix.vecs {
		i8[i] = int8(x * 500)
	}
	q8 := make([]int8, 384)
	for i := range q8 {
		q8[i] = int8(q[i] * 500)
	}
	b.Run("dot", func(b *testing.B) {
		var s float32
		for b.Loop() {
			for i := 0; i < 5600; i++ {
				j := i * 17
				s += dot(q, ix.vecs[j*384:(j+1)*384])
			}
		}
		_ = s
	})
	b.Run("dot8", func(b *testing.B) {
		var s int32
		for b.Loop() {
			for i := 0; i < 5600; i++ {
				j := i * 17
				s += dot8(q8, i8[j*384:(j+1)*384])
			}
		}
		_ = s
	})
	b.Run("dot8seq", func(b *testing.B) {
		var s int32
		for b.Loop() {
			for i := 0; i < 5600; i++ {
				s += dot8(q8, i8[i*384:(i+1)*384])
			}
		}
		_ = s
	})
}
