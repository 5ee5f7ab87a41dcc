package memstore_test

import (
	"context"
	"errors"
	"testing"

	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/retrieval/memstore"
	"github.com/adaptrag/adaptrag/retrieval/retrievaltest"
)

// Tenant isolation as a property, over random corpora, tenants and
// queries: in memory, on disk, and on disk searched through a read-only
// Store beside the writer (as ask and serve open it), refreshed before
// every search. More rounds: ADAPTRAG_TENANT_ROUNDS=N.
func TestTenantIsolationProperty(t *testing.T) {
	for _, tc := range []struct {
		name string
		open func(t *testing.T, dim int) retrieval.Store
	}{
		{"memory", func(t *testing.T, dim int) retrieval.Store {
			s, err := memstore.Open(context.Background(), memstore.Options{Dim: dim})
			if err != nil {
				t.Fatal(err)
			}
			return s
		}},
		{"disk", func(t *testing.T, dim int) retrieval.Store {
			s, err := memstore.Open(context.Background(), memstore.Options{Dir: t.TempDir(), Dim: dim, CompactBytes: 32 << 10, NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			return s
		}},
		{"disk, read-only reader", func(t *testing.T, dim int) retrieval.Store {
			dir := t.TempDir()
			w, err := memstore.Open(context.Background(), memstore.Options{Dir: dir, Dim: dim, CompactBytes: 32 << 10, NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			r, err := memstore.Open(context.Background(), memstore.Options{Dir: dir, ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			return &readThrough{Store: w, ro: r}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := retrievaltest.TenantIsolation(t, tc.open, retrievaltest.TenantConfig{Seed: 20261201})
			t.Logf("%s: %d random corpora, %d writes, %d searches, %d hits checked", tc.name, st.Rounds, st.Writes, st.Searches, st.Hits)
		})
	}
}

// readThrough writes to a writable store and searches a read-only one of
// the same directory, refreshed first.
type readThrough struct {
	*memstore.Store
	ro *memstore.Store
}

func (s *readThrough) refresh(ctx context.Context) error { return s.ro.Refresh(ctx) }

func (s *readThrough) SearchDense(ctx context.Context, req retrieval.Request) ([]retrieval.Hit, error) {
	if err := s.refresh(ctx); err != nil {
		return nil, err
	}
	return s.ro.SearchDense(ctx, req)
}

func (s *readThrough) SearchSparse(ctx context.Context, req retrieval.Request) ([]retrieval.Hit, error) {
	if err := s.refresh(ctx); err != nil {
		return nil, err
	}
	return s.ro.SearchSparse(ctx, req)
}

func (s *readThrough) SearchHybrid(ctx context.Context, req retrieval.Request) ([]retrieval.Hit, error) {
	if err := s.refresh(ctx); err != nil {
		return nil, err
	}
	return s.ro.SearchHybrid(ctx, req)
}

func (s *readThrough) Close() error { return errors.Join(s.ro.Close(), s.Store.Close()) }
