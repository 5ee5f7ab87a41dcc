package workload_test

import (
	"math"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/adaptrag/adaptrag/internal/workload"
)

// published holds the check values of ../shared/bench/retrieval/README.md
// (relative to the repository root).
var published = map[int]struct {
	dense, lexical uint64
	query0         [3]float32
	lexQuery0      string
}{
	10_000:  {0x3f1d6fb32ee51673, 0xfbe884a192af0d42, [3]float32{-0.021566344, 0.062155776, 0.024970446}, "t2388 t31 t959 t281"},
	100_000: {0x7f49b505cd2e0c55, 0x7f020888c944f4df, [3]float32{-0.03211521, 0.029767342, -0.03726418}, "t2 t55 t10 t0"},
}

// checkPublished compares the workloads for n against the published
// fingerprints and spot values.
func checkPublished(t *testing.T, n int) {
	t.Helper()
	want := published[n]
	d, l := workload.NewDense(n), workload.NewLexical(n)
	if got := d.Fingerprint(); got != want.dense {
		t.Errorf("N=%d: dense fingerprint %#016x, want %#016x", n, got, want.dense)
	}
	if got := l.Fingerprint(); got != want.lexical {
		t.Errorf("N=%d: lexical fingerprint %#016x, want %#016x", n, got, want.lexical)
	}
	if got, want := [3]float32(d.Docs[0][:3]), [3]float32{0.019765291, 0.0038931002, 0.010421551}; got != want {
		t.Errorf("N=%d: doc[0][:3] = %v, want %v", n, got, want)
	}
	if got := [3]float32(d.Queries[0][:3]); got != want.query0 {
		t.Errorf("N=%d: query[0][:3] = %v, want %v", n, got, want.query0)
	}
	if prefix := "t95 t1 t0 t9 t17433 t28 t133 t889 t9 t0 "; !strings.HasPrefix(l.Docs[0], prefix) {
		t.Errorf("N=%d: lexical doc 0 = %.60q..., want prefix %q", n, l.Docs[0], prefix)
	}
	if l.Queries[0] != want.lexQuery0 {
		t.Errorf("N=%d: lexical query 0 = %q, want %q", n, l.Queries[0], want.lexQuery0)
	}
}

func TestPublishedWorkload(t *testing.T) {
	checkPublished(t, 10_000)
}

// TestPublishedWorkloadLarge checks N=100000 too; it draws about 150 MiB,
// so it runs only when ADAPTRAG_WORKLOAD_LARGE is set.
func TestPublishedWorkloadLarge(t *testing.T) {
	if os.Getenv("ADAPTRAG_WORKLOAD_LARGE") == "" {
		t.Skip("set ADAPTRAG_WORKLOAD_LARGE=1 to check the N=100000 fingerprints (about 150 MiB)")
	}
	checkPublished(t, 100_000)
}

func TestShape(t *testing.T) {
	const n = 300
	d, l := workload.NewDense(n), workload.NewLexical(n)
	if len(d.Docs) != n || len(d.Queries) != workload.NumQueries || len(l.Docs) != n || len(l.Queries) != workload.NumQueries {
		t.Fatalf("sizes: dense %d+%d, lexical %d+%d", len(d.Docs), len(d.Queries), len(l.Docs), len(l.Queries))
	}
	for i, v := range append(d.Docs, d.Queries...) {
		var s float64
		for _, x := range v {
			s += float64(x) * float64(x)
		}
		if len(v) != workload.Dim || math.Abs(s-1) > 1e-5 {
			t.Fatalf("vector %d: dim %d, squared norm %v", i, len(v), s)
		}
	}
	// Appending to a document must not overwrite the next one.
	if cap(d.Docs[0]) != workload.Dim || cap(d.Docs) != n {
		t.Errorf("caps: vector %d, docs %d; want %d, %d", cap(d.Docs[0]), cap(d.Docs), workload.Dim, n)
	}
	for i, s := range l.Docs {
		if f := strings.Fields(s); len(f) != workload.DocTokens || strings.Join(f, " ") != s {
			t.Fatalf("doc %d has %d tokens or bad spacing: %q", i, len(f), s)
		}
	}
	for i, s := range l.Queries {
		if f := strings.Fields(s); len(f) != workload.QueryTokens {
			t.Fatalf("query %d has %d tokens: %q", i, len(f), s)
		}
	}
	if e := workload.NewDense(-1); len(e.Docs) != 0 || len(e.Queries) != workload.NumQueries {
		t.Errorf("NewDense(-1): %d docs, %d queries", len(e.Docs), len(e.Queries))
	}
}

// TestFingerprintSensitive makes sure the fingerprint tests can fail: one
// flipped bit or one changed character changes the fingerprint, and the
// boundary between documents and queries is part of it.
func TestFingerprintSensitive(t *testing.T) {
	d := workload.NewDense(20)
	before := d.Fingerprint()
	d.Queries[len(d.Queries)-1][workload.Dim-1] = math.Float32frombits(math.Float32bits(d.Queries[len(d.Queries)-1][workload.Dim-1]) ^ 1)
	if d.Fingerprint() == before {
		t.Error("dense fingerprint ignores the last bit of the last query")
	}
	l := workload.NewLexical(20)
	before = l.Fingerprint()
	l.Docs[0] = "u" + l.Docs[0][1:]
	if l.Fingerprint() == before {
		t.Error("lexical fingerprint ignores the first character")
	}
	a := workload.Lexical{Docs: []string{"t1 t2"}}
	b := workload.Lexical{Docs: []string{"t1", "t2"}}
	if a.Fingerprint() == b.Fingerprint() {
		t.Error("lexical fingerprint does not separate texts")
	}
}

func TestCache(t *testing.T) {
	var c workload.Cache
	var wg sync.WaitGroup
	dense := make([]workload.Dense, 4)
	lex := make([]workload.Lexical, 4)
	for i := range 4 {
		wg.Go(func() {
			dense[i], lex[i] = c.Dense(100), c.Lexical(100)
		})
	}
	wg.Wait()
	for i := range 4 {
		if &dense[i].Docs[0][0] != &dense[0].Docs[0][0] || &lex[i].Docs[0] != &lex[0].Docs[0] {
			t.Fatalf("call %d drew its own workload", i)
		}
	}
	if got, want := dense[0].Fingerprint(), workload.NewDense(100).Fingerprint(); got != want {
		t.Errorf("cached dense fingerprint %#x, want %#x", got, want)
	}
	if got, want := lex[0].Fingerprint(), workload.NewLexical(100).Fingerprint(); got != want {
		t.Errorf("cached lexical fingerprint %#x, want %#x", got, want)
	}
	if d := c.Dense(50); len(d.Docs) != 50 {
		t.Errorf("Dense(50) after Dense(100): %d docs", len(d.Docs))
	}
}

func TestHeapMB(t *testing.T) {
	var kept []byte
	got := workload.HeapMB(func() { kept = make([]byte, 16<<20) })
	runtime.KeepAlive(kept)
	if got < 15.5 || got > 17 {
		t.Errorf("HeapMB of a kept 16 MiB slice = %.2f", got)
	}
	garbage := workload.HeapMB(func() {
		for range 64 {
			_ = make([]byte, 1<<20)
		}
	})
	if garbage > 1 {
		t.Errorf("HeapMB of garbage only = %.2f, want about 0", garbage)
	}
}

func TestRecall(t *testing.T) {
	id := func(x int) int { return x }
	for _, c := range []struct {
		name      string
		got, want [][]int
		recall    float64
	}{
		{"all", [][]int{{1, 2}, {3, 4}}, [][]int{{2, 1}, {4, 3}}, 1},
		{"half", [][]int{{1, 9}, {3, 4}}, [][]int{{1, 2}, {4, 5}}, 0.5},
		{"repeated hit counts once", [][]int{{1, 1}}, [][]int{{1, 2}}, 0.5},
		{"missing got row", [][]int{{1, 2}}, [][]int{{1, 2}, {3, 4}}, 0.5},
		{"nothing wanted", [][]int{{1}}, nil, 1},
	} {
		if r := workload.Recall(c.got, c.want, id); r != c.recall {
			t.Errorf("%s: recall %v, want %v", c.name, r, c.recall)
		}
	}
}

func TestCPUTime(t *testing.T) {
	t0 := workload.CPUTime()
	if t0 == 0 {
		t.Skip("CPU time is not available on " + runtime.GOOS)
	}
	deadline := time.Now().Add(50 * time.Millisecond)
	x := 0.0
	for time.Now().Before(deadline) {
		x += math.Sqrt(x + 1)
	}
	if used := workload.CPUTime() - t0; used <= 0 {
		t.Errorf("CPU time did not grow over 50ms of spinning: %v (%v)", used, x)
	}
}
