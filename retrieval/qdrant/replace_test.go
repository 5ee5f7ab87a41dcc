package qdrant_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/retrieval/qdrant"
	"github.com/adaptrag/adaptrag/retrieval/qdrant/qdranttest"
	qc "github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// interceptor runs before(method, req) ahead of every call the store
// makes; a non-nil error fails the call without sending it.
func interceptor(before func(method string, req any) error) grpc.DialOption {
	return grpc.WithChainUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if err := before(method, req); err != nil {
			return err
		}
		return invoker(ctx, method, req, reply, cc, opts...)
	})
}

func docChunk(id, doc, tenant, text string, x float32) retrieval.Chunk {
	return retrieval.Chunk{ID: id, DocID: doc, Tenant: tenant, Text: text, Vector: vec(1, x)}
}

// scopeIDs lists every chunk id of a scope, sorted.
func scopeIDs(t *testing.T, st *qdrant.Store, tenant string) []string {
	t.Helper()
	hits, err := st.SearchDense(context.Background(), retrieval.Request{Scope: retrieval.Scope{Tenant: tenant}, Vector: vec(1, 0), K: 100})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, h := range hits {
		out = append(out, h.Chunk.ID)
	}
	slices.Sort(out)
	return out
}

// TestReplaceNeverShowsTheDocumentMissing: the new chunks go in before the
// old ones go out, by one delete that keeps the new ids.
func TestReplaceNeverShowsTheDocumentMissing(t *testing.T) {
	srv := qdranttest.Start(t)
	ctx := context.Background()
	coll := "kb_" + randomSuffix(t)
	reader, err := qdrant.Open(ctx, fakeConfig(srv, coll, 2))
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	var calls []string
	var between []string
	var deleteReq *qc.DeletePoints
	cfg := fakeConfig(srv, coll, 2)
	cfg.DialOptions = []grpc.DialOption{interceptor(func(method string, req any) error {
		name := method[strings.LastIndex(method, "/")+1:]
		calls = append(calls, name)
		if name == "Delete" {
			deleteReq = req.(*qc.DeletePoints)
			between = scopeIDs(t, reader, "t") // what a reader sees between the two calls
		}
		return nil
	})}
	st, err := qdrant.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	old := []retrieval.Chunk{docChunk("a", "d", "t", "old first", 0), docChunk("b", "d", "t", "old second", 1)}
	if err := st.Upsert(ctx, append(old, docChunk("z", "other", "t", "other doc", 2))); err != nil {
		t.Fatal(err)
	}
	calls = nil
	if err := st.ReplaceDocument(ctx, retrieval.Scope{Tenant: "t"}, "d", []retrieval.Chunk{
		docChunk("b", "d", "t", "new second", 3), docChunk("c", "d", "t", "new third", 4),
	}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(calls, []string{"Upsert", "Delete"}) {
		t.Errorf("calls = %v, want [Upsert Delete]", calls)
	}
	if !slices.Equal(between, []string{"a", "b", "c", "z"}) {
		t.Errorf("between the calls a reader saw %v, want both versions [a b c z]", between)
	}
	f := deleteReq.GetPoints().GetFilter()
	if len(f.GetMust()) != 2 || len(f.GetMustNot()) != 1 || len(f.GetMustNot()[0].GetHasId().GetHasId()) != 2 {
		t.Errorf("delete filter = %v, want must tenant and doc_id, must_not has_id of the 2 new points", f)
	}
	if got := scopeIDs(t, reader, "t"); !slices.Equal(got, []string{"b", "c", "z"}) {
		t.Errorf("after the replacement: %v, want [b c z]", got)
	}
}

// TestReplaceInterrupted: when the delete fails, both versions remain, the
// error says so, and retrying finishes the replacement.
func TestReplaceInterrupted(t *testing.T) {
	srv := qdranttest.Start(t)
	ctx := context.Background()
	fail := false
	cfg := fakeConfig(srv, "kb_"+randomSuffix(t), 2)
	cfg.DialOptions = []grpc.DialOption{interceptor(func(method string, _ any) error {
		if fail && strings.HasSuffix(method, "/Delete") {
			return status.Error(codes.Unavailable, "connection lost (injected)")
		}
		return nil
	})}
	st, err := qdrant.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Upsert(ctx, []retrieval.Chunk{docChunk("a", "d", "t", "old", 0)}); err != nil {
		t.Fatal(err)
	}
	fail = true
	next := []retrieval.Chunk{docChunk("b", "d", "t", "new", 1)}
	err = st.ReplaceDocument(ctx, retrieval.Scope{Tenant: "t"}, "d", next)
	if !errors.Is(err, retrieval.ErrUnavailable) || !strings.Contains(err.Error(), "not yet removed") {
		t.Errorf("interrupted replacement: err = %v, want ErrUnavailable saying the old chunks remain", err)
	}
	if got := scopeIDs(t, st, "t"); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("after the interruption: %v, want both versions [a b]", got)
	}
	fail = false
	if err := st.ReplaceDocument(ctx, retrieval.Scope{Tenant: "t"}, "d", next); err != nil {
		t.Fatal(err)
	}
	if got := scopeIDs(t, st, "t"); !slices.Equal(got, []string{"b"}) {
		t.Errorf("after the retry: %v, want [b]", got)
	}
}

// TestDocumentsPages: a listing longer than one scroll page counts every
// chunk once, and other tenants' points do not leak in.
func TestDocumentsPages(t *testing.T) {
	srv := qdranttest.Start(t)
	ctx := context.Background()
	st := openFake(t, srv, 2)
	var chunks []retrieval.Chunk
	want := map[string]int{}
	for i := range 700 {
		doc := fmt.Sprintf("doc%d", i%7)
		tenant := "t"
		if i%5 == 0 {
			tenant = "u"
		} else {
			want[doc]++
		}
		chunks = append(chunks, retrieval.Chunk{ID: fmt.Sprint(i), DocID: doc, Tenant: tenant, Position: i, Text: "x", Vector: vec(1, float32(i))})
	}
	if err := st.Upsert(ctx, chunks); err != nil {
		t.Fatal(err)
	}
	docs, err := st.Documents(ctx, retrieval.Scope{Tenant: "t"})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, d := range docs {
		got[d.DocID] = d.Chunks
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Documents = %v, want %v", got, want)
	}
	srv.SetUnavailable(true)
	if _, err := st.Documents(ctx, retrieval.Scope{Tenant: "t"}); !errors.Is(err, retrieval.ErrUnavailable) {
		t.Errorf("Documents on a server that is down: %v, want ErrUnavailable", err)
	}
}
