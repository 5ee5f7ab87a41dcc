package qdrant_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/retrieval/qdrant"
	"github.com/adaptrag/adaptrag/retrieval/qdrant/qdranttest"
	"github.com/adaptrag/adaptrag/retrieval/retrievaltest"
)

// Tenant isolation as a property through the real go-client against the
// in-process fake: random corpora, tenants and queries, every search mode,
// under concurrent writes. More rounds: ADAPTRAG_TENANT_ROUNDS=N.
func TestTenantIsolationProperty(t *testing.T) {
	srv := qdranttest.Start(t)
	var n atomic.Int64
	st := retrievaltest.TenantIsolation(t, func(t *testing.T, dim int) retrieval.Store {
		s, err := qdrant.Open(context.Background(), fakeConfig(srv, fmt.Sprintf("tenants_%d", n.Add(1)), dim))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}, retrievaltest.TenantConfig{Seed: 20261201})
	t.Logf("qdrant: %d random corpora, %d writes, %d searches, %d hits checked", st.Rounds, st.Writes, st.Searches, st.Hits)
}
