package service

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/adaptrag/adaptrag"
)

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// envInts reads a comma-separated list of positive integers, def when
// unset or malformed.
func envInts(name string, def ...int) []int {
	var out []int
	for _, f := range strings.Split(os.Getenv(name), ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return def
		}
		out = append(out, n)
	}
	return out
}

// TestLoad drives the service on loopback with concurrent clients and the
// offline models, as "adaptrag serve" runs it (metrics and tracing on), and
// reports throughput and latency, once per concurrency: 8 clients (the
// service target: 2,000 requests/s with p99 at most 15 ms on two cores) and
// 32. It fails on any error, and on goroutines or heap left behind once the
// clients are gone. It runs only with ADAPTRAG_LOADTEST=1;
// ADAPTRAG_LOAD_CLIENTS (8,32), ADAPTRAG_LOAD_REQUESTS (6000 per
// concurrency) and ADAPTRAG_LOAD_SECONDS (60, an upper bound each) size it.
func TestLoad(t *testing.T) {
	if os.Getenv("ADAPTRAG_LOADTEST") == "" {
		t.Skip("load test skipped: set ADAPTRAG_LOADTEST=1")
	}
	for _, clients := range envInts("ADAPTRAG_LOAD_CLIENTS", 8, 32) {
		t.Run(fmt.Sprintf("clients=%d", clients), func(t *testing.T) { load(t, clients) })
	}
}

func load(t *testing.T, clients int) {
	total := envInt("ADAPTRAG_LOAD_REQUESTS", 6000)
	limit := time.Duration(envInt("ADAPTRAG_LOAD_SECONDS", 60)) * time.Second

	m, err := NewMetrics()
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider()
	p := sampleParts(t)
	p.opts.MeterProvider, p.opts.TracerProvider = m.Provider, tp
	s := newServer(t, Config{Pipeline: p.pipeline(t), MaxRuns: clients, Metrics: m.Handler, MeterProvider: m.Provider,
		TracerProvider: tp, Logger: discard()})
	tr := &http.Transport{MaxIdleConnsPerHost: clients}
	client := &http.Client{Transport: tr}

	questions := []string{qChitchat, qFactual, qAnalytical}
	one := func(i int) (time.Duration, error) {
		body, _ := json.Marshal(map[string]any{"question": questions[i%3]})
		req, _ := http.NewRequest("POST", s.url+"/v1/ask", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		stream := i%2 == 1
		if stream {
			req.Header.Set("Accept", "text/event-stream")
		}
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		d := time.Since(start)
		switch {
		case err != nil:
			return d, err
		case resp.StatusCode != 200:
			return d, fmt.Errorf("status %d: %.200s", resp.StatusCode, b)
		case stream && !bytes.Contains(b, []byte("event: result\n")):
			return d, fmt.Errorf("stream without a result: %.200s", b)
		case !bytes.Contains(b, []byte(`"answer":"`)) || bytes.Contains(b, []byte(`"answer":""`)):
			return d, fmt.Errorf("no answer: %.200s", b)
		}
		return d, nil
	}
	// Warm up: connections, caches, the metric series.
	for i := range 3 * clients {
		if _, err := one(i); err != nil {
			t.Fatal(err)
		}
	}
	settle := func() (goroutines int, heap uint64) {
		tr.CloseIdleConnections()
		time.Sleep(200 * time.Millisecond)
		runtime.GC()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return runtime.NumGoroutine(), ms.HeapAlloc
	}
	g0, h0 := settle()

	var next atomic.Int64
	var mu sync.Mutex
	var lat []time.Duration
	var errs []error
	deadline := time.Now().Add(limit)
	cpu0, cpuOK := processCPU()
	start := time.Now()
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			var mine []time.Duration
			for {
				i := int(next.Add(1)) - 1
				if i >= total || time.Now().After(deadline) {
					break
				}
				d, err := one(i)
				if err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					continue
				}
				mine = append(mine, d)
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu1, cpuOK1 := processCPU()
	g1, h1 := settle()

	slices.Sort(lat)
	pct := func(p float64) time.Duration {
		if len(lat) == 0 {
			return 0
		}
		return lat[min(len(lat)-1, int(p*float64(len(lat))))]
	}
	t.Logf("%d clients, %d requests (asks: small talk, factual, analytical in turn; JSON and SSE in turn) in %v: %.0f requests/s",
		clients, len(lat)+len(errs), elapsed.Round(time.Millisecond), float64(len(lat))/elapsed.Seconds())
	t.Logf("latency p50 %v, p90 %v, p99 %v, max %v; errors %d", pct(.50), pct(.90), pct(.99), lat[len(lat)-1], len(errs))
	t.Logf("after the clients left: goroutines %d -> %d, heap %.1f -> %.1f MiB", g0, g1, float64(h0)/(1<<20), float64(h1)/(1<<20))
	if cpuOK && cpuOK1 && len(lat) > 0 {
		// On a shared machine throughput says how busy the machine was; CPU
		// time per request says what a request costs.
		per := (cpu1 - cpu0).Seconds() / float64(len(lat))
		t.Logf("CPU per request (server and clients, one process): %.3f ms; %d cores would serve at most %.0f requests/s",
			per*1000, runtime.NumCPU(), float64(runtime.NumCPU())/per)
	}
	if len(errs) > 0 {
		t.Errorf("%d errors, first: %v", len(errs), errs[0])
	}

	// The same asks on the pipeline itself, at the same concurrency: what
	// HTTP, JSON and SSE add.
	pipe := p.pipeline(t)
	var done atomic.Int64
	cpu0, cpuOK = processCPU()
	start = time.Now()
	for range clients {
		wg.Go(func() {
			for {
				i := int(done.Add(1)) - 1
				if i >= len(lat) {
					return
				}
				if _, err := pipe.Ask(t.Context(), adaptrag.Request{Question: questions[i%3]}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	direct := time.Since(start)
	cpu1, cpuOK1 = processCPU()
	t.Logf("the pipeline alone, same asks and concurrency: %.0f asks/s", float64(len(lat))/direct.Seconds())
	if cpuOK && cpuOK1 && len(lat) > 0 {
		t.Logf("CPU per ask, the pipeline alone: %.3f ms", (cpu1-cpu0).Seconds()*1000/float64(len(lat)))
	}
	if len(lat) < total && time.Now().After(deadline) {
		t.Logf("stopped at the time bound after %d of %d requests", len(lat), total)
	}
	if g1 > g0+2 {
		buf := make([]byte, 1<<20)
		t.Errorf("goroutines grew from %d to %d:\n%s", g0, g1, buf[:runtime.Stack(buf, true)])
	}
	if h1 > h0+16<<20 {
		t.Errorf("heap grew from %d to %d bytes", h0, h1)
	}
	if len(s.sem) != 0 {
		t.Errorf("%d run slots still taken", len(s.sem))
	}
}
