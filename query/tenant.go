package query

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// ErrVocabulary reports a tenant's vocabulary that could not be loaded.
// The rules then read the question without a vocabulary (never another
// tenant's).
var ErrVocabulary = errors.New("query: tenant vocabulary")

type tenantKey struct{}

// WithTenant returns a context that carries the caller's tenant, so that
// the rules read that tenant's vocabulary (Offline.Tenants,
// LLMConfig.Tenants). The pipeline sets it from the authenticated caller,
// never from the question or a model.
func WithTenant(ctx context.Context, tenant string) context.Context {
	return context.WithValue(ctx, tenantKey{}, tenant)
}

// TenantOf returns the tenant WithTenant put in ctx, "" (the default
// tenant) when none.
func TenantOf(ctx context.Context) string {
	t, _ := ctx.Value(tenantKey{}).(string)
	return t
}

// Vocabularies holds one vocabulary per tenant: each is loaded on its
// first use and cached; a load that fails is not cached, so the next use
// tries again. Concurrent first uses of one tenant share a single load. It
// is safe for concurrent use.
type Vocabularies struct {
	load func(ctx context.Context, tenant string) (Vocabulary, error)
	mu   sync.Mutex
	m    map[string]*vocabLoad
}

// vocabLoad is one tenant's load: done is closed when v and err are set.
type vocabLoad struct {
	done chan struct{}
	v    Vocabulary
	err  error
}

// NewVocabularies returns Vocabularies that load a tenant's vocabulary with
// load (for example a kb.KB's VocabOf).
func NewVocabularies(load func(ctx context.Context, tenant string) (Vocabulary, error)) *Vocabularies {
	return &Vocabularies{load: load, m: map[string]*vocabLoad{}}
}

// For returns the tenant's vocabulary, loading it on first use. The error
// wraps ErrVocabulary and the loader's error, or is ctx's while waiting for
// another caller's load.
func (vs *Vocabularies) For(ctx context.Context, tenant string) (Vocabulary, error) {
	vs.mu.Lock()
	if l, ok := vs.m[tenant]; ok {
		vs.mu.Unlock()
		select {
		case <-l.done:
			return l.v, l.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	l := &vocabLoad{done: make(chan struct{})}
	vs.m[tenant] = l
	vs.mu.Unlock()
	v, err := vs.load(ctx, tenant)
	if err != nil {
		l.err = fmt.Errorf("%w %q: %w", ErrVocabulary, tenant, err)
		vs.mu.Lock()
		if vs.m[tenant] == l {
			delete(vs.m, tenant)
		}
		vs.mu.Unlock()
	} else {
		l.v = v
	}
	close(l.done)
	return l.v, l.err
}

// Forget drops the cached vocabulary of a tenant (after its knowledge base
// was ingested again), so that the next use loads it anew.
func (vs *Vocabularies) Forget(tenant string) {
	vs.mu.Lock()
	delete(vs.m, tenant)
	vs.mu.Unlock()
}

// vocabFor is the vocabulary the rules read for the tenant in ctx: the
// tenant's from tenants when set, else def.
func vocabFor(ctx context.Context, tenants *Vocabularies, def Vocabulary) (Vocabulary, error) {
	if tenants == nil {
		return def, nil
	}
	v, err := tenants.For(ctx, TenantOf(ctx))
	if err != nil {
		return nil, err
	}
	return v, nil
}

// VocabFor returns the vocabulary o reads for the tenant in ctx (see
// Offline.Tenants), nil when it has none or it could not be loaded.
func (o Offline) VocabFor(ctx context.Context) Vocabulary {
	v, _ := vocabFor(ctx, o.Tenants, o.Vocab)
	return v
}
