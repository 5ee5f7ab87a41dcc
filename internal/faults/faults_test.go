package faults_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/adaptrag/adaptrag/internal/faults"
	"github.com/adaptrag/adaptrag/llm"
	"github.com/adaptrag/adaptrag/retrieval"
)

type fixedEmbedder struct{}

func (fixedEmbedder) Dim() int { return 3 }
func (fixedEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = []float32{1, 2, 3}
	}
	return out, nil
}

// After and Times choose the calls that fault; the others pass through.
func TestInjectorWindow(t *testing.T) {
	in := &faults.Injector{Kind: faults.Unavailable, After: 2, Times: 2}
	e := faults.Embedder(fixedEmbedder{}, in)
	var got []bool
	for range 6 {
		_, err := e.Embed(context.Background(), []string{"x"})
		if err != nil && !errors.Is(err, retrieval.ErrUnavailable) {
			t.Fatalf("err = %v", err)
		}
		got = append(got, err != nil)
	}
	want := []bool{false, false, true, true, false, false}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("faulted calls %v, want %v", got, want)
		}
	}
	if in.Calls() != 6 || in.Faulted() != 2 {
		t.Errorf("calls %d, faulted %d", in.Calls(), in.Faulted())
	}
}

// A timeout waits for the context; a slow call that outlives its context
// reports the context's error; the model's outage is llm.ErrUnavailable.
func TestTimeoutsAndSentinels(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	// The deadline, not a clock read after it was set, is what the call must
	// outlast: the context starts counting before the test can read the time.
	deadline, _ := ctx.Deadline()
	_, err := faults.Embedder(fixedEmbedder{}, &faults.Injector{Kind: faults.Timeout}).Embed(ctx, []string{"x"})
	if !errors.Is(err, context.DeadlineExceeded) || time.Now().Before(deadline) {
		t.Errorf("timeout: %v, %v before the deadline", err, time.Until(deadline))
	}
	ctx2, cancel2 := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel2()
	_, err = faults.Embedder(fixedEmbedder{}, &faults.Injector{Kind: faults.Slow, Delay: time.Second}).Embed(ctx2, []string{"x"})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("slow past the deadline: %v", err)
	}
	m := faults.Model(llm.GeneratorFunc(func(context.Context, llm.Request) (llm.Response, error) { return llm.Response{Text: "ok"}, nil }),
		&faults.Injector{Kind: faults.Unavailable})
	if _, err := m.Generate(context.Background(), llm.Request{}); !errors.Is(err, llm.ErrUnavailable) {
		t.Errorf("model outage: %v", err)
	}
	defer func() {
		if _, ok := recover().(faults.PanicValue); !ok {
			t.Error("no PanicValue")
		}
	}()
	faults.Embedder(fixedEmbedder{}, &faults.Injector{Kind: faults.Panic}).Embed(context.Background(), nil)
}
