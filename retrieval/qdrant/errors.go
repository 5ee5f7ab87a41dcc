package qdrant

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/adaptrag/adaptrag/retrieval"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// OpError reports a failed store operation with the operation and the
// collection it ran on. Err matches the retrieval sentinels and context
// errors with errors.Is, and still wraps the gRPC error for errors.As.
type OpError struct {
	Op         string // "upsert", "search dense", "delete document", ...
	Collection string
	// Tries is the number of calls made, retries included; 0 when the
	// operation failed before any call.
	Tries int
	Err   error
}

// Error returns "qdrant: <op> <collection>: <err>", with " (<n> tries)"
// after the collection when the call was retried.
func (e *OpError) Error() string {
	tries := ""
	if e.Tries > 1 {
		tries = " (" + strconv.Itoa(e.Tries) + " tries)"
	}
	return "qdrant: " + e.Op + " " + e.Collection + tries + ": " + e.Err.Error()
}

// Unwrap returns the underlying error.
func (e *OpError) Unwrap() error { return e.Err }

// Timeout reports whether the operation ran out of time, as
// net.Error and fs.PathError do.
func (e *OpError) Timeout() bool { return errors.Is(e.Err, context.DeadlineExceeded) }

// wrapErr classifies err from the go-client into an *OpError whose chain
// holds a sentinel: the caller's context error first (a call that failed
// because ctx ended reports that, whatever the transport said), then the
// gRPC status code.
func (s *Store) wrapErr(ctx context.Context, op string, err error) error {
	if err == nil {
		return nil
	}
	var kind error
	if cerr := ctx.Err(); cerr != nil {
		kind = cerr
	} else {
		switch status.Code(err) {
		case codes.Unavailable:
			kind = retrieval.ErrUnavailable
		case codes.DeadlineExceeded:
			kind = context.DeadlineExceeded
		case codes.Canceled:
			kind = context.Canceled
		case codes.NotFound:
			kind = retrieval.ErrNotFound
		case codes.InvalidArgument:
			kind = retrieval.ErrInvalid
		}
	}
	if kind != nil && !errors.Is(err, kind) {
		err = fmt.Errorf("%w: %w", kind, err)
	}
	return &OpError{Op: op, Collection: s.cfg.Collection, Err: err}
}

// opErr builds an *OpError for a failure detected before any call.
func (s *Store) opErr(op string, format string, args ...any) error {
	return &OpError{Op: op, Collection: s.cfg.Collection, Err: fmt.Errorf(format, args...)}
}
