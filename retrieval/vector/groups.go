package vector

import "math"

// Groups of lists, so that an insert ranks a few hundred centroids instead
// of all of them: at a million vectors there are about 1,600 lists, and
// ranking every centroid by its 1-bit code was over a third of an insert's
// CPU, growing with the index.
//
// Every groupEvery-th list (lists 0, groupEvery, 2·groupEvery, …) is a
// pivot, and each list belongs to the group of the pivot whose centroid is
// nearest its own (exact squared distance, ties to the lower pivot). The
// grouping is thus a function of the lists' centroids alone, kept up to
// date as centroids change: an index read from a file, which adds its
// lists in order, groups them as the index that wrote it did, and both
// assign later vectors alike. An insert ranks the pivots by their 1-bit
// codes, then the lists of the groupProbe best groups, and computes the
// nearestShort best of those exactly.
const (
	groupEvery = 16
	// groupFrom is the number of lists from which nearest ranks groups;
	// below it a scan of every centroid code costs a few microseconds.
	groupFrom = 256
	// groupProbe is the number of groups whose lists nearest ranks.
	groupProbe = 12
)

// groups partitions the lists around their pivots. The per-group arrays
// copy the members' centroid codes so that ranking a group's lists is one
// contiguous scan.
type groups struct {
	of   []int32   // per list: its group, or -1 while unassigned
	pos  []int32   // per list: its position in its group
	best []float32 // per list: its score against its group's pivot
	g    []group   // group i has pivot list i·groupEvery
	// The pivots' centroid codes, by group, for one contiguous scan.
	pcodes  []uint64
	pfactor []float32
	ppop    []uint16
}

type group struct {
	lists  []uint32
	codes  []uint64
	factor []float32
	pop    []uint16
	half   []float32
}

// pivotScore is how near list l's centroid is to pivot p's: the larger
// ⟨c_l, c_p⟩ − |c_p|²/2, the nearer.
func (ix *Index) pivotScore(l, p int) float32 {
	P := ix.lists[p]
	return dot(ix.lists[l].centroid, P.centroid) - P.half
}

// regroup updates the groups after list at got a new centroid (or was
// added): its own group, and if it is a pivot, every list's.
func (ix *Index) regroup(at int) {
	gr := &ix.groups
	for len(gr.of) <= at {
		gr.of = append(gr.of, -1)
		gr.pos = append(gr.pos, 0)
		gr.best = append(gr.best, 0)
	}
	if gr.of[at] >= 0 {
		ix.leaveGroup(at)
	}
	if at%groupEvery == 0 {
		g := at / groupEvery
		for len(gr.g) <= g {
			gr.g = append(gr.g, group{})
			gr.pcodes = append(gr.pcodes, make([]uint64, ix.words)...)
			gr.pfactor = append(gr.pfactor, 0)
			gr.ppop = append(gr.ppop, 0)
		}
		copy(gr.pcodes[g*ix.words:(g+1)*ix.words], ix.ccodes[at*ix.words:])
		gr.pfactor[g], gr.ppop[g] = ix.cfactor[at], ix.cpop[at]
		for l := range gr.of {
			switch cur := gr.of[l]; {
			case l == at || cur < 0:
			case int(cur) == g:
				// Its pivot moved: rank it against every pivot again.
				ix.leaveGroup(l)
				ix.joinNearestGroup(l)
			default:
				if s := ix.pivotScore(l, at); s > gr.best[l] || (s == gr.best[l] && g < int(cur)) {
					ix.leaveGroup(l)
					ix.joinGroup(l, g, s)
				}
			}
		}
	}
	ix.joinNearestGroup(at)
}

// joinNearestGroup puts list l in the group of its nearest pivot.
func (ix *Index) joinNearestGroup(l int) {
	best, bg := float32(math.Inf(-1)), -1
	for g := range ix.groups.g {
		if s := ix.pivotScore(l, g*groupEvery); s > best || bg < 0 {
			best, bg = s, g
		}
	}
	ix.joinGroup(l, bg, best)
}

func (ix *Index) joinGroup(l, g int, score float32) {
	gr := &ix.groups
	G := &gr.g[g]
	gr.of[l], gr.pos[l], gr.best[l] = int32(g), int32(len(G.lists)), score
	G.lists = append(G.lists, uint32(l))
	G.codes = append(G.codes, ix.ccodes[l*ix.words:(l+1)*ix.words]...)
	G.factor = append(G.factor, ix.cfactor[l])
	G.pop = append(G.pop, ix.cpop[l])
	G.half = append(G.half, ix.lists[l].half)
}

// leaveGroup takes list l out of its group; the group's last member moves
// into its place.
func (ix *Index) leaveGroup(l int) {
	gr := &ix.groups
	G := &gr.g[gr.of[l]]
	p, last := int(gr.pos[l]), len(G.lists)-1
	if p != last {
		m := G.lists[last]
		G.lists[p] = m
		copy(G.codes[p*ix.words:(p+1)*ix.words], G.codes[last*ix.words:])
		G.factor[p], G.pop[p], G.half[p] = G.factor[last], G.pop[last], G.half[last]
		gr.pos[m] = int32(p)
	}
	G.lists = G.lists[:last]
	G.codes = G.codes[:last*ix.words]
	G.factor, G.pop, G.half = G.factor[:last], G.pop[:last], G.half[:last]
	gr.of[l] = -1
}

// nearestGrouped is the ranking of nearestWith for many lists: the pivots
// by their codes, then the lists of the best groups, into short.
func (ix *Index) nearestGrouped(sc *scratch, qp *queryPlanes, short *topK) {
	gr := &ix.groups
	ng := len(gr.g)
	est := growTo(sc.est, ng)
	qp.scan(gr.pcodes, gr.pfactor, gr.ppop, 0, est)
	top := topK{items: sc.gtop[:0], k: groupProbe}
	for g, e := range est {
		top.push(Scored{ID: uint32(g), Score: e - ix.lists[g*groupEvery].half})
	}
	sc.gtop = top.items
	for _, it := range top.items {
		G := &gr.g[it.ID]
		if len(G.lists) == 0 {
			continue
		}
		est = growTo(est, len(G.lists))
		qp.scan(G.codes, G.factor, G.pop, 0, est)
		for i, e := range est {
			x := Scored{ID: G.lists[i], Score: e - G.half[i]}
			// Most lists rank below the shortlist's worst: skip the call.
			if len(short.items) == short.k && !worse(short.items[0], x) {
				continue
			}
			short.push(x)
		}
	}
	sc.est = est
}

// growTo returns a slice of n floats backed by buf when it is large enough.
func growTo(buf []float32, n int) []float32 {
	if cap(buf) < n {
		return make([]float32, n)
	}
	return buf[:n]
}
