package embed_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"

	"github.com/adaptrag/adaptrag/retrieval/embed"
)

func cosine(a, b []float32) float64 {
	var d, na, nb float64
	for i := range a {
		d += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return d / math.Sqrt(na*nb)
}

func TestHashingShapeAndNorm(t *testing.T) {
	for _, dim := range []int{0, 64, 384, 1000} {
		e := embed.NewHashing(embed.HashingConfig{Dim: dim})
		want := dim
		if dim == 0 {
			want = embed.DefaultDim
		}
		if e.Dim() != want {
			t.Fatalf("Dim() = %d, want %d", e.Dim(), want)
		}
		texts := []string{"Refund policy for annual plans", "退款政策是什么", "", "?!", "mixed 中文 and English 2024"}
		vs, err := e.Embed(context.Background(), texts)
		if err != nil {
			t.Fatal(err)
		}
		if len(vs) != len(texts) {
			t.Fatalf("got %d vectors for %d texts", len(vs), len(texts))
		}
		for i, v := range vs {
			if len(v) != want {
				t.Fatalf("dim %d: vector %d has length %d", dim, i, len(v))
			}
			var n float64
			for _, x := range v {
				n += float64(x) * float64(x)
			}
			if math.Abs(n-1) > 1e-5 {
				t.Errorf("dim %d: text %q: squared norm %v, want 1", dim, texts[i], n)
			}
		}
	}
}

func TestHashingEmptyInput(t *testing.T) {
	vs, err := embed.NewHashing(embed.HashingConfig{}).Embed(context.Background(), nil)
	if vs != nil || err != nil {
		t.Fatalf("Embed(nil) = %v, %v; want nil, nil", vs, err)
	}
}

func TestHashingDeterministicAndIndependentOfBatch(t *testing.T) {
	e := embed.NewHashing(embed.HashingConfig{})
	ctx := context.Background()
	a, _ := e.Embed(ctx, []string{"alpha beta", "How do I reset my password?"})
	b, _ := embed.NewHashing(embed.HashingConfig{}).Embed(ctx, []string{"How do I reset my password?"})
	for i := range b[0] {
		if a[1][i] != b[0][i] {
			t.Fatalf("vector differs at %d between calls: %v vs %v", i, a[1][i], b[0][i])
		}
	}
}

func TestHashingSimilarity(t *testing.T) {
	e := embed.NewHashing(embed.HashingConfig{})
	cases := []struct{ q, near, far string }{
		{"How do I get a refund?", "Refunds are issued within 14 days", "Our office opens at nine"},
		{"password reset", "Resetting your password", "Shipping to Canada"},
		{"如何申请退款", "退款申请流程", "今天天气怎么样"},
		// Inflection: shared character n-grams, no shared word.
		{"connecting", "connection", "banana"},
	}
	for _, c := range cases {
		vs, err := e.Embed(context.Background(), []string{c.q, c.near, c.far})
		if err != nil {
			t.Fatal(err)
		}
		if n, f := cosine(vs[0], vs[1]), cosine(vs[0], vs[2]); n <= f {
			t.Errorf("%q: cos(near %q) = %.3f <= cos(far %q) = %.3f", c.q, c.near, n, c.far, f)
		}
	}
	// Function words weigh little: two texts sharing only them stay apart.
	vs, _ := e.Embed(context.Background(), []string{"the cat is on the mat", "the stock is on the rise", "a cat on a mat"})
	if cosine(vs[0], vs[2]) <= cosine(vs[0], vs[1]) {
		t.Errorf("content words should dominate function words: %.3f vs %.3f", cosine(vs[0], vs[2]), cosine(vs[0], vs[1]))
	}
}

func TestHashingCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := embed.NewHashing(embed.HashingConfig{}).Embed(ctx, []string{"x"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestHashingConcurrent(t *testing.T) {
	e := embed.NewHashing(embed.HashingConfig{})
	want, _ := e.Embed(context.Background(), []string{"concurrent use is safe"})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				got, err := e.Embed(context.Background(), []string{"concurrent use is safe"})
				if err != nil || cosine(got[0], want[0]) < 0.999999 {
					t.Errorf("concurrent Embed diverged: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
}

func BenchmarkHashingEmbed(b *testing.B) {
	e := embed.NewHashing(embed.HashingConfig{})
	text := []string{"The Broncos defeated the Pittsburgh Steelers in the divisional round, 23–16, by scoring 11 points in the final three minutes of the game. 退款申请流程需要三个工作日。"}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.Embed(ctx, text); err != nil {
			b.Fatal(err)
		}
	}
}

func ExampleHashing() {
	e := embed.NewHashing(embed.HashingConfig{})
	vs, err := e.Embed(context.Background(), []string{
		"How do I reset my password?",
		"Steps to reset a forgotten password",
		"Opening hours of the Berlin office",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("dimension:", e.Dim())
	fmt.Println("paraphrase closer than unrelated text:", cosine(vs[0], vs[1]) > cosine(vs[0], vs[2]))
	// Output:
	// dimension: 384
	// paraphrase closer than unrelated text: true
}
