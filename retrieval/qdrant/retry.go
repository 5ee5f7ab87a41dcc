package qdrant

import (
	"context"
	"math/rand/v2"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// transient reports whether a call that failed with err may succeed if
// tried again: the server was unreachable or restarting (Unavailable),
// shed load or hit a rate limit (ResourceExhausted), or ran out of its own
// time (DeadlineExceeded) while the caller still has time. An answer about
// the request itself (InvalidArgument, NotFound, FailedPrecondition, ...)
// would be the same the next time.
func transient(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	switch status.Code(err) {
	case codes.Unavailable, codes.ResourceExhausted, codes.DeadlineExceeded:
		return true
	}
	return false
}

// backoff returns the wait before retry number attempt (0 for the first
// retry): full jitter, a uniform draw in [0, ceiling) with the ceiling
// base*2^attempt capped at max. Full jitter spreads the retries of many
// clients that failed at the same moment (a node restart) instead of
// bringing them back together.
func backoff(attempt int, base, max time.Duration) time.Duration {
	ceiling := base
	for range attempt {
		if ceiling >= max/2 {
			ceiling = max
			break
		}
		ceiling *= 2
	}
	ceiling = min(ceiling, max)
	if ceiling <= 0 {
		return 0
	}
	return rand.N(ceiling)
}

// retry runs call, and again after a backoff while it fails with a
// transient error and retries remain. The wait ends at once when ctx
// does; the error returned is then the last call's, and wrapErr reports
// the context's error first. tries reports how many calls were made.
func (s *Store) retry(ctx context.Context, call func(context.Context) error) (tries int, err error) {
	for attempt := 0; ; attempt++ {
		err = call(ctx)
		tries++
		if err == nil || attempt >= s.cfg.Retries || !transient(ctx, err) {
			return tries, err
		}
		t := time.NewTimer(backoff(attempt, s.cfg.RetryBase, s.cfg.RetryMax))
		select {
		case <-ctx.Done():
			t.Stop()
			return tries, err
		case <-t.C:
		}
	}
}
