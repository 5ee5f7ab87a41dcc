package workload_test

import (
	"math"
	"slices"
	"testing"

	"github.com/adaptrag/adaptrag/internal/workload"
)

func dot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func TestClusteredShape(t *testing.T) {
	const n = 500
	for _, dim := range []int{0, 64} {
		c := workload.NewClustered(n, workload.ClusterOptions{Dim: dim})
		want := dim
		if dim == 0 {
			want = workload.Dim
		}
		if len(c.Docs) != n || len(c.Queries) != workload.NumQueries || len(c.DocCluster) != n || len(c.QueryCluster) != workload.NumQueries {
			t.Fatalf("dim %d: %d docs, %d queries, %d+%d labels", dim, len(c.Docs), len(c.Queries), len(c.DocCluster), len(c.QueryCluster))
		}
		for i, v := range append(slices.Clone(c.Docs), c.Queries...) {
			if len(v) != want || cap(v) != want || math.Abs(dot(v, v)-1) > 1e-5 {
				t.Fatalf("dim %d: vector %d: len %d cap %d squared norm %v", dim, i, len(v), cap(v), dot(v, v))
			}
		}
		for i, k := range append(slices.Clone(c.DocCluster), c.QueryCluster...) {
			if k < 0 || int(k) >= c.Clusters {
				t.Fatalf("dim %d: label %d = %d outside [0, %d)", dim, i, k, c.Clusters)
			}
		}
	}
	if e := workload.NewClustered(-3, workload.ClusterOptions{}); len(e.Docs) != 0 || len(e.Queries) != workload.NumQueries {
		t.Errorf("NewClustered(-3): %d docs, %d queries", len(e.Docs), len(e.Queries))
	}
}

// TestClusteredStable checks that the workload is a pure function of n
// and the options, that documents for a small n are a prefix of those for
// a larger one, and that the queries do not depend on n.
func TestClusteredStable(t *testing.T) {
	small := workload.NewClustered(100, workload.ClusterOptions{})
	big := workload.NewClustered(300, workload.ClusterOptions{})
	again := workload.NewClustered(300, workload.ClusterOptions{})
	if big.Fingerprint() != again.Fingerprint() || !slices.Equal(big.DocCluster, again.DocCluster) {
		t.Fatal("two draws of the same workload differ")
	}
	for i := range small.Docs {
		if !slices.Equal(small.Docs[i], big.Docs[i]) || small.DocCluster[i] != big.DocCluster[i] {
			t.Fatalf("document %d differs between n=100 and n=300", i)
		}
	}
	for i := range small.Queries {
		if !slices.Equal(small.Queries[i], big.Queries[i]) {
			t.Fatalf("query %d differs between n=100 and n=300", i)
		}
	}
	if other := workload.NewClustered(300, workload.ClusterOptions{Topics: 8}); other.Fingerprint() == big.Fingerprint() {
		t.Error("the options do not change the workload")
	}
}

// TestClusteredStructure checks what makes the workload clustered rather
// than isotropic: queries are fresh draws (no query is a document), a
// vector is closer to its own cluster than to others, the clusters are not
// all the same size, and the variance decays over the principal directions
// instead of spreading evenly over all of them (as it does in NewDense).
func TestClusteredStructure(t *testing.T) {
	const n = 3000
	c := workload.NewClustered(n, workload.ClusterOptions{})
	for qi, q := range c.Queries {
		for di, d := range c.Docs {
			if dot(q, d) > 1-1e-6 {
				t.Fatalf("query %d is a copy of document %d", qi, di)
			}
		}
	}
	var same, other float64
	var ns, no int
	for i := 0; i < n; i++ {
		for j := i + 1; j < min(n, i+40); j++ {
			if c.DocCluster[i] == c.DocCluster[j] {
				same += dot(c.Docs[i], c.Docs[j])
				ns++
			} else {
				other += dot(c.Docs[i], c.Docs[j])
				no++
			}
		}
	}
	if ns == 0 || no == 0 || same/float64(ns) < other/float64(no)+0.2 {
		t.Errorf("mean cosine within a cluster %.3f (%d pairs), across clusters %.3f (%d pairs)", same/float64(max(ns, 1)), ns, other/float64(max(no, 1)), no)
	}
	sizes := map[int32]int{}
	for _, k := range c.DocCluster {
		sizes[k]++
	}
	largest := 0
	for _, s := range sizes {
		largest = max(largest, s)
	}
	if mean := float64(n) / float64(len(sizes)); float64(largest) < 3*mean {
		t.Errorf("largest cluster %d documents, mean %.1f: sizes do not vary", largest, mean)
	}
	topShare := func(vs [][]float32) float64 {
		mean := make([]float64, len(vs[0]))
		for _, v := range vs {
			for j := range v {
				mean[j] += float64(v[j]) / float64(len(vs))
			}
		}
		var total float64
		for _, v := range vs {
			for j := range v {
				d := float64(v[j]) - mean[j]
				total += d * d
			}
		}
		// Power iteration for the largest eigenvalue of the covariance.
		x := make([]float64, len(mean))
		for j := range x {
			x[j] = math.Sin(float64(j + 1))
		}
		var lambda float64
		for range 25 {
			y := make([]float64, len(x))
			for _, v := range vs {
				var p float64
				for j := range v {
					p += (float64(v[j]) - mean[j]) * x[j]
				}
				for j := range v {
					y[j] += p * (float64(v[j]) - mean[j])
				}
			}
			var norm float64
			for _, e := range y {
				norm += e * e
			}
			lambda = math.Sqrt(norm)
			for j := range y {
				x[j] = y[j] / lambda
			}
		}
		return lambda / total
	}
	even := 1 / float64(workload.Dim)
	if s := topShare(c.Docs[:2000]); s < 10*even {
		t.Errorf("clustered: first principal direction holds %.4f of the variance, even spread is %.4f", s, even)
	}
	if s := topShare(workload.NewDense(2000).Docs); s > 3*even {
		t.Errorf("isotropic: first principal direction holds %.4f of the variance, even spread is %.4f", s, even)
	}
}
