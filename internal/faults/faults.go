// Package faults wraps the pipeline's seams so that tests can make them
// fail the way real backends do: errors, outages, timeouts, slowness,
// malformed payloads, partial results and panics.
//
// Each wrapper takes the real part and an *Injector that says which fault
// to inject and on which calls:
//
//	in := &faults.Injector{Kind: faults.Timeout}
//	deps.Docs = faults.Searcher(k.Docs, in)
//
// A wrapper passes calls through unchanged while its injector is idle
// (Kind None, or outside After/Times) and for the kinds it does not
// implement; KindsOf lists the kinds each seam implements.
package faults

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// Kind is a fault to inject.
type Kind string

// Kinds of fault. Every seam implements Error, Unavailable, Timeout, Slow
// and Panic; the malformed kinds apply where the seam returns that kind of
// payload (see KindsOf).
const (
	None        Kind = ""
	Error       Kind = "error"        // a plain error: Injector.Err, else ErrInjected
	Unavailable Kind = "unavailable"  // the seam's outage sentinel (retrieval.ErrUnavailable, llm.ErrUnavailable)
	Refused     Kind = "refused"      // the model declines (llm.ErrRefused)
	Timeout     Kind = "timeout"      // block until the context ends and return its error
	Slow        Kind = "slow"         // wait Injector.Delay (or until the context ends), then call through
	Panic       Kind = "panic"        // panic with a PanicValue
	Partial     Kind = "partial"      // fewer results than asked: half the hits, vectors or relevances; half the answer
	Empty       Kind = "empty"        // nothing: no hits, no vectors, empty text, the zero record or profile
	WrongCount  Kind = "wrong_count"  // one vector more than texts
	WrongLength Kind = "wrong_length" // vectors one element short
	NaN         Kind = "nan"          // NaN in vectors, scores, relevances or confidences
	OutOfRange  Kind = "out_of_range" // relevances outside [0, 1]
	Unknown     Kind = "unknown"      // a hit that was not asked for: an unknown id from a reranker, a duplicate from a store
	Garbage     Kind = "garbage"      // text of control characters, invalid UTF-8 and forged markers; an invalid profile; a record of another kind and id
)

// ErrInjected is the error an Error fault returns when Injector.Err is nil.
var ErrInjected = errors.New("faults: injected failure")

// PanicValue is what a Panic fault panics with.
type PanicValue struct{ Seam string }

func (p PanicValue) String() string { return "faults: injected panic in " + p.Seam }

// DefaultDelay is a Slow fault's delay when Injector.Delay is zero.
const DefaultDelay = 20 * time.Millisecond

// Injector decides, call by call, whether a seam faults and how. Its
// fields are read on every call, so set them before use; the counters are
// safe for concurrent use.
type Injector struct {
	Kind  Kind
	Err   error         // for Error; nil: ErrInjected
	Delay time.Duration // for Slow; 0: DefaultDelay
	// After is how many calls pass through before the faults start.
	After int
	// Times is how many calls fault once they started; 0: every one.
	Times int

	calls, faulted atomic.Int64
}

// Calls returns how many calls the wrapped seam received.
func (in *Injector) Calls() int { return int(in.calls.Load()) }

// Faulted returns how many of them were faulted.
func (in *Injector) Faulted() int { return int(in.faulted.Load()) }

// next counts a call and returns the fault to inject on it (None for a
// call that passes through).
func (in *Injector) next() Kind {
	if in == nil {
		return None
	}
	n := int(in.calls.Add(1))
	if in.Kind == None || n <= in.After || in.Times > 0 && n > in.After+in.Times {
		return None
	}
	in.faulted.Add(1)
	return in.Kind
}

// common injects the faults every seam shares. It returns handled = true
// when the call must return err without calling through; for Slow it
// waits first and lets the call through.
func (in *Injector) common(ctx context.Context, k Kind, seam string, unavailable error) (handled bool, err error) {
	switch k {
	case Error:
		if in.Err != nil {
			return true, fmt.Errorf("%s: %w", seam, in.Err)
		}
		return true, fmt.Errorf("%s: %w", seam, ErrInjected)
	case Unavailable:
		return true, fmt.Errorf("%s: injected outage: %w", seam, unavailable)
	case Timeout:
		<-ctx.Done()
		return true, fmt.Errorf("%s: %w", seam, ctx.Err())
	case Slow:
		d := in.Delay
		if d <= 0 {
			d = DefaultDelay
		}
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return true, fmt.Errorf("%s: %w", seam, ctx.Err())
		case <-t.C:
		}
	case Panic:
		panic(PanicValue{Seam: seam})
	}
	return false, nil
}

// Seams a wrapper can stand for, as KindsOf names them.
const (
	SeamModel      = "model"
	SeamEmbedder   = "embedder"
	SeamReranker   = "reranker"
	SeamStore      = "store"
	SeamLookup     = "lookup"
	SeamCalibrator = "calibrator"
	SeamClassifier = "classifier"
)

var shared = []Kind{Error, Unavailable, Timeout, Slow, Panic}

// KindsOf lists the kinds of fault a seam's wrapper implements.
func KindsOf(seam string) []Kind {
	more := map[string][]Kind{
		SeamModel:      {Refused, Partial, Empty, Garbage},
		SeamEmbedder:   {Partial, Empty, WrongCount, WrongLength, NaN},
		SeamReranker:   {Partial, Empty, NaN, Unknown},
		SeamStore:      {Partial, Empty, NaN, Unknown},
		SeamLookup:     {Empty, Garbage},
		SeamCalibrator: {Partial, NaN, OutOfRange},
		SeamClassifier: {Empty, NaN, Garbage},
	}[seam]
	return append(append([]Kind(nil), shared...), more...)
}
