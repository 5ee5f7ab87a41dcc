package vector

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"

	"github.com/adaptrag/adaptrag/retrieval"
)

// batchMin is the batch size from which AddBatch ranks and encodes in
// parallel; below it the goroutines cost more than they save.
const batchMin = 64

// AddBatch inserts vs[i] under ids[i] for every i, as Add would one after
// another, but ranks the centroids for the new vectors and encodes them on
// several goroutines at once. Those use the lists as they were when the
// batch began: a vector whose list the batch splits before the vector
// joins it is assigned again, and a list split after it joined re-encodes
// it with the rest. The same sequence of batches gives the same index
// whatever the scheduling (though not the index that Add one at a time
// would give). It fails, changing nothing, when any vector would fail Add
// or len(ids) != len(vs).
func (ix *Index) AddBatch(ids []uint32, vs [][]float32) error {
	if len(ids) != len(vs) {
		return fmt.Errorf("vector: %w: %d ids for %d vectors", retrieval.ErrInvalid, len(ids), len(vs))
	}
	for i, v := range vs {
		if len(v) != ix.dim || ix.dim <= 0 {
			return fmt.Errorf("vector: %w: got %d, want %d", retrieval.ErrDimension, len(v), ix.dim)
		}
		norm := math.Sqrt(float64(dot(v, v)))
		if norm == 0 || math.IsNaN(norm) || math.IsInf(norm, 0) {
			return fmt.Errorf("vector: %w: vector of id %d has norm %v", retrieval.ErrInvalid, ids[i], norm)
		}
	}
	if !ix.trained || len(ids) < batchMin || repeats(ids) {
		// Untrained, the batch may train the index midway; a repeated id
		// must replace its own earlier vector: one at a time.
		for i, v := range vs {
			if err := ix.Add(ids[i], v); err != nil {
				return err
			}
		}
		return nil
	}

	// Store the vectors and take the replaced ones out of their lists.
	slots := make([]uint32, len(ids))
	for i, id := range ids {
		s := ix.slotFor(id)
		v := vs[i]
		dst := ix.store(s, v, 1/math.Sqrt(float64(dot(v, v))))
		ix.addSum(dst, 1)
		slots[i] = s
	}

	// Rank and encode in parallel; nothing below writes to the index.
	fs := ix.fineStride()
	type job struct {
		list  *list
		l     int
		coded coded
	}
	jobs := make([]job, len(ids))
	codes := make([]uint64, len(ids)*ix.words)
	fine := make([]uint64, len(ids)*fs)
	workers := min(runtime.GOMAXPROCS(0), (len(ids)+batchMin-1)/batchMin)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			sc := ix.getScratch()
			defer ix.pool.Put(sc)
			buf := make([]float32, ix.pdim)
			vbuf := make([]float32, ix.dim)
			for i := w; i < len(ids); i += workers {
				v := ix.view(slots[i], vbuf)
				ix.rotate(sc.rot, v, nil)
				l := ix.nearestWith(sc, v, sc.rot)
				L := ix.lists[l]
				c := encodeResidual(buf, sc.rot, L.rc, codes[i*ix.words:(i+1)*ix.words], fine[i*fs:(i+1)*fs])
				jobs[i] = job{list: L, l: l, coded: c}
			}
		})
	}
	wg.Wait()

	// Join the lists in batch order, splitting as Add does.
	for i, s := range slots {
		j := &jobs[i]
		if ix.lists[j.l] != j.list {
			// Split since: assign again against the lists as they are now.
			v := ix.view(s, ix.scratchW())
			rv := ix.assign.rotated(ix, v)
			l := ix.nearest(v, rv)
			ix.link(s, l, rv)
			ix.splitLarge(l)
			continue
		}
		L := j.list
		ix.place(s, j.l)
		p := len(L.slots) - 1
		copy(L.codes[p*ix.words:(p+1)*ix.words], codes[i*ix.words:(i+1)*ix.words])
		copy(L.fine[p*fs:(p+1)*fs], fine[i*fs:(i+1)*fs])
		L.factor[p], L.pop[p] = j.coded.factor, j.coded.pop
		L.resid += float64(j.coded.l2)
		ix.splitLarge(j.l)
	}
	return nil
}

// repeats reports whether an id occurs twice in ids.
func repeats(ids []uint32) bool {
	sorted := slices.Clone(ids)
	slices.Sort(sorted)
	for i := 1; i < len(sorted); i++ {
		if sorted[i] == sorted[i-1] {
			return true
		}
	}
	return false
}
