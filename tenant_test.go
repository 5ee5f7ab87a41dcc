package adaptrag_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/fstest"

	"github.com/adaptrag/adaptrag"
	"github.com/adaptrag/adaptrag/ingest"
	"github.com/adaptrag/adaptrag/plan"
	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/retrieval/embed"
	"github.com/adaptrag/adaptrag/retrieval/memstore"
	"github.com/adaptrag/adaptrag/retrieval/retrievaltest"
)

var tenantTopics = []string{"annual leave", "travel claims", "vpn access", "laptop refresh", "expense approval", "parental leave", "invoice payment", "password reset"}

// tenantCorpus writes tenant's handbook: documents on topics every tenant
// shares, each sentence carrying a secret that names its tenant, and an
// FAQ file.
func tenantCorpus(r *rand.Rand, tenant string, n int) fstest.MapFS {
	files := fstest.MapFS{}
	secret := func(i int) string { return fmt.Sprintf("SECRET-%x-%d", tenant, i) }
	for i := range n {
		topic := tenantTopics[r.IntN(len(tenantTopics))]
		var b strings.Builder
		fmt.Fprintf(&b, "# %s\n\n", topic)
		for j := range 2 + r.IntN(4) {
			fmt.Fprintf(&b, "## %s rule %d\n\nThe %s policy says requests take %d days and need code %s. Ask the %s desk.\n\n",
				topic, j, topic, 1+r.IntN(30), secret(i*10+j), []string{"hr", "it", "finance"}[r.IntN(3)])
		}
		files[fmt.Sprintf("%s/doc%d.md", []string{"hr", "it", "finance"}[r.IntN(3)], i)] = &fstest.MapFile{Data: []byte(b.String())}
	}
	var faq strings.Builder
	for i, topic := range tenantTopics[:3] {
		fmt.Fprintf(&faq, `{"id": "%d", "question": "How do I request %s?", "answer": "Use form %s."}`+"\n", i, topic, secret(1000+i))
	}
	files["faq.jsonl"] = &fstest.MapFile{Data: []byte(faq.String())}
	return files
}

// Tenant isolation through the pipeline: random tenants' handbooks (the
// same topics, the same file names, so the same document ids) in one
// document store and one FAQ store; random questions asked and searched
// concurrently with each tenant's Scope, in every mode. No passage, FAQ
// hit, citation or answer ever carries another tenant's data. More
// rounds: ADAPTRAG_TENANT_ROUNDS=N.
func TestTenantIsolationThroughPipeline(t *testing.T) {
	rounds := retrievaltest.Rounds(3)
	emb := embed.NewHashing(embed.HashingConfig{})
	var runs, passages atomic.Int64
	for round := range rounds {
		r := rand.New(rand.NewPCG(20261201, uint64(round)))
		ctx := context.Background()
		docs, err := memstore.Open(ctx, memstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		faq, err := memstore.Open(ctx, memstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		all := []string{"", "acme", "Acme", "acme ", "globex", "租户甲"}
		r.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
		tenants := all[:2+r.IntN(3)]
		for _, tn := range tenants {
			rep, err := ingest.IngestFS(ctx, ingest.Target{Docs: docs, FAQ: faq}, tenantCorpus(r, tn, 3+r.IntN(5)), ingest.Options{Tenant: tn, Embedder: emb})
			if err == nil {
				err = rep.Err()
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		p, err := adaptrag.New(ctx, adaptrag.Deps{Docs: docs, FAQ: faq, Embedder: emb}, adaptrag.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make(chan error, len(tenants)+1)
		for i, tn := range append(tenants, "nobody") {
			qr := rand.New(rand.NewPCG(20261201, uint64(round)<<8|uint64(i)+1))
			wg.Go(func() {
				for range 12 {
					if err := askAsTenant(ctx, qr, p, tn, &runs, &passages); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("round %d: %v", round, err)
		}
		docs.Close()
		faq.Close()
	}
	if passages.Load() == 0 {
		t.Fatal("no run found a passage: the property was never tested")
	}
	t.Logf("tenant isolation through the pipeline: %d rounds, %d asks and searches, %d passages checked", rounds, runs.Load(), passages.Load())
}

// askAsTenant asks or searches a random question for tenant and checks
// that everything the run returns is the tenant's.
func askAsTenant(ctx context.Context, r *rand.Rand, p *adaptrag.Pipeline, tenant string, runs, passages *atomic.Int64) error {
	topic := tenantTopics[r.IntN(len(tenantTopics))]
	q := []string{
		"How many days do %s requests take?", "Which code do %s requests need?", "How do I request %s?",
		"Compare %s and travel claims", "What does the %s policy say? Which desk handles it?",
	}[r.IntN(5)]
	q = fmt.Sprintf(q, topic)
	scope := retrieval.Scope{Tenant: tenant}
	var res *adaptrag.Result
	var err error
	if r.IntN(2) == 0 {
		res, err = p.Ask(ctx, adaptrag.Request{Question: q, Scope: scope})
	} else {
		res, err = p.Search(ctx, adaptrag.SearchRequest{Query: q, Scope: scope, K: r.IntN(12), Mode: []plan.Mode{"", plan.ModeDense, plan.ModeHybrid}[r.IntN(3)]})
	}
	runs.Add(1)
	if err != nil {
		return fmt.Errorf("tenant %q, %q: %w", tenant, q, err)
	}
	if res.Query.Scope.Tenant != tenant {
		return fmt.Errorf("tenant %q ran as %q", tenant, res.Query.Scope.Tenant)
	}
	mine := fmt.Sprintf("SECRET-%x-", tenant)
	for _, h := range append(append(res.Debug.State.Docs, res.Debug.State.FAQ...), res.Debug.State.Candidates...) {
		passages.Add(1)
		if h.Chunk.Tenant != tenant {
			return fmt.Errorf("tenant %q, %q: passage %s of tenant %q", tenant, q, h.Chunk.ID, h.Chunk.Tenant)
		}
	}
	b, err := json.Marshal(res)
	if err != nil {
		return err
	}
	// Every secret in the output is the tenant's own.
	out := string(b)
	for i := strings.Index(out, "SECRET-"); i >= 0; i = strings.Index(out, "SECRET-") {
		if !strings.HasPrefix(out[i:], mine) {
			return fmt.Errorf("tenant %q, %q: the output carries %.24s", tenant, q, out[i:])
		}
		out = out[i+len("SECRET-"):]
	}
	return nil
}
