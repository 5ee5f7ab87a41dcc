package graph

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"
)

// position is where a run goes on from a checkpoint: the node it executes
// next (End when done), or the fan-out declared on FanOut.
type position struct {
	To     string `json:"to,omitempty"`
	From   string `json:"from,omitempty"`
	Label  string `json:"label,omitempty"`
	FanOut string `json:"fanout,omitempty"`
}

// branchRecord is one branch of the fan-out a checkpoint stops in: done,
// with its final state (a pending write), or to go on from Pos with State.
type branchRecord struct {
	Done  bool     `json:"done,omitempty"`
	Pos   position `json:"pos"`
	State []byte   `json:"state"`
}

type storedInterrupt struct {
	ID      string          `json:"id"`
	Kind    InterruptKind   `json:"kind"`
	Node    string          `json:"node"`
	Key     string          `json:"key"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// record is the engine's part of a checkpoint (Checkpoint.Run).
type record struct {
	V          int                        `json:"v"`
	Pos        position                   `json:"pos"`
	Branches   []branchRecord             `json:"branches,omitempty"`
	Interrupts []storedInterrupt          `json:"interrupts,omitempty"`
	Answers    map[string]json.RawMessage `json:"answers,omitempty"`
	Error      string                     `json:"error,omitempty"`
}

const recordVersion = 1

func (rec *record) interrupts() []InterruptInfo {
	out := make([]InterruptInfo, len(rec.Interrupts))
	for i, s := range rec.Interrupts {
		out[i] = InterruptInfo{ID: s.ID, Kind: s.Kind, Node: s.Node, key: s.Key}
		if s.Payload != nil {
			out[i].Payload = s.Payload
		}
	}
	return out
}

func decodeRecord(c Checkpoint) (*record, error) {
	var rec record
	if err := json.Unmarshal(c.Run, &rec); err != nil {
		return nil, &DecodeError{Thread: c.Thread, ID: c.ID, Err: fmt.Errorf("run record: %w", err)}
	}
	if rec.V != recordVersion {
		return nil, &DecodeError{Thread: c.Thread, ID: c.ID, Err: fmt.Errorf("run record version %d, this engine reads %d", rec.V, recordVersion)}
	}
	return &rec, nil
}

// branchOut is a fan-out branch's outcome as the run holds it.
type branchOut[S any] struct {
	done  bool
	pos   position
	state S
}

// halt is the error of a walk that stopped at pos (the walk returns the
// state there): for interrupts, or, with cause set, for a fan-out that
// failed after some branches finished (their writes are kept).
type halt[S any] struct {
	pos      position
	ints     []InterruptInfo
	branches []branchOut[S] // when pos is a fan-out
	cause    error
}

func (h *halt[S]) Error() string {
	if h.cause != nil {
		return h.cause.Error()
	}
	return fmt.Sprintf("graph: run stopped for %d interrupt(s)", len(h.ints))
}

func (h *halt[S]) Unwrap() error { return h.cause }

// session is a run's link to its thread: what it loaded and how it saves.
type session[S any] struct {
	r      *Runnable[S]
	cp     Checkpointer
	thread string
	mode   Durability
	head   string // the thread's head as this run knows it
	parent string // the checkpoint the next one follows

	// async writes
	queue chan Checkpoint
	wg    sync.WaitGroup
	mu    sync.Mutex
	err   error
	last  *Checkpoint // DurabilityExit: the checkpoint to write at exit
}

func (ss *session[S]) encode(s S) ([]byte, error) {
	return ss.r.codec.Marshal(s)
}

func (ss *session[S]) decode(c Checkpoint, data []byte) (S, error) {
	var s S
	if c.Codec != ss.r.codec.Name() {
		return s, &DecodeError{Thread: c.Thread, ID: c.ID, Err: fmt.Errorf("written by codec %q, the graph uses %q", c.Codec, ss.r.codec.Name())}
	}
	if c.Version != ss.r.version {
		return s, &DecodeError{Thread: c.Thread, ID: c.ID, Err: fmt.Errorf("state version %q, the graph is at %q", c.Version, ss.r.version)}
	}
	if err := ss.r.codec.Unmarshal(data, &s); err != nil {
		return s, &DecodeError{Thread: c.Thread, ID: c.ID, Err: err}
	}
	return s, nil
}

// checkpoint builds the checkpoint of state s at pos.
func (ss *session[S]) checkpoint(st Status, step int, pos position, s S, h *halt[S], set *resumeSet, cause error) (Checkpoint, error) {
	rec := record{V: recordVersion, Pos: pos}
	state, err := ss.encode(s)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("%w: encode state: %w", ErrCheckpoint, err)
	}
	next := []string{}
	switch {
	case pos.FanOut != "":
		next = append(next, ss.r.fanOutTargets(pos.FanOut)...)
	case pos.To != End && pos.To != "":
		next = append(next, pos.To)
	}
	if h != nil {
		for _, b := range h.branches {
			data, err := ss.encode(b.state)
			if err != nil {
				return Checkpoint{}, fmt.Errorf("%w: encode branch state: %w", ErrCheckpoint, err)
			}
			rec.Branches = append(rec.Branches, branchRecord{Done: b.done, Pos: b.pos, State: data})
		}
		for _, in := range h.ints {
			si := storedInterrupt{ID: in.ID, Kind: in.Kind, Node: in.Node, Key: in.key}
			if in.Payload != nil {
				if si.Payload, err = json.Marshal(in.Payload); err != nil {
					return Checkpoint{}, fmt.Errorf("%w: encode interrupt payload: %w", ErrCheckpoint, err)
				}
			}
			rec.Interrupts = append(rec.Interrupts, si)
		}
	}
	if set != nil && st != StatusRunning && st != StatusDone {
		if rec.Answers, err = set.snapshot(); err != nil {
			return Checkpoint{}, fmt.Errorf("%w: %w", ErrCheckpoint, err)
		}
	}
	if cause != nil {
		rec.Error = cause.Error()
	}
	run, err := json.Marshal(rec)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("%w: encode record: %w", ErrCheckpoint, err)
	}
	return Checkpoint{
		Thread: ss.thread, ID: newID(), Parent: ss.parent, Graph: ss.r.name, Step: step, Status: st,
		Next: next, Codec: ss.r.codec.Name(), Version: ss.r.version, State: state, Run: run, Created: time.Now().UTC(),
	}, nil
}

// save writes c as the durability mode says; with DurabilitySync the error
// is the Put's.
func (ss *session[S]) save(ctx context.Context, c Checkpoint, final bool) error {
	ss.parent = c.ID
	switch ss.mode {
	case DurabilityExit:
		if !final {
			ss.last = &c
			return nil
		}
		ss.last = nil
	case DurabilityAsync:
		if !final {
			ss.startWriter(ctx)
			ss.queue <- c
			return nil
		}
		ss.drain()
		if err := ss.asyncErr(); err != nil {
			return err
		}
	}
	return ss.put(ctx, c)
}

func (ss *session[S]) put(ctx context.Context, c Checkpoint) error {
	if err := ss.cp.Put(ctx, c, ss.head); err != nil {
		return fmt.Errorf("%w: thread %q, checkpoint %s: %w", ErrCheckpoint, ss.thread, c.ID, err)
	}
	ss.head = c.ID
	return nil
}

func (ss *session[S]) startWriter(ctx context.Context) {
	if ss.queue != nil {
		return
	}
	ss.queue = make(chan Checkpoint, 64)
	ctx = context.WithoutCancel(ctx)
	ss.wg.Add(1)
	go func() {
		defer ss.wg.Done()
		for c := range ss.queue {
			if ss.asyncErr() != nil {
				continue // the thread's head is unknown now; keep no later state
			}
			if err := ss.put(ctx, c); err != nil {
				ss.mu.Lock()
				ss.err = err
				ss.mu.Unlock()
			}
		}
	}()
}

func (ss *session[S]) asyncErr() error {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.err
}

// drain waits for the background writes.
func (ss *session[S]) drain() {
	if ss.queue != nil {
		close(ss.queue)
		ss.wg.Wait()
		ss.queue = nil
	}
}

// finish writes what the run still owes its thread when it returns: the
// final checkpoint, or, after a failure, the last boundary (DurabilityExit)
// and the async writes.
func (ss *session[S]) finish(ctx context.Context) error {
	ss.drain()
	if err := ss.asyncErr(); err != nil {
		return err
	}
	if ss.last != nil {
		c := *ss.last
		ss.last = nil
		return ss.put(context.WithoutCancel(ctx), c)
	}
	return nil
}

// start is where a run on a thread begins.
type start[S any] struct {
	fresh    bool // run from Start on the input
	state    S
	pos      position
	steps    int
	branches []branchOut[S]
	set      *resumeSet
}

// open loads the thread for a run and decides where it starts.
func (r *Runnable[S]) open(ctx context.Context, o *runOptions, in S) (*session[S], *start[S], error) {
	if r.checkpointer == nil {
		return nil, nil, fmt.Errorf("%w (thread %q)", ErrNoCheckpointer, o.thread)
	}
	mode := r.durability
	if o.hasDur {
		mode = o.durability
	}
	ss := &session[S]{r: r, cp: r.checkpointer, thread: o.thread, mode: mode}
	latest, err := r.checkpointer.Latest(ctx, o.thread)
	switch {
	case errors.Is(err, ErrNoCheckpoint):
		if o.resuming || o.from != "" {
			return nil, nil, fmt.Errorf("%w: thread %q has no checkpoint", ErrNothingToResume, o.thread)
		}
		return ss, &start[S]{fresh: true, state: in, set: newResumeSet()}, nil
	case err != nil:
		return nil, nil, fmt.Errorf("%w: load thread %q: %w", ErrCheckpoint, o.thread, err)
	}
	ss.head, ss.parent = latest.ID, latest.ID
	from := latest
	if o.from != "" && o.from != latest.ID {
		if from, err = r.checkpointer.Get(ctx, o.thread, o.from); err != nil {
			return nil, nil, fmt.Errorf("%w: load checkpoint %s of thread %q: %w", ErrCheckpoint, o.from, o.thread, err)
		}
		ss.parent = from.ID
	}
	rec, err := decodeRecord(from)
	if err != nil {
		return nil, nil, err
	}
	state, err := ss.decode(from, from.State)
	if err != nil {
		return nil, nil, err
	}
	done := from.Status == StatusDone
	if !o.resuming && o.from == "" {
		if !done {
			return nil, nil, fmt.Errorf("%w: thread %q stopped at checkpoint %s (%s); resume it or fork from a checkpoint", ErrUnfinished, o.thread, from.ID, from.Status)
		}
		if o.carry != nil {
			carry, ok := o.carry.(func(S, S) S)
			if !ok {
				return nil, nil, fmt.Errorf("graph: WithCarry given %T, want %T", o.carry, carry)
			}
			in = carry(state, in)
		}
		return ss, &start[S]{fresh: true, state: in, set: newResumeSet()}, nil
	}
	if done && o.from == "" {
		return nil, nil, fmt.Errorf("%w: the last run of thread %q finished", ErrNothingToResume, o.thread)
	}
	if o.edit != nil {
		edit, ok := o.edit.(func(S) S)
		if !ok {
			return nil, nil, fmt.Errorf("graph: WithEdit given %T, want %T", o.edit, edit)
		}
		state = edit(state)
	}
	st := &start[S]{state: state, pos: rec.Pos, steps: from.Step, set: newResumeSet()}
	if _, err := r.position(rec.Pos); err != nil {
		return nil, nil, &DecodeError{Thread: from.Thread, ID: from.ID, Err: err}
	}
	for _, b := range rec.Branches {
		bs, err := ss.decode(from, b.State)
		if err != nil {
			return nil, nil, err
		}
		st.branches = append(st.branches, branchOut[S]{done: b.Done, pos: b.Pos, state: bs})
	}
	for k, v := range rec.Answers {
		st.set.put(k, v)
	}
	byID := map[string]storedInterrupt{}
	for _, in := range rec.Interrupts {
		byID[in.ID] = in
		st.set.setID(in.Key, in.ID)
	}
	for id, v := range o.resume {
		in, ok := byID[id]
		if !ok {
			return nil, nil, fmt.Errorf("%w: %q (checkpoint %s of thread %q)", ErrUnknownInterrupt, id, from.ID, o.thread)
		}
		st.set.put(in.Key, v)
	}
	return ss, st, nil
}

// where is a position resolved to the walk's terms.
type where[S any] struct {
	to    int
	from  string
	label string
	nx    *next[S]
}

// position resolves pos against the graph; a name it does not have means
// the checkpoint was taken by another graph.
func (r *Runnable[S]) position(pos position) (where[S], error) {
	if pos.FanOut != "" {
		if pos.FanOut == Start {
			return where[S]{to: fanOutIdx, from: Start, nx: &r.start}, nil
		}
		i, ok := r.index[pos.FanOut]
		if !ok || r.nodes[i].next.kind != toFanOut {
			return where[S]{}, fmt.Errorf("no fan-out at node %q in graph %s", pos.FanOut, r.name)
		}
		return where[S]{to: fanOutIdx, from: pos.FanOut, nx: &r.nodes[i].next}, nil
	}
	if pos.To == End {
		return where[S]{to: endIdx, from: pos.From, label: pos.Label}, nil
	}
	i, ok := r.index[pos.To]
	if !ok {
		return where[S]{}, fmt.Errorf("no node %q in graph %s", pos.To, r.name)
	}
	return where[S]{to: i, from: pos.From, label: pos.Label}, nil
}

// posOf is the position of target to (as resolve returns it) reached from
// node from over label.
func (r *Runnable[S]) posOf(to int, from, label string) position {
	switch to {
	case fanOutIdx:
		return position{FanOut: from}
	case endIdx:
		return position{To: End, From: from, Label: label}
	}
	return position{To: r.nodes[to].name, From: from, Label: label}
}

func (r *Runnable[S]) fanOutTargets(from string) []string {
	nx := &r.start
	if from != Start {
		i, ok := r.index[from]
		if !ok {
			return nil
		}
		nx = &r.nodes[i].next
	}
	out := make([]string, 0, len(nx.branches))
	for _, b := range nx.branches {
		out = append(out, r.nodes[b].name)
	}
	return out
}

// Resume continues the unfinished run of thread: one that was interrupted
// (values answer its interrupts by id; unanswered ones interrupt again),
// paused, failed, or whose process died. It returns as Invoke does.
func (r *Runnable[S]) Resume(ctx context.Context, thread string, values map[string]any, opts ...RunOption) (S, error) {
	var zero S
	opts = append(append([]RunOption(nil), opts...), WithThread(thread), WithResume(values))
	return r.Invoke(ctx, zero, opts...)
}

// Snapshot is a decoded checkpoint.
type Snapshot[S any] struct {
	Checkpoint Checkpoint      // as stored
	State      S               // the decoded state
	Interrupts []InterruptInfo // what the run waits for, payloads as json.RawMessage
	Error      string          // the failure a failed checkpoint records
}

// Snapshot returns the checkpoint id of thread decoded ("" for the latest).
func (r *Runnable[S]) Snapshot(ctx context.Context, thread, id string) (Snapshot[S], error) {
	var snap Snapshot[S]
	if r.checkpointer == nil {
		return snap, ErrNoCheckpointer
	}
	var c Checkpoint
	var err error
	if id == "" {
		c, err = r.checkpointer.Latest(ctx, thread)
	} else {
		c, err = r.checkpointer.Get(ctx, thread, id)
	}
	if err != nil {
		return snap, err
	}
	rec, err := decodeRecord(c)
	if err != nil {
		return snap, err
	}
	ss := &session[S]{r: r}
	if snap.State, err = ss.decode(c, c.State); err != nil {
		return snap, err
	}
	snap.Checkpoint, snap.Interrupts, snap.Error = c, rec.interrupts(), rec.Error
	return snap, nil
}

// History returns the checkpoints of thread, newest first (Checkpointer.List).
func (r *Runnable[S]) History(ctx context.Context, thread string) ([]Checkpoint, error) {
	if r.checkpointer == nil {
		return nil, ErrNoCheckpointer
	}
	return r.checkpointer.List(ctx, thread)
}
