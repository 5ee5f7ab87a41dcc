// Package checkpoint holds durable graph.Checkpointer implementations and
// the means to open one by URL.
//
// Stores register a URL scheme, the way database/sql drivers register a
// name: import the package of the store you need for its side effect, then
// open it by URL.
//
//	import _ "github.com/adaptrag/adaptrag/checkpoint/sqlite"   // sqlite:PATH
//	import _ "github.com/adaptrag/adaptrag/checkpoint/postgres" // postgres://…
//
//	store, err := checkpoint.Open(ctx, "sqlite:/var/lib/app/threads.db")
//	defer store.Close()
//	app, err := g.Compile(graph.Config{Checkpointer: store})
//
// Both sit on SQL, a database/sql core: one transaction per Put,
// conditional on the thread's head (optimistic concurrency: a writer that
// lost the race gets a *graph.ConflictError and nothing is written), and
// retries with backoff on connection errors, idempotent when the lost
// connection had in fact committed.
package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/adaptrag/adaptrag/graph"
)

// Store is a graph.Checkpointer that holds a connection to close.
type Store interface {
	graph.Checkpointer
	io.Closer
}

// Opener opens the store a URL names. It receives the whole URL.
type Opener func(ctx context.Context, url string) (Store, error)

// ErrUnknownScheme is returned by Open for a URL no store registered.
var ErrUnknownScheme = errors.New("checkpoint: no store registered for the URL's scheme")

var (
	regMu   sync.RWMutex
	openers = map[string]Opener{}
)

// Register makes a store available to Open under scheme (the URL's part
// before ':', lower case). It panics if scheme is registered twice or open
// is nil, as sql.Register does: both are programming errors found at init.
func Register(scheme string, open Opener) {
	regMu.Lock()
	defer regMu.Unlock()
	scheme = strings.ToLower(scheme)
	if open == nil {
		panic("checkpoint: Register of a nil opener for " + scheme)
	}
	if _, dup := openers[scheme]; dup {
		panic("checkpoint: Register called twice for " + scheme)
	}
	openers[scheme] = open
}

// Schemes returns the registered schemes, sorted.
func Schemes() []string {
	regMu.RLock()
	defer regMu.RUnlock()
	out := make([]string, 0, len(openers))
	for s := range openers {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// Open opens the store rawURL names, by its scheme: "sqlite:PATH",
// "postgres://…", or "memory:" for a graph.MemoryCheckpointer.
func Open(ctx context.Context, rawURL string) (Store, error) {
	scheme, _, ok := strings.Cut(rawURL, ":")
	if !ok || scheme == "" {
		return nil, fmt.Errorf("%w: %q has no scheme (want sqlite:PATH or postgres://…)", ErrUnknownScheme, redact(rawURL))
	}
	scheme = strings.ToLower(scheme)
	if scheme == "memory" {
		return memory{graph.NewMemoryCheckpointer()}, nil
	}
	regMu.RLock()
	open := openers[scheme]
	regMu.RUnlock()
	if open == nil {
		return nil, fmt.Errorf("%w: %q (registered: %s; import the store's package)", ErrUnknownScheme, scheme, strings.Join(append(Schemes(), "memory"), ", "))
	}
	return open(ctx, rawURL)
}

type memory struct{ *graph.MemoryCheckpointer }

func (memory) Close() error { return nil }

// redact hides a URL's password for messages.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	return u.Redacted()
}
