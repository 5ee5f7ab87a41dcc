// Package vector is an in-memory dense index for cosine similarity: an
// inverted file (IVF) over 1-bit RaBitQ codes, with 2-bit and exact
// re-scoring, persisted without re-encoding.
//
// # Method
//
// Each vector is kept in full (float32, normalized by Add) for exact
// scoring. Up to Options.ExactThreshold vectors, Search is an exact scan.
// Past it, the vectors are partitioned into inverted lists: one list at
// first, centred on the mean, and a list that grows past Options.ListSize
// splits in two by 2-means over its own members (O(ListSize·D), never a
// global retraining; duplicates that 2-means cannot separate are split in
// halves). A new vector joins the list of the nearest centroid, found by
// ranking the centroids with their own 1-bit codes (past 256 lists, only
// those of the groups of lists nearest it: groups.go) and computing the
// best eight exactly. In its list, a vector is stored as the code of u, its
// residual from the centroid after a seeded random rotation (permutation,
// sign flips and 64-wide Walsh–Hadamard blocks): one plane of sign bits,
// contiguous with the rest of the list, and one plane of magnitude bits.
//
// A query is rotated the same way and quantized to 4 bits per dimension as
// bit planes, so that its inner product with a bit plane is a few
// AND+popcount operations per 64 dimensions. Search then runs:
//
//  1. the lists are ordered by their reach, ⟨q, c⟩ plus twice the
//     typical maximum of their residuals' projections on q, and probed in
//     that order until Probe·sqrt(max(k, 50)·N) vectors have been
//     scanned, and then on while a list's reach is above the k-th best
//     estimate so far (a filtered search orders them by the distance of
//     their centroid and stops by its own rule: see Filters); each vector
//     gets ⟨q, c⟩ plus the 1-bit estimate of ⟨q, u⟩ (scaled by the
//     unbiased correction of RaBitQ, Gao & Long, SIGMOD 2024), so
//     estimates compare across lists;
//  2. the candidates are the vectors whose estimate plus 1.5 times its
//     correction factor (the scale of its error) reaches the k-th largest
//     estimate less that margin (bound.go), at most
//     Oversample·sqrt(k·M) of the M scanned (a histogram cuts to that
//     many when more pass); those get the 2-bit estimate (their magnitude
//     planes gathered in list order and weighed by the scan's popcount
//     kernel), and the same cut on those keeps at most Rerank·sqrt(k·M);
//  3. those are scored exactly with the stored vectors (or their int8
//     copies, for an index left on disk: see Memory), read in memory
//     order, and the best k are returned.
//
// The candidates of stages 2 and 3 lie at scattered places, mostly out of
// cache after a long scan: each stage first loads them in a pass of its
// own, whose loads nothing waits on, so that their misses overlap.
//
// On amd64, where the machine has them, the float32 inner products run as
// an AVX kernel that performs the Go loop's own operations (same bits, so
// an index does not depend on the machine that built it), the int8 ones
// as AVX2 FMA, and the 1-bit scan of 384-dimensional codes as AVX-512
// popcounts (eight codes summed at once, and their estimates computed
// sixteen at a time with the Go loop's operations), or, without AVX-512,
// AVX2 nibble lookups (simd_amd64.s). BenchmarkKernels, quiet machine
// with AVX-512: a 384-d float32 product 64 ns against 154 for the Go
// loop, the int8 one 37 against 274, the 1-bit scan 6.3 ns a code against
// 23.3; on a machine without it (AMD EPYC, busy), the scan by AVX2 10.6
// to 12.8 ns a code against 18 to 26. Summing eight codes at once took
// the AVX-512 scan from 3.8–4.1 to 2.8–3.2 ns a code (`go test -run '^$'
// -bench Kernels/scan1024/kernel ./retrieval/vector`, the two builds
// alternating, load average 3.5).
//
// The rule past the budget is for a query almost equally far from many
// centroids, whose neighbours the budget's cut among those lists misses.
// Its first form probed the lists at most 1.3 times as far (in squared
// distance) as the nearest one. On the
// xquad_en corpus embedded offline (100k chunks made of a few hundred
// documents, their sentence windows and pairs of windows: a sentence
// recurs in many chunks, which fall in many lists), the list at the cut
// is a median 1.11 times as far as the nearest and recall@50 was 0.68 by
// the budget alone; on the clustered workload it is 1.65 times, and the
// lists within 1.3 hold under half a budget. With the rule and Probe 4
// (was 5), `adaptrag bench retrieval --n 100000 [--workload
// corpus:../shared/data/retrieval/xquad_en] --json` (docs/benchmarks.md,
// "Retrieval at scale"): clustered 0.90 ms at recall@50 0.989 → 0.80 ms at
// 0.992, the corpus 0.79 ms at 0.681 → 2.67 ms at 0.956.
//
// On the corpus that rule leaves a near-full scan (94% of the codes, and
// about 6,500 candidates for stage 2), whose time a profile found in the
// scan's sums and estimates, one code at a time, and in the cache misses
// of stages 2 and 3. With those reads overlapped, stage 2 weighed by the
// scan's kernel and selected by histogram, and the kernel summing eight
// codes and computing sixteen estimates at a time (the same results):
// BenchmarkOnDiskCorpus (`go test -run '^$' -bench OnDiskCorpus
// -benchtime 2000x ./retrieval/vector`, the two builds alternating, load
// average 3 to 4), 1.59–1.90 → 1.41–1.52 ms a query, CPU 1.62–1.79 →
// 1.25–1.35 ms, recall@50 0.962; `adaptrag bench retrieval --n 100000
// --workload corpus:../shared/data/retrieval/xquad_en --json`, dense p50
// 1.9–2.8 ms (CPU 1.8–2.9) → 1.5–2.1 ms (CPU 1.3–2.0) at load 4 to 8,
// recall 0.956; clustered 0.51–0.71 (CPU 0.56–0.73) → 0.36–0.40 ms
// (0.44–0.48), recall 0.992 (docs/benchmarks.md).
//
// # Filters
//
// Search with accept treats the accepted vectors as an index of their own:
// it estimates their number from the rate seen while probing and goes on
// until it has kept half the budget such an index would scan, so a filter
// passing a fraction f of the vectors scans about 1/(2·sqrt(f)) times more
// lists, and the candidate counts follow the vectors scanned, so a filter
// that leaves few candidates has them all scored exactly (an exact answer
// when fewer than about 3·sqrt(k·M) vectors pass). SearchAmong is the
// plan for a filter whose matches the caller can list (a payload index):
// it considers only those.
//
// # Why IVF and not HNSW: measurements
//
// On this 2-core machine, 384 dimensions, top 50, the clustered workload
// (internal/workload.NewClustered, 1024 clusters), recall@50 against exact
// search. The comparison ran both indexes in one process
// (TestHNSWCompare) while other jobs loaded the machine (load average 20
// to 30), so its figures are CPU time per operation, inflated about 1.5
// times by contention but comparable with each other:
//
//	                        build CPU/vector          query CPU  recall@50  memory/vector beyond the vector
//	IVF, N = 20k            -                         0.50 ms    0.977      126 B (list entry, address)
//	HNSW, N = 20k, ef=100   634 µs (781 distances)    0.46 ms    0.964      103 B of links, plus slices
//	HNSW, N = 20k, ef=200                             0.80 ms    0.988
//	IVF, N = 100k, Probe 6  about 60 µs               1.57 ms    0.993      126 B
//	HNSW, N = 100k, ef=200  750 µs (776 distances)    1.24 ms    0.945      106 B of links, plus slices
//	HNSW, N = 100k, ef=400                            2.06 ms    0.972
//
// HNSW is a minimal implementation (hnsw_compare_test.go: M = 16,
// efConstruction = 100, closest-M pruning without hnswlib's diversity
// heuristic, so its recall is a lower bound). Its query cost grows as
// log N where IVF's grows as sqrt N, but on this workload it needed
// ef = 400 at 100k to approach the recall IVF reached with less CPU, and
// an insert costs it about 800 distance evaluations, over ten times the
// IVF insert (popcount estimates against the centroids, eight distances,
// one encoding and a share of a split). Ingest must sustain 20k chunks a
// second at 1M on two cores: HNSW inserts inline miss that by over ten
// times, and built in the background they fall further behind every
// second, so that the exact-scanned unindexed tail grows with the ingest.
// The lists reuse the flat index's quantised codes, so their memory is
// the same.
//
// The index alone, with the machine nearly idle (load average about 2.5;
// TestScale, wall-clock p50 over 200 queries):
//
//	                          build CPU/vector  p50      recall@50
//	N = 100k                  68 µs             0.81 ms  0.989
//	N = 100k, 10% filter                        1.22 ms  0.966
//	N = 100k, 1% filter                         1.48 ms  0.990
//	N = 100k, every list      -                 4.48 ms  1.000
//	N = 100k, isotropic       50 µs             4.34 ms  0.980 (every list, see below)
//	N = 1M                    87 µs             2.38 ms  0.999
//	N = 1M, 1% filter                           6.62 ms  0.995
//
// (1M: 184 s for the whole TestScale run, 1,644 MiB of live heap, 1,723 B
// a vector.) An insert by Add costs 68 to 87 µs of CPU: about a third is
// re-encoding and 2-means when lists split, a quarter ranking the
// centroids. AddBatch ranks and encodes a batch on every core and splits
// on two: BenchmarkDenseIngest builds 100k clustered vectors in 2.5 to
// 2.6 s, batches of 1000. Ranking every centroid grew with the lists
// (1,600 at 1M: about 80 µs an insert); ranking groups instead, and the
// branch-free encoding and written-out transform, took the last 100k of a
// million clustered vectors by AddBatch from 107 to 54–67 µs of CPU each
// (zz test, noisy machine), with recall@50 unchanged (0.9988 on 50
// queries); up to about 150k vectors (under 256 lists) the index is
// bit-for-bit the one built before. The longest stall is one split,
// a few milliseconds. At 1M the file is
// 1,656 B a vector; ReadIndex took 1.4 s (1.3 s of CPU: zeroing, copying
// and checksumming 1.6 GB) from the page cache and re-encodes nothing.
//
// Isotropic data (the peers' workload) has no clusters for lists to
// follow: they leave 0.986 of the variance in the residuals (clustered:
// 0.76) and a budgeted probe found a quarter of the true neighbours
// (recall@50 0.26 at 100k). When the lists leave over 0.9 of the
// variance, Search therefore probes every list: isotropic recall stays
// 0.980 at 100k at the cost of a full scan, 15% slower than the flat index
// was (the price of no structure, and of the lists' bookkeeping). A
// harder clustered mixture (1000 clusters of about 100 vectors at 100k,
// the clustered helper of the tests) needs more probing: recall@50 0.936
// at Probe 6 and 0.973 at Probe 12.
//
// Filters cost at most twice the unfiltered search at 100k; at 1M a 1%
// filter (10,000 matches) costs 6.6 ms by Search with accept. SearchAmong
// scores up to 2,000 listed vectors exactly, reading each whole (1.5 KiB
// at a random place); past that it estimates them all from their codes
// (grouped by list, each list's centroid term computed once) and scores
// only the best exactly, as a probe that scanned just them would.
// BenchmarkSearchAmong (clustered 100k, listed ids spread evenly, wall
// time with another job running): exact 0.4 ms at 2,000 and 6.4 ms at
// 10,000, by codes 0.5 and 2.1 to 2.7 ms, recall@50 1.000 against the
// exact top 50 of the listed ids from 5,000 on (0.9995 at 1,000).
//
// # Memory, and int8
//
// A vector costs 4·D bytes in full, 4 in the id array and 8 in its
// slot's list address, and in its list 4·D/32 bytes of sign code, D/64·8+8
// of stage-2 data and 14 more (slot, id, correction, popcount): 1,666 B at
// 384 dimensions, plus the id map entry and the lists' growth slack.
// BenchmarkDenseIngest measured 174 MiB of live heap for 100k isotropic
// vectors (1.8 KiB each; the flat index took 177), of which the float32
// copy is 1,536 B.
//
// ReadIndexAt leaves that copy in the file when the index holds more than
// Options.ResidentLimit vectors (65,536 by default) and keeps an int8 copy
// of each in memory instead (one scale per vector, D+4 bytes), which the
// exact stage, SearchExact and SearchAmong score. Vector, ReadVector and
// WriteTo read the float32 originals back from the file, each checked
// against its CRC-32C; a vector written afterwards (replaced, or moved
// into a slot a removal freed) keeps its float32 copy in memory.
// BenchmarkOnDisk, clustered 100k, the same index read both ways:
//
//	           heap/vector  recall@50  CPU/query
//	resident   1,687 B      0.991      0.77 ms
//	on disk      547 B      0.988      0.67 ms
//
// (Load average about 4; the int8 products are fewer bytes to read.)
// TestInt8Tradeoff measured the exact top 50 by int8 at recall@50 0.995
// against float32 on the clustered workload: the exact stage loses under
// half a point of recall, and a score moves by about 0.001.
//
// # Persistence
//
// WriteTo writes the rotation seed, the vectors, the lists (centroids,
// members, codes) as raw little-endian arrays, with a version, a CRC-32C
// of the header (checked before anything is allocated from its counts), a
// CRC-32C of each vector and one of the rest of the file; ReadIndex reads
// them back into place, re-encoding nothing but the few centroid codes,
// and checks that every vector is in exactly one list. Damage returns an
// error matching ErrCorrupt; ReadIndexAt, which does not read the vectors
// it leaves in the file, finds a damaged one when it reads it.
//
// # Concurrency
//
// Search, SearchExact, SearchAmong, Vector, AppendVector, ReadVector and
// WriteTo may be called from many goroutines at once, but not while Add or
// Remove runs: the caller serializes writes against reads (memstore holds
// an RWMutex).
package vector

import (
	"cmp"
	"fmt"
	"github.com/adaptrag/adaptrag/internal/slots"
	"math"
	"math/bits"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"unsafe"

	"github.com/adaptrag/adaptrag/retrieval"
)

// Defaults for the zero Options.
const (
	// DefaultExactThreshold is the size up to which Search is a flat exact
	// scan. BenchmarkCrossover (384 dimensions, k = 50) measured the exact
	// scan faster at 500 vectors (92 µs against 106 µs) and slower from
	// 1000 (189 µs against 145 µs; 290 against 171 at 2000); below 1000,
	// an exact answer costs nothing extra.
	DefaultExactThreshold = 1000
	// DefaultOversample scales the candidates kept by the 1-bit scan.
	DefaultOversample = 3
	// DefaultRerank scales the candidates scored exactly.
	DefaultRerank = 0.5
	// DefaultListSize is the size at which a list splits in two.
	DefaultListSize = 1024
	// DefaultProbe scales the vectors a search scans, Probe·sqrt(k·N).
	DefaultProbe = 4
	// DefaultResidentLimit is ReadIndexAt's Options.ResidentLimit when
	// zero: 65,536 vectors (96 MiB of float32 at 384 dimensions). An
	// index that small keeps exact scores, and a large one saves three
	// quarters of its vectors' memory.
	DefaultResidentLimit = 1 << 16
	// DefaultSeed seeds the rotation when Options.Seed is zero.
	DefaultSeed = 0x5eed
)

// Options configures an Index. The zero value means the documented defaults.
type Options struct {
	// ExactThreshold is the number of vectors up to which Search scans
	// exactly and no codes are kept; 0 means DefaultExactThreshold and a
	// negative value builds codes from the first vector on.
	ExactThreshold int
	// Oversample scales the candidates that the 1-bit scan keeps for the
	// 2-bit estimate, Oversample·sqrt(k·M) of the M vectors scanned; 0
	// means DefaultOversample.
	Oversample float64
	// Rerank scales the candidates that are then scored exactly,
	// Rerank·sqrt(k·M) and at least k; 0 means DefaultRerank. Larger values
	// of either are slower and more accurate.
	Rerank float64
	// ListSize is the number of vectors at which an inverted list splits
	// in two; 0 means DefaultListSize.
	ListSize int
	// Probe scales how many vectors a search scans: the lists nearest the
	// query are probed until Probe·sqrt(k·N) vectors have been; 0 means
	// DefaultProbe. Larger values are slower and more accurate.
	Probe float64
	// Seed seeds the random rotation; 0 means DefaultSeed. Builds with the
	// same seed and the same sequence of writes give the same index.
	Seed uint64
	// Exact disables approximate search altogether (no codes are built).
	Exact bool
	// ResidentLimit is the number of vectors up to which ReadIndexAt
	// reads every vector into memory; past it, the float32 originals stay
	// in the file and searches score int8 copies. 0 means
	// DefaultResidentLimit; a negative value keeps every vector in memory.
	ResidentLimit int
}

// residentLimit returns the effective ResidentLimit.
func (o Options) residentLimit() int {
	switch {
	case o.ResidentLimit == 0:
		return DefaultResidentLimit
	case o.ResidentLimit < 0:
		return math.MaxInt
	}
	return o.ResidentLimit
}

// Scored is a search result: a vector's id and its cosine with the query.
type Scored struct {
	ID    uint32
	Score float32
}

// Index is a dense vector index. See the package documentation for the
// concurrency contract.
type Index struct {
	dim       int
	pdim      int // dim rounded up to a multiple of 64: the code length in bits
	words     int // pdim / 64
	threshold int
	listMax   int
	oversamp  float64
	rerankF   float64
	probe     float64
	exact     bool
	seed      uint64

	// vecs holds the normalized vectors in blocks of vecBlock slots, dim
	// floats each (the last block may be shorter): a block is never moved
	// once full, so adding a vector never copies the others (one flat array
	// at a million 384-d vectors copied 1.2 GB at a time as it grew,
	// stalling a write for seconds).
	vecs [][]float32
	// sp, when ReadIndexAt left the vectors of slots [0, nsp) in the file,
	// holds their int8 copies (spill.go); vecs then holds slots nsp on.
	sp   *spill
	nsp  uint32
	wbuf []float32   // dim scratch for writes; writes are serialized
	sum  []float64   // Σ of the stored vectors, for their variance
	ids  []uint32    // slot -> id
	slot slots.Table // id -> slot

	// Rotation, fixed at New.
	perm  []int32   // pdim entries: source index, or -1 for padding
	signs []float32 // pdim entries of ±1

	// Inverted lists, built once the index first exceeds the threshold.
	trained bool
	lists   []*list
	where   []loc     // slot -> its list and position there
	encBuf  []float32 // pdim scratch for encode; writes are serialized
	// The 1-bit codes of the centroids themselves (rotated, not
	// centred), so that an insert ranks the lists by popcounts and
	// computes only a few exact distances.
	ccodes  []uint64
	cfactor []float32
	cpop    []uint16
	groups  groups  // the lists around pivots, for nearest (groups.go)
	assign  scratch // planes and buffers for nearest; writes are serialized

	pool sync.Pool // *scratch
}

// list is an inverted list: the vectors nearest one centroid, with their
// 1-bit codes stored contiguously so that probing it is a linear scan.
// Codes encode u, the rotated residual of a vector from the centroid.
type list struct {
	centroid []float32 // dim; fixed while the list exists
	rc       []float32 // pdim: the rotated centroid
	resid    float64   // Σ |u|² over the entries: the variance the list leaves
	half     float32   // |centroid|²/2, for the squared-distance order
	slots    []uint32
	ids      []uint32  // per entry, the slot's id: a filter reads it in order
	codes    []uint64  // words per entry: sign bits of u
	factor   []float32 // per entry: |u|² / ⟨u, sign(u)⟩, RaBitQ's correction
	pop      []uint16  // per entry: number of set bits in the code
	// fine holds what stage 2 reads, fineStride per entry: the magnitude
	// plane (1 where |u_j| exceeds the entry's threshold), then the
	// float32 bits of |u|²/⟨u, r⟩ (the 2-bit correction) with the
	// magnitude popcount in the high half. Per list, so that stage 2 reads
	// the candidates of a probed list in ascending memory order.
	fine []uint64
}

type loc struct{ list, pos uint32 }

// New returns an empty index for vectors of dim dimensions. dim must be
// positive; a non-positive dim makes every Add fail.
func New(dim int, o Options) *Index {
	ix := &Index{
		dim:       dim,
		threshold: o.ExactThreshold,
		listMax:   o.ListSize,
		exact:     o.Exact,
	}
	if ix.threshold == 0 {
		ix.threshold = DefaultExactThreshold
	}
	if ix.listMax <= 0 {
		ix.listMax = DefaultListSize
	}
	ix.setSearch(o)
	if dim <= 0 {
		return ix
	}
	ix.pdim = (dim + 63) &^ 63
	ix.words = ix.pdim / 64
	seed := o.Seed
	if seed == 0 {
		seed = DefaultSeed
	}
	ix.seed = seed
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	ix.perm = make([]int32, ix.pdim)
	for i := range ix.perm {
		ix.perm[i] = int32(i)
		if i >= dim {
			ix.perm[i] = -1
		}
	}
	r.Shuffle(len(ix.perm), func(i, j int) { ix.perm[i], ix.perm[j] = ix.perm[j], ix.perm[i] })
	ix.signs = make([]float32, ix.pdim)
	for i := range ix.signs {
		ix.signs[i] = 1
		if r.Uint64()&1 == 1 {
			ix.signs[i] = -1
		}
	}
	return ix
}

// setSearch applies the search-time options.
func (ix *Index) setSearch(o Options) {
	if ix.oversamp = o.Oversample; ix.oversamp <= 0 {
		ix.oversamp = DefaultOversample
	}
	if ix.rerankF = o.Rerank; ix.rerankF <= 0 {
		ix.rerankF = DefaultRerank
	}
	if ix.probe = o.Probe; ix.probe <= 0 {
		ix.probe = DefaultProbe
	}
}

// Dim returns the dimension of the index.
func (ix *Index) Dim() int { return ix.dim }

// Len returns the number of vectors in the index.
func (ix *Index) Len() int { return len(ix.ids) }

// Add inserts v under id, replacing any vector already stored under id. The
// index copies and normalizes v, so the caller need not. It fails with an
// error matching retrieval.ErrDimension when len(v) is not Dim, and
// retrieval.ErrInvalid when v is zero or not finite.
func (ix *Index) Add(id uint32, v []float32) error {
	if len(v) != ix.dim || ix.dim <= 0 {
		return fmt.Errorf("vector: %w: got %d, want %d", retrieval.ErrDimension, len(v), ix.dim)
	}
	norm := math.Sqrt(float64(dot(v, v)))
	if norm == 0 || math.IsNaN(norm) || math.IsInf(norm, 0) {
		return fmt.Errorf("vector: %w: vector of id %d has norm %v", retrieval.ErrInvalid, id, norm)
	}
	if ix.sum == nil {
		ix.sum = make([]float64, ix.dim)
	}
	s := ix.slotFor(id)
	dst := ix.store(s, v, 1/norm)
	ix.addSum(dst, 1)
	if ix.trained {
		rv := ix.assign.rotated(ix, dst)
		l := ix.nearest(dst, rv)
		ix.link(s, l, rv)
		ix.splitLarge(l)
	} else if !ix.exact && len(ix.ids) > ix.threshold {
		ix.train()
	}
	return nil
}

// slotFor returns the slot that id's new vector goes to: the one it had,
// taken out of its list and of the running sum, or a new one at the end.
func (ix *Index) slotFor(id uint32) uint32 {
	if s, ok := ix.slot.Get(id); ok {
		if ix.trained {
			ix.unlink(s)
		}
		ix.addSum(ix.view(s, ix.scratchW()), -1)
		return s
	}
	s := uint32(len(ix.ids))
	ix.slot.Set(id, s, slotReach(&ix.slot))
	ix.ids = append(ix.ids, id)
	ix.growVecs(s)
	if ix.trained {
		ix.where = append(ix.where, loc{})
	}
	return s
}

// Grow reserves room for n more vectors, so that adding them does not
// copy the per-vector arrays as they grow. The vectors themselves are kept
// in blocks that never move; only the first, for a small index, grows by
// copying.
func (ix *Index) Grow(n int) {
	if n <= 0 || ix.dim <= 0 {
		return
	}
	if len(ix.vecs) <= 1 {
		// Only the first block grows by copying; later ones are allocated
		// whole.
		b0 := ix.vecs
		if len(b0) == 0 {
			b0 = [][]float32{nil}
		}
		b0[0] = slices.Grow(b0[0], min(max(len(ix.ids)-int(ix.nsp), 0)+n, vecBlock)*ix.dim-len(b0[0]))
		ix.vecs = b0
	}
	ix.ids = slices.Grow(ix.ids, n)
	if ix.trained {
		ix.where = slices.Grow(ix.where, n)
	}
}

// Remove deletes the vector stored under id, if any. The last vector moves
// into the freed slot, so storage stays dense.
func (ix *Index) Remove(id uint32) {
	s, ok := ix.slot.Get(id)
	if !ok {
		return
	}
	ix.slot.Del(id)
	if ix.trained {
		ix.unlink(s)
	}
	ix.addSum(ix.view(s, ix.scratchW()), -1)
	last := uint32(len(ix.ids) - 1)
	if s != last {
		moved := ix.ids[last]
		ix.ids[s] = moved
		ix.slot.Set(moved, s, slotReach(&ix.slot))
		ix.moveVec(s, last)
		if ix.trained {
			w := ix.where[last]
			ix.where[s] = w
			ix.lists[w.list].slots[w.pos] = s
		}
	}
	ix.ids = ix.ids[:last]
	if last < ix.nsp {
		delete(ix.sp.over, last)
	} else {
		lb := len(ix.vecs) - 1
		if ix.vecs[lb] = ix.vecs[lb][:len(ix.vecs[lb])-ix.dim]; len(ix.vecs[lb]) == 0 && lb > 0 {
			ix.vecs[lb] = nil
			ix.vecs = ix.vecs[:lb]
		}
	}
	if ix.trained {
		ix.where = ix.where[:last]
	}
}

func (ix *Index) addSum(v []float32, sign float64) {
	for i, x := range v {
		ix.sum[i] += sign * float64(x)
	}
}

// unexplained returns the share of the vectors' variance that the lists
// leave in the residuals: near 1 when the data has no clusters for the
// lists to follow (isotropic noise), about 0.5 or less on clustered data.
func (ix *Index) unexplained() float64 {
	n := float64(len(ix.ids))
	if n == 0 {
		return 0
	}
	var mu2, resid float64
	for _, x := range ix.sum {
		mu2 += (x / n) * (x / n)
	}
	for _, L := range ix.lists {
		resid += L.resid
	}
	if v := 1 - mu2; v > 0 {
		return resid / n / v
	}
	return 0
}

// ReadVector appends the normalized vector stored under id to dst and
// returns the extended slice, and whether id is stored: Vector without an
// allocation per call, for a caller that copies many (a snapshot of every
// vector). A vector that ReadIndexAt left in its file is read from there;
// an error reading it, or a checksum that does not match (ErrCorrupt), is
// returned with dst unchanged.
func (ix *Index) ReadVector(dst []float32, id uint32) ([]float32, bool, error) {
	s, ok := ix.slot.Get(id)
	if !ok {
		return dst, false, nil
	}
	if s < ix.nsp {
		v, err := ix.sp.original(dst, s)
		return v, err == nil, err
	}
	return append(dst, ix.vec(s)...), true, nil
}

// AppendVector is ReadVector without the error: false when id is not
// stored or its vector cannot be read.
func (ix *Index) AppendVector(dst []float32, id uint32) ([]float32, bool) {
	v, ok, err := ix.ReadVector(dst, id)
	return v, ok && err == nil
}

// Vector returns a copy of the normalized vector stored under id (see
// ReadVector).
func (ix *Index) Vector(id uint32) ([]float32, bool) {
	return ix.AppendVector(nil, id)
}

// vec returns the vector of slot s, which must be in memory (s >= nsp).
func (ix *Index) vec(s uint32) []float32 {
	r := s - ix.nsp
	b, o := ix.vecs[r/vecBlock], int(r%vecBlock)*ix.dim
	return b[o : o+ix.dim : o+ix.dim]
}

// view returns the vector of slot s, or for a slot left on disk its int8
// copy scaled back into buf: for the work where that rounding does not
// matter (lists, codes, sums).
func (ix *Index) view(s uint32, buf []float32) []float32 {
	if s < ix.nsp {
		return ix.sp.approx(s, buf)
	}
	return ix.vec(s)
}

// score is the inner product of the normalized query with slot s: exact,
// or from the int8 copy of a slot left on disk.
func (ix *Index) score(q []float32, s uint32) float32 {
	if s < ix.nsp {
		return dot8Q(q, ix.sp.code(s)) * ix.sp.scale[s]
	}
	return dot(q, ix.vec(s))
}

// store writes v scaled by inv as the vector of slot s and returns the
// stored copy.
func (ix *Index) store(s uint32, v []float32, inv float64) []float32 {
	var dst []float32
	if s < ix.nsp {
		dst = make([]float32, ix.dim)
	} else {
		dst = ix.vec(s)
	}
	for i, x := range v {
		dst[i] = float32(float64(x) * inv)
	}
	if s < ix.nsp {
		ix.sp.set(s, dst)
	}
	return dst
}

// moveVec copies the vector of slot from into slot to < from.
func (ix *Index) moveVec(to, from uint32) {
	switch {
	case to >= ix.nsp:
		copy(ix.vec(to), ix.vec(from))
	case from < ix.nsp:
		ix.sp.move(to, from)
	default:
		ix.sp.set(to, slices.Clone(ix.vec(from)))
	}
}

// slotReach is how far the id table's array may grow: four times the ids
// it holds, plus room for a small index.
func slotReach(t *slots.Table) int64 { return 4*int64(t.Len()+1) + 1024 }

// scratchW returns the writers' dim scratch buffer.
func (ix *Index) scratchW() []float32 {
	if len(ix.wbuf) != ix.dim {
		ix.wbuf = make([]float32, ix.dim)
	}
	return ix.wbuf
}

// vecBlock is the number of vectors in a block of Index.vecs (6 MiB at 384
// dimensions).
const vecBlock = 4096

// growVecs makes room for slot s, the next one: in the last block, or in a
// new block allocated whole. The first block grows as a slice does, so
// that a small index holds no more than it needs.
func (ix *Index) growVecs(s uint32) {
	if s < ix.nsp {
		return // a slot of the spill, freed and taken again
	}
	b := int((s - ix.nsp) / vecBlock)
	if b == len(ix.vecs) {
		var blk []float32
		if b > 0 {
			blk = make([]float32, 0, vecBlock*ix.dim)
		}
		ix.vecs = append(ix.vecs, blk)
	}
	ix.vecs[b] = slices.Grow(ix.vecs[b], ix.dim)[:len(ix.vecs[b])+ix.dim]
}

// train starts the inverted lists: one list centred on the mean of the
// stored vectors, split until no list exceeds the list size.
func (ix *Index) train() {
	n := len(ix.ids)
	mean := make([]float64, ix.dim)
	buf := make([]float32, ix.dim)
	for s := range n {
		for i, x := range ix.view(uint32(s), buf) {
			mean[i] += float64(x)
		}
	}
	c := make([]float32, ix.dim)
	for i := range mean {
		c[i] = float32(mean[i] / float64(n))
	}
	ix.trained = true
	ix.encBuf = make([]float32, ix.pdim)
	ix.lists = nil
	ix.ccodes, ix.cfactor, ix.cpop = nil, nil, nil
	ix.groups = groups{}
	ix.addList(c)
	ix.where = make([]loc, n)
	for s := range n {
		ix.link(uint32(s), 0, nil)
	}
	ix.splitLarge(0)
}

func newList(centroid []float32) *list {
	return &list{centroid: centroid, half: dot(centroid, centroid) / 2}
}

// addList appends a list centred on c, or replaces list at when at is
// below the number of lists, and keeps the centroid codes in step.
func (ix *Index) addList(c []float32) int { return ix.setList(len(ix.lists), c) }

func (ix *Index) setList(at int, c []float32) int {
	if at == len(ix.lists) {
		ix.lists = append(ix.lists, nil)
		ix.ccodes = append(ix.ccodes, make([]uint64, ix.words)...)
		ix.cfactor = append(ix.cfactor, 0)
		ix.cpop = append(ix.cpop, 0)
	}
	ix.lists[at] = newList(c)
	buf := make([]float32, ix.pdim)
	ix.rotate(buf, c, nil)
	ix.lists[at].rc = buf
	code := ix.ccodes[at*ix.words : (at+1)*ix.words]
	clear(code)
	var l1, l2 float64
	for j, x := range buf {
		l1 += math.Abs(float64(x))
		l2 += float64(x) * float64(x)
		if x >= 0 {
			code[j>>6] |= 1 << (j & 63)
		}
	}
	ix.cpop[at] = uint16(bits32(code))
	ix.cfactor[at] = 0
	if l1 > 0 {
		ix.cfactor[at] = float32(l2 / l1)
	}
	ix.regroup(at)
	return at
}

func bits32(code []uint64) int {
	p := 0
	for _, c := range code {
		p += bits.OnesCount64(c)
	}
	return p
}

// nearestExact is the number of lists up to which nearest computes every
// distance exactly; above it, it computes the few best by the centroids'
// 1-bit estimates (error about 0.03 in cosine at 384 dimensions, far less
// than the gaps between the best few centroids' distances).
const (
	nearestExact = 64
	nearestShort = 8
)

// nearest returns the list whose centroid is nearest v in Euclidean
// distance: the largest ⟨v, c⟩ − |c|²/2.
func (ix *Index) nearest(v, rv []float32) int { return ix.nearestWith(&ix.assign, v, rv) }

// nearestWith is nearest with the buffers of sc (planes, est, fine), so
// that several goroutines may rank the centroids at once while no write
// changes the lists.
func (ix *Index) nearestWith(sc *scratch, v, rv []float32) int {
	best, bl := float32(math.Inf(-1)), 0
	if len(ix.lists) <= nearestExact {
		for l, L := range ix.lists {
			if d := dot(v, L.centroid) - L.half; d > best {
				best, bl = d, l
			}
		}
		return bl
	}
	qp := quantize(rv, sc.planes, ix.words)
	short := topK{items: sc.fine[:0], k: nearestShort}
	if nl := len(ix.lists); nl >= groupFrom {
		ix.nearestGrouped(sc, &qp, &short)
	} else {
		est := slices.Grow(sc.est[:0], nl)[:nl]
		qp.scan(ix.ccodes, ix.cfactor, ix.cpop, 0, est)
		for l, e := range est {
			short.push(Scored{ID: uint32(l), Score: e - ix.lists[l].half})
		}
		sc.est = est
	}
	sc.fine = short.items
	for _, it := range short.items {
		L := ix.lists[it.ID]
		if d := dot(v, L.centroid) - L.half; d > best || (d == best && int(it.ID) < bl) {
			best, bl = d, int(it.ID)
		}
	}
	return bl
}

// link appends slot s to list l and encodes it there.
func (ix *Index) link(s uint32, l int, rv []float32) {
	ix.place(s, l)
	ix.encode(s, rv)
}

// unlink takes slot s out of its list; the list's last entry moves into
// its place.
func (ix *Index) unlink(s uint32) {
	w := ix.where[s]
	L := ix.lists[w.list]
	var r float64
	for j, x := range ix.view(s, ix.scratchW()) {
		d := float64(x - L.centroid[j])
		r += d * d
	}
	L.resid = max(L.resid-r, 0)
	last := len(L.slots) - 1
	if p := int(w.pos); p != last {
		moved := L.slots[last]
		L.slots[p] = moved
		L.ids[p] = L.ids[last]
		copy(L.codes[p*ix.words:(p+1)*ix.words], L.codes[last*ix.words:])
		L.factor[p] = L.factor[last]
		L.pop[p] = L.pop[last]
		fs := ix.fineStride()
		copy(L.fine[p*fs:(p+1)*fs], L.fine[last*fs:])
		ix.where[moved].pos = uint32(p)
	}
	L.slots = L.slots[:last]
	L.ids = L.ids[:last]
	L.codes = L.codes[:last*ix.words]
	L.factor = L.factor[:last]
	L.pop = L.pop[:last]
	L.fine = L.fine[:last*ix.fineStride()]
}

// splitLarge splits list l in two by 2-means while it exceeds the list
// size. Only its members move; neighbouring lists keep theirs, so a split
// costs O(ListSize·D), not a retraining.
func (ix *Index) splitLarge(l int) {
	L := ix.lists[l]
	if len(L.slots) <= ix.listMax {
		return
	}
	members := slices.Clone(L.slots)
	side := make([]bool, len(members)) // true: the second half
	c1, c2 := ix.twoMeans(members, side, L.centroid)
	// The list keeps its number with the first centroid; the second half
	// becomes a new list.
	ix.setList(l, c1)
	nl := ix.addList(c2)
	for i, s := range members {
		if side[i] {
			ix.place(s, nl)
		} else {
			ix.place(s, l)
		}
	}
	ix.encodeMembers(members)
	ix.splitLarge(l)
	ix.splitLarge(nl)
}

// place appends slot s to list l without encoding it.
func (ix *Index) place(s uint32, l int) {
	L := ix.lists[l]
	pos := len(L.slots)
	L.slots = append(L.slots, s)
	L.ids = append(L.ids, ix.ids[s])
	L.codes = append(L.codes, make([]uint64, ix.words)...)
	L.factor = append(L.factor, 0)
	L.pop = append(L.pop, 0)
	L.fine = append(L.fine, make([]uint64, ix.fineStride())...)
	ix.where[s] = loc{list: uint32(l), pos: uint32(pos)}
}

// encodeMembers encodes the placed slots in their lists, on two
// goroutines when there are many (a split re-encodes a whole list: a fifth
// of an insert's cost). Each writes only its own entries; the lists'
// residual sums are added afterwards in slot order, so the index does not
// depend on the scheduling.
func (ix *Index) encodeMembers(slots []uint32) {
	l2 := make([]float32, len(slots))
	fs := ix.fineStride()
	run := func(from, step int) {
		buf := make([]float32, ix.pdim)
		vbuf := make([]float32, ix.dim)
		for i := from; i < len(slots); i += step {
			s := slots[i]
			w := ix.where[s]
			L, p := ix.lists[w.list], int(w.pos)
			ix.rotate(buf, ix.view(s, vbuf), nil)
			c := encodeResidual(buf, buf, L.rc, L.codes[p*ix.words:(p+1)*ix.words], L.fine[p*fs:(p+1)*fs])
			L.pop[p], L.factor[p], l2[i] = c.pop, c.factor, c.l2
		}
	}
	if len(slots) < 2*batchMin || runtime.GOMAXPROCS(0) < 2 {
		run(0, 1)
	} else {
		var wg sync.WaitGroup
		wg.Go(func() { run(1, 2) })
		run(0, 2)
		wg.Wait()
	}
	for i, s := range slots {
		ix.lists[ix.where[s].list].resid += float64(l2[i])
	}
}

// twoMeans splits members in two clusters, marking the second in side, and
// returns the two centroids. It starts from the member farthest from the
// list centroid and the member farthest from that one. Vectors that 2-means
// cannot separate (duplicates) are split in halves, so that a split always
// makes progress.
func (ix *Index) twoMeans(members []uint32, side []bool, centroid []float32) (c1, c2 []float32) {
	fbuf := make([]float32, ix.dim)
	far := func(from []float32) uint32 {
		best, bs := float32(math.Inf(1)), members[0]
		for _, s := range members {
			if d := dot(from, ix.view(s, fbuf)); d < best {
				best, bs = d, s
			}
		}
		return bs
	}
	c1 = slices.Clone(ix.view(far(centroid), fbuf))
	c2 = slices.Clone(ix.view(far(c1), fbuf))
	// Each iteration assigns and sums the two halves of the members on two
	// goroutines (a split is a fifth of an insert's cost), each into sums
	// of its own, added in a fixed order: the result does not depend on
	// the scheduling.
	type part struct {
		sum1, sum2 []float64
		n1, n2     int
		buf        []float32
	}
	half := len(members) / 2
	parts := [2]part{}
	for p := range parts {
		parts[p] = part{sum1: make([]float64, ix.dim), sum2: make([]float64, ix.dim), buf: make([]float32, ix.dim)}
	}
	assign := func(p *part, lo, hi int, h1, h2 float32) {
		clear(p.sum1)
		clear(p.sum2)
		p.n1, p.n2 = 0, 0
		for i := lo; i < hi; i++ {
			v := ix.view(members[i], p.buf)
			side[i] = dot(v, c2)-h2 > dot(v, c1)-h1
			sum, n := p.sum1, &p.n1
			if side[i] {
				sum, n = p.sum2, &p.n2
			}
			for j, x := range v {
				sum[j] += float64(x)
			}
			*n++
		}
	}
	parallel := len(members) >= 2*batchMin && runtime.GOMAXPROCS(0) > 1
	for range 6 {
		h1, h2 := dot(c1, c1)/2, dot(c2, c2)/2
		if parallel {
			var wg sync.WaitGroup
			wg.Go(func() { assign(&parts[1], half, len(members), h1, h2) })
			assign(&parts[0], 0, half, h1, h2)
			wg.Wait()
		} else {
			assign(&parts[0], 0, half, h1, h2)
			assign(&parts[1], half, len(members), h1, h2)
		}
		n1, n2 := parts[0].n1+parts[1].n1, parts[0].n2+parts[1].n2
		if n1 == 0 || n2 == 0 {
			break
		}
		for j := range c1 {
			c1[j] = float32((parts[0].sum1[j] + parts[1].sum1[j]) / float64(n1))
			c2[j] = float32((parts[0].sum2[j] + parts[1].sum2[j]) / float64(n2))
		}
	}
	sum1, sum2 := parts[0].sum1, parts[0].sum2
	n2 := 0
	for _, b := range side {
		if b {
			n2++
		}
	}
	if n2 == 0 || n2 == len(side) {
		clear(sum1)
		clear(sum2)
		for i, s := range members {
			side[i] = i >= len(members)/2
			sum := sum1
			if side[i] {
				sum = sum2
			}
			for j, x := range ix.view(s, fbuf) {
				sum[j] += float64(x)
			}
		}
		h := len(members) / 2
		for j := range c1 {
			c1[j] = float32(sum1[j] / float64(h))
			c2[j] = float32(sum2[j] / float64(len(members)-h))
		}
	}
	return c1, c2
}

// encode computes the codes of slot s in its list: the sign of each
// rotated coordinate u_j of its residual from the list centroid, and a
// magnitude bit that is set when |u_j| exceeds 0.98 times the root mean
// square of u (the optimal 4-level quantizer threshold for Gaussian
// coordinates). Together they give the 2-bit reconstruction
// r_j = sign(u_j)·(1 + 2·mag_j).
//
// rv is the rotation of the vector, or nil to compute it here: the
// rotation is linear, so the residual's is rv minus the rotated centroid.
func (ix *Index) encode(s uint32, rv []float32) {
	w := ix.where[s]
	L := ix.lists[w.list]
	if rv == nil {
		ix.rotate(ix.encBuf, ix.view(s, ix.scratchW()), nil)
		rv = ix.encBuf
	}
	p := int(w.pos)
	fs := ix.fineStride()
	c := encodeResidual(ix.encBuf, rv, L.rc, L.codes[p*ix.words:(p+1)*ix.words], L.fine[p*fs:(p+1)*fs])
	L.pop[p], L.factor[p] = c.pop, c.factor
	L.resid += float64(c.l2)
}

// coded is what encodeResidual computes besides the code words.
type coded struct {
	pop    uint16
	factor float32 // |u|² / ⟨u, sign(u)⟩
	l2     float32 // |u|²
}

// encodeResidual encodes u = rv − rc, the rotated residual of a vector
// from its list's rotated centroid: the sign bits into code and, into fine
// (fineStride words), the magnitude plane and the 2-bit correction with the
// magnitude popcount. buf (pdim) is scratch and may be rv itself.
func encodeResidual(buf, rv, rc []float32, code, fine []uint64) coded {
	buf, rv = buf[:len(rc)], rv[:len(rc)]
	var l1, l2 float32
	for j, x := range rc {
		u := rv[j] - x
		buf[j] = u
		l1 += abs32(u)
		l2 += u * u
	}
	words := len(code)
	mag := fine[:words]
	t := 0.98 * float32(math.Sqrt(float64(l2)/float64(len(buf))))
	var ip2 float32 // ⟨u, r⟩
	pop, mpop := 0, 0
	// Branch-free: the signs and magnitude bits of a residual are coin
	// flips, and their branches were mispredicted half the time (this was
	// a fifth of an insert's CPU, a split re-encoding a whole list).
	// 1 + 2·mag is 1 or 3 exactly, so ip2 adds a or 3a as before.
	for w := range words {
		var cw, mw uint64
		for k, x := range buf[w*64 : (w+1)*64] {
			a := abs32(x)
			m := b2u(a > t)
			cw |= b2u(x >= 0) << k
			mw |= m << k
			ip2 += a * float32(1+2*m)
		}
		code[w], mag[w] = cw, mw
		pop += bits.OnesCount64(cw)
		mpop += bits.OnesCount64(mw)
	}
	var f1, f2 float32
	if l1 > 0 {
		f1 = l2 / l1
		f2 = l2 / ip2
	}
	fine[words] = uint64(math.Float32bits(f2)) | uint64(mpop)<<32
	return coded{pop: uint16(pop), factor: f1, l2: l2}
}

// b2u is 1 for true and 0 for false, compiled to a flag move, not a branch.
func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

func abs32(x float32) float32 { return math.Float32frombits(math.Float32bits(x) &^ (1 << 31)) }

// rotated writes the rotation of v into the assignment scratch and
// returns it.
func (sc *scratch) rotated(ix *Index, v []float32) []float32 {
	if len(sc.rot) != ix.pdim {
		sc.rot, sc.planes = make([]float32, ix.pdim), make([]uint64, 4*ix.words)
	}
	ix.rotate(sc.rot, v, nil)
	return sc.rot
}

// rotate writes the rotation of v - center (center may be nil) into dst,
// which has pdim entries.
func (ix *Index) rotate(dst, v, center []float32) {
	for j, p := range ix.perm {
		if p < 0 {
			dst[j] = 0
			continue
		}
		x := v[p]
		if center != nil {
			x -= center[p]
		}
		dst[j] = x * ix.signs[j]
	}
	for b := 0; b < len(dst); b += 64 {
		fwht64(dst[b : b+64])
	}
}

// fwht64 is an in-place orthonormal Walsh–Hadamard transform of 64 values.
// Each insert rotates its vector at least once and each split a whole
// list, so the butterflies are written out: the first three stages on
// eight values held in variables, the last three on fixed-size arrays,
// without bounds checks. Every value is the same sum or difference of the
// same two values as in the textbook loop, so the bits are too.
func fwht64(s []float32) {
	a := (*[64]float32)(s[:64])
	for b := 0; b < 64; b += 8 {
		p := (*[8]float32)(a[b : b+8])
		x0, x1, x2, x3, x4, x5, x6, x7 := p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]
		x0, x1 = x0+x1, x0-x1
		x2, x3 = x2+x3, x2-x3
		x4, x5 = x4+x5, x4-x5
		x6, x7 = x6+x7, x6-x7
		x0, x2 = x0+x2, x0-x2
		x1, x3 = x1+x3, x1-x3
		x4, x6 = x4+x6, x4-x6
		x5, x7 = x5+x7, x5-x7
		p[0], p[4] = x0+x4, x0-x4
		p[1], p[5] = x1+x5, x1-x5
		p[2], p[6] = x2+x6, x2-x6
		p[3], p[7] = x3+x7, x3-x7
	}
	for b := 0; b < 64; b += 16 {
		p := (*[16]float32)(a[b : b+16])
		for j := range 8 {
			x, y := p[j], p[j+8]
			p[j], p[j+8] = x+y, x-y
		}
	}
	for b := 0; b < 64; b += 32 {
		p := (*[32]float32)(a[b : b+32])
		for j := range 16 {
			x, y := p[j], p[j+16]
			p[j], p[j+16] = x+y, x-y
		}
	}
	for j := range 32 {
		x, y := a[j], a[j+32]
		// 1/sqrt(64)
		a[j], a[j+32] = (x+y)*0.125, (x-y)*0.125
	}
}

func (ix *Index) fineStride() int { return ix.words + 1 }

// candidates returns how many vectors the 1-bit scan keeps for k hits
// among n scanned.
func (ix *Index) candidates(k, n int) int {
	c := int(math.Ceil(ix.oversamp * math.Sqrt(float64(k)*float64(n))))
	return max(c, k)
}

// rerank returns how many of those the 2-bit estimate passes on to exact
// scoring.
func (ix *Index) rerank(k, n int) int {
	c := int(math.Ceil(ix.rerankF * math.Sqrt(float64(k)*float64(n))))
	return max(c, k)
}

// maxUnexplained is the share of the variance left in the residuals above
// which Search probes every list: the lists then follow no structure (on
// isotropic data they leave 0.97 of it and a budgeted probe finds a
// quarter of the true neighbours), so only a full scan keeps recall.
const maxUnexplained = 0.9

// reachZ is how many times its typical reach (reach) past ⟨q, c⟩ a list
// is probed to once the budget is scanned: the lists a query needs past
// the budget are those whose vectors may still beat the k-th best
// estimate. Residuals are not isotropic, so the formula's dimension
// overstates how thin their projections are, and the factor is measured:
// at 100k (TestScale, the index as a store opens it, recall@50 against
// float32), at 1.5 the two corpora embedded offline fall to 0.90, at 2
// they reach 0.959 and 0.960, at 2.5 0.979 and 0.983 (their int8 copies
// allow 0.985 and 0.991), the clustered set 0.993 to 0.995 throughout.
// In `adaptrag bench retrieval --n 100000`, 2.5 took the corpora's
// dense p50 to 0.86 and 1.09 ms, 2 to 0.66 and 0.73 ms (recall 0.962,
// 0.959): 2 keeps them within a millisecond.
const reachZ = 2

// reach is how far above ⟨q, c⟩ the best of L's vectors typically lies
// for a query q: the expected maximum of its entries' residuals projected
// on q, |u|/sqrt(dim)·sqrt(2·ln m) for m of them of mean square |u|².
func (ix *Index) reach(L *list) float32 {
	m := len(L.slots)
	if m < 2 {
		return 0
	}
	return float32(math.Sqrt(L.resid / float64(m) * 2 * math.Log(float64(m)) / float64(ix.dim)))
}

// budget returns how many vectors a search for k among n scans. Below
// k = 50 it does not shrink: the lists a query needs are those its nearest
// neighbours fall in, and the first 10 of them are spread over nearly as
// many lists as the first 50. It is capped at MaxInt32, past any index's
// size, so that a large Probe cannot overflow an int (on 32-bit platforms
// it did, and such a search scanned nothing).
func (ix *Index) budget(k, n int) int {
	return int(min(math.Ceil(ix.probe*math.Sqrt(float64(max(k, 50))*float64(n))), math.MaxInt32))
}

// Search returns the k vectors most similar to q by cosine, best first
// (ties by ascending id), among those for which accept returns true (nil
// accepts all). It returns fewer than k only when fewer vectors are
// accepted, and nil when q has the wrong dimension or is zero, or k <= 0.
// accept is called at most once per vector, from the calling goroutine.
func (ix *Index) Search(q []float32, k int, accept func(id uint32) bool) []Scored {
	n := len(ix.ids)
	if k <= 0 || n == 0 || len(q) != ix.dim {
		return nil
	}
	sc := ix.getScratch()
	defer ix.pool.Put(sc)
	qn, ok := sc.normalize(q)
	if !ok {
		return nil
	}
	if !ix.trained || n <= ix.threshold || ix.candidates(k, n) >= n {
		return ix.exactScan(sc, qn, k, accept)
	}
	return ix.approx(sc, qn, k, accept)
}

// normalize writes q/|q| into the scratch query buffer; false when q is
// zero or not finite.
func (sc *scratch) normalize(q []float32) ([]float32, bool) {
	qn := sc.query[:len(q)]
	norm := math.Sqrt(float64(dot(q, q)))
	if norm == 0 || math.IsNaN(norm) || math.IsInf(norm, 0) {
		return nil, false
	}
	for i, x := range q {
		qn[i] = float32(float64(x) / norm)
	}
	return qn, true
}

// SearchExact is Search by a flat exact scan, whatever the index size: the
// ground truth for recall measurements (of the int8 copies, for the
// vectors an index read by ReadIndexAt left on disk).
func (ix *Index) SearchExact(q []float32, k int, accept func(id uint32) bool) []Scored {
	if k <= 0 || len(ix.ids) == 0 || len(q) != ix.dim {
		return nil
	}
	sc := ix.getScratch()
	defer ix.pool.Put(sc)
	qn, ok := sc.normalize(q)
	if !ok {
		return nil
	}
	return ix.exactScan(sc, qn, k, accept)
}

// SearchAmong returns the k vectors most similar to q among the listed ids,
// best first (ties by ascending id): the plan for a filter that matches
// few vectors, where considering only the matches beats any traversal. Up
// to 2,000 listed vectors are scored exactly; more are ranked by their
// codes first (see the package documentation), unless the index is exact.
// Ids not in the index are skipped and a repeated id counts once. It
// returns nil when q has the wrong dimension or is zero, or k <= 0.
func (ix *Index) SearchAmong(q []float32, k int, ids []uint32) []Scored {
	return ix.searchAmong(q, k, ids, amongAuto)
}

// How searchAmong scores the listed vectors; the benchmarks force each.
const (
	amongAuto  = iota // by their number
	amongExact        // every one exactly
	amongCode         // by their codes, the best exactly (when trained)
)

func (ix *Index) searchAmong(q []float32, k int, ids []uint32, how int) []Scored {
	if k <= 0 || len(ids) == 0 || len(q) != ix.dim {
		return nil
	}
	sc := ix.getScratch()
	defer ix.pool.Put(sc)
	qn, ok := sc.normalize(q)
	if !ok {
		return nil
	}
	slots := sc.cand[:0]
	ascending := true // then no id repeats
	for i, id := range ids {
		if s, ok := ix.slot.Get(id); ok {
			slots = append(slots, s)
		}
		if i > 0 && id <= ids[i-1] {
			ascending = false
		}
	}
	coded := how == amongCode || how == amongAuto && ix.amongCost(slots) > amongExactMax
	if coded && ix.trained && ix.candidates(k, len(slots)) < len(slots) {
		if !ascending {
			slices.Sort(slots)
			slots = slices.Compact(slots)
		}
		sc.cand = slots
		return ix.amongCoded(sc, qn, k, slots)
	}
	// Score in slot order: memory order, and repeats become neighbours.
	slices.Sort(slots)
	slots = slices.Compact(slots)
	sc.cand = slots
	h := topK{items: sc.top[:0], k: k}
	for i, s := range slots {
		if i+prefetchAhead < len(slots) {
			ix.prefetch(slots[i+prefetchAhead])
		}
		h.push(Scored{ID: ix.ids[s], Score: ix.score(qn, s)})
	}
	sc.top = h.items
	return h.sorted()
}

// prefetchAhead is how many vectors ahead of its scoring a loop over
// scattered slots asks for a vector's memory. A filter's matching
// vectors lie far apart (at a million chunks, 1% of them about 38 KB
// apart in the int8 copies), so each is a cache miss and usually a TLB
// miss, several times the cost of its product: without a prefetch the
// product waits on each in turn. BenchmarkSearchAmong measures it.
const prefetchAhead = 6

// prefetch asks the caches for what score reads of slot s.
func (ix *Index) prefetch(s uint32) {
	if s < ix.nsp {
		o := int(s) * ix.sp.dim
		prefetch(unsafe.Pointer(&ix.sp.q8[o]), ix.sp.dim)
		prefetch(unsafe.Pointer(&ix.sp.scale[s]), 4)
		return
	}
	v := ix.vec(s)
	prefetch(unsafe.Pointer(&v[0]), 4*len(v))
}

// amongExactMax is the cost, in int8 vectors read, up to which
// SearchAmong scores every listed vector exactly; past it, estimating all
// of them from their codes and scoring the best few exactly, as a probe
// does, costs less. Exact scoring is a read of each whole vector at a
// random place, so its cost follows the bytes read (amongCost): a float32
// vector of 384 dimensions is 1.5 KiB, its int8 copy (an index left on
// disk) 384 B. Measured on the clustered index of 100k, top 50, 384
// dimensions (BenchmarkSearchAmong, resident and on-disk): float32 exact
// loses to the codes past about 2,000 listed vectors without the
// prefetch and ties them at 5,000 with it (0.44-0.49 against 0.43-0.46
// ms; 0.83-0.92 ms before), so its weight below stays. int8 exact, with
// the vectors prefetched ahead (prefetchAhead), beats the codes at 5,000
// and 10,000 (0.23 and 0.43-0.50 ms against 0.34 and 0.55-0.62 ms), ties
// at 20,000 (0.96-1.11 against 0.86-1.28 ms) and loses at 33,000 (2.2-2.3
// against 1.3-1.7 ms), at the same recall; without the prefetch it lost
// to them from 10,000 on (0.87-0.97 ms) on the same machine.
const amongExactMax = 16000

// amongCost is the cost of scoring the slots exactly in amongExactMax's
// unit: one for a slot scored from its int8 copy, eight for a float32 one
// (the crossovers measured, 16,000 and 2,000, not the 4:1 of their bytes:
// the int8 product also runs cheaper).
func (ix *Index) amongCost(slots []uint32) int {
	cost := 0
	for _, s := range slots {
		if s < ix.nsp {
			cost++
		} else {
			cost += 8
		}
	}
	return cost
}

// amongCoded is SearchAmong for many slots: the listed vectors get the
// 1-bit estimate from their lists' codes, as if their lists had been
// probed with only them accepted, then stages 2 and 3 as in a search that
// scanned just them. Centroid terms are computed for the lists the slots
// fall in, once each.
func (ix *Index) amongCoded(sc *scratch, q []float32, k int, slots []uint32) []Scored {
	rq := sc.rot[:ix.pdim]
	ix.rotate(rq, q, nil)
	w := ix.words
	qp := quantize(rq, sc.planes, w)

	nl := len(ix.lists)
	qc := slices.Grow(sc.qc[:0], nl)[:nl]
	done := slices.Grow(sc.done[:0], nl)[:nl]
	clear(done)
	sc.qc, sc.done = qc, done
	// Entries grouped by list (a counting sort: a comparison sort took a
	// third of the time at 10,000), so that the codes of one list are read
	// from one region of memory.
	count := slices.Grow(sc.count[:0], nl+1)[:nl+1]
	clear(count)
	for _, s := range slots {
		count[ix.where[s].list+1]++
	}
	for l := range nl {
		count[l+1] += count[l]
	}
	ent := slices.Grow(sc.ent[:0], len(slots))[:len(slots)]
	for _, s := range slots {
		a := ix.where[s]
		ent[count[a.list]] = a
		count[a.list]++
	}
	sc.count = count
	est := slices.Grow(sc.est[:0], len(ent))[:len(ent)]
	fac := slices.Grow(sc.fac[:0], len(ent))[:len(ent)]
	emin, emax := float32(math.Inf(1)), float32(math.Inf(-1))
	for i, a := range ent {
		L, p := ix.lists[a.list], int(a.pos)
		if !done[a.list] {
			qc[a.list], done[a.list] = dot(q, L.centroid), true
		}
		lo, hi := qp.scan(L.codes[p*w:(p+1)*w], L.factor[p:p+1], L.pop[p:p+1], qc[a.list], est[i:i+1])
		emin, emax = min(emin, lo), max(emax, hi)
		fac[i] = L.factor[p]
	}
	sc.est, sc.ent, sc.fac = est, ent, fac
	return ix.refine(sc, q, &qp, qc, k, len(ent), emin, emax, func(e uint32) loc { return ent[e] })
}

func (ix *Index) exactScan(sc *scratch, q []float32, k int, accept func(uint32) bool) []Scored {
	h := topK{items: sc.top[:0], k: k}
	for s, id := range ix.ids {
		if accept != nil && !accept(id) {
			continue
		}
		h.push(Scored{ID: id, Score: ix.score(q, uint32(s))})
	}
	sc.top = h.items
	return h.sorted()
}

// segment is where the estimates of one probed list start.
type segment struct{ start, list uint32 }

type listKey struct {
	key float32
	l   uint32
}

func (ix *Index) approx(sc *scratch, q []float32, k int, accept func(uint32) bool) []Scored {
	n := len(ix.ids)
	rq := sc.rot[:ix.pdim]
	ix.rotate(rq, q, nil)

	w := ix.words
	qp := quantize(rq, sc.planes, w)

	// Order the lists by the distance of their centroids to the query.
	nl := len(ix.lists)
	qc := slices.Grow(sc.qc[:0], nl)[:nl]
	order := slices.Grow(sc.order[:0], nl)[:nl]
	for l, L := range ix.lists {
		qc[l] = dot(q, L.centroid)
		key := qc[l] - L.half
		if accept == nil {
			key = qc[l] + reachZ*ix.reach(L)
		}
		order[l] = listKey{key: key, l: uint32(l)}
	}
	slices.SortFunc(order, func(a, b listKey) int {
		if c := cmp.Compare(b.key, a.key); c != 0 {
			return c
		}
		return cmp.Compare(a.l, b.l)
	})
	sc.qc, sc.order = qc, order

	// Probe lists nearest first. Each vector's estimate of ⟨q, v⟩ is
	// ⟨q, c⟩ + the 1-bit estimate of ⟨q, v − c⟩, comparable across lists.
	// Unfiltered, the probe stops once budget(k, n) vectors are scanned. A
	// filter is treated as an index of its own of the accepted vectors,
	// whose count it estimates from the rate seen so far: the probe goes on
	// until it has also kept half of budget(k, accepted) of them, so a
	// filter that passes a fraction f of the vectors scans about
	// 1/(2·sqrt(f)) times more (half: the accepted vectors are scored with
	// the candidate counts of the vectors scanned, larger than their own).
	budget := ix.budget(k, n)
	if ix.unexplained() > maxUnexplained {
		budget = n
	}
	est, ent, segs, fac := sc.est[:0], sc.ent[:0], sc.segs[:0], sc.fac[:0]
	scanned := 0
	emin, emax := float32(math.Inf(1)), float32(math.Inf(-1))
	tau, haveTau := float32(0), false
	for _, o := range order {
		L := ix.lists[o.l]
		m := len(L.slots)
		if m == 0 {
			continue
		}
		// Unfiltered, past the budget, lists are probed in the order of
		// their reach for as long as it reaches the k-th best estimate of
		// the budget's scan. When the query is almost equally far from
		// many centroids (a corpus whose sentences recur in many chunks),
		// where the budget cuts them is arbitrary and its neighbours lie
		// beyond the cut; on clustered data few lists reach that far.
		if accept == nil && scanned >= budget {
			if !haveTau {
				var ok bool
				if tau, ok = kthLower(est, fac, 0, k, emin, emax, &sc.hist); !ok {
					break
				}
				haveTau = true
			}
			if o.key < tau {
				break
			}
		}
		start := len(est)
		est = slices.Grow(est, m)[:start+m]
		part := est[start:]
		lo, hi := qp.scan(L.codes, L.factor, L.pop, qc[o.l], part)
		if accept == nil {
			// Unfiltered, the entries of a list stay in place: a segment
			// locates them, with no per-entry bookkeeping.
			segs = append(segs, segment{start: uint32(start), list: o.l})
			emin, emax = min(emin, lo), max(emax, hi)
			fac = append(fac, L.factor[:m]...)
		} else {
			kept := 0
			for i, e := range part {
				if !accept(L.ids[i]) {
					continue
				}
				part[kept] = e
				kept++
				fac = append(fac, L.factor[i])
				ent = append(ent, loc{list: o.l, pos: uint32(i)})
				if e < emin {
					emin = e
				}
				if e > emax {
					emax = e
				}
			}
			est = est[:start+kept]
		}
		scanned += m
		if scanned < budget {
			continue
		}
		if accept == nil {
			continue // until no list past the budget reaches the k-th estimate (above)
		}
		if a := len(est); a > 0 && 2*a >= ix.budget(k, int(float64(n)*float64(a)/float64(scanned))) {
			break
		}
	}
	sc.est, sc.ent, sc.segs, sc.fac = est, ent, segs, fac
	// at locates estimate e, for ascending e: by ent when filtered, else
	// by walking the segments.
	seg := 0
	at := func(e uint32) loc {
		if accept != nil {
			return ent[e]
		}
		for seg+1 < len(segs) && segs[seg+1].start <= e {
			seg++
		}
		return loc{list: segs[seg].list, pos: e - segs[seg].start}
	}
	return ix.refine(sc, q, &qp, qc, k, scanned, emin, emax, at)
}

// refine runs stages 2 and 3 on the 1-bit estimates in sc.est, of entries
// that at locates (called with ascending entry numbers), with candidate
// counts for scanned vectors, and returns the k best.
func (ix *Index) refine(sc *scratch, q []float32, qp *queryPlanes, qc []float32, k, scanned int, emin, emax float32, at func(uint32) loc) []Scored {
	est, w := sc.est, ix.words
	m := len(est)
	if m == 0 {
		return nil
	}

	// A histogram of the estimates gives the cut above which the best c
	// lie, without a heap (selection by bucket, O(m)).
	// Candidates are entry numbers, ascending: probed lists in order and
	// positions ascending within each, so stage 2 reads memory forwards.
	// Their counts follow the vectors scanned, not those accepted, so a
	// filter that passes few of them has them all scored exactly.
	c := ix.candidates(k, scanned)
	cand := sc.cand[:0]
	if c >= m {
		for i := range m {
			cand = append(cand, uint32(i))
		}
	} else if cand = boundCut(cand, est, sc.fac, k, c, emin, emax, &sc.hist); len(cand) == 0 {
		hist := sc.hist[:]
		clear(hist)
		scale := float32(0)
		if emax > emin {
			scale = float32(len(hist)-1) / (emax - emin)
		}
		for _, e := range est {
			hist[int((e-emin)*scale)]++
		}
		b, got := len(hist), 0
		for b > 0 && got < c {
			b--
			got += int(hist[b])
		}
		for i, e := range est {
			if int((e-emin)*scale) >= b {
				cand = append(cand, uint32(i))
			}
		}
	}
	// Stage 2: the 2-bit estimate of the candidates keeps the best c2,
	// unless they are few: then all are scored exactly, so that a
	// selective filter gets an exact answer.
	slots := sc.slots[:0]
	if c2 := ix.rerank(k, scanned); len(cand) > c2 {
		fs := ix.fineStride()
		// The candidates' stage-2 data lie at scattered places of their
		// lists, mostly out of cache after a long scan. A first pass
		// locates them and loads them with nothing waiting on the loads,
		// so that their misses overlap; the scoring pass, whose work per
		// candidate left only a few loads in flight at a time, then finds
		// them in cache.
		locs := slices.Grow(sc.locs[:0], len(cand))[:len(cand)]
		var sink uint64
		for i, e := range cand {
			a := at(e)
			locs[i] = a
			L, p := ix.lists[a.list], int(a.pos)
			sink += L.fine[p*fs] + L.fine[p*fs+w] + L.codes[p*w] + L.codes[p*w+w-1]
		}
		sc.locs, sc.sink = locs, sink
		scored, f2 := ix.stage2(sc, qp, qc, cand, locs)
		sc.fine = scored
		sc.s2 = slices.Grow(sc.s2[:0], len(scored))[:len(scored)]
		kept := boundCut2(slots, scored, f2, k, c2, sc.s2, &sc.hist)
		if len(kept) == 0 {
			for _, it := range selectTop(scored, c2, &sc.hist) {
				kept = append(kept, it.ID)
			}
		}
		slots = kept
	} else {
		for _, e := range cand {
			a := at(e)
			slots = append(slots, ix.lists[a.list].slots[a.pos])
		}
	}
	sc.cand = cand
	slices.Sort(slots)
	sc.slots = slots

	// Candidates are in slot order, so the exact re-scoring reads the
	// vectors in ascending memory order; a first pass loads them, as for
	// stage 2, so that their misses overlap.
	sc.sink += ix.touch(slots)
	h := topK{items: sc.top[:0], k: k}
	for _, s := range slots {
		h.push(Scored{ID: ix.ids[s], Score: ix.score(q, s)})
	}
	sc.top = h.items
	return h.sorted()
}

// magChunk is the number of candidates whose magnitude codes stage 2
// gathers at a time: few enough that they stay in the first-level cache.
const magChunk = 256

// cacheLine is the stride at which touch loads a vector.
const cacheLine = 64

// touch loads every cache line of the vectors that score reads for the
// slots, and returns a value that depends on the loads (kept by the
// caller, so that they are not removed): for a pass whose loads nothing
// waits on, so that the processor overlaps their misses.
func (ix *Index) touch(slots []uint32) uint64 {
	var sink uint64
	for _, s := range slots {
		if s < ix.nsp {
			c := ix.sp.code(s)
			for o := 0; o < len(c); o += cacheLine {
				sink += uint64(c[o])
			}
			sink += uint64(c[len(c)-1])
			continue
		}
		v := ix.vec(s)
		for o := 0; o < len(v); o += cacheLine / 4 {
			sink += uint64(math.Float32bits(v[o]))
		}
		sink += uint64(math.Float32bits(v[len(v)-1]))
	}
	return sink
}

// stage2 returns the 2-bit estimates of the candidates (entry numbers
// into sc.est, located by locs), with their slots as IDs, in the order of
// cand, and the 2-bit correction factor of each, the scale of its error.
func (ix *Index) stage2(sc *scratch, qp *queryPlanes, qc []float32, cand []uint32, locs []loc) ([]Scored, []float32) {
	est, w, fs := sc.est, ix.words, ix.fineStride()
	// The magnitude terms, magChunk candidates at a time: their
	// magnitude planes and the planes' intersections with their signs
	// are gathered as codes, two per candidate, and weighed against
	// the query's planes by the 1-bit scan's kernel.
	scored := slices.Grow(sc.fine[:0], len(cand))[:len(cand)]
	f2s := slices.Grow(sc.fac2[:0], len(cand))[:len(cand)]
	sc.fac2 = f2s
	two := slices.Grow(sc.two[:0], 2*w*magChunk)[:2*w*magChunk]
	pys := slices.Grow(sc.pys[:0], magChunk)[:magChunk]
	counts := slices.Grow(sc.counts[:0], 2*magChunk)[:2*magChunk]
	sc.two, sc.pys, sc.counts = two, pys, counts
	for lo := 0; lo < len(cand); lo += magChunk {
		hi := min(lo+magChunk, len(cand))
		for i, a := range locs[lo:hi] {
			L, p := ix.lists[a.list], int(a.pos)
			pys[i] = gatherMag(two[2*w*i:2*w*(i+1)], L.codes[p*w:(p+1)*w], L.fine[p*fs:p*fs+w])
		}
		qp.counts(two[:2*w*(hi-lo)], counts[:2*(hi-lo)])
		for i := lo; i < hi; i++ {
			e, a, j := cand[i], locs[i], i-lo
			L, p := ix.lists[a.list], int(a.pos)
			tail := L.fine[p*fs+w]
			// The 1-bit inner product is the stage-1 estimate without
			// its scale and centroid term.
			var ipx float32
			if f := L.factor[p]; f != 0 {
				ipx = (est[e] - qc[a.list]) / f
			}
			f2 := math.Float32frombits(uint32(tail))
			mt := qp.magFrom(int(tail>>32), int(counts[2*j]), int(pys[j]), int(counts[2*j+1]))
			scored[i] = Scored{ID: L.slots[p], Score: qc[a.list] + f2*(ipx+2*mt)}
			f2s[i] = f2
		}
	}
	return scored, f2s
}

// quantize quantizes a rotated query to 4 bits as bit planes (planes has
// 4·w words): then Σ_{bit j set} rq_j ≈ lo·pop + delta·Σ_b
// 2^b·popcount(code & plane_b).
func quantize(rq []float32, planes []uint64, w int) queryPlanes {
	lo, hi := rq[0], rq[0]
	var sum float32
	for _, x := range rq {
		lo, hi = min(lo, x), max(hi, x)
		sum += x
	}
	delta := (hi - lo) / 15
	if delta == 0 {
		delta = 1
	}
	planes = planes[:4*w]
	p0, p1, p2, p3 := planes[0:w:w], planes[w:2*w:2*w], planes[2*w:3*w:3*w], planes[3*w:4*w:4*w]
	// Each word of the four planes is built in registers, without
	// branches: an insert quantizes its vector to rank the centroids, and
	// the bit-by-bit version was about a quarter of that ranking at 1M.
	for i := range w {
		var b0, b1, b2, b3 uint64
		end := min(len(rq), (i+1)*64)
		for j := i * 64; j < end; j++ {
			u := uint64((rq[j]-lo)/delta + 0.5)
			bit := uint(j & 63)
			b0 |= (u & 1) << bit
			b1 |= (u >> 1 & 1) << bit
			b2 |= (u >> 2 & 1) << bit
			b3 |= (u >> 3 & 1) << bit
		}
		p0[i], p1[i], p2[i], p3[i] = b0, b1, b2, b3
	}
	return queryPlanes{p0: planes[0:w:w], p1: planes[w : 2*w : 2*w], p2: planes[2*w : 3*w : 3*w], p3: planes[3*w : 4*w : 4*w],
		all: planes, lo: lo, delta: delta, sum: sum}
}

// queryPlanes is a query quantized to 4 bits as bit planes, with what it
// takes to turn popcounts back into inner products:
// Σ_{j in mask} q_j ≈ lo·|mask| + delta·Σ_b 2^b·popcount(mask & p_b).
type queryPlanes struct {
	p0, p1, p2, p3 []uint64
	all            []uint64 // the four planes, one after another
	lo, delta, sum float32
}

// scan writes the 1-bit estimate of every slot into est and returns their
// range. The weighted popcounts go first into est's own memory (a count is
// read before its estimate overwrites it), then become estimates in one
// loop; 384 dimensions (six words) get an unrolled popcount loop, or the
// AVX-512 kernel.
func (qp *queryPlanes) scan(codes []uint64, factor []float32, pop []uint16, add float32, est []float32) (emin, emax float32) {
	if len(est) == 0 {
		return float32(math.Inf(1)), float32(math.Inf(-1))
	}
	counts := unsafe.Slice((*uint32)(unsafe.Pointer(&est[0])), len(est))
	qp.counts(codes, counts)
	return qp.estimates(counts, factor, pop, add, est)
}

// estimates turns the weighted popcounts of the slots into their 1-bit
// estimates, in place (est and counts are the same memory), and returns
// their range.
func (qp *queryPlanes) estimates(counts []uint32, factor []float32, pop []uint16, add float32, est []float32) (emin, emax float32) {
	lo2, delta2, sum := 2*qp.lo, 2*qp.delta, qp.sum
	factor, pop, est = factor[:len(counts)], pop[:len(counts)], est[:len(counts)]
	// Sixteen at a time by AVX-512 where the machine has it, the same
	// operations in the same order; the rest by the loop.
	done, emin, emax := estimates16(counts, factor, pop, [4]float32{lo2, delta2, sum, add})
	for s := done; s < len(counts); s++ {
		a := counts[s]
		// ⟨q, sign(u)⟩ = 2·Σ_{bit set} q_j − Σ q_j; times |u|²/⟨u, sign(u)⟩.
		// The conversions round each product, so that no build fuses them
		// into FMA and the kernel's bits are the loop's.
		e := float32(factor[s]*(float32(lo2*float32(pop[s]))+float32(delta2*float32(a))-sum)) + add
		est[s] = e
		// Plain compares: the builtin min and max spend instructions on NaN
		// and signed zeros, which cannot occur here, in the hottest loop.
		if e < emin {
			emin = e
		}
		if e > emax {
			emax = e
		}
	}
	return emin, emax
}

// countsAny writes Σ_b 2^b·popcount(code & plane_b) of each code to counts,
// for any code length.
func (qp *queryPlanes) countsAny(codes []uint64, counts []uint32) {
	w := len(qp.p0)
	p0, p1, p2, p3 := qp.p0, qp.p1[:w], qp.p2[:w], qp.p3[:w]
	for s := range counts {
		code := codes[s*w : (s+1)*w : (s+1)*w]
		a := 0
		for i, x := range code {
			a += bits.OnesCount64(x&p0[i]) + bits.OnesCount64(x&p1[i])<<1 +
				bits.OnesCount64(x&p2[i])<<2 + bits.OnesCount64(x&p3[i])<<3
		}
		counts[s] = uint32(a)
	}
}

// counts6 is countsAny for six-word codes, unrolled.
func (qp *queryPlanes) counts6(codes []uint64, counts []uint32) {
	p0, p1, p2, p3 := (*[6]uint64)(qp.p0), (*[6]uint64)(qp.p1), (*[6]uint64)(qp.p2), (*[6]uint64)(qp.p3)
	codes = codes[:6*len(counts)]
	for s := range counts {
		c := (*[6]uint64)(codes[s*6 : s*6+6])
		a := bits.OnesCount64(c[0]&p0[0]) + bits.OnesCount64(c[1]&p0[1]) + bits.OnesCount64(c[2]&p0[2]) +
			bits.OnesCount64(c[3]&p0[3]) + bits.OnesCount64(c[4]&p0[4]) + bits.OnesCount64(c[5]&p0[5])
		a += (bits.OnesCount64(c[0]&p1[0]) + bits.OnesCount64(c[1]&p1[1]) + bits.OnesCount64(c[2]&p1[2]) +
			bits.OnesCount64(c[3]&p1[3]) + bits.OnesCount64(c[4]&p1[4]) + bits.OnesCount64(c[5]&p1[5])) << 1
		a += (bits.OnesCount64(c[0]&p2[0]) + bits.OnesCount64(c[1]&p2[1]) + bits.OnesCount64(c[2]&p2[2]) +
			bits.OnesCount64(c[3]&p2[3]) + bits.OnesCount64(c[4]&p2[4]) + bits.OnesCount64(c[5]&p2[5])) << 2
		a += (bits.OnesCount64(c[0]&p3[0]) + bits.OnesCount64(c[1]&p3[1]) + bits.OnesCount64(c[2]&p3[2]) +
			bits.OnesCount64(c[3]&p3[3]) + bits.OnesCount64(c[4]&p3[4]) + bits.OnesCount64(c[5]&p3[5])) << 3
		counts[s] = uint32(a)
	}
}

// counts writes Σ_b 2^b·popcount(code & plane_b) of each code to counts:
// by the AVX-512 or AVX2 kernel for six-word codes where the machine has
// it, else by the Go loops.
func (qp *queryPlanes) counts(codes []uint64, counts []uint32) {
	switch {
	case len(counts) == 0:
	case len(qp.p0) != 6:
		qp.countsAny(codes, counts)
	case len(qp.all) < 24 || !popcounts6(codes[:6*len(counts)], qp.all, counts):
		qp.counts6(codes, counts)
	}
}

// gatherMag writes the magnitude plane mag of an entry and its
// intersection with the entry's sign code into dst (two codes of
// len(code) words) and returns the intersection's popcount: what magFrom
// needs besides the weighted popcounts of the two codes.
func gatherMag(dst, code, mag []uint64) uint16 {
	w := len(code)
	dst, mag = dst[:2*w], mag[:w]
	py := 0
	for i, x := range code {
		m := mag[i]
		y := x & m
		dst[i], dst[w+i] = m, y
		py += bits.OnesCount64(y)
	}
	return uint16(py)
}

// magFrom is the magnitude term Σ_{j in mag} q_j x_j of one slot (x_j = ±1
// its signs): 2·Σ_{mag and x set} q_j − Σ_{mag} q_j, which with the 1-bit
// term Σ q_j x_j gives the 2-bit estimate ⟨q, r⟩ for r_j = x_j·(1 +
// 2·mag_j). It is computed from popcounts: pm and am those of the
// magnitude plane (plain, and weighted against the query's planes), py and
// ay those of its intersection with the signs. (magTerm in the tests is
// its reference, one slot at a time.)
func (qp *queryPlanes) magFrom(pm, am, py, ay int) float32 {
	over := func(n, acc int) float32 { return qp.lo*float32(n) + qp.delta*float32(acc) }
	return 2*over(py, ay) - over(pm, am)
}

// selectTop returns the c best of items (as topK with k = c keeps them,
// ties to the lower id), in no particular order, reordering items: a
// histogram of the scores finds the bucket where the best c end, the
// items above it are kept and only that bucket's are sorted. hist is
// scratch.
func selectTop(items []Scored, c int, hist *[4096]uint32) []Scored {
	if c >= len(items) {
		return items
	}
	if c <= 0 {
		return items[:0]
	}
	lo, hi := items[0].Score, items[0].Score
	for _, it := range items {
		lo, hi = min(lo, it.Score), max(hi, it.Score)
	}
	clear(hist[:])
	scale := float32(0)
	if hi > lo {
		scale = float32(len(hist)-1) / (hi - lo)
	}
	for _, it := range items {
		hist[int((it.Score-lo)*scale)]++
	}
	b, above := len(hist)-1, 0
	for above+int(hist[b]) < c {
		above += int(hist[b])
		b--
	}
	// The items above bucket b go first, those of bucket b after them.
	kept, n := 0, 0
	for i, it := range items {
		switch bk := int((it.Score - lo) * scale); {
		case bk > b:
			items[i], items[kept] = items[kept], it
			if n > 0 {
				// The boundary item displaced to i goes back behind.
				items[i], items[kept+n] = items[kept+n], items[i]
			}
			kept++
		case bk == b:
			items[i], items[kept+n] = items[kept+n], it
			n++
		}
	}
	slices.SortFunc(items[kept:kept+n], func(a, b Scored) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return items[:c]
}

// scratch holds per-search buffers, pooled to keep Search allocation-light.
type scratch struct {
	query, rot []float32
	planes     []uint64
	est        []float32
	fac        []float32 // per estimate: its entry's RaBitQ factor, the scale of its error
	hist       [4096]uint32
	ent        []loc // list and position of each estimate, when filtered
	segs       []segment
	qc         []float32
	done       []bool   // per list: qc computed, for SearchAmong
	count      []uint32 // per list: entries, for SearchAmong's grouping
	order      []listKey
	cand       []uint32 // entry numbers, and slots for SearchAmong
	slots      []uint32
	fine       []Scored  // stage-2 estimates; ID holds a slot
	fac2       []float32 // stage 2: each candidate's 2-bit correction factor
	s2         []float32 // stage 2: the estimates alone, for their cut
	top        []Scored
	gtop       []Scored // nearest's best groups
	locs       []loc    // stage 2: each candidate's list and position
	sink       uint64   // what the touching passes loaded
	two        []uint64 // stage 2: magnitude and sign∧magnitude codes
	pys        []uint16 // stage 2: popcounts of sign∧magnitude
	counts     []uint32 // stage 2: weighted popcounts of two
}

func (ix *Index) getScratch() *scratch {
	if sc, ok := ix.pool.Get().(*scratch); ok {
		return sc
	}
	return &scratch{
		query:  make([]float32, ix.dim),
		rot:    make([]float32, ix.pdim),
		planes: make([]uint64, 4*ix.words),
	}
}

// worse orders results: lower score first, then higher id, so that the
// root of a min-heap is the result to evict.
func worse(a, b Scored) bool {
	if a.Score != b.Score {
		return a.Score < b.Score
	}
	return a.ID > b.ID
}

// topK keeps the k best Scored in a min-heap.
type topK struct {
	items []Scored
	k     int
}

func (h *topK) push(x Scored) {
	if len(h.items) < h.k {
		h.items = append(h.items, x)
		i := len(h.items) - 1
		for i > 0 {
			p := (i - 1) / 2
			if !worse(h.items[i], h.items[p]) {
				break
			}
			h.items[i], h.items[p] = h.items[p], h.items[i]
			i = p
		}
		return
	}
	if !worse(h.items[0], x) {
		return
	}
	h.items[0] = x
	siftDown(h.items, worse)
}

// sorted returns a fresh slice of the kept items, best first.
func (h *topK) sorted() []Scored {
	if len(h.items) == 0 {
		return nil
	}
	out := slices.Clone(h.items)
	slices.SortFunc(out, func(a, b Scored) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return out
}

func siftDown[T any](items []T, less func(a, b T) bool) {
	i, n := 0, len(items)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && less(items[r], items[l]) {
			m = r
		}
		if !less(items[m], items[i]) {
			return
		}
		items[i], items[m] = items[m], items[i]
		i = m
	}
}

// dotTail is dot from element i on, with the four accumulators s of the
// elements before i: the Go loop, and the tail of the kernel's.
func dotTail(a, b []float32, i int, s [4]float32) float32 {
	b = b[:len(a)]
	s0, s1, s2, s3 := s[0], s[1], s[2], s[3]
	for ; i+8 <= len(a); i += 8 {
		aa, bb := a[i:i+8:i+8], b[i:i+8:i+8]
		s0 += aa[0]*bb[0] + aa[4]*bb[4]
		s1 += aa[1]*bb[1] + aa[5]*bb[5]
		s2 += aa[2]*bb[2] + aa[6]*bb[6]
		s3 += aa[3]*bb[3] + aa[7]*bb[7]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}
