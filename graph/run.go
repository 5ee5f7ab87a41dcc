package graph

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// RetryPolicy retries a node's failed attempts with exponential backoff.
// The zero value means no retry.
type RetryPolicy struct {
	// MaxAttempts counts the first attempt too: 3 means up to two retries.
	MaxAttempts int
	// Initial is the first backoff; zero means 50ms.
	Initial time.Duration
	// Max caps the backoff; zero means 2s.
	Max time.Duration
	// Multiplier grows the backoff; values < 1 mean 2.
	Multiplier float64
	// Jitter adds up to this fraction of random extra wait, 0..1.
	Jitter float64
	// Retry decides which errors to retry; nil means IsRetryable.
	Retry func(error) bool
}

func (p RetryPolicy) backoff(attempt int) time.Duration {
	d := p.Initial
	if d <= 0 {
		d = 50 * time.Millisecond
	}
	maxD := p.Max
	if maxD <= 0 {
		maxD = 2 * time.Second
	}
	m := p.Multiplier
	if m < 1 {
		m = 2
	}
	for i := 1; i < attempt && d < maxD; i++ {
		d = time.Duration(float64(d) * m)
	}
	d = min(d, maxD)
	if p.Jitter > 0 {
		d += time.Duration(rand.Float64() * p.Jitter * float64(d))
	}
	return d
}

type causeKey struct{}

// Cause returns the error that sent the run to the current node through a
// WithFallback edge, or nil when the node was reached normally.
func Cause(ctx context.Context) error {
	err, _ := ctx.Value(causeKey{}).(error)
	return err
}

// run is the state of one execution.
type run[S any] struct {
	r      *Runnable[S]
	emit   emitFunc[S] // the stream consumer, on its goroutine; nil for Invoke
	record bool        // node spans are recorded
	steps  atomic.Int64
	path   *Path      // recorded by InvokePath; nil otherwise
	pathMu sync.Mutex // fan-out branches record concurrently

	ss     *session[S] // the thread; nil without one
	set    *resumeSet  // answers to interrupts
	own    bool        // set is this run's own: cleared at step boundaries
	prefix string      // addresses of an outer node's run this one runs in
	pause  *Pause
	thread string
	ownSet resumeSet // rn.set of a run that answers its own interrupts
	scope  nodeScope // the main walk's
	opts   runOptions
}

// took records an edge the run traversed (InvokePath only).
func (rn *run[S]) took(from, to, label string) {
	if rn.path == nil {
		return
	}
	rn.pathMu.Lock()
	rn.path.Add(Edge{From: from, To: to, Label: label}, true)
	rn.pathMu.Unlock()
}

// emitFunc delivers an event of a streamed run and reports false once the
// consumer has stopped. Each walk has its own: the stream's yield for the
// walk on the consumer's goroutine, a forwarder for a fan-out branch. Nil
// means nobody listens (Invoke).
type emitFunc[S any] func(*Event[S]) bool

// Invoke runs the graph on s and returns the final state. On failure it
// returns the state as it was before the failing step, and an error: a
// *NodeError naming the node, a *StepLimitError, or the context's error.
// A run that stops to wait (see Interrupt) returns the state where it
// stopped and an *InterruptedError. With Config.Clone set, s itself is
// never modified.
//
// With WithThread the run saves checkpoints to Config.Checkpointer as
// Config.Durability says; see Resume for going on from one.
func (r *Runnable[S]) Invoke(ctx context.Context, s S, opts ...RunOption) (S, error) {
	return r.exec(ctx, s, nil, opts)
}

// InvokePath is Invoke that also returns the path the run took, the nodes
// and edges a Stream's events would have given, without producing events
// (or copies of the state for them). On failure the path ends with the
// node that failed.
func (r *Runnable[S]) InvokePath(ctx context.Context, s S, opts ...RunOption) (S, Path, error) {
	var p Path
	out, err := r.run(ctx, s, nil, &p, opts)
	return out, p, err
}

func (r *Runnable[S]) exec(ctx context.Context, s S, emit emitFunc[S], opts []RunOption) (S, error) {
	return r.run(ctx, s, emit, nil, opts)
}

func (r *Runnable[S]) run(ctx context.Context, s S, emit emitFunc[S], path *Path, opts []RunOption) (S, error) {
	ctx, span := r.tracer.Start(ctx, "graph.run", r.runOpts...)
	// Deferred so that the span also ends when a stream consumer panics.
	defer span.End()
	rn := &run[S]{r: r, emit: emit, record: span.IsRecording(), path: path}
	o := &rn.opts
	for _, opt := range opts {
		if opt != nil {
			opt(o)
		}
	}
	rn.thread = o.thread
	if o.thread != "" {
		span.SetAttributes(attribute.String("graph.thread", o.thread))
	}
	out, err := rn.begin(ctx, s, o)
	if err != nil && rn.record {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	return out, err
}

// begin opens the run's thread, if any, runs it, and settles what the run
// owes its thread and its pause.
func (rn *run[S]) begin(ctx context.Context, s S, o *runOptions) (S, error) {
	var st *start[S]
	if o.thread != "" {
		ss, start, err := rn.r.open(ctx, o, s)
		if err != nil {
			return s, err
		}
		rn.ss, st, rn.set, rn.own = ss, start, start.set, true
	} else {
		if o.resuming || o.from != "" {
			return s, fmt.Errorf("%w: Resume and WithCheckpoint need a thread", ErrNothingToResume)
		}
		if sc, _ := ctx.Value(scopeKey{}).(*nodeScope); sc != nil {
			// Run inside a node of another run (a subgraph): interrupts
			// are answered through the outer run.
			rn.set, rn.prefix = sc.set, sc.addr+">"
		} else {
			rn.set, rn.own = &rn.ownSet, true
		}
	}
	if o.pause != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		rn.pause = o.pause
		o.pause.attach(cancel)
	}
	out, err := rn.start(ctx, s, st)
	if rn.ss != nil {
		if ferr := rn.ss.finish(ctx); ferr != nil {
			err = errors.Join(err, ferr)
		}
	}
	if o.pause != nil {
		paused := false
		var ie *InterruptedError
		if errors.As(err, &ie) {
			for _, in := range ie.Interrupts {
				paused = paused || in.Kind == InterruptPause
			}
		}
		o.pause.finish(paused)
	}
	return out, err
}

// fanOutIdx is the target index meaning "the fan-out declared on the node
// just executed".
const fanOutIdx = -3

func (rn *run[S]) start(ctx context.Context, s S, st *start[S]) (S, error) {
	r := rn.r
	var w where[S]
	var pend []branchOut[S]
	if st == nil || st.fresh {
		if st != nil {
			s = st.state
		}
		to, label, err := rn.resolve(&r.start, Start, s)
		if err != nil {
			return s, &NodeError{Graph: r.name, Node: Start, Err: err}
		}
		w = where[S]{to: to, from: Start, label: label, nx: &r.start}
		if to != endIdx {
			// The input, so that a run whose process dies in its first
			// step can be resumed.
			if err := rn.boundary(ctx, r.posOf(to, Start, label), s); err != nil {
				return s, err
			}
		}
	} else {
		s, pend = st.state, st.branches
		rn.steps.Store(int64(st.steps))
		w, _ = r.position(st.pos) // checked by open
	}
	s, last, label, err := rn.walk(ctx, rn.emit, "", w.to, w.label, w.from, w.nx, s, endIdx, pend, true)
	if err != nil {
		return rn.stopped(ctx, s, err)
	}
	rn.took(last, End, label)
	if rn.ss != nil {
		c, err := rn.ss.checkpoint(StatusDone, int(rn.steps.Load()), position{To: End, From: last, Label: label}, s, nil, nil, nil)
		if err == nil {
			err = rn.ss.save(ctx, c, true)
		}
		if err != nil {
			return s, err
		}
	}
	if rn.emit != nil {
		ev := Event[S]{Kind: RunEnd, Node: End, From: last, Label: label, State: s, Step: int(rn.steps.Load())}
		if rn.copyEvents() {
			if ev.State, err = rn.copyOf(s); err != nil {
				return s, &NodeError{Graph: rn.r.name, Node: End, Err: err}
			}
		}
		rn.emit(&ev)
	}
	return s, err
}

// stopped settles a run that did not reach End: a halt becomes an
// *InterruptedError (or the failure it carries) after its checkpoint is
// saved.
func (rn *run[S]) stopped(ctx context.Context, s S, err error) (S, error) {
	var h *halt[S]
	if !errors.As(err, &h) {
		return s, err
	}
	st := StatusInterrupted
	if h.cause != nil {
		st = StatusFailed
	}
	ie := &InterruptedError{Graph: rn.r.name, Thread: rn.thread, Interrupts: h.ints}
	if rn.ss != nil {
		c, cerr := rn.ss.checkpoint(st, int(rn.steps.Load()), h.pos, s, h, rn.set, h.cause)
		if cerr == nil {
			// Saved even when a pause cancelled the run's context.
			cerr = rn.ss.save(context.WithoutCancel(ctx), c, true)
		}
		if cerr != nil {
			if h.cause != nil {
				return s, errors.Join(h.cause, cerr)
			}
			return s, cerr
		}
		ie.Checkpoint = c.ID
	}
	if h.cause != nil {
		return s, h.cause
	}
	return s, ie
}

// boundary is the end of a step of the run's own walk: answers are used up,
// and the state is checkpointed.
func (rn *run[S]) boundary(ctx context.Context, pos position, s S) error {
	if rn.own {
		rn.set.clear()
	}
	if rn.ss == nil {
		return nil
	}
	c, err := rn.ss.checkpoint(StatusRunning, int(rn.steps.Load()), pos, s, nil, nil, nil)
	if err == nil {
		err = rn.ss.save(ctx, c, false)
	}
	return err
}

// pauseHalt returns the halt of a requested pause at pos, or nil.
func (rn *run[S]) pauseHalt(pos position, addr string) *halt[S] {
	req, _, reason := rn.pause.state()
	if !req {
		return nil
	}
	key := addr + "!pause"
	return &halt[S]{pos: pos, ints: []InterruptInfo{{ID: rn.set.idFor(key), Kind: InterruptPause, Node: pos.To, Payload: reason, key: key}}}
}

// resolve picks the target of nx for state s, calling the router of a
// conditional edge. A router panic or an undeclared label is returned as an
// error for the caller to attribute to the node.
func (rn *run[S]) resolve(nx *next[S], from string, s S) (to int, label string, err error) {
	switch nx.kind {
	case toNode:
		return nx.to, "", nil
	case toFanOut:
		return fanOutIdx, "", nil
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("route: %w", &PanicError{Value: p, Stack: debug.Stack()})
		}
	}()
	label = nx.route(s)
	to, ok := nx.labels[label]
	if !ok {
		return 0, label, &RouteError{Node: from, Label: label}
	}
	return to, label, nil
}

// walk executes nodes from target to (reached from node from, whose
// outgoing spec is nx, over an edge labelled label) until the run would
// execute stop or End, reporting its events through emit. It returns the
// state, the last node executed and the label of the edge taken out of it.
//
// at is the walk's branch path (for interrupt addresses); pend, the
// branches of the fan-out a resumed walk starts in; main, whether this is
// the run's own walk, whose step boundaries are checkpointed. A walk that
// stops to wait returns a *halt and the state where it stopped.
func (rn *run[S]) walk(ctx context.Context, emit emitFunc[S], at string, to int, label, from string, nx *next[S], s S, stop int, pend []branchOut[S], main bool) (S, string, string, error) {
	r := rn.r
	var cause error
	// The last nodes this walk executed, to name the loop if the step limit
	// hits. Kept per walk (on the stack) so the hot path needs no lock.
	var trail ring
	// One scope and context per walk, readdressed before each node: its
	// nodes run one at a time.
	var sc *nodeScope
	var sctx context.Context
	for {
		if to == fanOutIdx {
			out, err := rn.fanOut(ctx, emit, at, nx, from, s, pend)
			pend = nil
			if err != nil {
				return s, from, "", err
			}
			s = out
			// The join is entered from every branch at once.
			to, label, from = nx.join, "", ""
			if main && to != endIdx {
				if err := rn.boundary(ctx, r.posOf(to, from, label), s); err != nil {
					return s, from, label, err
				}
			}
		}
		if to == stop || to == endIdx {
			return s, from, label, nil
		}
		n := &r.nodes[to]
		addr := rn.prefix + at + n.name
		if h := rn.pauseHalt(position{To: n.name, From: from, Label: label}, addr); h != nil {
			return s, from, label, h
		}
		if err := ctx.Err(); err != nil {
			return s, from, label, err
		}
		if r.before[to] {
			if _, ok := rn.set.answer(addr + "!before"); !ok {
				key := addr + "!before"
				return s, from, label, &halt[S]{pos: position{To: n.name, From: from, Label: label},
					ints: []InterruptInfo{{ID: rn.set.idFor(key), Kind: InterruptBefore, Node: n.name, key: key}}}
			}
		}
		trail.push(int32(to))
		step := int(rn.steps.Add(1))
		if step > r.maxSteps {
			return s, from, label, rn.stepLimit(&trail)
		}
		if sc == nil {
			if main {
				sc = &rn.scope
			} else {
				sc = &nodeScope{}
			}
			sc.set = rn.set
			sctx = context.WithValue(ctx, scopeKey{}, sc)
		}
		sc.enter(addr, n.name)
		nctx := sctx
		if cause != nil {
			nctx = context.WithValue(nctx, causeKey{}, cause)
			cause = nil
		}
		idx := to
		out, nextTo, nextLabel, err := rn.node(nctx, emit, n, step, from, label, s)
		if err != nil {
			here := position{To: n.name, From: from, Label: label}
			if ints := interruptsOf(err, n.name); ints != nil {
				return s, from, label, &halt[S]{pos: here, ints: ints}
			}
			if _, forced, _ := rn.pause.state(); forced && ctx.Err() != nil {
				// Cancelled by the pause's timeout: the step runs again on
				// resume.
				return s, from, label, rn.pauseHalt(here, addr)
			}
			if n.fallback != noFallback && ctx.Err() == nil {
				// The fallback receives the state the failed node was given.
				cause = err
				to, label, from = n.fallback, "fallback", n.name
				continue
			}
			return s, n.name, "", err
		}
		s, from, nx = out, n.name, &n.next
		to, label = nextTo, nextLabel
		if r.after[idx] && !rn.set.take(addr+"!after") {
			key := addr + "!after"
			return s, from, label, &halt[S]{pos: r.posOf(to, from, label),
				ints: []InterruptInfo{{ID: rn.set.idFor(key), Kind: InterruptAfter, Node: n.name, key: key}}}
		}
		if main && to != endIdx && to != stop {
			if err := rn.boundary(ctx, r.posOf(to, from, label), s); err != nil {
				return s, from, label, err
			}
		}
	}
}

type ring struct {
	idx [16]int32
	n   int
}

func (t *ring) push(i int32) {
	t.idx[t.n%len(t.idx)] = i
	t.n++
}

func (rn *run[S]) stepLimit(t *ring) error {
	n := min(t.n, len(t.idx))
	trail := make([]string, 0, n)
	for i := t.n - n; i < t.n; i++ {
		trail = append(trail, rn.r.nodes[t.idx[i%len(t.idx)]].name)
	}
	return &StepLimitError{Graph: rn.r.name, Limit: rn.r.maxSteps, Loop: findLoop(trail), Trail: trail}
}

// findLoop returns the shortest cycle at the end of trail: the nodes between
// the last node's previous occurrence and itself.
func findLoop(trail []string) []string {
	if len(trail) < 2 {
		return nil
	}
	last := trail[len(trail)-1]
	for i := len(trail) - 2; i >= 0; i-- {
		if trail[i] == last {
			return append([]string(nil), trail[i+1:]...)
		}
	}
	return nil
}

// node runs one node: attempts with timeout and retry, its span and events,
// and the choice of the next target.
func (rn *run[S]) node(ctx context.Context, emit emitFunc[S], n *node[S], step int, from, via string, s S) (out S, to int, label string, err error) {
	rn.took(from, n.name, via)
	var began time.Time
	if emit != nil {
		// Before the span starts: a consumer that stops (or panics) here
		// leaves no span open for a node that never ran.
		ev := Event[S]{Kind: NodeStart, Node: n.name, Step: step, From: from, Label: via, State: s}
		if rn.copyEvents() {
			if ev.State, err = rn.copyOf(s); err != nil {
				return s, 0, "", &NodeError{Graph: rn.r.name, Node: n.name, Step: step, Err: err}
			}
		}
		if !emit(&ev) {
			return s, 0, "", context.Canceled
		}
		began = time.Now()
	}
	var span trace.Span
	if rn.record {
		// The span's name is the node's; the graph's name is on graph.run.
		ctx, span = rn.r.tracer.Start(ctx, n.name, trace.WithAttributes(attribute.Int("graph.step", step)))
	}
	attempts := 0
	out, attempts, err = rn.attempts(ctx, n, s)
	if err == nil {
		to, label, err = rn.resolve(&n.next, n.name, out)
	}
	var evState S // the state NodeEnd reports
	if emit != nil {
		evState = out
		if err != nil {
			evState = s
		}
		if rn.copyEvents() {
			var cerr error
			if evState, cerr = rn.copyOf(evState); cerr != nil && err == nil {
				err = cerr
			}
		}
	}
	if err != nil {
		// Always this graph's node, even when err already holds a
		// *NodeError from a graph run inside the node: both names stay.
		err = &NodeError{Graph: rn.r.name, Node: n.name, Step: step, Attempt: attempts, Err: err}
	}
	if span != nil {
		if label != "" {
			span.SetAttributes(attribute.Int("graph.retry.count", attempts-1), attribute.String("graph.route.label", label))
		} else {
			span.SetAttributes(attribute.Int("graph.retry.count", attempts-1))
		}
		if err != nil {
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
		}
		span.End()
	}
	if emit != nil {
		ev := Event[S]{Kind: NodeEnd, Node: n.name, Step: step, From: from, Label: label, Duration: time.Since(began), Err: err, Attempts: attempts, State: evState}
		emit(&ev)
	}
	return out, to, label, err
}

// attempts calls the node until it succeeds, fails with a non-retryable
// error, or runs out of attempts.
func (rn *run[S]) attempts(ctx context.Context, n *node[S], s S) (S, int, error) {
	maxA := max(n.retry.MaxAttempts, 1)
	retry := n.retry.Retry
	if retry == nil {
		retry = IsRetryable
	}
	for a := 1; ; a++ {
		out, err := call(ctx, n, s, rn.r.clone)
		if err == nil {
			return out, a, nil
		}
		if errors.Is(err, ErrInterrupted) {
			return s, a, err // waits for an answer: never retried
		}
		if cerr := ctx.Err(); cerr != nil {
			if !errors.Is(err, cerr) {
				// The run was cancelled while the node failed otherwise; the
				// cancellation is what the caller needs to see.
				err = fmt.Errorf("%w (run cancelled: %w)", err, cerr)
			}
			return s, a, err
		}
		if a >= maxA || !retry(err) {
			return s, a, err
		}
		t := time.NewTimer(n.retry.backoff(a))
		select {
		case <-ctx.Done():
			t.Stop()
			return s, a, fmt.Errorf("%w (while backing off after: %v)", ctx.Err(), err)
		case <-t.C:
		}
	}
}

// call makes one attempt: it applies the node's timeout, hands the node a
// clone of s when clone is set, and turns a panic into an error.
func call[S any](ctx context.Context, n *node[S], s S, clone func(S) S) (out S, err error) {
	if n.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(n.timeout))
		defer cancel()
	}
	defer func() {
		if p := recover(); p != nil {
			out, err = s, &PanicError{Value: p, Stack: debug.Stack()}
		}
	}()
	in := s
	if clone != nil && !n.reads {
		in = clone(s)
	}
	out, err = n.fn(ctx, in)
	if err != nil && n.timeout > 0 && ctx.Err() == context.DeadlineExceeded && !errors.Is(err, context.DeadlineExceeded) {
		// The node reported something else once its deadline passed; keep
		// the timeout visible so it is never mistaken for another failure.
		err = fmt.Errorf("%w after %v: %w", context.DeadlineExceeded, time.Duration(n.timeout), err)
	}
	return out, err
}

// fanOut runs the branches of nx concurrently up to the join and merges
// their states. The first failure cancels the other branches; no goroutine
// outlives the call, even when emit panics.
//
// Branches never call emit themselves: each sends its events to this
// goroutine, which passes them on through emit and sends back the result,
// so that every event reaches the stream consumer on the consumer's own
// goroutine (through each level of nested fan-outs) and a branch waits
// while its event is being handled.
func (rn *run[S]) fanOut(ctx context.Context, emit emitFunc[S], at string, nx *next[S], from string, s S, pend []branchOut[S]) (S, error) {
	// One job per branch: where it starts, or its output if a checkpoint
	// recorded it done (a pending write kept from a run that stopped).
	type job struct {
		w     where[S]
		pos   position
		state S
		done  bool
	}
	var jobs []job
	if pend != nil {
		jobs = make([]job, len(pend))
		for i, b := range pend {
			jobs[i] = job{pos: b.pos, state: b.state, done: b.done}
			if !b.done {
				w, err := rn.r.position(b.pos)
				if err != nil {
					return s, err
				}
				jobs[i].w = w
			}
		}
	} else {
		starts, states := nx.branches, []S(nil)
		if nx.split != nil {
			var err error
			if states, err = rn.split(nx, from, s); err != nil {
				return s, err
			}
			starts = make([]int, len(states))
			for i := range starts {
				starts[i] = nx.branches[0]
			}
		}
		jobs = make([]job, len(starts))
		for i, b := range starts {
			bs := s
			if states != nil {
				bs = states[i]
			}
			if rn.r.clone != nil && b >= 0 && b < len(rn.r.nodes) && rn.r.nodes[b].reads {
				// Siblings share s: a branch that appends to its slices
				// must have arrays of its own.
				var err error
				if bs, err = rn.copyOf(bs); err != nil {
					return s, &NodeError{Graph: rn.r.name, Node: rn.r.nodes[b].name, Err: err}
				}
			}
			jobs[i] = job{w: where[S]{to: b, from: from}, pos: rn.r.posOf(b, from, ""), state: bs}
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	outs := make([]S, len(jobs))
	errs := make([]error, len(jobs))
	done := make(chan struct{}, len(jobs))
	pending := 0
	var events chan forward[S] // nil (never ready) without a consumer
	var abort chan struct{}    // closed when this goroutine stops forwarding
	if emit != nil {
		events, abort = make(chan forward[S]), make(chan struct{})
	}
	defer func() {
		// On return, and when emit panicked: release branches waiting to
		// forward an event, stop the others, and wait for all of them.
		if abort != nil {
			close(abort)
		}
		cancel()
		for ; pending > 0; pending-- {
			<-done
		}
	}()
	for i, j := range jobs {
		if j.done {
			outs[i] = j.state
			continue
		}
		var bemit emitFunc[S]
		if emit != nil {
			bemit = forwarder(events, abort)
		}
		bat := at + from + "[" + strconv.Itoa(i) + "]/"
		pending++
		go func() {
			defer func() { done <- struct{}{} }()
			defer func() {
				if p := recover(); p != nil { // only our own bugs can get here
					errs[i] = &PanicError{Value: p, Stack: debug.Stack()}
					cancel()
				}
			}()
			out, _, _, err := rn.walk(ctx, bemit, bat, j.w.to, j.w.label, j.w.from, j.w.nx, j.state, nx.join, nil, false)
			outs[i], errs[i] = out, err
			var h *halt[S]
			if err != nil && (!errors.As(err, &h) || h.cause != nil) {
				cancel() // a failure stops the siblings; a branch that waits does not
			}
		}()
	}
	for pending > 0 {
		select {
		case f := <-events:
			f.reply <- emit(f.ev)
		case <-done:
			pending--
		}
	}
	// Report the root failure, not the cancellations it caused.
	var failure, first error
	halts := make([]*halt[S], len(jobs))
	anyDone := false
	for i, err := range errs {
		var h *halt[S]
		switch {
		case err == nil:
			anyDone = anyDone || !jobs[i].done
			continue
		case errors.As(err, &h) && h.cause == nil:
			halts[i] = h
			continue
		case h != nil:
			err = h.cause // a nested fan-out's failure: its pending writes go
		}
		if failure == nil && !errors.Is(err, context.Canceled) {
			failure = err
		}
		if first == nil {
			first = err
		}
	}
	if failure == nil {
		failure = first
	}
	stopped := failure != nil
	for _, h := range halts {
		stopped = stopped || h != nil
	}
	if !stopped {
		return rn.merge(nx, from, s, outs)
	}
	if failure != nil && !anyDone && pend == nil {
		return s, failure // nothing finished: nothing to keep
	}
	// Some branch waits, or failed after others finished: the fan-out is
	// one step, so the run stops before it, keeping every branch's place.
	h := &halt[S]{pos: position{FanOut: from}, cause: failure, branches: make([]branchOut[S], len(jobs))}
	for i, j := range jobs {
		switch {
		case errs[i] == nil:
			h.branches[i] = branchOut[S]{done: true, state: outs[i]}
		case halts[i] != nil:
			h.branches[i] = branchOut[S]{pos: halts[i].pos, state: outs[i]}
			h.ints = append(h.ints, halts[i].ints...)
		default:
			h.branches[i] = branchOut[S]{pos: j.pos, state: j.state}
		}
	}
	return s, h
}

// forward is an event a fan-out branch hands to the goroutine that waits for
// it, and where to send whether the consumer took it.
type forward[S any] struct {
	ev    *Event[S]
	reply chan bool
}

// forwarder is a branch's emitFunc: it sends each event to the fan-out's
// goroutine and waits for the consumer's answer, or reports false once
// that goroutine has stopped forwarding.
func forwarder[S any](events chan<- forward[S], abort <-chan struct{}) emitFunc[S] {
	// Buffered so that an answer never blocks the forwarding goroutine.
	reply := make(chan bool, 1)
	return func(ev *Event[S]) bool {
		select {
		case events <- forward[S]{ev, reply}:
		case <-abort:
			return false
		}
		select {
		case ok := <-reply:
			return ok
		case <-abort:
			return false
		}
	}
}

// split calls a map's split function, turning a panic into an error that
// names the node the map leaves from.
func (rn *run[S]) split(nx *next[S], from string, s S) (out []S, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &NodeError{Graph: rn.r.name, Node: from, Err: fmt.Errorf("split: %w", &PanicError{Value: p, Stack: debug.Stack()})}
		}
	}()
	return nx.split(s), nil
}

func (rn *run[S]) merge(nx *next[S], from string, s S, outs []S) (out S, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &PanicError{Value: p, Stack: debug.Stack()}
		}
		if err != nil {
			err = &NodeError{Graph: rn.r.name, Node: from, Err: fmt.Errorf("merge: %w", err)}
		}
	}()
	if rn.r.clone != nil {
		// The engine keeps s: it is the state reported if the merge fails.
		s = rn.r.clone(s)
	}
	return nx.merge(s, outs)
}

// copyEvents reports whether events carry copies of the run's states
// (Config.Clone set, WithReadOnlyEvents not given).
func (rn *run[S]) copyEvents() bool { return rn.r.clone != nil && !rn.opts.readOnly }

// copyOf returns Config.Clone(s) for an event, turning a panic in Clone
// into an error.
func (rn *run[S]) copyOf(s S) (c S, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("clone: %w", &PanicError{Value: p, Stack: debug.Stack()})
		}
	}()
	return rn.r.clone(s), nil
}
