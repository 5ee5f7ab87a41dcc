package llm_test

import (
	"context"
	"sync"
	"testing"

	"github.com/adaptrag/adaptrag/llm"
)

// Charges from many goroutines under one context add up exactly.
func TestMeterConcurrentCharges(t *testing.T) {
	m := &llm.Meter{}
	ctx := llm.WithMeter(context.Background(), m)
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				llm.Charge(ctx, llm.Usage{InputTokens: 2, OutputTokens: 1})
			}
		}()
	}
	wg.Wait()
	if u := m.Usage(); u.InputTokens != 3200 || u.OutputTokens != 1600 {
		t.Errorf("usage %+v, want 3200/1600", u)
	}
	llm.Charge(context.Background(), llm.Usage{InputTokens: 1}) // no meter: nothing to do
}
