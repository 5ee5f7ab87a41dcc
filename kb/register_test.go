package kb_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/adaptrag/adaptrag/kb"
	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/retrieval/memstore"
)

// A scheme registered from outside opens through Open, with the options
// Open was given; a second registration of it, a bad name or a nil opener
// is refused.
func TestRegister(t *testing.T) {
	var got kb.Options
	var gotLoc string
	open := func(ctx context.Context, location string, o kb.Options) (*kb.KB, error) {
		got, gotLoc = o, location
		docs, err := memstore.Open(ctx, memstore.Options{})
		if err != nil {
			return nil, err
		}
		return kb.New(location, docs, nil), nil
	}
	// The registry lives as long as the test binary: a new name per run
	// (go test -count=N).
	scheme := fmt.Sprintf("regtest+%d", time.Now().UnixNano())
	if err := kb.Register(scheme, open); err != nil {
		t.Fatal(err)
	}
	k, err := kb.Open(context.Background(), scheme+"://somewhere", kb.Options{Create: true, Dim: 8})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	if gotLoc != scheme+"://somewhere" || !got.Create || got.Dim != 8 || k.Location != gotLoc || k.FAQ != nil {
		t.Fatalf("opener got %q %+v; KB %q, FAQ %v", gotLoc, got, k.Location, k.FAQ)
	}
	for _, tc := range []struct {
		scheme string
		open   kb.Opener
	}{
		{scheme, open}, {"embedded", open}, {"", open}, {"a b", open}, {"a/b", open}, {"regtest-nil", nil},
	} {
		if err := kb.Register(tc.scheme, tc.open); !errors.Is(err, kb.ErrScheme) {
			t.Errorf("Register(%q): err = %v, want ErrScheme", tc.scheme, err)
		}
	}
	// An unknown scheme names the registered ones.
	_, err = kb.Open(context.Background(), "nosuch:x", kb.Options{})
	if !errors.Is(err, kb.ErrLocation) || !strings.Contains(err.Error(), "embedded:") || !strings.Contains(err.Error(), scheme+":") {
		t.Fatalf("unknown scheme: %v", err)
	}
}

// memory: opens a new, empty knowledge base that takes writes.
func TestOpenMemory(t *testing.T) {
	k, err := kb.Open(context.Background(), "memory:", kb.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	if k.Docs == nil || k.FAQ == nil || k.Target().Docs == nil {
		t.Fatalf("memory KB: %+v", k)
	}
	err = k.Target().Docs.Upsert(context.Background(), []retrieval.Chunk{{ID: "a", DocID: "d", Text: "hello", Vector: []float32{1, 0}}})
	if err != nil {
		t.Fatal(err)
	}
	docs, _, err := k.List(context.Background(), retrieval.Scope{})
	if err != nil || len(docs) != 1 {
		t.Fatalf("listed %d documents (%v)", len(docs), err)
	}
}
