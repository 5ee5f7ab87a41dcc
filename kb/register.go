package kb

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/adaptrag/adaptrag/retrieval/memstore"
)

// Opener opens the knowledge base at location (the whole string Open was
// given, scheme included) with the options Open was given. It builds the
// result with New.
type Opener func(ctx context.Context, location string, o Options) (*KB, error)

// ErrScheme reports a scheme Register cannot take: empty, not made of
// letters, digits, '+', '-' and '.', or already registered.
var ErrScheme = errors.New("kb: bad scheme")

// openers is the registry of schemes, like database/sql's drivers: filled
// by Register (the built-in schemes from this package's init), read by
// Open. It is the package's one piece of shared state, safe for concurrent
// use.
var openers = struct {
	sync.RWMutex
	m map[string]Opener
}{m: map[string]Opener{}}

// Register makes a store opener available under scheme, so that Open
// accepts locations "scheme:...". It is meant to be called from an init
// function of the package that provides the store, as database/sql drivers
// register themselves. Registering a scheme twice, or a nil opener, is an
// error matching ErrScheme; the first registration stands.
func Register(scheme string, open Opener) error {
	if open == nil {
		return fmt.Errorf("%w: nil opener for %q", ErrScheme, scheme)
	}
	if scheme == "" || strings.IndexFunc(scheme, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.')
	}) >= 0 {
		return fmt.Errorf("%w: %q", ErrScheme, scheme)
	}
	scheme = strings.ToLower(scheme)
	openers.Lock()
	defer openers.Unlock()
	if _, dup := openers.m[scheme]; dup {
		return fmt.Errorf("%w: %q is already registered", ErrScheme, scheme)
	}
	openers.m[scheme] = open
	return nil
}

func lookup(scheme string) Opener {
	openers.RLock()
	defer openers.RUnlock()
	return openers.m[strings.ToLower(scheme)]
}

// schemes lists the registered schemes as location prefixes, sorted.
func schemes() []string {
	openers.RLock()
	defer openers.RUnlock()
	out := slices.Sorted(maps.Keys(openers.m))
	for i, s := range out {
		out[i] = s + ":"
	}
	return out
}

// The built-in stores, wired in one place.
func init() {
	for scheme, open := range map[string]Opener{
		"embedded": openEmbedded,
		"qdrant":   openQdrant,
		"http":     openQdrant,
		"https":    openQdrant,
		"memory":   openMemory,
	} {
		openers.m[scheme] = open
	}
}

// openMemory opens a new, empty knowledge base in memory (both
// collections), whatever follows "memory:".
func openMemory(ctx context.Context, location string, o Options) (*KB, error) {
	docs, err := memstore.Open(ctx, memstore.Options{Dim: o.Dim})
	if err != nil {
		return nil, fmt.Errorf("kb: %w", err)
	}
	faq, err := memstore.Open(ctx, memstore.Options{Dim: o.Dim})
	if err != nil {
		docs.Close()
		return nil, fmt.Errorf("kb: %w", err)
	}
	return newKB(location, docs, faq), nil
}
