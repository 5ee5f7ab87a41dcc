package memstore

import (
	"context"
	"sync/atomic"
	"time"
)

// paceShare is the share of the time a compaction works while writers are
// active: after each stretch of work it pauses for as long again (a share
// of 1/2). Writers apply their batches under the write lock on the same
// cores the compaction encodes and copies on; measured with the bench at
// 1M chunks (ad hoc timing, not kept), applying a batch of 1000 took 40 to
// 70 ms beside no compaction and 120 to 250 ms beside an unpaced one.
const paceShare = 0.5

// paceIdle is how recent the last write must be for the compaction to
// pace itself: a compaction with no writer beside it runs flat out.
const paceIdle = time.Second

// writeClock records when the last write was logged, for pacers; its zero
// value means never, and a nil one records nothing.
type writeClock struct{ last atomic.Int64 }

// tick records a write now.
func (c *writeClock) tick() {
	if c != nil {
		c.last.Store(time.Now().UnixNano())
	}
}

// recent reports whether a write was logged within d before now.
func (c *writeClock) recent(now time.Time, d time.Duration) bool {
	if c == nil {
		return false
	}
	last := c.last.Load()
	return last != 0 && now.UnixNano()-last < int64(d)
}

// pacer spreads a compaction's work out while writers are active. The
// work calls wait between pieces; wait pauses for the time the piece took
// times (1-share)/share when the clock saw a recent write.
type pacer struct {
	clock *writeClock // nil: never pause (a nil clock sees no writes)
	share float64
	start time.Time // when the current piece of work began
}

func newPacer(clock *writeClock, share float64) *pacer {
	return &pacer{clock: clock, share: share, start: time.Now()}
}

// wait ends a piece of work, pausing if writers are active, and starts the
// next; it returns early with ctx's error if ctx ends. A nil pacer does
// not pause.
func (p *pacer) wait(ctx context.Context) error {
	if p == nil {
		return nil
	}
	now := time.Now()
	worked := now.Sub(p.start)
	if p.share > 0 && p.share < 1 && p.clock.recent(now, paceIdle) {
		pause := time.Duration(float64(worked) * (1 - p.share) / p.share)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pause):
		}
	}
	p.start = time.Now()
	return nil
}
