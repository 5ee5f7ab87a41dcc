package service

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/fstest"

	"github.com/adaptrag/adaptrag"
	"github.com/adaptrag/adaptrag/ingest"
	"github.com/adaptrag/adaptrag/retrieval/memstore"
	"github.com/adaptrag/adaptrag/retrieval/retrievaltest"
)

var propTopics = []string{"annual leave", "travel claims", "vpn access", "laptop refresh", "expense approval", "invoice payment"}

// propCorpus is a tenant's handbook on topics both tenants share, under
// the same file names, every sentence carrying a secret naming the tenant.
func propCorpus(r *rand.Rand, tenant string) fstest.MapFS {
	files := fstest.MapFS{}
	for i := range 4 + r.IntN(4) {
		topic := propTopics[r.IntN(len(propTopics))]
		var b strings.Builder
		fmt.Fprintf(&b, "# %s\n\n", topic)
		for j := range 2 + r.IntN(3) {
			fmt.Fprintf(&b, "## %s step %d\n\nFor %s, requests take %d days and need code SECRET-%s-%d-%d.\n\n", topic, j, topic, 1+r.IntN(20), tenant, i, j)
		}
		files[fmt.Sprintf("hr/doc%d.md", i)] = &fstest.MapFile{Data: []byte(b.String())}
	}
	files["faq.jsonl"] = &fstest.MapFile{Data: []byte(fmt.Sprintf(`{"id": "1", "question": "How do I request %s?", "answer": "Use form SECRET-%s-faq."}`+"\n", propTopics[0], tenant))}
	return files
}

// Tenant isolation through the service, as a property: two API keys, random
// handbooks with the same topics and file names, random questions sent
// concurrently from both keys as JSON asks, streamed asks and searches of
// every mode. No response ever carries the other tenant's data. More
// rounds: ADAPTRAG_TENANT_ROUNDS=N.
func TestTenantIsolationProperty(t *testing.T) {
	rounds := retrievaltest.Rounds(2)
	var requests, own atomic.Int64
	for round := range rounds {
		r := rand.New(rand.NewPCG(20261201, uint64(round)))
		ctx := context.Background()
		docs, err := memstore.Open(ctx, memstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { docs.Close() })
		faq, err := memstore.Open(ctx, memstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { faq.Close() })
		for _, tn := range []string{keyAcme.Tenant, keyGlobex.Tenant} {
			rep, err := ingest.IngestFS(ctx, ingest.Target{Docs: docs, FAQ: faq}, propCorpus(r, tn), ingest.Options{Tenant: tn, Embedder: hashing})
			if err == nil {
				err = rep.Err()
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		pipe, err := adaptrag.New(ctx, adaptrag.Deps{Docs: docs, FAQ: faq, Embedder: hashing}, adaptrag.Options{RequireTenant: true})
		if err != nil {
			t.Fatal(err)
		}
		s := newServer(t, Config{Pipeline: pipe, Keys: []Key{keyAcme, keyGlobex}, MaxRuns: 64, Logger: discard()})
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for i := range 8 {
			key := []Key{keyAcme, keyGlobex}[i%2]
			other := []Key{keyGlobex, keyAcme}[i%2]
			qr := rand.New(rand.NewPCG(20261201, uint64(round)<<8|uint64(i)+1))
			wg.Go(func() {
				for range 10 {
					topic := propTopics[qr.IntN(len(propTopics))]
					q := fmt.Sprintf([]string{"Which code do %s requests need?", "How do I request %s?", "Compare %s and travel claims"}[qr.IntN(3)], topic)
					c := call{path: "/v1/ask", key: key.Key, body: map[string]any{"question": q}}
					switch qr.IntN(3) {
					case 1:
						c.header = sse
					case 2:
						c = call{path: "/v1/search", key: key.Key, body: map[string]any{"query": q, "k": qr.IntN(20), "mode": []string{"", "dense", "hybrid"}[qr.IntN(3)]}}
					}
					resp := s.do(t, c)
					b, err := io.ReadAll(resp.Body)
					resp.Body.Close()
					requests.Add(1)
					switch {
					case err != nil:
						errs <- err
						return
					case resp.StatusCode != 200:
						errs <- fmt.Errorf("%s %q: status %d: %.200s", c.path, q, resp.StatusCode, b)
						return
					case strings.Contains(string(b), "SECRET-"+other.Tenant):
						errs <- fmt.Errorf("%s (%s) %q: the response carries the other tenant's data", c.path, key.Tenant, q)
						return
					case strings.Contains(string(b), "SECRET-"+key.Tenant):
						own.Add(1)
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("round %d: %v", round, err)
		}
	}
	if own.Load() == 0 {
		t.Fatal("no response carried the caller's own data: the property was never tested")
	}
	t.Logf("tenant isolation through the service: %d rounds, %d requests from two keys, %d with the caller's own data", rounds, requests.Load(), own.Load())
}
