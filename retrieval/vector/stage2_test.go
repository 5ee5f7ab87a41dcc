package vector

import (
	"bytes"
	"cmp"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"
)

// selectTop keeps the set a topK of the same size keeps, ties included
// (few distinct scores make whole buckets of ties).
func TestSelectTop(t *testing.T) {
	r := rand.New(rand.NewPCG(81, 82))
	var hist [4096]uint32
	for trial := range 300 {
		n := 1 + r.IntN(3000)
		items := make([]Scored, n)
		distinct := 1 + r.IntN(20)
		for i := range items {
			items[i] = Scored{ID: uint32(r.IntN(1 << 20))}
			switch trial % 3 {
			case 0:
				items[i].Score = float32(r.NormFloat64())
			case 1:
				items[i].Score = float32(r.IntN(distinct)) / 7
			default: // one bucket far above the rest
				items[i].Score = float32(r.NormFloat64()) * 1e-4
				if r.IntN(50) == 0 {
					items[i].Score += 10
				}
			}
		}
		c := 1 + r.IntN(n+1)
		h := topK{items: nil, k: c}
		for _, it := range items {
			h.push(it)
		}
		want := h.sorted()
		got := slices.Clone(selectTop(slices.Clone(items), c, &hist))
		slices.SortFunc(got, func(a, b Scored) int {
			if c := cmp.Compare(b.Score, a.Score); c != 0 {
				return c
			}
			return cmp.Compare(a.ID, b.ID)
		})
		if len(want) == 0 {
			want = nil
		}
		if len(got) == 0 {
			got = nil
		}
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d (n %d, c %d): selectTop kept %d, topK %d, or another set", trial, n, c, len(got), len(want))
		}
	}
}

// The magnitude term from gathered codes and the kernels' popcounts is
// magTerm's, bit for bit, at six words (the kernels) and others.
func TestMagFrom(t *testing.T) {
	r := rand.New(rand.NewPCG(83, 84))
	for _, w := range []int{1, 2, 6, 7} {
		rq := make([]float32, 64*w)
		for i := range rq {
			rq[i] = float32(r.NormFloat64())
		}
		qp := quantize(rq, make([]uint64, 4*w), w)
		const n = 40
		codes, mags := make([]uint64, n*w), make([]uint64, n*w)
		for i := range codes {
			codes[i], mags[i] = r.Uint64(), r.Uint64()&r.Uint64()
		}
		two := make([]uint64, 2*w*n)
		pys := make([]uint16, n)
		for i := range n {
			pys[i] = gatherMag(two[2*w*i:2*w*(i+1)], codes[i*w:(i+1)*w], mags[i*w:(i+1)*w])
		}
		counts := make([]uint32, 2*n)
		qp.counts(two, counts)
		for i := range n {
			code, mag := codes[i*w:(i+1)*w], mags[i*w:(i+1)*w]
			pm := bits32(mag)
			want := qp.magTerm(code, mag, pm)
			got := qp.magFrom(pm, int(counts[2*i]), int(pys[i]), int(counts[2*i+1]))
			if math.Float32bits(got) != math.Float32bits(want) {
				t.Fatalf("w %d, entry %d: magFrom %v, magTerm %v", w, i, got, want)
			}
		}
	}
}

// touch reads every vector score reads, in memory and left on disk, at a
// dimension that is no multiple of the cache line: the sum of the bytes
// and float bits at the offsets it documents.
func TestTouch(t *testing.T) {
	const dim = 100
	r := rand.New(rand.NewPCG(85, 86))
	ix := New(dim, Options{ExactThreshold: -1}) // trained: spilled past the limit
	v := make([]float32, dim)
	add := func(ix *Index, id uint32) {
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		if err := ix.Add(id, v); err != nil {
			t.Fatal(err)
		}
	}
	for id := range uint32(50) {
		add(ix, id)
	}
	var buf bytes.Buffer
	if _, err := ix.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	ix, err := ReadIndexAt(bytes.NewReader(buf.Bytes()), 0, Options{ResidentLimit: 1})
	if err != nil {
		t.Fatal(err)
	}
	add(ix, 50) // a slot in memory after the 50 on disk
	slots := []uint32{0, 7, 49, 50}
	var want uint64
	for _, s := range slots {
		if s < ix.nsp {
			c := ix.sp.code(s)
			for _, o := range []int{0, 64, dim - 1} {
				want += uint64(c[o])
			}
			continue
		}
		f := ix.vec(s)
		for _, o := range []int{0, 16, 32, 48, 64, 80, 96, dim - 1} {
			want += uint64(math.Float32bits(f[o]))
		}
	}
	if ix.nsp != 50 {
		t.Fatalf("nsp %d, want 50", ix.nsp)
	}
	if got := ix.touch(slots); got != want {
		t.Fatalf("touch %d, want %d", got, want)
	}
}

// estimates, by the AVX-512 kernel for the first multiple of 16 where the
// machine has it, gives the Go loop's estimates bit for bit and their
// range, at every length to 70 (blocks, tail, none).
func TestEstimatesKernel(t *testing.T) {
	r := rand.New(rand.NewPCG(87, 88))
	rq := make([]float32, 384)
	for i := range rq {
		rq[i] = float32(r.NormFloat64())
	}
	qp := quantize(rq, make([]uint64, 24), 6)
	const add = 0.37
	for n := range 71 {
		counts, factor, pop := make([]uint32, n+1), make([]float32, n), make([]uint16, n)
		for i := range n {
			counts[i] = uint32(r.IntN(15 * 384))
			factor[i] = float32(r.Float64())
			pop[i] = uint16(r.IntN(385))
		}
		counts[n] = 777 // past the end: left alone
		wmin, wmax := float32(math.Inf(1)), float32(math.Inf(-1))
		want := make([]float32, n)
		for s := range n {
			want[s] = float32(factor[s]*(float32(2*qp.lo*float32(pop[s]))+float32(2*qp.delta*float32(counts[s]))-qp.sum)) + add
			wmin, wmax = min(wmin, want[s]), max(wmax, want[s])
		}
		est := unsafe.Slice((*float32)(unsafe.Pointer(&counts[0])), n+1)
		emin, emax := qp.estimates(counts[:n], factor, pop, add, est[:n])
		for s := range n {
			if math.Float32bits(est[s]) != math.Float32bits(want[s]) {
				t.Fatalf("n %d: estimate %d is %v, want %v", n, s, est[s], want[s])
			}
		}
		if emin != wmin || emax != wmax {
			t.Fatalf("n %d: range [%v, %v], want [%v, %v]", n, emin, emax, wmin, wmax)
		}
		if counts[n] != 777 {
			t.Fatalf("n %d: wrote past the end", n)
		}
	}
}

// stage2, magChunk candidates at a time, gives each candidate the 2-bit
// estimate that magTerm gives it alone, in the candidates' order, over
// more candidates than a chunk (several chunks and a partial one).
func TestStage2(t *testing.T) {
	const dim, n = 384, 3*magChunk + 77
	r := rand.New(rand.NewPCG(89, 90))
	ix := New(dim, Options{ExactThreshold: -1, ListSize: 64})
	v := make([]float32, dim)
	for id := range uint32(n) {
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		if err := ix.Add(id, v); err != nil {
			t.Fatal(err)
		}
	}
	sc := ix.getScratch()
	q, _ := sc.normalize(v)
	rq := sc.rot[:ix.pdim]
	ix.rotate(rq, q, nil)
	w, fs := ix.words, ix.fineStride()
	qp := quantize(rq, sc.planes, w)
	qc := make([]float32, len(ix.lists))
	var locs []loc
	var cand []uint32
	est := make([]float32, 0, n)
	for l, L := range ix.lists {
		qc[l] = dot(q, L.centroid)
		part := make([]float32, len(L.slots))
		qp.scan(L.codes, L.factor, L.pop, qc[l], part)
		for p := range part {
			cand = append(cand, uint32(len(est)))
			locs = append(locs, loc{list: uint32(l), pos: uint32(p)})
			est = append(est, part[p])
		}
	}
	// Every third candidate, in reverse: any order, any subset.
	var c2 []uint32
	var l2 []loc
	for i := len(cand) - 1; i >= 0; i -= 3 {
		c2, l2 = append(c2, cand[i]), append(l2, locs[i])
	}
	for _, tc := range []struct {
		cand []uint32
		locs []loc
	}{{cand, locs}, {c2, l2}} {
		sc.est = est
		s2, _ := ix.stage2(sc, &qp, qc, tc.cand, tc.locs)
		got := slices.Clone(s2)
		if len(got) != len(tc.cand) {
			t.Fatalf("%d scores for %d candidates", len(got), len(tc.cand))
		}
		for i, e := range tc.cand {
			a := tc.locs[i]
			L, p := ix.lists[a.list], int(a.pos)
			fine, code := L.fine[p*fs:(p+1)*fs], L.codes[p*w:(p+1)*w]
			var ipx float32
			if f := L.factor[p]; f != 0 {
				ipx = (est[e] - qc[a.list]) / f
			}
			f2 := math.Float32frombits(uint32(fine[w]))
			want := Scored{ID: L.slots[p], Score: qc[a.list] + f2*(ipx+2*qp.magTerm(code, fine[:w], int(fine[w]>>32)))}
			if got[i] != want {
				t.Fatalf("candidate %d of %d: %+v, want %+v", i, len(tc.cand), got[i], want)
			}
		}
	}
}

// magTerm, the reference of magFrom (stage 2 before its kernel), is
// Σ_{j in mag} q_j x_j for one slot, x_j = ±1 its signs and
// pm the popcount of mag: 2·Σ_{mag and x set} q_j − Σ_{mag} q_j. With the
// 1-bit term Σ q_j x_j it gives the 2-bit estimate
// ⟨q, r⟩ = Σ q_j x_j + 2·Σ_{mag} q_j x_j for r_j = x_j·(1 + 2·mag_j).
func (qp *queryPlanes) magTerm(code, mag []uint64, pm int) float32 {
	w := len(code)
	p0, p1, p2, p3 := qp.p0[:w], qp.p1[:w], qp.p2[:w], qp.p3[:w]
	mag = mag[:w]
	var am, ay, py int
	for i, x := range code {
		m := mag[i]
		y := x & m
		py += bits.OnesCount64(y)
		am += bits.OnesCount64(m&p0[i]) + bits.OnesCount64(m&p1[i])<<1 +
			bits.OnesCount64(m&p2[i])<<2 + bits.OnesCount64(m&p3[i])<<3
		ay += bits.OnesCount64(y&p0[i]) + bits.OnesCount64(y&p1[i])<<1 +
			bits.OnesCount64(y&p2[i])<<2 + bits.OnesCount64(y&p3[i])<<3
	}
	over := func(n, acc int) float32 { return qp.lo*float32(n) + qp.delta*float32(acc) }
	return 2*over(py, ay) - over(pm, am)
}
