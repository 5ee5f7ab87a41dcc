package qdrant

import (
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/retrieval/analysis"
	"google.golang.org/grpc"
)

// Defaults applied to the zero fields of a Config.
const (
	DefaultHost       = "localhost"
	DefaultPort       = 6334 // Qdrant's gRPC port (6333 is REST, which this store does not speak)
	DefaultCollection = "adaptrag"
	DefaultBatchSize  = 256
	// DefaultAvgDocLen is the average chunk length, in analyzer terms, that
	// BM25 length normalisation assumes. Qdrant stores only the per-chunk
	// weights, so the average must be fixed when they are computed. Chunks of
	// the project's default 512-rune splitter hold about 80-120 English words;
	// 100 puts a typical chunk at the neutral point. A different value changes
	// only how strongly long chunks are penalised, not the ranking among
	// chunks of equal length. (CJK text, which the analyzer turns into
	// unigrams and bigrams, makes about two terms per character: set
	// Config.AvgDocLen for such corpora.)
	DefaultAvgDocLen = 100
)

// BM25 parameters used for the document weights (the usual Robertson /
// Lucene values).
const (
	BM25K1 = 1.2
	BM25B  = 0.75
)

// Names of the vectors in a collection.
const (
	DenseVector  = "dense"
	SparseVector = "bm25"
)

// Config configures a Store. The zero value connects to localhost:6334 in
// plain text and uses the collection "adaptrag", which must then already
// exist (Dim 0 cannot create one).
type Config struct {
	// Host is the Qdrant host name or address; "" means DefaultHost.
	Host string
	// Port is Qdrant's gRPC port; 0 means DefaultPort.
	Port int
	// Collection holds one knowledge base; "" means DefaultCollection.
	Collection string
	// APIKey is sent in the api-key header when set. It is redacted by
	// String and LogValue.
	APIKey string
	// UseTLS enables TLS (1.3 minimum) on the connection.
	UseTLS bool
	// Dim is the dense vector dimension. When the collection is missing it
	// is created with this size, so Dim must then be > 0; when it exists, 0
	// means "take its size" and any other value must match it.
	Dim int
	// AvgDocLen is the average chunk length, in analyzer terms, assumed by
	// BM25 length normalisation; 0 means DefaultAvgDocLen. Keep it fixed for
	// the life of a collection: weights already stored are not recomputed.
	AvgDocLen float64
	// Analyzer turns text into BM25 terms; nil means analysis.Default().
	// Documents and queries must use the same analyzer, so keep it fixed for
	// the life of a collection too.
	Analyzer analysis.Analyzer
	// BatchSize is the number of points per Upsert call; 0 means
	// DefaultBatchSize.
	BatchSize int
	// PoolSize is the number of gRPC connections; 0 means one.
	PoolSize uint
	// DialOptions are extra gRPC dial options (interceptors, a custom
	// dialer). They are applied after the store's own, so they win.
	DialOptions []grpc.DialOption
}

// withDefaults returns c with its zero fields replaced by the defaults.
func (c Config) withDefaults() Config {
	if c.Host == "" {
		c.Host = DefaultHost
	}
	if c.Port == 0 {
		c.Port = DefaultPort
	}
	if c.Collection == "" {
		c.Collection = DefaultCollection
	}
	if c.AvgDocLen == 0 {
		c.AvgDocLen = DefaultAvgDocLen
	}
	if c.Analyzer == nil {
		c.Analyzer = analysis.Default()
	}
	if c.BatchSize == 0 {
		c.BatchSize = DefaultBatchSize
	}
	if c.PoolSize == 0 {
		c.PoolSize = 1
	}
	return c
}

func (c Config) validate() error {
	switch {
	case c.Port < 0 || c.Port > 65535:
		return fmt.Errorf("qdrant: port %d out of range: %w", c.Port, retrieval.ErrInvalid)
	case c.Dim < 0:
		return fmt.Errorf("qdrant: negative Dim %d: %w", c.Dim, retrieval.ErrInvalid)
	case c.AvgDocLen < 0:
		return fmt.Errorf("qdrant: negative AvgDocLen %v: %w", c.AvgDocLen, retrieval.ErrInvalid)
	case c.BatchSize < 0:
		return fmt.Errorf("qdrant: negative BatchSize %d: %w", c.BatchSize, retrieval.ErrInvalid)
	}
	return nil
}

// String describes c for logs, with the API key redacted.
func (c Config) String() string {
	key := ""
	if c.APIKey != "" {
		key = " api_key=REDACTED"
	}
	return fmt.Sprintf("qdrant{%s collection=%s tls=%t dim=%d%s}",
		net.JoinHostPort(c.Host, strconv.Itoa(c.Port)), c.Collection, c.UseTLS, c.Dim, key)
}

// LogValue implements slog.LogValuer so that a logged Config never shows its
// API key.
func (c Config) LogValue() slog.Value {
	attrs := []slog.Attr{
		slog.String("host", c.Host),
		slog.Int("port", c.Port),
		slog.String("collection", c.Collection),
		slog.Bool("tls", c.UseTLS),
		slog.Int("dim", c.Dim),
	}
	if c.APIKey != "" {
		attrs = append(attrs, slog.String("api_key", "REDACTED"))
	}
	return slog.GroupValue(attrs...)
}

// ParseURL parses a Qdrant location into a Config:
//
//	qdrant://host:6334/collection         plain gRPC
//	qdrants://host:6334/collection        gRPC over TLS
//	http://host:6334/collection           same as qdrant://
//	https://host:6334/collection          same as qdrants://
//
// The port is always the gRPC port and defaults to 6334, even for http(s).
// Query parameters: api_key (the user-info password is accepted too), dim,
// avg_doc_len and batch_size. A missing collection leaves Config.Collection
// empty, which means DefaultCollection.
func ParseURL(s string) (Config, error) {
	var c Config
	u, err := url.Parse(s)
	if err != nil {
		// url.Error repeats the URL, API key included: keep only its cause.
		if ue, ok := err.(*url.Error); ok {
			err = ue.Err
		}
		return c, fmt.Errorf("qdrant: parse URL: %w: %w", retrieval.ErrInvalid, err)
	}
	switch strings.ToLower(u.Scheme) {
	case "qdrant", "http", "grpc":
	case "qdrants", "https", "grpcs":
		c.UseTLS = true
	default:
		return c, fmt.Errorf("qdrant: URL scheme %q not one of qdrant, qdrants, http, https: %w", u.Scheme, retrieval.ErrInvalid)
	}
	c.Host = u.Hostname()
	if p := u.Port(); p != "" {
		if c.Port, err = strconv.Atoi(p); err != nil || c.Port <= 0 || c.Port > 65535 {
			return Config{}, fmt.Errorf("qdrant: URL port %q: %w", p, retrieval.ErrInvalid)
		}
	}
	c.Collection = strings.Trim(u.Path, "/")
	if strings.Contains(c.Collection, "/") {
		return Config{}, fmt.Errorf("qdrant: URL path %q is not a single collection name: %w", u.Path, retrieval.ErrInvalid)
	}
	if pw, ok := u.User.Password(); ok {
		c.APIKey = pw
	}
	q := u.Query()
	if k := q.Get("api_key"); k != "" {
		c.APIKey = k
	}
	ints := []struct {
		name string
		dst  *int
	}{{"dim", &c.Dim}, {"batch_size", &c.BatchSize}}
	for _, p := range ints {
		if v := q.Get(p.name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return Config{}, fmt.Errorf("qdrant: URL parameter %s=%q: %w", p.name, v, retrieval.ErrInvalid)
			}
			*p.dst = n
		}
	}
	if v := q.Get("avg_doc_len"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 {
			return Config{}, fmt.Errorf("qdrant: URL parameter avg_doc_len=%q: %w", v, retrieval.ErrInvalid)
		}
		c.AvgDocLen = f
	}
	return c, nil
}
