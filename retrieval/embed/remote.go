package embed

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/tmc/langchaingo/embeddings"
	"github.com/tmc/langchaingo/llms/ollama"
	"github.com/tmc/langchaingo/llms/openai"

	"github.com/adaptrag/adaptrag/retrieval"
)

// Providers a Config can name.
const (
	ProviderOpenAI = "openai" // any server speaking OpenAI's /v1/embeddings
	ProviderOllama = "ollama" // Ollama's native /api/embed
)

// Default endpoints used when Config.BaseURL is empty.
const (
	DefaultOpenAIBaseURL = "https://api.openai.com/v1"
	DefaultOllamaURL     = "http://127.0.0.1:11434"
)

// Config configures a Remote embedder. The zero value configures nothing:
// NewRemote refuses it with ErrNotConfigured and FromConfig falls back to the
// offline Hashing embedder.
type Config struct {
	// Provider is ProviderOpenAI or ProviderOllama; empty means not
	// configured.
	Provider string
	// BaseURL is the server's API root; empty means DefaultOpenAIBaseURL or
	// DefaultOllamaURL. For OpenAI-compatible servers include the /v1.
	BaseURL string
	// APIKey is sent as a bearer token (OpenAI only). Local servers usually
	// accept any value; empty sends a placeholder. It is redacted by String.
	APIKey string
	// Model is the embedding model name. Required: the model defines the
	// vector space of a whole collection, so it is never guessed.
	Model string
	// Dim is the expected dimension; zero means it is learnt from the first
	// answer. Either way every later vector is checked against it.
	Dim int
	// BatchSize is the number of texts per request; zero means
	// DefaultBatchSize.
	BatchSize int
	// Timeout bounds each request; zero leaves only the caller's context.
	Timeout time.Duration
	// HTTPClient is the client used for requests; nil means a client with
	// no timeout of its own (contexts bound the calls).
	HTTPClient *http.Client
}

// String describes the configuration with the API key redacted, so a Config
// can be logged.
func (c Config) String() string {
	key := ""
	if c.APIKey != "" {
		key = "[redacted]"
	}
	return fmt.Sprintf("embed.Config{Provider:%q BaseURL:%q Model:%q Dim:%d BatchSize:%d Timeout:%s APIKey:%q}",
		c.Provider, c.BaseURL, c.Model, c.Dim, c.BatchSize, c.Timeout, key)
}

// ConfigFromEnv reads the embedding configuration from the environment:
//
//   - OPENAI_EMBEDDING_MODEL selects ProviderOpenAI with that model, with
//     OPENAI_BASE_URL and OPENAI_API_KEY;
//   - otherwise OLLAMA_EMBEDDING_MODEL selects ProviderOllama, with
//     OLLAMA_HOST ("host:port" or a URL);
//   - otherwise the Config is zero (offline).
//
// EMBEDDING_DIM and EMBEDDING_BATCH_SIZE, when they hold positive integers,
// set Dim and BatchSize. An API key alone selects nothing: it may be meant
// for chat only.
func ConfigFromEnv() Config {
	var c Config
	switch {
	case os.Getenv("OPENAI_EMBEDDING_MODEL") != "":
		c = Config{
			Provider: ProviderOpenAI,
			Model:    os.Getenv("OPENAI_EMBEDDING_MODEL"),
			BaseURL:  os.Getenv("OPENAI_BASE_URL"),
			APIKey:   os.Getenv("OPENAI_API_KEY"),
		}
	case os.Getenv("OLLAMA_EMBEDDING_MODEL") != "":
		c = Config{
			Provider: ProviderOllama,
			Model:    os.Getenv("OLLAMA_EMBEDDING_MODEL"),
			BaseURL:  ollamaURL(os.Getenv("OLLAMA_HOST")),
		}
	default:
		return Config{}
	}
	if n, err := strconv.Atoi(os.Getenv("EMBEDDING_DIM")); err == nil && n > 0 {
		c.Dim = n
	}
	if n, err := strconv.Atoi(os.Getenv("EMBEDDING_BATCH_SIZE")); err == nil && n > 0 {
		c.BatchSize = n
	}
	return c
}

// ollamaURL turns OLLAMA_HOST, which Ollama itself accepts without a
// scheme, into a URL.
func ollamaURL(host string) string {
	if host == "" || strings.Contains(host, "://") {
		return host
	}
	return "http://" + host
}

// FromConfig returns the embedder cfg describes: a Remote when a provider is
// configured, the offline Hashing embedder (with cfg.Dim, if set) otherwise.
func FromConfig(cfg Config) (retrieval.Embedder, error) {
	if cfg.Provider == "" {
		return NewHashing(HashingConfig{Dim: cfg.Dim}), nil
	}
	r, err := NewRemote(cfg)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// Remote embeds texts through a langchaingo embedding client: an
// OpenAI-compatible server (OpenAI, vLLM, TEI, Xinference, DashScope, Ollama's
// /v1, ...) or Ollama's native API. It sends texts in batches, learns the
// dimension from the first answer unless configured, and checks every vector
// against it.
//
// Errors: a vector of another dimension wraps retrieval.ErrDimension; a
// wrong vector count wraps ErrBadResponse; a failed call wraps
// retrieval.ErrUnavailable; a context that ends stays a wrapped
// context.DeadlineExceeded or context.Canceled (langchaingo hides it, so
// Remote restores it).
//
// A Remote is safe for concurrent use.
type Remote struct {
	client embeddings.EmbedderClient
	name   string // provider/model, for error messages
	batch  int
	tmo    time.Duration
	dim    atomic.Int64
}

// NewRemote builds a Remote for cfg. It makes no network call.
func NewRemote(cfg Config) (*Remote, error) {
	if cfg.Provider == "" {
		return nil, ErrNotConfigured
	}
	if cfg.Model == "" {
		return nil, fmt.Errorf("embed: %s: no model name: %w", cfg.Provider, retrieval.ErrInvalid)
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	var client embeddings.EmbedderClient
	switch cfg.Provider {
	case ProviderOpenAI:
		base := cfg.BaseURL
		if base == "" {
			base = DefaultOpenAIBaseURL
		}
		key := cfg.APIKey
		if key == "" {
			key = "unused" // langchaingo refuses an empty key; local servers ignore it
		}
		// Every option is explicit so that langchaingo does not fill the
		// gaps from OPENAI_* variables behind the Config's back.
		c, err := openai.New(openai.WithBaseURL(base), openai.WithToken(key),
			openai.WithEmbeddingModel(cfg.Model), openai.WithHTTPClient(hc))
		if err != nil {
			return nil, fmt.Errorf("embed: openai client: %w", err)
		}
		client = c
	case ProviderOllama:
		base := cfg.BaseURL
		if base == "" {
			base = DefaultOllamaURL
		}
		// langchaingo's WithServerURL calls log.Fatal on a bad URL: parse
		// it here first so a typo is an error, not an exit.
		if u, err := url.Parse(base); err != nil || u.Host == "" {
			return nil, fmt.Errorf("embed: ollama URL %q: %w", base, retrieval.ErrInvalid)
		}
		c, err := ollama.New(ollama.WithServerURL(base), ollama.WithModel(cfg.Model), ollama.WithHTTPClient(hc))
		if err != nil {
			return nil, fmt.Errorf("embed: ollama client: %w", err)
		}
		client = c
	default:
		return nil, fmt.Errorf("embed: unknown provider %q (want %q or %q): %w",
			cfg.Provider, ProviderOpenAI, ProviderOllama, retrieval.ErrInvalid)
	}
	return NewRemoteClient(client, cfg), nil
}

// NewRemoteClient wraps any langchaingo embedding client (cfg.Provider and
// the connection fields are then only used in messages). It adds batching,
// dimension checks and context-preserving errors.
func NewRemoteClient(client embeddings.EmbedderClient, cfg Config) *Remote {
	r := &Remote{client: client, batch: cfg.BatchSize, tmo: cfg.Timeout}
	if r.batch <= 0 {
		r.batch = DefaultBatchSize
	}
	r.name = cfg.Provider
	if cfg.Model != "" {
		r.name += "/" + cfg.Model
	}
	if r.name == "" {
		r.name = "remote"
	}
	if cfg.Dim > 0 {
		r.dim.Store(int64(cfg.Dim))
	}
	return r
}

// Dim returns the dimension: the configured one, else the one learnt from
// the first successful answer, else 0.
func (r *Remote) Dim() int { return int(r.dim.Load()) }

// Embed returns one vector per text, in order. No texts give nil, nil. On
// error nothing is returned.
func (r *Remote) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	out := make([][]float32, 0, len(texts))
	for lo := 0; lo < len(texts); lo += r.batch {
		hi := min(lo+r.batch, len(texts))
		vs, err := r.call(ctx, texts[lo:hi])
		if err != nil {
			return nil, fmt.Errorf("embed: %s: texts %d-%d: %w", r.name, lo, hi-1, err)
		}
		out = append(out, vs...)
	}
	return out, nil
}

// call sends one batch and validates the answer.
func (r *Remote) call(ctx context.Context, batch []string) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if r.tmo > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, r.tmo)
		defer cancel()
	}
	vs, err := r.client.CreateEmbedding(ctx, batch)
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			// langchaingo replaces context errors with plain text;
			// put the sentinel back so callers can tell a timeout.
			return nil, fmt.Errorf("%w (%v)", cerr, err)
		}
		if isBadResponse(err) {
			return nil, fmt.Errorf("%w: %w", ErrBadResponse, err)
		}
		return nil, fmt.Errorf("%w: %w", retrieval.ErrUnavailable, err)
	}
	if len(vs) != len(batch) {
		return nil, fmt.Errorf("got %d vectors for %d texts: %w", len(vs), len(batch), ErrBadResponse)
	}
	for i, v := range vs {
		if len(v) == 0 {
			return nil, fmt.Errorf("text %d: empty vector: %w", i, ErrBadResponse)
		}
		want := r.dim.Load()
		if want == 0 {
			// The first answer fixes the dimension; a concurrent first
			// answer of another size loses the race and fails below.
			r.dim.CompareAndSwap(0, int64(len(v)))
			want = r.dim.Load()
		}
		if int64(len(v)) != want {
			return nil, fmt.Errorf("text %d: got %d dimensions, want %d: %w", i, len(v), want, retrieval.ErrDimension)
		}
	}
	return vs, nil
}

// isBadResponse reports the langchaingo errors that mean "the server
// answered, but not with one vector per text".
func isBadResponse(err error) bool {
	return errors.Is(err, openai.ErrUnexpectedResponseLength) || errors.Is(err, openai.ErrEmptyResponse) ||
		errors.Is(err, ollama.ErrIncompleteEmbedding) || errors.Is(err, ollama.ErrEmptyResponse)
}
