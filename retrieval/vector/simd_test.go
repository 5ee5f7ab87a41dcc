package vector

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The kernels agree with the Go loops at every length (the vector loops,
// their tails, none): dot bit for bit, dot8 to rounding.
func TestSearchKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(61, 62))
	for n := range 100 {
		a, b, c := make([]float32, n), make([]float32, n+3), make([]int8, n+5)
		for i := range a {
			a[i] = float32(r.NormFloat64())
		}
		for i := range b {
			b[i] = float32(r.NormFloat64())
		}
		for i := range c {
			c[i] = int8(r.IntN(255) - 127)
		}
		var ref, ref8, mag, mag8 float64
		for i := range a {
			ref += float64(a[i]) * float64(b[i])
			ref8 += float64(a[i]) * float64(c[i])
			mag += math.Abs(float64(a[i]) * float64(b[i]))
			mag8 += math.Abs(float64(a[i]) * float64(c[i]))
		}
		if got, want := dot(a, b), dotTail(a, b, 0, [4]float32{}); math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("n %d: dot %v, the Go loop %v", n, got, want)
		}
		if got := float64(dot(a, b)); math.Abs(got-ref) > 1e-5*(mag+1) {
			t.Fatalf("n %d: dot %v, want %v", n, got, ref)
		}
		if got := float64(dot8Q(a, c)); math.Abs(got-ref8) > 1e-5*(mag8+1) {
			t.Fatalf("n %d: dot8Q %v, want %v", n, got, ref8)
		}
		if got := float64(dot8(a, c)); math.Abs(got-ref8) > 1e-5*(mag8+1) {
			t.Fatalf("n %d: dot8 %v, want %v", n, got, ref8)
		}
	}
}
