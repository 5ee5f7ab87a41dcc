package vector

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestBoundCut: when every estimate lies within its margin of the true
// score, both cuts keep every one of the true k best, return entries
// ascending (stage 1), and give up (empty) when more than the cap pass.
func TestBoundCut(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var hist [4096]uint32
	for trial := range 200 {
		m := 50 + r.IntN(5000)
		k := 1 + r.IntN(min(m, 60))
		truth, est, fac := make([]float32, m), make([]float32, m), make([]float32, m)
		for i := range m {
			truth[i] = float32(r.NormFloat64())
			fac[i] = float32(0.01 + 0.2*r.Float64())
			// Errors up to the margin, of either sign; some at its edge.
			e := float32(2*r.Float64()-1) * boundWidth1 * fac[i]
			if r.IntN(10) == 0 {
				e = -boundWidth1 * fac[i]
			}
			est[i] = truth[i] + e
		}
		best := make([]int, m)
		for i := range best {
			best[i] = i
		}
		slices.SortFunc(best, func(a, b int) int { return cmp.Compare(truth[b], truth[a]) })
		if trial%2 == 1 {
			// The worst case: the true best underestimated by their whole
			// margin, every other overestimated by its whole margin.
			for j, i := range best {
				if j < k {
					est[i] = truth[i] - boundWidth1*fac[i]
				} else {
					est[i] = truth[i] + boundWidth1*fac[i]
				}
			}
		}
		best = best[:k]
		emin, emax := slices.Min(est), slices.Max(est)

		cand := boundCut(nil, est, fac, k, m, emin, emax, &hist)
		if len(cand) < k || !slices.IsSorted(cand) {
			t.Fatalf("trial %d: %d candidates for k = %d, sorted %v", trial, len(cand), k, slices.IsSorted(cand))
		}
		for _, b := range best {
			if _, ok := slices.BinarySearch(cand, uint32(b)); !ok {
				t.Fatalf("trial %d: true rank entry %d (truth %v, estimate %v, factor %v) cut", trial, b, truth[b], est[b], fac[b])
			}
		}
		if got := boundCut(nil, est, fac, k, len(cand)-1, emin, emax, &hist); len(got) != 0 {
			t.Fatalf("trial %d: capped at %d below the %d passing, got %d", trial, len(cand)-1, len(cand), len(got))
		}

		// Stage 2, on the same figures as scored slots.
		scored := make([]Scored, m)
		for i := range scored {
			scored[i] = Scored{ID: uint32(1000 + i), Score: est[i]}
		}
		kept := boundCut2(nil, scored, fac, k, m, make([]float32, m), &hist)
		if len(kept) < k {
			t.Fatalf("trial %d: stage 2 kept %d for k = %d", trial, len(kept), k)
		}
		for _, b := range best {
			if !slices.Contains(kept, uint32(1000+b)) {
				t.Fatalf("trial %d: stage 2 cut true rank entry %d", trial, b)
			}
		}
	}
}

// TestBoundCutDegenerate: equal estimates, or fewer than k, leave the cut
// to the caller.
func TestBoundCutDegenerate(t *testing.T) {
	var hist [4096]uint32
	est := []float32{0.5, 0.5, 0.5}
	if got := boundCut(nil, est, []float32{0.1, 0.1, 0.1}, 2, 3, 0.5, 0.5, &hist); len(got) != 0 {
		t.Errorf("equal estimates: %v", got)
	}
	if got := boundCut2(nil, []Scored{{ID: 1, Score: 1}}, []float32{0.1}, 2, 3, make([]float32, 1), &hist); len(got) != 0 {
		t.Errorf("fewer than k: %v", got)
	}
}

// TestBoundFactorsAligned: the factors a search gathers for its cut are
// those of the entries its estimates belong to, unfiltered (located by
// segments), filtered (by entries) and among listed ids, so the cut
// weighs each estimate by its own error.
func TestBoundFactorsAligned(t *testing.T) {
	vecs := clustered(5, 6000, 64, 40)
	ix := buildIndex(t, vecs, Options{ListSize: 256})
	q := vecs[17]
	var listed []uint32 // the slots of the even ids
	for id := range uint32(6000) {
		if s, ok := ix.slot.Get(id); ok && id%2 == 0 {
			listed = append(listed, s)
		}
	}
	slices.Sort(listed)
	for name, search := range map[string]func(sc *scratch){
		"unfiltered": func(sc *scratch) { ix.approx(sc, unit(q), 20, nil) },
		"filtered":   func(sc *scratch) { ix.approx(sc, unit(q), 20, func(id uint32) bool { return id%3 != 0 }) },
		"listed":     func(sc *scratch) { ix.amongCoded(sc, unit(q), 20, listed) },
	} {
		sc := ix.getScratch()
		search(sc)
		if len(sc.fac) != len(sc.est) || len(sc.est) == 0 {
			t.Fatalf("%s: %d factors for %d estimates", name, len(sc.fac), len(sc.est))
		}
		for i := range sc.est {
			var a loc
			if name == "unfiltered" {
				seg := sc.segs[0]
				for _, s := range sc.segs {
					if s.start <= uint32(i) {
						seg = s
					}
				}
				a = loc{list: seg.list, pos: uint32(i) - seg.start}
			} else {
				a = sc.ent[i]
			}
			if got, want := sc.fac[i], ix.lists[a.list].factor[a.pos]; got != want {
				t.Fatalf("%s: estimate %d has factor %v, its entry %v", name, i, got, want)
			}
		}
	}
}
