package adaptrag_test

import (
	"context"
	"strings"
	"testing"

	"github.com/adaptrag/adaptrag"
	"github.com/adaptrag/adaptrag/query"
	"github.com/adaptrag/adaptrag/retrieval"
)

// The understanding reads the caller's tenant's vocabulary: a follow-up
// that swaps one of tenant B's plans for another is rewritten for B, and
// for tenant A, whose knowledge base names neither, they are no entities
// (the rules read its question by shape alone).
func TestTenantVocabularyThroughPipeline(t *testing.T) {
	f := newFixture(t)
	f.deps.Rewriter = query.Offline{Tenants: query.NewVocabularies(func(_ context.Context, tenant string) (query.Vocabulary, error) {
		if tenant == "b" {
			return planNames{"Spark", "Flow"}, nil
		}
		return nil, nil
	})}
	p := f.pipeline(t)
	hist := []adaptrag.Message{user("What is the hotspot allowance on Spark?"), assistant("10 GB.")}
	b := askWith(t, p, adaptrag.Request{Question: "What about Flow?", History: hist, Scope: retrieval.Scope{Tenant: "b"}})
	if !strings.Contains(b.Query.Text, "Flow") || strings.Contains(b.Query.Text, "Spark") || !strings.Contains(b.Query.Text, "hotspot") {
		t.Errorf("tenant b: query %q, want Spark replaced by Flow", b.Query.Text)
	}
	a := askWith(t, p, adaptrag.Request{Question: "What about Flow?", History: hist, Scope: retrieval.Scope{Tenant: "a"}})
	for _, e := range a.Query.Entities {
		if e.Kind == query.KnownName {
			t.Errorf("tenant a: %q is an entity of tenant b's vocabulary", e.Value)
		}
	}
	// The rule that decided: B's names swapped, A's question read by shape.
	rule := func(r *adaptrag.Result) string {
		for _, st := range r.SubTasks {
			if st.Kind == "rewrite" {
				return st.Task
			}
		}
		return ""
	}
	if got := rule(b); got != "rewrite "+query.RuleEllipsisEntity {
		t.Errorf("tenant b: %s, want a name swapped for its sibling", got)
	}
	if got := rule(a); got == "rewrite "+query.RuleEllipsisEntity {
		t.Errorf("tenant a: %s with tenant b's names", got)
	}
}

// planNames is a vocabulary of one kind.
type planNames []string

func (ns planNames) Names(text string) []query.Name {
	var out []query.Name
	for _, n := range ns {
		if k := strings.Index(text, n); k >= 0 {
			out = append(out, query.Name{Text: n, Kind: "plan", Start: k, End: k + len(n)})
		}
	}
	return out
}
