package vector

import (
	"math/rand/v2"
	"testing"
)

// Each popcount kernel the machine has gives counts6's sums exactly, for
// codes and planes of random bits, dense and sparse, at every count up
// to 40 (the loop, its end, none).
func TestPopcountKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(81, 82))
	kernels := map[string]struct {
		ok  bool
		run func(codes, planes []uint64, out []uint32)
	}{
		"avx2": {hasAVX2, func(codes, planes []uint64, out []uint32) {
			nib := nibblePlanes(planes)
			popcounts6AVX2(&codes[0], &nib[0], len(out), &out[0])
		}},
		"avx512": {hasPopcnt512, func(codes, planes []uint64, out []uint32) {
			popcounts6AVX512(&codes[0], &planes[0], len(out), &out[0])
		}},
	}
	ran := 0
	for name, k := range kernels {
		if !k.ok {
			t.Logf("%s: not on this machine", name)
			continue
		}
		ran++
		for _, density := range []uint64{0, 1, 3, ^uint64(0)} {
			for n := 1; n <= 40; n++ {
				bits := func() uint64 {
					switch density {
					case 0:
						return 0
					case ^uint64(0):
						return ^uint64(0)
					}
					x := r.Uint64()
					for range density - 1 {
						x &= r.Uint64()
					}
					return x
				}
				codes, planes := make([]uint64, 6*n+6), make([]uint64, 24)
				for i := range codes {
					codes[i] = bits()
				}
				for i := range planes {
					planes[i] = bits()
				}
				qp := queryPlanes{p0: planes[0:6], p1: planes[6:12], p2: planes[12:18], p3: planes[18:24]}
				want, got := make([]uint32, n), make([]uint32, n+1)
				got[n] = 12345 // past the end: left alone
				qp.counts6(codes, want)
				k.run(codes, planes, got[:n])
				for i := range want {
					if got[i] != want[i] {
						t.Fatalf("%s, n %d, density %d: code %d sums %d, want %d", name, n, density, i, got[i], want[i])
					}
				}
				if got[n] != 12345 {
					t.Fatalf("%s, n %d: wrote past the end", name, n)
				}
			}
		}
	}
	if ran == 0 {
		t.Skip("no popcount kernel on this machine")
	}
}
