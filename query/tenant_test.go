package query_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/adaptrag/adaptrag/query"
)

// tenantVocabs gives tenant "a" a gym's plans and tenant "b" a carrier's,
// counting the loads.
func tenantVocabs(loads *atomic.Int32, fail map[string]bool) *query.Vocabularies {
	return query.NewVocabularies(func(ctx context.Context, tenant string) (query.Vocabulary, error) {
		loads.Add(1)
		if fail[tenant] {
			return nil, errors.New("store unavailable")
		}
		switch tenant {
		case "a":
			return names{"Basic": "plan", "Elite": "plan"}, nil
		case "b":
			return names{"Spark": "plan", "Flow": "plan"}, nil
		}
		return nil, nil
	})
}

// Tenant B's names are no entities for tenant A: "What about Flow?" after
// a question on Spark replaces Spark for B, and is kept as asked for A,
// whose vocabulary does not know either name.
func TestTenantVocabularyIsolation(t *testing.T) {
	var loads atomic.Int32
	o := query.Offline{Tenants: tenantVocabs(&loads, nil)}
	h := []query.Message{{Role: "user", Content: "What is the hotspot allowance on Spark?"}, {Role: "assistant", Content: "10 GB."}}
	ctxA, ctxB := query.WithTenant(context.Background(), "a"), query.WithTenant(context.Background(), "b")

	rb, err := o.Rewrite(ctxB, "What about Flow?", h)
	if err != nil || rb.Rule != query.RuleEllipsisEntity || !strings.Contains(rb.Text, "Flow") || strings.Contains(rb.Text, "Spark") {
		t.Errorf("tenant b: %q [%s] %v, want Spark replaced by Flow", rb.Text, rb.Rule, err)
	}
	ra, err := o.Rewrite(ctxA, "What about Flow?", h)
	if err != nil || ra.Rule == query.RuleEllipsisEntity {
		t.Errorf("tenant a: %q [%s] %v: b's names were read as a's", ra.Text, ra.Rule, err)
	}
	for _, e := range ra.Entities {
		if e.Kind == query.KnownName {
			t.Errorf("tenant a: %q is a name of its vocabulary", e.Value)
		}
	}
	// Two of A's plans are asked back for A; the same question for B,
	// whose vocabulary does not name them, is no clarify.
	h2 := []query.Message{{Role: "user", Content: "I'm choosing between Basic and Elite."}}
	if r, _ := o.Rewrite(ctxA, "Does it include towels?", h2); r.Clarify == nil {
		t.Errorf("tenant a: %q [%s], want a clarify between Basic and Elite", r.Text, r.Rule)
	}
	if r, _ := o.Rewrite(ctxB, "Does it include towels?", h2); r.Clarify != nil {
		t.Errorf("tenant b: clarify %v with names b does not have", r.Clarify.Candidates)
	}
	if got := o.VocabFor(ctxA).Names("Elite and Flow"); len(got) != 1 || got[0].Text != "Elite" {
		t.Errorf("VocabFor(a) names %v, want Elite only", got)
	}
	if n := loads.Load(); n != 2 {
		t.Errorf("%d loads for two tenants, want one each (cached)", n)
	}
}

// Concurrent first uses of a tenant share one load.
func TestTenantVocabularyConcurrentLoad(t *testing.T) {
	var loads atomic.Int32
	vs := tenantVocabs(&loads, nil)
	var wg sync.WaitGroup
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := vs.For(context.Background(), "a"); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if n := loads.Load(); n != 1 {
		t.Errorf("%d loads, want 1", n)
	}
	vs.Forget("a")
	if _, err := vs.For(context.Background(), "a"); err != nil || loads.Load() != 2 {
		t.Errorf("after Forget: %v, %d loads, want a second load", err, loads.Load())
	}
}

// A tenant whose vocabulary cannot be loaded gets the rules without a
// vocabulary and an error wrapping ErrVocabulary, never another tenant's
// names; the failure is not cached.
func TestTenantVocabularyLoadError(t *testing.T) {
	var loads atomic.Int32
	o := query.Offline{Vocab: names{"Spark": "plan", "Flow": "plan"}, Tenants: tenantVocabs(&loads, map[string]bool{"c": true})}
	h := []query.Message{{Role: "user", Content: "What is the hotspot allowance on Spark?"}}
	r, err := o.Rewrite(query.WithTenant(context.Background(), "c"), "What about Flow?", h)
	if !errors.Is(err, query.ErrVocabulary) {
		t.Fatalf("err %v, want ErrVocabulary", err)
	}
	if r.Rule == query.RuleEllipsisEntity {
		t.Errorf("%q [%s]: read with the default vocabulary", r.Text, r.Rule)
	}
	if _, err := o.Rewrite(query.WithTenant(context.Background(), "c"), "What about Flow?", h); err == nil || loads.Load() != 2 {
		t.Errorf("second use: %v after %d loads, want the load retried", err, loads.Load())
	}
}
