package memstore

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestPacer: a pacer pauses as long as the work took (a share of 1/2)
// only while writes are recent, and not at all without a clock or when nil.
func TestPacer(t *testing.T) {
	ctx := context.Background()
	const work = 20 * time.Millisecond
	timed := func(p *pacer) (time.Duration, error) {
		p.start = time.Now().Add(-work) // as if a piece of work had just taken 20 ms
		t0 := time.Now()
		err := p.wait(ctx)
		return time.Since(t0), err
	}
	var clock writeClock
	p := newPacer(&clock, 0.5)
	if d, err := timed(p); err != nil || d >= work/2 {
		t.Errorf("no write yet: wait took %v (%v), want no pause", d, err)
	}
	clock.tick()
	if d, err := timed(p); err != nil || d < work*9/10 {
		t.Errorf("a write just now: wait took %v (%v), want a pause of about %v", d, err, work)
	}
	clock.last.Store(time.Now().Add(-2 * paceIdle).UnixNano())
	if d, err := timed(p); err != nil || d >= work/2 {
		t.Errorf("last write %v ago: wait took %v (%v), want no pause", 2*paceIdle, d, err)
	}
	if d, err := timed(newPacer(nil, 0.5)); err != nil || d >= work/2 {
		t.Errorf("no clock: wait took %v (%v), want no pause", d, err)
	}
	if err := (*pacer)(nil).wait(ctx); err != nil {
		t.Errorf("nil pacer: %v", err)
	}
	clock.tick()
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	p.start = time.Now().Add(-time.Hour)
	if err := p.wait(cctx); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled during a pause: %v, want context.Canceled", err)
	}
}
