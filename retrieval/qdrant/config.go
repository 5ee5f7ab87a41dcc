package qdrant

import (
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

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
	// DefaultRetries is the number of times a call that failed with a
	// transient code is tried again (so four tries in all).
	DefaultRetries = 3
	// DefaultRetryBase is the first backoff ceiling; each retry doubles it.
	DefaultRetryBase = 100 * time.Millisecond
	// DefaultRetryMax caps the backoff between two tries.
	DefaultRetryMax = 2 * time.Second
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
	// DefaultBatchSize. At 384 dimensions a point is about 3 KB on the
	// wire (1.5 KB of dense vector, the sparse vector and the payload), so
	// 256 points keep a request under 1 MB, well inside gRPC's default
	// 4 MB message limit; with longer chunks or vectors, keep a batch
	// under that limit.
	BatchSize int

	// Retries is how many times a call that failed with a transient gRPC
	// code (Unavailable, ResourceExhausted, or DeadlineExceeded while the
	// caller's context is still alive) is tried again, after an
	// exponential backoff with full jitter: a random wait in [0, ceiling),
	// the ceiling starting at RetryBase and doubling up to RetryMax. 0
	// means DefaultRetries; a negative value disables retries. Every call
	// the store makes is idempotent (point ids derive from the chunk, and
	// deletes go by filter), so a retry of a call that was applied but
	// whose answer was lost changes nothing. InvalidArgument, NotFound and
	// the other codes are never retried, and the caller's context ending
	// stops the waiting at once.
	Retries int
	// RetryBase is the first backoff ceiling; 0 means DefaultRetryBase.
	RetryBase time.Duration
	// RetryMax caps the backoff ceiling; 0 means DefaultRetryMax.
	RetryMax time.Duration

	// Collection settings, sent only when the store creates the collection
	// (Qdrant fixes most of them at creation; an existing collection keeps
	// its own). A zero value leaves the setting to Qdrant, whose defaults
	// are given with each. docs/scale.md says when to change them.

	// ShardNumber is the number of shards (Qdrant: 1 on a single node,
	// the number of nodes in a cluster). Shards are the unit that moves
	// between nodes, so a cluster expected to grow wants a few per node.
	ShardNumber uint32
	// ReplicationFactor is the number of copies of each shard (Qdrant: 1).
	// 2 or more keeps a collection readable and writable when a node is
	// lost.
	ReplicationFactor uint32
	// WriteConsistencyFactor is the number of replicas that must apply a
	// write before it is acknowledged (Qdrant: 1). It must not exceed
	// ReplicationFactor when both are set.
	WriteConsistencyFactor uint32
	// OnDiskVectors keeps the original float32 dense vectors on disk
	// (memory-mapped) instead of in RAM (Qdrant: false). With
	// Quantization set, searches read the quantized copy in RAM and only
	// rescoring touches the disk.
	OnDiskVectors bool
	// OnDiskPayload keeps payloads (the chunk text and metadata) on disk
	// (Qdrant: false). Indexed payload fields stay in RAM either way.
	OnDiskPayload bool
	// HNSWM is the number of graph links per point (Qdrant: 16); more
	// links raise recall and memory.
	HNSWM int
	// HNSWEfConstruct is the candidate list size while building the graph
	// (Qdrant: 100; Qdrant requires at least 4).
	HNSWEfConstruct int
	// TenantGraphs builds the dense HNSW graph per tenant instead of over
	// the whole collection: m is set to 0 and payload_m to HNSWM (16 when
	// 0), Qdrant's recipe for multitenancy. Every search of this store is
	// filtered by tenant, so the global graph is never needed; indexing is
	// cheaper and each tenant's search walks only its own points.
	TenantGraphs bool
	// Quantization is "" (none, Qdrant's default) or "int8": scalar
	// quantization, a 1-byte copy of each dense component (4x smaller than
	// float32) kept in RAM, with quantile 0.99 to clip outliers. Qdrant
	// rescores the top candidates with the original vectors.
	Quantization string
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
	if c.Retries == 0 {
		c.Retries = DefaultRetries
	}
	if c.RetryBase == 0 {
		c.RetryBase = DefaultRetryBase
	}
	if c.RetryMax == 0 {
		c.RetryMax = DefaultRetryMax
	}
	return c
}

// QuantizationInt8 is the Config.Quantization value for scalar int8
// quantization.
const QuantizationInt8 = "int8"

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
	case c.RetryBase < 0 || c.RetryMax < 0:
		return fmt.Errorf("qdrant: negative RetryBase %v or RetryMax %v: %w", c.RetryBase, c.RetryMax, retrieval.ErrInvalid)
	case c.ReplicationFactor > 0 && c.WriteConsistencyFactor > c.ReplicationFactor:
		// No write could gather that many acknowledgements.
		return fmt.Errorf("qdrant: WriteConsistencyFactor %d exceeds ReplicationFactor %d: %w",
			c.WriteConsistencyFactor, c.ReplicationFactor, retrieval.ErrInvalid)
	case c.HNSWM < 0:
		return fmt.Errorf("qdrant: negative HNSWM %d: %w", c.HNSWM, retrieval.ErrInvalid)
	case c.HNSWEfConstruct != 0 && c.HNSWEfConstruct < 4:
		return fmt.Errorf("qdrant: HNSWEfConstruct %d, want 0 (Qdrant's default) or at least 4: %w", c.HNSWEfConstruct, retrieval.ErrInvalid)
	case c.Quantization != "" && c.Quantization != QuantizationInt8:
		return fmt.Errorf("qdrant: Quantization %q, want \"\" or %q: %w", c.Quantization, QuantizationInt8, retrieval.ErrInvalid)
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
// avg_doc_len, batch_size and retries (-1 disables them), and the
// collection settings used when the store creates the collection:
// shard_number, replication_factor, write_consistency_factor,
// on_disk_vectors, on_disk_payload, tenant_graphs (true or false), hnsw_m,
// hnsw_ef_construct and quantization (int8). A missing collection leaves
// Config.Collection empty, which means DefaultCollection.
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
	}{{"dim", &c.Dim}, {"batch_size", &c.BatchSize}, {"hnsw_m", &c.HNSWM}, {"hnsw_ef_construct", &c.HNSWEfConstruct}}
	for _, p := range ints {
		if v := q.Get(p.name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return Config{}, fmt.Errorf("qdrant: URL parameter %s=%q: %w", p.name, v, retrieval.ErrInvalid)
			}
			*p.dst = n
		}
	}
	if v := q.Get("retries"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return Config{}, fmt.Errorf("qdrant: URL parameter retries=%q: %w", v, retrieval.ErrInvalid)
		}
		c.Retries = n
	}
	counts := []struct {
		name string
		dst  *uint32
	}{{"shard_number", &c.ShardNumber}, {"replication_factor", &c.ReplicationFactor}, {"write_consistency_factor", &c.WriteConsistencyFactor}}
	for _, p := range counts {
		if v := q.Get(p.name); v != "" {
			n, err := strconv.ParseUint(v, 10, 32)
			if err != nil || n == 0 {
				return Config{}, fmt.Errorf("qdrant: URL parameter %s=%q, want a count of at least 1: %w", p.name, v, retrieval.ErrInvalid)
			}
			*p.dst = uint32(n)
		}
	}
	bools := []struct {
		name string
		dst  *bool
	}{{"on_disk_vectors", &c.OnDiskVectors}, {"on_disk_payload", &c.OnDiskPayload}, {"tenant_graphs", &c.TenantGraphs}}
	for _, p := range bools {
		if v := q.Get(p.name); v != "" {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return Config{}, fmt.Errorf("qdrant: URL parameter %s=%q, want true or false: %w", p.name, v, retrieval.ErrInvalid)
			}
			*p.dst = b
		}
	}
	c.Quantization = q.Get("quantization")
	if v := q.Get("avg_doc_len"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 {
			return Config{}, fmt.Errorf("qdrant: URL parameter avg_doc_len=%q: %w", v, retrieval.ErrInvalid)
		}
		c.AvgDocLen = f
	}
	if err := c.validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}
