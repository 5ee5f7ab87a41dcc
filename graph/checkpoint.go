package graph

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"
)

// Checkpoint errors.
var (
	// ErrNoCheckpoint is returned by a Checkpointer when a thread (or a
	// checkpoint of it) does not exist.
	ErrNoCheckpoint = errors.New("graph: no such checkpoint")
	// ErrConflict is matched by every *ConflictError: another writer moved
	// the thread's head since this run read it.
	ErrConflict = errors.New("graph: checkpoint conflict")
	// ErrDecode is matched by every *DecodeError: a checkpoint that cannot
	// be turned back into a state. The run fails; it never starts afresh.
	ErrDecode = errors.New("graph: checkpoint cannot be decoded")
	// ErrNoCheckpointer is returned by a run given a thread when the graph
	// was compiled without Config.Checkpointer.
	ErrNoCheckpointer = errors.New("graph: a thread needs Config.Checkpointer")
	// ErrUnfinished is returned by Invoke or Stream given new input on a
	// thread whose last run has not finished (it was interrupted, paused,
	// failed or killed): Resume it, or fork from a checkpoint.
	ErrUnfinished = errors.New("graph: the thread has an unfinished run")
	// ErrNothingToResume is returned by Resume on a thread whose last run
	// finished, or that has no checkpoint.
	ErrNothingToResume = errors.New("graph: nothing to resume")
	// ErrUnknownInterrupt is returned by Resume given a value for an
	// interrupt id the checkpoint does not wait for.
	ErrUnknownInterrupt = errors.New("graph: unknown interrupt id")
	// ErrDurability is the build error of a Config.Durability that is not
	// one of the modes.
	ErrDurability = errors.New("graph: unknown durability mode")
	// ErrCheckpoint is matched by errors of the Checkpointer while a run
	// saves its state.
	ErrCheckpoint = errors.New("graph: saving a checkpoint failed")
)

// Status says how a run stood when a checkpoint was taken.
type Status string

// The statuses of a checkpoint.
const (
	StatusRunning     Status = "running"     // taken between two steps
	StatusInterrupted Status = "interrupted" // waits for Resume
	StatusFailed      Status = "failed"      // a step failed; Resume retries it
	StatusDone        Status = "done"        // the run reached End
)

// Checkpoint is a saved run state of a thread, taken at a step boundary: the
// state after one node (or after a fan-out's merge, never in the middle of
// one) and where the run goes next. Checkpointers store it as it is; only
// the engine reads Run.
type Checkpoint struct {
	Thread  string    // the thread it belongs to
	ID      string    // unique within the thread
	Parent  string    // the checkpoint it follows; "" for a thread's first
	Graph   string    // the name of the graph that took it
	Step    int       // node steps executed so far in the run
	Status  Status    // how the run stood
	Next    []string  // the nodes the run executes next; empty when done
	Codec   string    // the Codec's name that encoded State
	Version string    // Config.StateVersion when it was taken
	State   []byte    // the encoded state
	Run     []byte    // the engine's record: position, pending writes, interrupts
	Created time.Time // when the engine took it
}

// Interrupts returns the interrupts the checkpoint waits for, with their
// payloads as json.RawMessage.
func (c Checkpoint) Interrupts() ([]InterruptInfo, error) {
	rec, err := decodeRecord(c)
	if err != nil {
		return nil, err
	}
	return rec.interrupts(), nil
}

// Checkpointer stores the checkpoints of threads. Implementations must be
// safe for concurrent use, also by several processes sharing one store:
// Put must be atomic (a checkpoint is stored whole or not at all) and
// conditional on the thread's head. The package checkpoint of this module
// holds SQLite and PostgreSQL implementations and a conformance suite;
// NewMemoryCheckpointer is the in-process one.
type Checkpointer interface {
	// Put stores cp as the new head of cp.Thread, provided head is the
	// thread's current head ("" for a thread with no checkpoint). When it
	// is not, Put stores nothing and returns a *ConflictError.
	Put(ctx context.Context, cp Checkpoint, head string) error
	// Latest returns the head of the thread: the checkpoint put last. It
	// returns an error matching ErrNoCheckpoint for an unknown thread.
	Latest(ctx context.Context, thread string) (Checkpoint, error)
	// Get returns one checkpoint of the thread, or an error matching
	// ErrNoCheckpoint.
	Get(ctx context.Context, thread, id string) (Checkpoint, error)
	// List returns the thread's checkpoints, newest first (nil for an
	// unknown thread). Parent links give the history, forks included.
	List(ctx context.Context, thread string) ([]Checkpoint, error)
	// Delete removes the thread and its checkpoints; deleting an unknown
	// thread is not an error.
	Delete(ctx context.Context, thread string) error
}

// ConflictError reports a Put whose expected head was not the thread's: a
// concurrent writer got there first. Nothing was stored.
type ConflictError struct {
	Thread string
	Want   string // the head the writer expected
	Head   string // the head found, when the store reports it
}

// Error names the thread and both heads.
func (e *ConflictError) Error() string {
	return fmt.Sprintf("graph: checkpoint conflict on thread %q: expected head %q, found %q", e.Thread, e.Want, e.Head)
}

// Is makes a *ConflictError match ErrConflict.
func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

// DecodeError reports a checkpoint whose state or record cannot be decoded:
// another codec, another state version, or damaged bytes.
type DecodeError struct {
	Thread, ID string
	Err        error
}

// Error names the checkpoint and the cause.
func (e *DecodeError) Error() string {
	return fmt.Sprintf("graph: checkpoint %s of thread %q cannot be decoded: %v", e.ID, e.Thread, e.Err)
}

// Is makes a *DecodeError match ErrDecode.
func (e *DecodeError) Is(target error) bool { return target == ErrDecode }

// Unwrap returns the cause.
func (e *DecodeError) Unwrap() error { return e.Err }

// Codec encodes states for checkpoints. Name is recorded with every
// checkpoint; a checkpoint written by another codec is not decoded.
type Codec interface {
	Name() string
	Marshal(v any) ([]byte, error)
	Unmarshal(data []byte, v any) error
}

// JSONCodec encodes states with encoding/json; it is the default Codec.
// Unexported fields are not saved: give the state exported fields, or use
// another Codec.
type JSONCodec struct{}

// Name returns "json".
func (JSONCodec) Name() string { return "json" }

// Marshal encodes v as JSON.
func (JSONCodec) Marshal(v any) ([]byte, error) { return json.Marshal(v) }

// Unmarshal decodes JSON into v.
func (JSONCodec) Unmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }

// Durability says when a run on a thread saves its checkpoints.
type Durability uint8

// The durability modes.
const (
	// DurabilitySync saves a checkpoint after every step (each node, each
	// fan-out as a whole) before the next one starts: a crash loses at most
	// the step in flight. The zero value.
	DurabilitySync Durability = iota
	// DurabilityAsync saves after every step in the background, in order,
	// while the next step runs; the run waits for the writes before it
	// returns. A crash may lose the last steps' checkpoints, never corrupt
	// one.
	DurabilityAsync
	// DurabilityExit saves once, when the run returns (finished,
	// interrupted, paused or failed). A crash loses the whole run.
	DurabilityExit
)

// String names the mode.
func (d Durability) String() string {
	switch d {
	case DurabilitySync:
		return "sync"
	case DurabilityAsync:
		return "async"
	case DurabilityExit:
		return "exit"
	}
	return "durability(" + strconv.Itoa(int(d)) + ")"
}

// RunOption configures one run: its thread, a resume, a fork.
type RunOption func(*runOptions)

type runOptions struct {
	thread     string
	from       string
	resume     map[string]any
	resuming   bool
	durability Durability
	hasDur     bool
	pause      *Pause
	carry      any // func(prev, in S) S
	edit       any // func(S) S
	// readOnly: events carry the run's own states, not Config.Clone's copies.
	readOnly bool
}

// WithThread runs on the thread id: checkpoints are saved to
// Config.Checkpointer, and a thread whose last run finished starts the new
// run from the input (see WithCarry to carry the previous state over).
func WithThread(id string) RunOption { return func(o *runOptions) { o.thread = id } }

// WithCheckpoint starts from the checkpoint id of the thread instead of its
// latest: time travel. With Resume (or WithResume) the run continues from
// there, forking the thread: its new checkpoints have that one as parent,
// and the thread's head moves to the fork. The run starts from that
// checkpoint's state (Invoke's input is not used; change the state with
// WithEdit).
func WithCheckpoint(id string) RunOption { return func(o *runOptions) { o.from = id } }

// WithResume continues the thread's unfinished run, answering interrupts by
// id (a nil map answers none: the run of a crashed or paused process goes
// on). It is what Runnable.Resume passes; use it with Stream.
func WithResume(values map[string]any) RunOption {
	return func(o *runOptions) { o.resume, o.resuming = values, true }
}

// WithDurability overrides Config.Durability for one run.
func WithDurability(d Durability) RunOption {
	return func(o *runOptions) { o.durability, o.hasDur = d, true }
}

// WithPause lets p pause the run from outside (see Pause).
func WithPause(p *Pause) RunOption { return func(o *runOptions) { o.pause = p } }

// WithCarry sets how a new run on a thread whose last run finished starts:
// from carry(previous final state, input) instead of the input alone. The
// type parameter must be the graph's state type; a run reports any other.
func WithCarry[S any](carry func(prev, in S) S) RunOption {
	return func(o *runOptions) { o.carry = carry }
}

// WithReadOnlyEvents makes a Stream's events carry the run's own states
// rather than copies: with Config.Clone set, Clone is not called for the
// events (for a node, a copy of its input for NodeStart and one of its
// output for NodeEnd), only for the nodes' inputs. The loop body must then
// treat Event.State as a router does, as read-only, and a state it keeps
// past the event still shares its slices and maps with the run (a merge
// receives the branches' outputs as they were reported). It suits a
// consumer that reads a few fields of each event, such as a progress
// stream. Invoke has no events and ignores it.
func WithReadOnlyEvents() RunOption { return func(o *runOptions) { o.readOnly = true } }

// WithEdit changes the state loaded from a checkpoint before the resumed or
// forked run goes on: time travel with a different past. The type parameter
// must be the graph's state type.
func WithEdit[S any](edit func(S) S) RunOption {
	return func(o *runOptions) { o.edit = edit }
}

// newID returns a checkpoint or interrupt id: time-ordered, with random
// bits so that two processes never collide.
func newID() string {
	return strconv.FormatInt(time.Now().UnixNano(), 36) + "-" + strconv.FormatUint(rand.Uint64()&0xffffffffff, 36)
}
