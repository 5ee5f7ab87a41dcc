package graph

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ErrInterrupted is matched by every *InterruptedError.
var ErrInterrupted = errors.New("graph: run interrupted")

// ErrNotInNode is returned by Interrupt called outside a running node.
var ErrNotInNode = errors.New("graph: Interrupt called outside a running node")

// InterruptKind tells what stopped a run.
type InterruptKind string

// The kinds of interrupts.
const (
	InterruptBefore InterruptKind = "before" // Config.InterruptBefore: the node has not run
	InterruptAfter  InterruptKind = "after"  // Config.InterruptAfter: the node has run
	InterruptNode   InterruptKind = "node"   // the node called Interrupt
	InterruptPause  InterruptKind = "pause"  // a Pause from outside the run
)

// InterruptInfo is one thing a stopped run waits for.
type InterruptInfo struct {
	// ID names the interrupt in Resume's map; it stays the same until the
	// interrupt is answered.
	ID   string
	Kind InterruptKind
	// Node is the node concerned; inside a subgraph, the outer node's name,
	// "/", then the inner one's.
	Node string
	// Payload is what the node passed to Interrupt (or the Pause's reason):
	// the value itself as the run returns it, a json.RawMessage when read
	// back from a checkpoint.
	Payload any
	// key is where the interrupt happened (branch and node), to find its
	// answer when the run is resumed.
	key string
}

// InterruptedError is the error of a run that stopped to wait: for a
// person's answer (Interrupt, InterruptBefore, InterruptAfter) or because it
// was paused. The run's checkpoint, if it has a thread, was saved before the
// error was returned; Resume continues exactly there. Several interrupts are
// pending when parallel branches stopped; each is answered by its ID.
type InterruptedError struct {
	Graph      string
	Thread     string // "" for a run without a thread (it cannot be resumed)
	Checkpoint string // the checkpoint to resume from
	Interrupts []InterruptInfo
}

// Error lists what the run waits for.
func (e *InterruptedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "graph %s: run interrupted", e.Graph)
	if e.Thread != "" {
		fmt.Fprintf(&b, " (thread %q, checkpoint %s)", e.Thread, e.Checkpoint)
	}
	for i, in := range e.Interrupts {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %s [%s]", in.Kind, in.Node, in.ID)
	}
	return b.String()
}

// Is makes an *InterruptedError match ErrInterrupted.
func (e *InterruptedError) Is(target error) bool { return target == ErrInterrupted }

// Interrupt stops the run at the calling node to wait for an answer; payload
// says what is asked (it is saved with the checkpoint, as JSON). Called
// before the run was resumed, it returns a non-nil error the node must
// return (it may wrap it); the run then stops with an *InterruptedError and
// the node's state unchanged. When Resume answers the interrupt, the node
// runs again from its start and this call returns the answer. A node may
// call Interrupt several times; each call is answered in turn, and earlier
// answers come back (as json.RawMessage when the run was resumed in another
// process) when a later call is answered. See ResumeValue.
func Interrupt(ctx context.Context, payload any) (any, error) {
	sc, _ := ctx.Value(scopeKey{}).(*nodeScope)
	if sc == nil {
		return nil, ErrNotInNode
	}
	sc.mu.Lock()
	key := sc.addr + "#" + strconv.Itoa(sc.calls)
	node := sc.node
	sc.calls++
	sc.mu.Unlock()
	if v, ok := sc.set.answer(key); ok {
		return v, nil
	}
	return nil, &interruptSignal{in: InterruptInfo{ID: sc.set.idFor(key), Kind: InterruptNode, Node: node, Payload: payload, key: key}}
}

// ResumeValue converts an answer Interrupt returned to T: the value itself
// when it is a T, decoded from JSON when it was loaded from a checkpoint.
func ResumeValue[T any](v any) (T, error) {
	var t T
	switch x := v.(type) {
	case T:
		return x, nil
	case nil:
		return t, nil
	case json.RawMessage:
		err := json.Unmarshal(x, &t)
		return t, err
	}
	b, err := json.Marshal(v)
	if err == nil {
		err = json.Unmarshal(b, &t)
	}
	if err != nil {
		return t, fmt.Errorf("graph: resume value %T is not a %T: %w", v, t, err)
	}
	return t, nil
}

// interruptSignal is the error Interrupt returns, carried up to the run.
type interruptSignal struct{ in InterruptInfo }

func (s *interruptSignal) Error() string {
	return fmt.Sprintf("graph: interrupt %s at node %q", s.in.ID, s.in.Node)
}

// Is makes the signal match ErrInterrupted, so that a node can tell it from
// its own failures.
func (s *interruptSignal) Is(target error) bool { return target == ErrInterrupted }

// interruptsOf returns the interrupts err carries (from Interrupt, or from a
// subgraph's run), naming them from node, or nil.
func interruptsOf(err error, node string) []InterruptInfo {
	var sig *interruptSignal
	if errors.As(err, &sig) {
		return []InterruptInfo{sig.in}
	}
	var ie *InterruptedError
	if errors.As(err, &ie) {
		out := make([]InterruptInfo, len(ie.Interrupts))
		for i, in := range ie.Interrupts {
			in.Node = node + "/" + in.Node
			out[i] = in
		}
		return out
	}
	return nil
}

type scopeKey struct{}

// nodeScope is a running node's place, reached through its context.
type nodeScope struct {
	set   *resumeSet
	addr  string // branch path and node name; subgraph nodes below it
	node  string // the node's name, as Interrupt reports it
	mu    sync.Mutex
	calls int
}

// resumeSet holds the answers a resumed run has, by key, and the ids of the
// interrupts a checkpoint recorded, so that an unanswered interrupt keeps
// its id. One set serves a run and the subgraphs run inside its nodes.
type resumeSet struct {
	mu     sync.Mutex
	values map[string]any
	ids    map[string]string
}

func newResumeSet() *resumeSet { return &resumeSet{} }

// enter readdresses the scope for the next node of its walk.
func (sc *nodeScope) enter(addr, node string) {
	sc.mu.Lock()
	sc.addr, sc.node, sc.calls = addr, node, 0
	sc.mu.Unlock()
}

func (r *resumeSet) put(key string, v any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.values == nil {
		r.values = map[string]any{}
	}
	r.values[key] = v
}

func (r *resumeSet) setID(key, id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ids == nil {
		r.ids = map[string]string{}
	}
	r.ids[key] = id
}

func (r *resumeSet) answer(key string) (any, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	v, ok := r.values[key]
	return v, ok
}

func (r *resumeSet) take(key string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.values[key]
	delete(r.values, key)
	return ok
}

func (r *resumeSet) idFor(key string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if id, ok := r.ids[key]; ok {
		return id
	}
	id := newID()
	if r.ids == nil {
		r.ids = map[string]string{}
	}
	r.ids[key] = id
	return id
}

// clear drops every answer: at a step boundary, all of them were used.
func (r *resumeSet) clear() {
	r.mu.Lock()
	defer r.mu.Unlock()
	clear(r.values)
	clear(r.ids)
}

// snapshot returns the answers still held, JSON-encoded, for a checkpoint.
func (r *resumeSet) snapshot() (map[string]json.RawMessage, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.values) == 0 {
		return nil, nil
	}
	out := make(map[string]json.RawMessage, len(r.values))
	for k, v := range r.values {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("graph: resume value for %s: %w", k, err)
		}
		out[k] = b
	}
	return out, nil
}

// Pause stops a run from outside at its next step boundary, as an interrupt
// of kind InterruptPause: the run saves its checkpoint and returns an
// *InterruptedError, and Resume continues it later (in this process or
// another). Pass it to one run with WithPause. The zero value is not ready;
// use NewPause. Safe for concurrent use.
type Pause struct {
	mu        sync.Mutex
	requested bool
	forced    bool
	reason    any
	cleanup   func(forced bool)
	timer     *time.Timer
	cancel    context.CancelFunc // cancels the run's steps, set by the run
	done      bool
}

// NewPause returns a pause for one run.
func NewPause() *Pause { return &Pause{} }

// Request asks the run to stop at its next step boundary; reason becomes the
// interrupt's payload. With timeout > 0, steps still running after timeout
// are cancelled (their context is done) and the run stops at the boundary
// before them: on resume, they run again. cleanup, if not nil, is called
// once the run has stopped and its checkpoint is saved, with forced true
// when steps had to be cancelled, so that the caller can release what it
// held for them. A second Request is ignored.
func (p *Pause) Request(reason any, timeout time.Duration, cleanup func(forced bool)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.requested {
		return
	}
	p.requested, p.reason, p.cleanup = true, reason, cleanup
	if timeout > 0 {
		p.timer = time.AfterFunc(timeout, p.force)
	}
}

func (p *Pause) force() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		return
	}
	p.forced = true
	if p.cancel != nil {
		p.cancel()
	}
}

// state reports whether a pause was requested and whether steps were
// cancelled for it.
func (p *Pause) state() (requested, forced bool, reason any) {
	if p == nil {
		return false, false, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.requested, p.forced, p.reason
}

func (p *Pause) attach(cancel context.CancelFunc) {
	p.mu.Lock()
	p.cancel = cancel
	forced := p.forced
	p.mu.Unlock()
	if forced {
		cancel()
	}
}

// finish stops the timer and, when the run stopped for the pause, calls the
// cleanup callback.
func (p *Pause) finish(paused bool) {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.done = true
	if p.timer != nil {
		p.timer.Stop()
	}
	cleanup, forced := p.cleanup, p.forced
	if paused {
		p.cleanup = nil
	}
	p.mu.Unlock()
	if paused && cleanup != nil {
		cleanup(forced)
	}
}
