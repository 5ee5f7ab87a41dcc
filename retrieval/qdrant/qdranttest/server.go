// Package qdranttest runs an in-process fake of the Qdrant gRPC API, so that
// code using the real github.com/qdrant/go-client can be tested without a
// Qdrant binary.
//
// The fake implements the subset of the API that a hybrid-search store needs,
// with Qdrant's documented semantics:
//
//   - collections: Create (named dense vectors with Cosine or Dot distance,
//     named sparse vectors with an optional IDF modifier), CollectionExists,
//     Get, List, Delete;
//   - collections: the sharding, replication, on-disk, HNSW and scalar
//     quantization settings of Create are validated as Qdrant validates
//     them (shard_number, replication_factor and write_consistency_factor
//     at least 1, ef_construct at least 4, quantile in [0.5, 1], vector
//     size at most 65536), recorded ([Server.Created]) and reported back
//     by Get; the fake still keeps every point in memory and scans;
//   - points: Upsert (replace by point id), Delete by ids or by filter,
//     CreateFieldIndex (field type and index parameters checked to agree,
//     as Qdrant does, and recorded with them, is_tenant included: see
//     [Server.FieldIndex]; the fake always scans), Count,
//     Scroll (id order, offset and limit paging, filter, with_payload);
//   - Query: nearest dense or sparse search with Using, prefetches (nested,
//     each with its own Limit, default 10), RRF fusion (Fusion_RRF with
//     k = 2, or Rrf with k and weights), root filters pushed into every
//     prefetch, Limit (default 10), Offset, ScoreThreshold and with_payload;
//   - filters: must, should, must_not, nested filters, match keyword /
//     keywords (any) / except, match integer / bool, is_empty, has_id;
//   - HealthCheck.
//
// Anything else returns codes.Unimplemented, so a test that strays outside
// the subset fails loudly instead of passing against wrong semantics. Where
// Qdrant leaves an order unspecified (equal scores), the fake breaks ties by
// point id so that results are deterministic.
//
// Faults can be injected: [Server.SetUnavailable] makes every call fail with
// codes.Unavailable, [Server.FailNext] fails the next n calls of one method
// with a chosen code (a node restarting, a rate limit), and
// [Server.SetDelay] holds every call for a duration (or until the caller's
// deadline, whichever comes first). [Server.Calls] counts the calls each
// method received, failed ones included, so that a test can see retries.
package qdranttest

import (
	"context"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// Version is the Qdrant version the fake reports in HealthCheck.
const Version = "1.17.0"

// Server is an in-process fake Qdrant gRPC server listening on a loopback
// port. Its methods are safe for concurrent use.
type Server struct {
	addr string
	lis  net.Listener
	srv  *grpc.Server

	unavailable atomic.Bool
	delay       atomic.Int64 // nanoseconds

	// mu guards the collections: searches share it, writes hold it alone.
	mu          sync.RWMutex
	collections map[string]*collection

	// logMu guards the request log, the call counts and the faults, which
	// every call updates, readers included.
	logMu   sync.Mutex
	queries []*qdrant.QueryPoints
	created map[string]*qdrant.CreateCollection
	calls   map[string]int
	faults  map[string][]codes.Code // method -> codes of its next calls

	closeOnce sync.Once
}

// Start starts a fake server on 127.0.0.1 with a free port and stops it when
// the test ends. It fails the test if no port can be bound.
func Start(tb testing.TB) *Server {
	tb.Helper()
	s, err := Listen("127.0.0.1:0")
	if err != nil {
		tb.Fatalf("qdranttest: %v", err)
	}
	tb.Cleanup(s.Close)
	return s
}

// Listen starts a fake server on addr (host:port; port 0 picks a free one).
// The caller must Close it. Most tests want [Start] instead.
func Listen(addr string) (*Server, error) {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &Server{
		addr:        lis.Addr().String(),
		lis:         lis,
		collections: make(map[string]*collection),
		created:     make(map[string]*qdrant.CreateCollection),
		calls:       make(map[string]int),
		faults:      make(map[string][]codes.Code),
	}
	s.srv = grpc.NewServer(grpc.UnaryInterceptor(s.intercept),
		// The go-client pings every 10 s; grpc-go's default policy (one
		// ping in 5 minutes) would answer GOAWAY too_many_pings and drop
		// the connection under a long test, which Qdrant never does.
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: time.Second, PermitWithoutStream: true}))
	qdrant.RegisterCollectionsServer(s.srv, collectionsService{s: s})
	qdrant.RegisterPointsServer(s.srv, pointsService{s: s})
	qdrant.RegisterQdrantServer(s.srv, healthService{})
	go func() { _ = s.srv.Serve(lis) }()
	return s, nil
}

// Addr returns the host:port the server listens on.
func (s *Server) Addr() string { return s.addr }

// Host returns the host part of Addr.
func (s *Server) Host() string {
	h, _, _ := net.SplitHostPort(s.addr)
	return h
}

// Port returns the port part of Addr.
func (s *Server) Port() int {
	return s.lis.Addr().(*net.TCPAddr).Port
}

// Close stops the server and closes its listener; later connections are
// refused, as by a Qdrant that is down. Close is idempotent.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		s.srv.Stop()
		_ = s.lis.Close()
	})
}

// SetUnavailable makes every call fail with codes.Unavailable while on is
// true, the way a node that is shutting down or overloaded answers.
func (s *Server) SetUnavailable(on bool) { s.unavailable.Store(on) }

// SetDelay holds every call for d before serving it. A call whose deadline
// comes first fails with codes.DeadlineExceeded (or Canceled), as a slow
// server would make it. Zero removes the delay.
func (s *Server) SetDelay(d time.Duration) { s.delay.Store(int64(d)) }

// MaxQueries is the number of Query requests the server keeps for
// [Server.Queries]; older ones are dropped, so that a load test does not
// grow the log without bound.
const MaxQueries = 4096

// Queries returns copies of the Query requests received so far (the last
// MaxQueries of them), oldest first, so that tests can check what a client
// actually sent.
func (s *Server) Queries() []*qdrant.QueryPoints {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	out := make([]*qdrant.QueryPoints, len(s.queries))
	for i, q := range s.queries {
		out[i] = proto.Clone(q).(*qdrant.QueryPoints)
	}
	return out
}

// logQuery appends q to the query log, dropping the oldest entry when the
// log is full.
func (s *Server) logQuery(q *qdrant.QueryPoints) {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	if len(s.queries) == MaxQueries {
		copy(s.queries, s.queries[1:])
		s.queries = s.queries[:MaxQueries-1]
	}
	s.queries = append(s.queries, q)
}

// Created returns a copy of the last accepted Create request for
// collection name, or nil when there was none, so that tests can check the
// settings a client asked for.
func (s *Server) Created(name string) *qdrant.CreateCollection {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	if r := s.created[name]; r != nil {
		return proto.Clone(r).(*qdrant.CreateCollection)
	}
	return nil
}

// FieldIndexes returns the payload fields indexed in collection name, with
// their schema type, or nil when the collection does not exist.
func (s *Server) FieldIndexes(name string) map[string]qdrant.FieldType {
	s.mu.RLock()
	defer s.mu.RUnlock()
	c := s.collections[name]
	if c == nil {
		return nil
	}
	out := make(map[string]qdrant.FieldType, len(c.indexes))
	for k, v := range c.indexes {
		out[k] = v.typ
	}
	return out
}

// FieldIndex returns the schema type and the index parameters (nil when
// the request gave none) of the payload index on field in collection name;
// ok is false when there is no such index.
func (s *Server) FieldIndex(name, field string) (typ qdrant.FieldType, params *qdrant.PayloadIndexParams, ok bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	c := s.collections[name]
	if c == nil {
		return 0, nil, false
	}
	ix, ok := c.indexes[field]
	if !ok {
		return 0, nil, false
	}
	if ix.params != nil {
		params = proto.Clone(ix.params).(*qdrant.PayloadIndexParams)
	}
	return ix.typ, params, true
}

// FailNext makes the next n calls of method (its short gRPC name:
// "Upsert", "Query", "Delete", "Scroll", "Create", ...) fail with code,
// before they reach the handler, so nothing of them is applied. Faults
// queue: FailNext("Upsert", codes.Unavailable, 2) then
// FailNext("Upsert", codes.InvalidArgument, 1) fails three calls in that
// order.
func (s *Server) FailNext(method string, code codes.Code, n int) {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	for range n {
		s.faults[method] = append(s.faults[method], code)
	}
}

// Calls returns the number of calls method (its short gRPC name) has
// received, failed and injected-fault ones included.
func (s *Server) Calls(method string) int {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	return s.calls[method]
}

// count records a call of method and returns the fault queued for it, if
// any.
func (s *Server) count(method string) (codes.Code, bool) {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	s.calls[method]++
	q := s.faults[method]
	if len(q) == 0 {
		return codes.OK, false
	}
	s.faults[method] = q[1:]
	return q[0], true
}

// intercept applies the injected faults before any handler runs.
func (s *Server) intercept(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	method := info.FullMethod[strings.LastIndexByte(info.FullMethod, '/')+1:]
	if code, ok := s.count(method); ok {
		return nil, status.Errorf(code, "qdranttest: %s failed with %v (injected)", method, code)
	}
	if d := time.Duration(s.delay.Load()); d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, status.FromContextError(ctx.Err()).Err()
		}
	}
	if s.unavailable.Load() {
		return nil, status.Error(codes.Unavailable, "qdranttest: service unavailable (injected)")
	}
	return h(ctx, req)
}

// healthService answers HealthCheck so that clients which check server
// compatibility see a plausible version.
type healthService struct {
	qdrant.UnimplementedQdrantServer
}

func (healthService) HealthCheck(context.Context, *qdrant.HealthCheckRequest) (*qdrant.HealthCheckReply, error) {
	return &qdrant.HealthCheckReply{Title: "qdranttest fake", Version: Version}, nil
}
