package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adaptrag/adaptrag/internal/workload"
)

// TestBenchRetrieval runs the command at a small n on each kind of
// workload and checks that every figure is in its range: not the figures
// themselves, which depend on the machine.
func TestBenchRetrieval(t *testing.T) {
	if testing.Short() {
		t.Skip("builds three stores")
	}
	corpus, err := filepath.Abs("../../internal/workload/testdata/corpus")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ workload, name string }{
		{"clustered", "clustered"},
		{"isotropic", "isotropic"},
		{"corpus:" + corpus, "corpus:corpus"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			e := &env{stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
			const n = 2000
			if err := runBench(context.Background(), e, []string{"retrieval", "--n", "2000", "--workload", c.workload, "--batch", "500", "--json"}); err != nil {
				t.Fatalf("%v\n%s", err, errb.String())
			}
			var got map[string]any
			if err := json.Unmarshal(out.Bytes(), &got); err != nil {
				t.Fatalf("%v: %s", err, out.String())
			}
			for _, k := range []string{"dense_p50_ms", "dense_p99_ms", "exact_p50_ms", "recall_at_50", "filtered_p50_ms",
				"filtered_recall_at_50", "bm25_p50_ms", "hybrid_p50_ms", "ingest_per_s", "max_stall_ms", "reopen_s",
				"verify_s", "rss_mib", "rss_settled_mib", "disk_bytes_per_chunk", "n", "dim", "workload"} {
				if _, ok := got[k]; !ok {
					t.Errorf("field %s missing", k)
				}
			}
			var r retrievalReport
			if err := json.Unmarshal(out.Bytes(), &r); err != nil {
				t.Fatal(err)
			}
			if r.N != n || r.Dim != workload.Dim || r.Workload != c.name {
				t.Errorf("n %d dim %d workload %q", r.N, r.Dim, r.Workload)
			}
			for name, x := range map[string]float64{"recall": r.Recall, "filtered recall": r.FilteredRecall, "tenant recall": r.TenantRecall} {
				if !(x >= 0 && x <= 1) {
					t.Errorf("%s %v outside [0, 1]", name, x)
				}
			}
			// The exact scan and the float64 sort agree (ties at rank 50
			// aside), and a store is not worse than picking at random.
			if r.ExactRecall < 0.99 {
				t.Errorf("exact scan recall %v against the float64 sort", r.ExactRecall)
			}
			if r.Recall < 0.5 || r.FilteredRecall < 0.5 {
				t.Errorf("store recall %v, filtered %v", r.Recall, r.FilteredRecall)
			}
			for name, x := range map[string]float64{"dense p50": r.DenseP50, "exact p50": r.ExactP50, "filtered p50": r.FilteredP50,
				"bm25 p50": r.BM25P50, "hybrid p50": r.HybridP50, "ingest/s": r.IngestPerS, "longest write": r.MaxStallMs,
				"reopen": r.ReopenS, "disk a chunk": r.DiskBytesPerChunk} {
				if !(x > 0) || math.IsInf(x, 0) {
					t.Errorf("%s = %v, want > 0", name, x)
				}
			}
			// The queries waited for the check that ends after the open.
			if r.VerifyS < r.ReopenWarmS {
				t.Errorf("background check done %v s after the open began, the open took %v s", r.VerifyS, r.ReopenWarmS)
			}
			if r.DenseP99 < r.DenseP50 {
				t.Errorf("dense p99 %v < p50 %v", r.DenseP99, r.DenseP50)
			}
			// A chunk's vector alone is 1.5 KiB on disk.
			if r.DiskBytesPerChunk < 4*workload.Dim {
				t.Errorf("%.0f bytes a chunk on disk, less than its vector", r.DiskBytesPerChunk)
			}
			if _, err := os.Stat("/proc/self/status"); err == nil && (r.RSSMiB <= 0 || r.RSSSettledMiB <= 0) {
				t.Errorf("rss %v, settled %v, with /proc present", r.RSSMiB, r.RSSSettledMiB)
			}
			if !strings.Contains(errb.String(), "ingesting") {
				t.Errorf("no progress on stderr: %q", errb.String())
			}
		})
	}
}

// TestBenchRetrievalCancel checks that a cancelled run stops with the
// context's error and leaves no temporary directory behind.
func TestBenchRetrievalCancel(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	ctx, cancel := context.WithCancel(context.Background())
	progress := func(format string, _ ...any) {
		if strings.HasPrefix(format, "exact scan of") {
			cancel()
		}
	}
	_, err := benchRetrieval(ctx, benchConfig{n: 2000, workload: "clustered", batch: 500, warm: true}, progress)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("left behind in the temporary folder: %v", left)
	}
}

func TestBenchRetrievalUsage(t *testing.T) {
	for _, args := range [][]string{
		{"retrieval"},
		{"retrieval", "--n", "10", "--workload", "nope"},
		{"retrieval", "--n", "10", "--workload", "isotropic", "--dim", "64"},
		{"retrieval", "--n", "10", "--queries", "0"},
	} {
		e := &env{stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}, getenv: func(string) string { return "" }}
		if err := runBench(context.Background(), e, args); !errors.Is(err, errUsage) {
			t.Errorf("%v: err = %v, want a usage error", args, err)
		}
	}
}

// TestExactTop checks the exact scan against the float64 sort on rows
// chosen out of order.
func TestExactTop(t *testing.T) {
	c := workload.NewClustered(500, workload.ClusterOptions{Dim: 32})
	flat := make([]float32, 0, 500*32)
	for _, v := range c.Docs {
		flat = append(flat, v...)
	}
	var rows []int32
	for i := 499; i >= 0; i -= 3 {
		rows = append(rows, int32(i))
	}
	for q := range 20 {
		got := exactTop(flat, 32, c.Queries[q], rows, 10)
		want := sortTop(flat, 32, c.Queries[q], rows, 10)
		if len(got) != 10 || !equalInt32(got, want) {
			t.Fatalf("query %d: exact %v, sort %v", q, got, want)
		}
	}
	if got := exactTop(flat, 32, c.Queries[0], rows[:3], 10); len(got) != 3 {
		t.Errorf("3 rows gave %d results", len(got))
	}
}

func equalInt32(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
