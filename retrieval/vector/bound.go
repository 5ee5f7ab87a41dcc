package vector

// The candidate cuts of stages 1 and 2 by error bounds. A RaBitQ
// estimate's error is proportional to its entry's correction factor (the
// residual's norm over its code's alignment with it): about 0.6 factors
// for a standard deviation on isotropic data, 0.9 on text embedded
// offline. A vector can be among the k best only if its estimate plus a
// margin of its error reaches the k-th best estimate less that margin;
// where the estimates are tight (clustered data, a corpus), that keeps a
// few hundred of the candidates the fixed counts (Oversample·sqrt(k·n))
// keep, and where they are loose (isotropic data), those counts cap it.

// boundWidth1 and boundWidth2 are the margins, in factors, of the stage-1
// and stage-2 estimates. Measured at 100k (TestScale) on a clustered set,
// an isotropic one and two corpora embedded offline: at 1.5 recall@50 is
// that of the fixed counts on all four, at 1 it is too on the corpora and
// the isotropic set but a 16-dimensional set loses a neighbour, at 0.7
// the isotropic set loses 7 points. At 1.5 the corpora keep about a
// fifth of the fixed counts' candidates, and a query costs half as much.
const boundWidth1, boundWidth2 float32 = 1.5, 1.5

// boundCut appends to cand (empty) the entries whose estimate est[i] plus
// boundWidth1·fac[i] reaches the k-th largest of est[j] −
// boundWidth1·fac[j], ascending, and returns it; it returns cand empty
// when more than c reach it, for the caller's cut to c. emin and emax
// bound est. hist is scratch.
func boundCut(cand []uint32, est, fac []float32, k, c int, emin, emax float32, hist *[4096]uint32) []uint32 {
	tau, ok := kthLower(est, fac, boundWidth1, k, emin, emax, hist)
	if !ok {
		return cand[:0]
	}
	fac = fac[:len(est)]
	for i, e := range est {
		if e+boundWidth1*fac[i] >= tau {
			if len(cand) == c {
				return cand[:0]
			}
			cand = append(cand, uint32(i))
		}
	}
	return cand
}

// kthLower returns a value at most the k-th largest of est[i] −
// width·fac[i] (the lower edge of its bucket in a histogram over [emin,
// emax]; lower values share the first bucket), false when the histogram
// cannot place it above emin.
func kthLower(est, fac []float32, width float32, k int, emin, emax float32, hist *[4096]uint32) (float32, bool) {
	if !(emax > emin) {
		return 0, false
	}
	clear(hist[:])
	scale := float32(len(hist)-1) / (emax - emin)
	fac = fac[:len(est)]
	for i, e := range est {
		b := int((e - width*fac[i] - emin) * scale)
		if b < 0 {
			b = 0
		}
		hist[b]++
	}
	b, got := len(hist), 0
	for b > 1 && got < k {
		b--
		got += int(hist[b])
	}
	if got < k {
		return 0, false
	}
	return emin + float32(b)/scale, true
}

// boundCut2 appends to dst (empty) the slots of the stage-2 estimates
// whose score plus boundWidth2·f2[i] reaches the k-th largest score less
// that margin, and returns it; it returns dst empty when more than c2
// reach it, for the caller's cut to c2.
func boundCut2(dst []uint32, scored []Scored, f2 []float32, k, c2 int, est []float32, hist *[4096]uint32) []uint32 {
	if len(scored) <= k {
		return dst[:0]
	}
	est = est[:len(scored)]
	emin, emax := scored[0].Score, scored[0].Score
	for i, s := range scored {
		est[i] = s.Score
		emin, emax = min(emin, s.Score), max(emax, s.Score)
	}
	tau, ok := kthLower(est, f2, boundWidth2, k, emin, emax, hist)
	if !ok {
		return dst[:0]
	}
	f2 = f2[:len(scored)]
	for i, s := range scored {
		if s.Score+boundWidth2*f2[i] >= tau {
			if len(dst) == c2 {
				return dst[:0]
			}
			dst = append(dst, s.ID)
		}
	}
	return dst
}
