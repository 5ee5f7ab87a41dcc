package rerank_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/retrieval/rerank"
)

// scoreByOverlap is the fake cross-encoder: a document's score is the number
// of query words it contains, so the expected order is easy to state.
func scoreByOverlap(query, doc string) float64 {
	n := 0.0
	for _, w := range strings.Fields(strings.ToLower(query)) {
		if strings.Contains(strings.ToLower(doc), w) {
			n++
		}
	}
	return n
}

// teiServer answers POST /rerank in TEI's shape, sorted by score as TEI does.
func teiServer(t *testing.T, requests *atomic.Int32, override func(w http.ResponseWriter) bool) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if r.URL.Path != "/rerank" {
			http.NotFound(w, r)
			return
		}
		if override != nil && override(w) {
			return
		}
		var req struct {
			Query string   `json:"query"`
			Texts []string `json:"texts"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusUnprocessableEntity)
			return
		}
		type item struct {
			Index int     `json:"index"`
			Score float64 `json:"score"`
		}
		var out []item
		for i, d := range req.Texts {
			out = append(out, item{i, scoreByOverlap(req.Query, d)})
		}
		slices.SortStableFunc(out, func(a, b item) int {
			switch {
			case a.Score > b.Score:
				return -1
			case a.Score < b.Score:
				return 1
			}
			return 0
		})
		_ = json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// cohereServer answers POST /v1/rerank in Cohere's shape, top_n results.
func cohereServer(t *testing.T, gotAuth *atomic.Value) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/rerank" {
			http.NotFound(w, r)
			return
		}
		gotAuth.Store(r.Header.Get("Authorization"))
		var req struct {
			Model     string   `json:"model"`
			Query     string   `json:"query"`
			Documents []string `json:"documents"`
			TopN      int      `json:"top_n"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model != "rerank-v3" {
			http.Error(w, `{"message":"bad request"}`, http.StatusBadRequest)
			return
		}
		type res struct {
			Index int     `json:"index"`
			Score float64 `json:"relevance_score"`
		}
		var out []res
		for i, d := range req.Documents {
			out = append(out, res{i, scoreByOverlap(req.Query, d) / 10})
		}
		slices.SortStableFunc(out, func(a, b res) int {
			switch {
			case a.Score > b.Score:
				return -1
			case a.Score < b.Score:
				return 1
			}
			return 0
		})
		out = out[:min(req.TopN, len(out))]
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "x", "results": out})
	}))
	t.Cleanup(srv.Close)
	return srv
}

var httpHits = mkHits("opening hours", "refund policy for annual plans", "refund")

func TestHTTPTEI(t *testing.T) {
	var n atomic.Int32
	srv := teiServer(t, &n, nil)
	r, err := rerank.NewHTTP(rerank.HTTPConfig{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if r.Name() != "http/tei" {
		t.Errorf("Name = %q", r.Name())
	}
	out, err := r.Rerank(context.Background(), "annual refund policy", httpHits, 2)
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(out); !slices.Equal(got, []string{"c1", "c2"}) {
		t.Errorf("order = %v, want [c1 c2]", got)
	}
	if out[0].Score != 3 || out[0].Method != rerank.MethodRerank {
		t.Errorf("top hit = score %v method %q, want 3 and rerank", out[0].Score, out[0].Method)
	}
	if out, err := r.Rerank(context.Background(), "q", nil, 2); out != nil || err != nil || n.Load() != 1 {
		t.Errorf("no hits: %v, %v, %d requests; want nil, nil and no request", out, err, n.Load())
	}
}

func TestHTTPCohere(t *testing.T) {
	var auth atomic.Value
	srv := cohereServer(t, &auth)
	r, err := rerank.NewHTTP(rerank.HTTPConfig{URL: srv.URL + "/", Style: rerank.StyleCohere, Model: "rerank-v3", APIKey: "k-123"})
	if err != nil {
		t.Fatal(err)
	}
	out, err := r.Rerank(context.Background(), "refund policy", httpHits, 2)
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(out); !slices.Equal(got, []string{"c1", "c2"}) {
		t.Errorf("order = %v, want [c1 c2]", got)
	}
	if auth.Load() != "Bearer k-123" {
		t.Errorf("Authorization = %v", auth.Load())
	}
	if s := fmt.Sprint(rerank.HTTPConfig{APIKey: "k-123"}); strings.Contains(s, "k-123") {
		t.Errorf("HTTPConfig leaks the key: %s", s)
	}
}

func TestHTTPMalformed(t *testing.T) {
	cases := map[string]string{
		"not json":       `<html>oops</html>`,
		"index too big":  `[{"index":7,"score":1},{"index":0,"score":0.5},{"index":1,"score":0.1}]`,
		"negative index": `[{"index":-1,"score":1}]`,
		"duplicate":      `[{"index":0,"score":1},{"index":0,"score":0.5},{"index":1,"score":0.1}]`,
		"missing score":  `[{"index":0},{"index":1,"score":0.5},{"index":2,"score":0.1}]`,
		"too few":        `[{"index":0,"score":1}]`,
		"object":         `{"results":[]}`,
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			var n atomic.Int32
			srv := teiServer(t, &n, func(w http.ResponseWriter) bool {
				fmt.Fprint(w, body)
				return true
			})
			r, _ := rerank.NewHTTP(rerank.HTTPConfig{URL: srv.URL + "/rerank"})
			_, err := r.Rerank(context.Background(), "refund", httpHits, 3)
			if !errors.Is(err, rerank.ErrBadResponse) {
				t.Fatalf("err = %v, want ErrBadResponse", err)
			}
		})
	}
}

func TestHTTPStatus(t *testing.T) {
	for _, c := range []struct {
		status int
		want   error
	}{
		{http.StatusInternalServerError, retrieval.ErrUnavailable},
		{http.StatusTooManyRequests, retrieval.ErrUnavailable},
		{http.StatusRequestEntityTooLarge, retrieval.ErrInvalid},
	} {
		var n atomic.Int32
		srv := teiServer(t, &n, func(w http.ResponseWriter) bool {
			w.WriteHeader(c.status)
			fmt.Fprint(w, `{"error":"model overloaded","error_type":"Overloaded"}`)
			return true
		})
		r, _ := rerank.NewHTTP(rerank.HTTPConfig{URL: srv.URL})
		_, err := r.Rerank(context.Background(), "refund", httpHits, 3)
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), "overloaded") {
			t.Errorf("status %d: err = %v, want %v with the server's message", c.status, err, c.want)
		}
	}
}

func TestHTTPTimeout(t *testing.T) {
	slow := func(w http.ResponseWriter) bool {
		time.Sleep(500 * time.Millisecond)
		return false
	}
	var n atomic.Int32
	srv := teiServer(t, &n, slow)
	t.Run("context", func(t *testing.T) {
		r, _ := rerank.NewHTTP(rerank.HTTPConfig{URL: srv.URL})
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
		defer cancel()
		_, err := r.Rerank(ctx, "refund", httpHits, 3)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want DeadlineExceeded", err)
		}
	})
	t.Run("config", func(t *testing.T) {
		r, _ := rerank.NewHTTP(rerank.HTTPConfig{URL: srv.URL, Timeout: 30 * time.Millisecond})
		_, err := r.Rerank(context.Background(), "refund", httpHits, 3)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want DeadlineExceeded", err)
		}
	})
}

func TestHTTPUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	r, _ := rerank.NewHTTP(rerank.HTTPConfig{URL: url})
	_, err := r.Rerank(context.Background(), "refund", httpHits, 3)
	if !errors.Is(err, retrieval.ErrUnavailable) {
		t.Fatalf("err = %v, want ErrUnavailable", err)
	}
}

func TestNewHTTPInvalid(t *testing.T) {
	for _, cfg := range []rerank.HTTPConfig{
		{URL: ""},
		{URL: "localhost:8080"},
		{URL: "ftp://host/rerank"},
		{URL: "http://host", Style: "grpc"},
	} {
		if _, err := rerank.NewHTTP(cfg); !errors.Is(err, retrieval.ErrInvalid) {
			t.Errorf("%v: err = %v, want ErrInvalid", cfg, err)
		}
	}
}
