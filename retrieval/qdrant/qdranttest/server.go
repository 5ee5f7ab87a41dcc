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
//   - points: Upsert (replace by point id), Delete by ids or by filter,
//     CreateFieldIndex (recorded only: the fake always scans), Count,
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
// codes.Unavailable, and [Server.SetDelay] holds every call for a duration
// (or until the caller's deadline, whichever comes first).
package qdranttest

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
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

	mu          sync.Mutex
	collections map[string]*collection
	queries     []*qdrant.QueryPoints

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
	}
	s.srv = grpc.NewServer(grpc.UnaryInterceptor(s.intercept))
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

// Queries returns copies of the Query requests received so far, oldest
// first, so that tests can check what a client actually sent.
func (s *Server) Queries() []*qdrant.QueryPoints {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*qdrant.QueryPoints, len(s.queries))
	for i, q := range s.queries {
		out[i] = proto.Clone(q).(*qdrant.QueryPoints)
	}
	return out
}

// FieldIndexes returns the payload fields indexed in collection name, with
// their schema type, or nil when the collection does not exist.
func (s *Server) FieldIndexes(name string) map[string]qdrant.FieldType {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.collections[name]
	if c == nil {
		return nil
	}
	out := make(map[string]qdrant.FieldType, len(c.indexes))
	for k, v := range c.indexes {
		out[k] = v
	}
	return out
}

// intercept applies the injected faults before any handler runs.
func (s *Server) intercept(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
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
