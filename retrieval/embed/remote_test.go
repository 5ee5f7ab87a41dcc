package embed_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/retrieval/embed"
)

// fakeOpenAI is a loopback server speaking OpenAI's /v1/embeddings. Each
// vector encodes its text's length in the first component so that order can
// be checked. dimFor picks the dimension per request (by request number).
type fakeOpenAI struct {
	requests atomic.Int32
	mu       sync.Mutex
	sizes    []int // batch sizes seen, guarded by mu
	dimFor   func(req int) int
	status   int           // non-zero: answer with this status
	delay    time.Duration // sleep before answering
	drop     bool          // answer one vector short
	model    atomic.Value
}

func (f *fakeOpenAI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := int(f.requests.Add(1))
	if r.URL.Path != "/v1/embeddings" || r.Method != http.MethodPost {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	var req struct {
		Input []string `json:"input"`
		Model string   `json:"model"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	f.model.Store(req.Model)
	f.mu.Lock()
	f.sizes = append(f.sizes, len(req.Input))
	f.mu.Unlock()
	if f.delay > 0 {
		select {
		case <-time.After(f.delay):
		case <-r.Context().Done():
			return
		}
	}
	if f.status != 0 {
		w.WriteHeader(f.status)
		fmt.Fprint(w, `{"error":{"message":"model overloaded"}}`)
		return
	}
	dim := 4
	if f.dimFor != nil {
		dim = f.dimFor(n)
	}
	type item struct {
		Object    string    `json:"object"`
		Embedding []float32 `json:"embedding"`
		Index     int       `json:"index"`
	}
	var resp struct {
		Object string `json:"object"`
		Data   []item `json:"data"`
		Model  string `json:"model"`
		Usage  struct {
			PromptTokens int `json:"prompt_tokens"`
			TotalTokens  int `json:"total_tokens"`
		} `json:"usage"`
	}
	resp.Object, resp.Model = "list", req.Model
	inputs := req.Input
	if f.drop && len(inputs) > 0 {
		inputs = inputs[1:]
	}
	for i, s := range inputs {
		v := make([]float32, dim)
		v[0] = float32(len(s))
		resp.Data = append(resp.Data, item{"embedding", v, i})
		resp.Usage.PromptTokens += len(strings.Fields(s))
	}
	resp.Usage.TotalTokens = resp.Usage.PromptTokens
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(resp)
}

func newRemote(t *testing.T, f *fakeOpenAI, cfg embed.Config) *embed.Remote {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	cfg.Provider = embed.ProviderOpenAI
	cfg.BaseURL = srv.URL + "/v1"
	if cfg.Model == "" {
		cfg.Model = "test-embed"
	}
	r, err := embed.NewRemote(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func texts(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = strings.Repeat("x", i+1)
	}
	return out
}

func TestRemoteBatchingAndOrder(t *testing.T) {
	f := &fakeOpenAI{}
	r := newRemote(t, f, embed.Config{BatchSize: 4, APIKey: "sk-test"})
	if r.Dim() != 0 {
		t.Fatalf("Dim before first call = %d, want 0", r.Dim())
	}
	in := texts(10)
	vs, err := r.Embed(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.requests.Load(); got != 3 {
		t.Errorf("requests = %d, want 3 (batches of 4 for 10 texts)", got)
	}
	if fmt.Sprint(f.sizes) != "[4 4 2]" {
		t.Errorf("batch sizes = %v, want [4 4 2]", f.sizes)
	}
	if f.model.Load() != "test-embed" {
		t.Errorf("model sent = %v, want test-embed", f.model.Load())
	}
	for i, v := range vs {
		if int(v[0]) != len(in[i]) {
			t.Fatalf("vector %d belongs to a text of length %v, want %d", i, v[0], len(in[i]))
		}
	}
	if r.Dim() != 4 {
		t.Errorf("Dim after first call = %d, want 4", r.Dim())
	}
}

func TestRemoteDefaultBatchSize(t *testing.T) {
	f := &fakeOpenAI{}
	r := newRemote(t, f, embed.Config{})
	if _, err := r.Embed(context.Background(), texts(embed.DefaultBatchSize+1)); err != nil {
		t.Fatal(err)
	}
	if got := f.requests.Load(); got != 2 {
		t.Errorf("requests = %d, want 2", got)
	}
}

func TestRemoteEmptyInput(t *testing.T) {
	f := &fakeOpenAI{}
	r := newRemote(t, f, embed.Config{})
	vs, err := r.Embed(context.Background(), nil)
	if vs != nil || err != nil {
		t.Fatalf("Embed(nil) = %v, %v; want nil, nil", vs, err)
	}
	if f.requests.Load() != 0 {
		t.Error("an empty input must not reach the server")
	}
}

func TestRemoteDimensionMismatch(t *testing.T) {
	t.Run("between batches", func(t *testing.T) {
		f := &fakeOpenAI{dimFor: func(req int) int { return 4 + req/2 }} // 4, 5, ...
		r := newRemote(t, f, embed.Config{BatchSize: 2})
		_, err := r.Embed(context.Background(), texts(4))
		if !errors.Is(err, retrieval.ErrDimension) {
			t.Fatalf("err = %v, want ErrDimension", err)
		}
	})
	t.Run("configured", func(t *testing.T) {
		r := newRemote(t, &fakeOpenAI{}, embed.Config{Dim: 384})
		if r.Dim() != 384 {
			t.Fatalf("Dim = %d, want the configured 384", r.Dim())
		}
		_, err := r.Embed(context.Background(), texts(1))
		if !errors.Is(err, retrieval.ErrDimension) {
			t.Fatalf("err = %v, want ErrDimension", err)
		}
	})
	t.Run("later call", func(t *testing.T) {
		f := &fakeOpenAI{dimFor: func(req int) int { return 3 + req }}
		r := newRemote(t, f, embed.Config{})
		if _, err := r.Embed(context.Background(), texts(1)); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Embed(context.Background(), texts(1)); !errors.Is(err, retrieval.ErrDimension) {
			t.Fatalf("err = %v, want ErrDimension", err)
		}
	})
}

func TestRemoteServerError(t *testing.T) {
	r := newRemote(t, &fakeOpenAI{status: http.StatusInternalServerError}, embed.Config{})
	_, err := r.Embed(context.Background(), texts(2))
	if !errors.Is(err, retrieval.ErrUnavailable) {
		t.Fatalf("err = %v, want ErrUnavailable", err)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatal("a server error must not look like a timeout")
	}
}

func TestRemoteWrongCount(t *testing.T) {
	r := newRemote(t, &fakeOpenAI{drop: true}, embed.Config{})
	_, err := r.Embed(context.Background(), texts(3))
	if !errors.Is(err, embed.ErrBadResponse) {
		t.Fatalf("err = %v, want ErrBadResponse", err)
	}
}

func TestRemoteTimeout(t *testing.T) {
	t.Run("caller deadline", func(t *testing.T) {
		r := newRemote(t, &fakeOpenAI{delay: 2 * time.Second}, embed.Config{})
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := r.Embed(ctx, texts(1))
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want context.DeadlineExceeded", err)
		}
		if time.Since(start) > time.Second {
			t.Error("Embed did not return at the deadline")
		}
	})
	t.Run("config timeout", func(t *testing.T) {
		r := newRemote(t, &fakeOpenAI{delay: 2 * time.Second}, embed.Config{Timeout: 50 * time.Millisecond})
		_, err := r.Embed(context.Background(), texts(1))
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want context.DeadlineExceeded", err)
		}
	})
	t.Run("canceled", func(t *testing.T) {
		f := &fakeOpenAI{}
		r := newRemote(t, f, embed.Config{})
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := r.Embed(ctx, texts(1)); !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
		if f.requests.Load() != 0 {
			t.Error("a canceled context must not reach the server")
		}
	})
}

func TestNewRemoteConfig(t *testing.T) {
	if _, err := embed.NewRemote(embed.Config{}); !errors.Is(err, embed.ErrNotConfigured) {
		t.Errorf("zero Config: err = %v, want ErrNotConfigured", err)
	}
	if _, err := embed.NewRemote(embed.Config{Provider: embed.ProviderOpenAI}); !errors.Is(err, retrieval.ErrInvalid) {
		t.Errorf("no model: err = %v, want ErrInvalid", err)
	}
	if _, err := embed.NewRemote(embed.Config{Provider: "cohere", Model: "m"}); !errors.Is(err, retrieval.ErrInvalid) {
		t.Errorf("unknown provider: err = %v, want ErrInvalid", err)
	}
	if _, err := embed.NewRemote(embed.Config{Provider: embed.ProviderOllama, Model: "m", BaseURL: "::bad"}); !errors.Is(err, retrieval.ErrInvalid) {
		t.Errorf("bad ollama URL: err = %v, want ErrInvalid", err)
	}
	e, err := embed.FromConfig(embed.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := e.(*embed.Hashing); !ok {
		t.Errorf("FromConfig(zero) = %T, want *embed.Hashing", e)
	}
	if s := (embed.Config{APIKey: "sk-secret"}).String(); strings.Contains(s, "sk-secret") {
		t.Errorf("Config.String leaks the key: %s", s)
	}
}

func TestConfigFromEnv(t *testing.T) {
	for _, k := range []string{"OPENAI_EMBEDDING_MODEL", "OPENAI_BASE_URL", "OPENAI_API_KEY", "OLLAMA_EMBEDDING_MODEL", "OLLAMA_HOST", "EMBEDDING_DIM", "EMBEDDING_BATCH_SIZE"} {
		t.Setenv(k, "")
	}
	t.Setenv("OPENAI_API_KEY", "sk-x")
	if c := embed.ConfigFromEnv(); c.Provider != "" {
		t.Errorf("an API key alone selected %q", c.Provider)
	}
	t.Setenv("OLLAMA_EMBEDDING_MODEL", "nomic-embed-text")
	t.Setenv("OLLAMA_HOST", "10.0.0.5:11434")
	c := embed.ConfigFromEnv()
	if c.Provider != embed.ProviderOllama || c.Model != "nomic-embed-text" || c.BaseURL != "http://10.0.0.5:11434" {
		t.Errorf("ollama env: %v", c)
	}
	t.Setenv("OPENAI_EMBEDDING_MODEL", "bge-m3")
	t.Setenv("OPENAI_BASE_URL", "http://localhost:8080/v1")
	t.Setenv("EMBEDDING_DIM", "1024")
	t.Setenv("EMBEDDING_BATCH_SIZE", "16")
	c = embed.ConfigFromEnv()
	want := embed.Config{Provider: embed.ProviderOpenAI, Model: "bge-m3", BaseURL: "http://localhost:8080/v1", APIKey: "sk-x", Dim: 1024, BatchSize: 16}
	if c != want {
		t.Errorf("openai env:\n got %v\nwant %v", c, want)
	}
}

func TestRemoteOllama(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.URL.Path != "/api/embed" {
			http.NotFound(w, r)
			return
		}
		var req struct{ Model, Input string }
		_ = json.NewDecoder(r.Body).Decode(&req)
		fmt.Fprintf(w, `{"embeddings":[[%d,0,0]]}`, len(req.Input))
	}))
	defer srv.Close()
	r, err := embed.NewRemote(embed.Config{Provider: embed.ProviderOllama, Model: "m", BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	vs, err := r.Embed(context.Background(), []string{"a", "bbb"})
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 2 || vs[1][0] != 3 || r.Dim() != 3 {
		t.Errorf("vectors = %v, dim = %d", vs, r.Dim())
	}
}
