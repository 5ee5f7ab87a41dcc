package embed_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/retrieval/embed"
)

// dimStore is a retrieval.Store that only knows its dimension.
type dimStore struct {
	retrieval.Store
	dim int
}

func (s dimStore) Dim() int { return s.dim }

// funcEmbedder reports dim and embeds through fn.
type funcEmbedder struct {
	dim int
	fn  func(texts []string) ([][]float32, error)
}

func (f funcEmbedder) Dim() int { return f.dim }
func (f funcEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	return f.fn(texts)
}

func TestCheck(t *testing.T) {
	h := embed.NewHashing(embed.HashingConfig{})
	cases := []struct {
		edim, sdim int
		wantErr    bool
	}{
		{384, 384, false},
		{384, 0, false}, // empty store: decided on Upsert
		{0, 768, false}, // remote before its first call
		{384, 768, true},
	}
	for _, c := range cases {
		e := funcEmbedder{dim: c.edim}
		err := embed.Check(e, dimStore{dim: c.sdim})
		if got := errors.Is(err, retrieval.ErrDimension); got != c.wantErr {
			t.Errorf("Check(%d vs %d) = %v, want ErrDimension: %v", c.edim, c.sdim, err, c.wantErr)
		}
	}
	if err := embed.Check(h, dimStore{dim: 128}); !errors.Is(err, retrieval.ErrDimension) {
		t.Errorf("hashing 384 vs store 128: %v", err)
	}
	if err := embed.Check(nil, dimStore{}); !errors.Is(err, retrieval.ErrInvalid) {
		t.Errorf("nil embedder: %v", err)
	}
}

func TestEmbedAll(t *testing.T) {
	var calls int
	e := funcEmbedder{dim: 2, fn: func(ts []string) ([][]float32, error) {
		calls++
		out := make([][]float32, len(ts))
		for i, s := range ts {
			out[i] = []float32{float32(len(s)), 1}
		}
		return out, nil
	}}
	in := texts(7)
	var seen []string
	vs, err := embed.EmbedAll(context.Background(), e, in, 3, func(done, total int) {
		seen = append(seen, fmt.Sprintf("%d/%d", done, total))
	})
	if err != nil {
		t.Fatal(err)
	}
	if calls != 3 || fmt.Sprint(seen) != "[3/7 6/7 7/7]" {
		t.Errorf("calls = %d, progress = %v; want 3 calls and [3/7 6/7 7/7]", calls, seen)
	}
	for i, v := range vs {
		if int(v[0]) != len(in[i]) {
			t.Fatalf("vector %d out of order", i)
		}
	}
	if vs, err := embed.EmbedAll(context.Background(), e, nil, 0, nil); vs != nil || err != nil {
		t.Errorf("EmbedAll(nil) = %v, %v; want nil, nil", vs, err)
	}
}

func TestEmbedAllErrors(t *testing.T) {
	ctx := context.Background()
	ragged := funcEmbedder{fn: func(ts []string) ([][]float32, error) {
		out := make([][]float32, len(ts))
		for i := range ts {
			out[i] = make([]float32, 2+i)
		}
		return out, nil
	}}
	if _, err := embed.EmbedAll(ctx, ragged, texts(2), 0, nil); !errors.Is(err, retrieval.ErrDimension) {
		t.Errorf("ragged vectors: %v, want ErrDimension", err)
	}
	short := funcEmbedder{fn: func(ts []string) ([][]float32, error) { return make([][]float32, len(ts)-1), nil }}
	if _, err := embed.EmbedAll(ctx, short, texts(2), 0, nil); !errors.Is(err, embed.ErrBadResponse) {
		t.Errorf("short answer: %v, want ErrBadResponse", err)
	}
	failing := funcEmbedder{fn: func([]string) ([][]float32, error) { return nil, retrieval.ErrUnavailable }}
	if _, err := embed.EmbedAll(ctx, failing, texts(2), 0, nil); !errors.Is(err, retrieval.ErrUnavailable) {
		t.Errorf("failing embedder: %v, want ErrUnavailable", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := embed.EmbedAll(cctx, embed.NewHashing(embed.HashingConfig{}), texts(2), 0, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled: %v, want context.Canceled", err)
	}
}

func ExampleEmbedAll() {
	e := embed.NewHashing(embed.HashingConfig{Dim: 64})
	docs := []string{"first chunk", "second chunk", "third chunk", "fourth chunk", "fifth chunk"}
	vs, err := embed.EmbedAll(context.Background(), e, docs, 2, func(done, total int) {
		fmt.Printf("embedded %d/%d\n", done, total)
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(vs), "vectors of", len(vs[0]))
	// Output:
	// embedded 2/5
	// embedded 4/5
	// embedded 5/5
	// 5 vectors of 64
}
