package workload

import (
	"math"
	"math/rand/v2"
	"slices"
)

// ClusterOptions shapes the clustered workload. The zero value gives the
// defaults: Dim dimensions, 64 topics of 16 clusters each, 12 principal
// directions per cluster.
type ClusterOptions struct {
	// Dim is the vector dimension; 0 means Dim (384).
	Dim int
	// Topics is the number of top-level topics; 0 means 64.
	Topics int
	// PerTopic is the number of clusters inside each topic; 0 means 16.
	PerTopic int
	// Rank is the number of principal directions of a cluster's own
	// spread; 0 means 12.
	Rank int
}

func (o ClusterOptions) withDefaults() ClusterOptions {
	if o.Dim <= 0 {
		o.Dim = Dim
	}
	if o.Topics <= 0 {
		o.Topics = 64
	}
	if o.PerTopic <= 0 {
		o.PerTopic = 16
	}
	if o.Rank <= 0 {
		o.Rank = 12
	}
	return o
}

// The generator's scales, before the final normalisation. They were chosen
// so that the cosine of two unrelated vectors sits around 0.1 to 0.2 (the
// common direction every sentence-embedding model shows), two vectors of
// one cluster sit around 0.5 to 0.7, and the variance decays over the
// principal directions instead of spreading evenly over all of them.
const (
	clusterMean      = 0.32 // norm of the direction every vector shares
	clusterGlobal    = 64   // global principal directions the topics spread over
	clusterTopicS    = 0.23 // spread of topic centres along them (first direction)
	clusterDecay     = 0.5  // power-law decay of the global spectrum
	clusterSubS      = 0.21 // spread of cluster centres around their topic
	clusterOwnS      = 0.40 // a cluster's spread along its first own direction
	clusterOwnDecay  = 0.7  // power-law decay of a cluster's own spectrum
	clusterIsoNoise  = 0.32 // isotropic noise (norm) on every vector
	clusterZipfShift = 8.0  // cluster weights are 1/(rank+shift)^clusterZipfS
	clusterZipfS     = 0.9
)

// mixture is the fixed structure of the clustered workload: the cluster
// centres, each cluster's principal directions and scales, and the
// cumulative cluster weights.
type mixture struct {
	o       ClusterOptions
	centres [][]float64   // [cluster][dim]
	dirs    [][][]float64 // [cluster][rank][dim], unit vectors
	scales  [][]float64   // [cluster][rank]
	cum     []float64     // cumulative weights, last = 1
}

// newMixture draws the mixture from its own stream, so that it depends on
// the options only, never on n.
func newMixture(o ClusterOptions) *mixture {
	r := rand.New(rand.NewPCG(5, 6))
	d := o.Dim
	unit := func() []float64 {
		v := make([]float64, d)
		var s float64
		for j := range v {
			v[j] = r.NormFloat64()
			s += v[j] * v[j]
		}
		s = math.Sqrt(s)
		for j := range v {
			v[j] /= s
		}
		return v
	}
	mean := unit()
	global := make([][]float64, min(clusterGlobal, d))
	for i := range global {
		global[i] = unit()
	}
	// addSpread adds sum_i scale*(i+1)^-decay * N(0,1) * global[i] to v.
	addSpread := func(v []float64, scale float64) {
		for i, g := range global {
			a := scale * math.Pow(float64(i+1), -clusterDecay) * r.NormFloat64()
			for j := range v {
				v[j] += a * g[j]
			}
		}
	}
	k := o.Topics * o.PerTopic
	m := &mixture{o: o, centres: make([][]float64, 0, k), dirs: make([][][]float64, 0, k), scales: make([][]float64, 0, k)}
	for range o.Topics {
		topic := make([]float64, d)
		for j := range topic {
			topic[j] = clusterMean * mean[j]
		}
		addSpread(topic, clusterTopicS)
		for range o.PerTopic {
			c := slices.Clone(topic)
			addSpread(c, clusterSubS)
			dirs := make([][]float64, o.Rank)
			scales := make([]float64, o.Rank)
			// Every cluster gets its own width, so that some topics are
			// tight and some diffuse, as real ones are.
			width := math.Exp(0.25 * r.NormFloat64())
			for i := range dirs {
				dirs[i] = unit()
				scales[i] = width * clusterOwnS * math.Pow(float64(i+1), -clusterOwnDecay)
			}
			m.centres = append(m.centres, c)
			m.dirs = append(m.dirs, dirs)
			m.scales = append(m.scales, scales)
		}
	}
	// Cluster sizes follow a shifted Zipf law over a shuffled order, so
	// that the large clusters are not all in the first topic.
	order := r.Perm(k)
	w := make([]float64, k)
	var total float64
	for rank, c := range order {
		w[c] = math.Pow(float64(rank)+clusterZipfShift, -clusterZipfS)
		total += w[c]
	}
	m.cum = make([]float64, k)
	var acc float64
	for c := range w {
		acc += w[c] / total
		m.cum[c] = acc
	}
	m.cum[k-1] = 1
	return m
}

// draw writes one unit vector of the mixture into v (len o.Dim), drawn
// from r, and returns its cluster.
func (m *mixture) draw(r *rand.Rand, v []float32, tmp []float64) int {
	c, _ := slices.BinarySearch(m.cum, r.Float64())
	c = min(c, len(m.cum)-1)
	copy(tmp, m.centres[c])
	for i, dir := range m.dirs[c] {
		a := m.scales[c][i] * r.NormFloat64()
		for j := range tmp {
			tmp[j] += a * dir[j]
		}
	}
	noise := clusterIsoNoise / math.Sqrt(float64(len(tmp)))
	var s float64
	for j := range tmp {
		tmp[j] += noise * r.NormFloat64()
		s += tmp[j] * tmp[j]
	}
	s = math.Sqrt(s)
	for j := range v {
		v[j] = float32(tmp[j] / s)
	}
	return c
}

// Clustered is the clustered dense workload: unit vectors drawn from a
// mixture of many anisotropic Gaussian clusters, grouped in topics, with a
// decaying spectrum, as sentence embeddings are (the isotropic NewDense is
// the worst case of every index and looks like no real corpus).
type Clustered struct {
	Dense
	// DocCluster and QueryCluster give the mixture component each vector
	// was drawn from, for filters that follow topics.
	DocCluster, QueryCluster []int32
	// Clusters is the number of mixture components.
	Clusters int
}

// NewClustered draws the clustered workload for n documents (n < 0 counts
// as 0). The mixture is drawn from PCG(5, 6), the documents from PCG(7, 8)
// and the NumQueries queries from PCG(9, 10): the queries are fresh draws
// of the same mixture (not copies of documents) and are the same for every
// n, and the documents for n are a prefix of those for any larger n.
func NewClustered(n int, o ClusterOptions) Clustered {
	n = max(n, 0)
	o = o.withDefaults()
	m := newMixture(o)
	out := Clustered{Clusters: len(m.cum)}
	tmp := make([]float64, o.Dim)
	gen := func(r *rand.Rand, count int) ([][]float32, []int32) {
		vs := make([][]float32, count)
		cl := make([]int32, count)
		flat := make([]float32, count*o.Dim)
		for i := range vs {
			v := flat[i*o.Dim : (i+1)*o.Dim : (i+1)*o.Dim]
			cl[i] = int32(m.draw(r, v, tmp))
			vs[i] = v
		}
		return vs, cl
	}
	out.Docs, out.DocCluster = gen(rand.New(rand.NewPCG(7, 8)), n)
	out.Queries, out.QueryCluster = gen(rand.New(rand.NewPCG(9, 10)), NumQueries)
	return out
}

// Clustered returns NewClustered(n, ClusterOptions{}), drawn on the first
// call for n.
func (c *Cache) Clustered(n int) Clustered {
	return cached(&c.mu, &c.clustered, n, func(n int) Clustered { return NewClustered(n, ClusterOptions{}) })
}
