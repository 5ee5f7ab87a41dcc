package adaptrag_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/adaptrag/adaptrag"
	"github.com/adaptrag/adaptrag/graph"
	"github.com/adaptrag/adaptrag/retrieval"
)

// fullSearcher is a collection with every search method.
type fullSearcher interface {
	retrieval.Searcher
	SearchSparse(ctx context.Context, r retrieval.Request) ([]retrieval.Hit, error)
	SearchHybrid(ctx context.Context, r retrieval.Request) ([]retrieval.Hit, error)
}

// scopeSpy records the tenant of every search it serves.
type scopeSpy struct {
	fullSearcher
	mu      sync.Mutex
	tenants []string
}

func (s *scopeSpy) saw(r retrieval.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tenants = append(s.tenants, r.Scope.Tenant)
}

func (s *scopeSpy) seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.tenants...)
}

func (s *scopeSpy) SearchDense(ctx context.Context, r retrieval.Request) ([]retrieval.Hit, error) {
	s.saw(r)
	return s.fullSearcher.SearchDense(ctx, r)
}

func (s *scopeSpy) SearchSparse(ctx context.Context, r retrieval.Request) ([]retrieval.Hit, error) {
	s.saw(r)
	return s.fullSearcher.SearchSparse(ctx, r)
}

func (s *scopeSpy) SearchHybrid(ctx context.Context, r retrieval.Request) ([]retrieval.Hit, error) {
	s.saw(r)
	return s.fullSearcher.SearchHybrid(ctx, r)
}

// tenantPipeline is the sample pipeline under RequireTenant, with its
// document and FAQ searches recorded.
func tenantPipeline(t *testing.T) (*adaptrag.Pipeline, *scopeSpy) {
	t.Helper()
	f := newFixture(t)
	k, err := sample()
	if err != nil {
		t.Fatal(err)
	}
	spy := &scopeSpy{fullSearcher: k.Docs.(fullSearcher)}
	f.deps.Docs = spy
	f.deps.FAQ = &scopeSpy{fullSearcher: k.FAQ.(fullSearcher)}
	f.opts.RequireTenant = true
	return f.pipeline(t), spy
}

// wantOnly fails unless every search was made, and made for tenant.
func wantOnly(t *testing.T, spy *scopeSpy, tenant string) {
	t.Helper()
	seen := spy.seen()
	if len(seen) == 0 {
		t.Fatal("no search was made")
	}
	for _, tn := range seen {
		if tn != tenant {
			t.Fatalf("searched tenant %q, want only %q (all: %q)", tn, tenant, seen)
		}
	}
}

const authorityQuestion = "退货要在几天内发起？"

// A run of the compiled graph with no caller in its context, on a pipeline
// that requires a tenant, fails closed and searches nothing; with a caller
// it searches that caller's tenant only. (Before, it ran and searched the
// default tenant.)
func TestRunnableRequiresTenant(t *testing.T) {
	p, spy := tenantPipeline(t)
	_, err := p.Runnable().Invoke(context.Background(), adaptrag.State{Question: authorityQuestion})
	if !errors.Is(err, adaptrag.ErrNoTenant) {
		t.Fatalf("Invoke without a caller: err = %v, want ErrNoTenant", err)
	}
	if seen := spy.seen(); len(seen) != 0 {
		t.Fatalf("Invoke without a caller searched %q", seen)
	}
	ctx := adaptrag.WithCaller(context.Background(), adaptrag.Caller{Scope: retrieval.Scope{Tenant: "acme"}})
	if _, err := p.Runnable().Invoke(ctx, adaptrag.State{Question: authorityQuestion}); err != nil {
		t.Fatal(err)
	}
	wantOnly(t, spy, "acme")
}

// Nodes fail closed even when a graph edit skips the front check: with
// decide bypassed, the first search reached with no tenant is refused
// where it reads the caller.
func TestSearchNodeRequiresTenant(t *testing.T) {
	f := newFixture(t)
	k, err := sample()
	if err != nil {
		t.Fatal(err)
	}
	docs := &scopeSpy{fullSearcher: k.Docs.(fullSearcher)}
	faq := &scopeSpy{fullSearcher: k.FAQ.(fullSearcher)}
	f.deps.Docs, f.deps.FAQ = docs, faq
	f.opts.RequireTenant = true
	f.opts.Graph = func(g *adaptrag.Graph) error {
		g.RemoveNode(adaptrag.NodeDirect).RemoveNode(adaptrag.NodeDecide).RemoveEdges(graph.Start).AddEdge(graph.Start, adaptrag.NodeUnderstand)
		return nil
	}
	p := f.pipeline(t)
	_, err = p.Runnable().Invoke(context.Background(), adaptrag.State{Question: "对比一下差旅报销和招待报销的流程差异"})
	if !errors.Is(err, adaptrag.ErrNoTenant) {
		t.Fatalf("err = %v, want ErrNoTenant", err)
	}
	if n := len(docs.seen()) + len(faq.seen()); n != 0 {
		t.Fatalf("%d searches made without a tenant", n)
	}
}

// Ask, Stream and Search act for the caller in the context; a request that
// leaves Scope zero takes it (before, such a request was refused as
// tenantless because the empty Scope replaced the context's caller).
func TestEntryPointsActForContextCaller(t *testing.T) {
	ctx := adaptrag.WithCaller(context.Background(), adaptrag.Caller{Scope: retrieval.Scope{Tenant: "acme"}, Actor: "u1"})
	for name, run := range map[string]func(*adaptrag.Pipeline) error{
		"ask": func(p *adaptrag.Pipeline) error {
			_, err := p.Ask(ctx, adaptrag.Request{Question: authorityQuestion})
			return err
		},
		"stream": func(p *adaptrag.Pipeline) error {
			for _, err := range p.Stream(ctx, adaptrag.Request{Question: authorityQuestion}) {
				if err != nil {
					return err
				}
			}
			return nil
		},
		"search": func(p *adaptrag.Pipeline) error {
			_, err := p.Search(ctx, adaptrag.SearchRequest{Query: authorityQuestion})
			return err
		},
		"ask repeating the caller": func(p *adaptrag.Pipeline) error {
			_, err := p.Ask(ctx, adaptrag.Request{Question: authorityQuestion, Scope: retrieval.Scope{Tenant: "acme"}, Actor: "u1"})
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			p, spy := tenantPipeline(t)
			if err := run(p); err != nil {
				t.Fatal(err)
			}
			wantOnly(t, spy, "acme")
		})
	}
}

// A request naming another tenant or actor than the context's caller is
// refused before any search.
func TestRequestScopeConflictsWithCaller(t *testing.T) {
	ctx := adaptrag.WithCaller(context.Background(), adaptrag.Caller{Scope: retrieval.Scope{Tenant: "acme"}, Actor: "u1"})
	p, spy := tenantPipeline(t)
	if _, err := p.Ask(ctx, adaptrag.Request{Question: authorityQuestion, Scope: retrieval.Scope{Tenant: "globex"}}); !errors.Is(err, adaptrag.ErrCallerConflict) {
		t.Fatalf("other tenant: err = %v, want ErrCallerConflict", err)
	}
	if _, err := p.Search(ctx, adaptrag.SearchRequest{Query: authorityQuestion, Actor: "u2"}); !errors.Is(err, adaptrag.ErrCallerConflict) {
		t.Fatalf("other actor: err = %v, want ErrCallerConflict", err)
	}
	for _, err := range p.Stream(ctx, adaptrag.Request{Question: authorityQuestion, Scope: retrieval.Scope{Tenant: "globex"}}) {
		if !errors.Is(err, adaptrag.ErrCallerConflict) {
			t.Fatalf("stream, other tenant: err = %v, want ErrCallerConflict", err)
		}
	}
	if seen := spy.seen(); len(seen) != 0 {
		t.Fatalf("refused requests searched %q", seen)
	}
	// Without a caller in the context, the request's scope is the caller.
	if _, err := p.Ask(context.Background(), adaptrag.Request{Question: authorityQuestion, Scope: retrieval.Scope{Tenant: "globex"}}); err != nil {
		t.Fatal(err)
	}
	wantOnly(t, spy, "globex")
	if _, err := p.Ask(context.Background(), adaptrag.Request{Question: authorityQuestion}); !errors.Is(err, adaptrag.ErrNoTenant) {
		t.Fatalf("no tenant anywhere: err = %v, want ErrNoTenant", err)
	}
}
