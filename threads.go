package adaptrag

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/adaptrag/adaptrag/graph"
	"github.com/adaptrag/adaptrag/query"
	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/state"
)

// Thread errors.
var (
	// ErrNoThreads is returned for a request with a Thread by a pipeline
	// built without Options.Threads.
	ErrNoThreads = errors.New("adaptrag: Request.Thread needs Options.Threads (a checkpointer)")
	// ErrThreadHistory refuses a request that names a thread and also
	// sends a history: on a thread the history is the thread's.
	ErrThreadHistory = errors.New("adaptrag: a request on a thread takes its history from the thread: send Thread or History, not both")
	// ErrInvalidThread refuses a thread id that is empty, longer than 128
	// bytes, not UTF-8 or holds control characters.
	ErrInvalidThread = errors.New("adaptrag: invalid thread id")
	// ErrThreadNotFound is returned by Thread for a thread the caller's
	// tenant does not have.
	ErrThreadNotFound = errors.New("adaptrag: no such thread")
	// ErrThreadBusy is returned when other requests on the same thread kept
	// it busy until the context ended or the retries ran out.
	ErrThreadBusy = errors.New("adaptrag: the thread is busy with another request")
)

// MaxThreadTurns bounds the turns a thread keeps (the oldest go first);
// the pipeline reads only the last Options.MaxHistoryTurns of them.
const MaxThreadTurns = 200

// convState is the state of a thread's conversation graph: its turns, and
// the turn in progress.
type convState struct {
	Turns    []Message      `json:"turns"`
	Question string         `json:"question"`          // as the user asked it
	Asked    string         `json:"asked,omitempty"`   // as the pipeline is asked, after a clarification
	Reply    string         `json:"reply,omitempty"`   // the user's answer to a clarifying question
	Clarify  *query.Clarify `json:"clarify,omitempty"` // the pending question back
}

// turnBox carries one request's parts into the conversation graph's nodes
// and its Result out: nothing of it is saved in the thread.
type turnBox struct {
	ctx    context.Context // the request's: the pipeline runs under it
	p      *Pipeline
	source string
	caller Caller
	emit   func(Event) bool
	res    *Result
	err    error
}

type boxKey struct{}

func boxFrom(ctx context.Context) (*turnBox, error) {
	b, _ := ctx.Value(boxKey{}).(*turnBox)
	if b == nil {
		return nil, errors.New("adaptrag: conversation node run outside a thread request")
	}
	return b, nil
}

// Node names of the conversation graph.
const (
	convAnswer  = "answer"
	convClarify = "clarify"
)

// newConversation compiles the graph each turn of a thread runs: answer
// the question through the pipeline; when the pipeline asks back (several
// candidates for a reference), stop at clarify, an interrupt whose answer
// is the user's next message, and answer again with the chosen candidate.
func newConversation(cp graph.Checkpointer) (*graph.Runnable[convState], error) {
	g := graph.New[convState]("thread")
	g.AddNode(convAnswer, answerTurn).AddNode(convClarify, clarifyTurn).
		AddEdge(graph.Start, convAnswer).
		AddConditionalEdges(convAnswer, func(s convState) string {
			if s.Clarify != nil {
				return "clarify"
			}
			return "done"
		}, map[string]string{"clarify": convClarify, "done": graph.End}).
		AddEdge(convClarify, convAnswer)
	return g.Compile(graph.Config[convState]{Checkpointer: cp, StateVersion: "adaptrag.thread/1", MaxSteps: 16})
}

func answerTurn(ctx context.Context, s convState) (convState, error) {
	b, err := boxFrom(ctx)
	if err != nil {
		return s, err
	}
	asked := s.Asked
	if asked == "" {
		asked = s.Question
	}
	hist := s.Turns
	if s.Reply != "" {
		// The clarifying exchange is in Turns; the question, with the
		// chosen candidate, stands on its own.
		hist = hist[:max(0, len(hist)-2)]
	}
	res, err := b.p.run(b.ctx, state.RAG{Question: asked, History: hist, Source: b.source}, b.caller.Scope, b.caller.Actor, b.emit)
	b.res, b.err = res, err
	if err != nil {
		// The request fails; the thread stays as it was, with no turn
		// and nothing pending, ready for the next request.
		s.Clarify = nil
		return s, nil
	}
	user := s.Question
	if s.Reply != "" {
		user = s.Reply
	}
	s.Turns = appendTurns(s.Turns, Message{Role: RoleUser, Content: user}, Message{Role: RoleAssistant, Content: res.Answer})
	s.Clarify = nil
	if res.AnsweredBy == state.ByClarify && res.Clarify != nil {
		s.Clarify = res.Clarify
	}
	return s, nil
}

func appendTurns(turns []Message, add ...Message) []Message {
	out := append(slices.Clone(turns), add...)
	if n := len(out) - MaxThreadTurns; n > 0 {
		out = out[n:]
	}
	return out
}

func clarifyTurn(ctx context.Context, s convState) (convState, error) {
	v, err := graph.Interrupt(ctx, s.Clarify)
	if err != nil {
		return s, err
	}
	reply, err := graph.ResumeValue[string](v)
	if err != nil {
		return s, err
	}
	s.Reply = reply
	if c := pickCandidate(s.Clarify, reply); c != "" {
		s.Asked = substituteMention(s.Question, s.Clarify.Mention, c)
	} else {
		// Not one of the candidates: the reply is a question of its own,
		// asked with the clarifying exchange as its history.
		s.Asked, s.Question, s.Reply = reply, reply, ""
	}
	s.Clarify = nil
	return s, nil
}

// pickCandidate returns the candidate a reply chooses: its number in the
// list (1-based), the candidate itself, or the one candidate the reply
// contains (the longest, when one contains another). "" when none.
func pickCandidate(c *query.Clarify, reply string) string {
	r := strings.TrimFunc(reply, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsPunct(r) })
	if n, err := strconv.Atoi(r); err == nil && n >= 1 && n <= len(c.Candidates) {
		return c.Candidates[n-1]
	}
	low := strings.ToLower(r)
	best := ""
	for _, cand := range c.Candidates {
		lc := strings.ToLower(cand)
		if lc == low {
			return cand
		}
		if strings.Contains(low, lc) && len(cand) > len(best) {
			best = cand
		}
	}
	if best != "" {
		return best
	}
	// A reply that is part of exactly one candidate ("the second" aside).
	var hit []string
	for _, cand := range c.Candidates {
		if utf8.RuneCountInString(r) >= 2 && strings.Contains(strings.ToLower(cand), low) {
			hit = append(hit, cand)
		}
	}
	if len(hit) == 1 {
		return hit[0]
	}
	return ""
}

// substituteMention puts the candidate in the question in place of the
// mention, or after the question when the mention is not in it.
func substituteMention(question, mention, cand string) string {
	if mention != "" && strings.Contains(question, mention) {
		return strings.Replace(question, mention, cand, 1)
	}
	return strings.TrimSpace(question) + " (" + cand + ")"
}

// threadKey is where a tenant's thread lives in the checkpointer: a thread
// id of another tenant is another key, so it does not exist for the caller.
func threadKey(c Caller, id string) (string, error) {
	if id == "" || len(id) > 128 || !utf8.ValidString(id) || strings.IndexFunc(id, unicode.IsControl) >= 0 {
		return "", fmt.Errorf("%w: %q", ErrInvalidThread, id)
	}
	return "tenant/" + url.PathEscape(c.Scope.Tenant) + "/thread/" + url.PathEscape(id), nil
}

// staleRun is how old a thread's unfinished, uninterrupted checkpoint must
// be to count as a run whose process died (rather than one in progress):
// the next request resumes it, so that its turn is not lost, then runs.
const staleRun = 2 * time.Minute

// askThread answers req on its thread: the history is the thread's, the
// turn is appended, and a reply to a clarifying question resumes the run
// that asked it.
func (p *Pipeline) askThread(ctx context.Context, req Request, emit func(Event) bool) (*Result, error) {
	if p.conv == nil {
		return nil, ErrNoThreads
	}
	if len(req.History) > 0 {
		return nil, ErrThreadHistory
	}
	c, err := callerFor(ctx, req.Scope, req.Actor)
	if err != nil {
		return nil, err
	}
	key, err := threadKey(c, req.Thread)
	if err != nil {
		return nil, err
	}
	s := state.RAG{Question: req.Question}
	if err := p.check(&s, c); err != nil {
		return nil, err
	}
	box := &turnBox{ctx: ctx, p: p, source: req.Source, caller: c, emit: emit}
	// The thread's own run is not cancelled with the request: it always
	// gets to save where it stands; the pipeline's run is (box.ctx).
	tctx := context.WithValue(context.WithoutCancel(ctx), boxKey{}, box)
	carry := graph.WithCarry(func(prev, in convState) convState { in.Turns = prev.Turns; return in })
	wait := 5 * time.Millisecond
	for attempt := 0; ; attempt++ {
		box.res, box.err = nil, nil
		err := p.turn(tctx, key, req.Question, carry)
		switch {
		case err == nil, errors.Is(err, graph.ErrInterrupted):
			// An interrupt is the clarifying question: an answer to the
			// caller, the thread waits for the reply.
			if box.res == nil && box.err == nil {
				return nil, errors.New("adaptrag: thread turn ran no pipeline") // a bug, never expected
			}
			return box.res, box.err
		case errors.Is(err, graph.ErrConflict), errors.Is(err, graph.ErrUnfinished):
			if attempt >= 60 {
				return nil, fmt.Errorf("%w: %w", ErrThreadBusy, err)
			}
			t := time.NewTimer(wait + time.Duration(rand.Int64N(int64(wait))))
			select {
			case <-ctx.Done():
				t.Stop()
				return nil, fmt.Errorf("%w: %w", ErrThreadBusy, ctx.Err())
			case <-t.C:
			}
			wait = min(2*wait, 200*time.Millisecond)
		default:
			return nil, err
		}
	}
}

// turn runs one turn: resumes a pending clarification with the question as
// the reply, resumes a stale run, or starts a new turn.
func (p *Pipeline) turn(ctx context.Context, key, question string, carry graph.RunOption) error {
	snap, err := p.conv.Snapshot(ctx, key, "")
	switch {
	case errors.Is(err, graph.ErrNoCheckpoint):
	case err != nil:
		return err
	case snap.Checkpoint.Status == graph.StatusInterrupted && len(snap.Interrupts) > 0:
		_, err = p.conv.Resume(ctx, key, map[string]any{snap.Interrupts[0].ID: question})
		return err
	case snap.Checkpoint.Status != graph.StatusDone && time.Since(snap.Checkpoint.Created) > staleRun:
		if _, err := p.conv.Resume(ctx, key, nil); err != nil && !errors.Is(err, graph.ErrInterrupted) {
			return err
		}
		if errors.Is(err, graph.ErrInterrupted) {
			// The stale turn asked back; this message is its reply.
			return p.turn(ctx, key, question, carry)
		}
	}
	_, err = p.conv.Invoke(ctx, convState{Question: question}, graph.WithThread(key), carry)
	return err
}

// HasThreads reports whether the pipeline keeps threads (Options.Threads).
func (p *Pipeline) HasThreads() bool { return p.conv != nil }

// threadHistory returns the turns of the caller's thread id (none for a new
// thread), for a search on a thread.
func (p *Pipeline) threadHistory(ctx context.Context, c Caller, id string) ([]Message, error) {
	if p.conv == nil {
		return nil, ErrNoThreads
	}
	key, err := threadKey(c, id)
	if err != nil {
		return nil, err
	}
	snap, err := p.conv.Snapshot(ctx, key, "")
	if errors.Is(err, graph.ErrNoCheckpoint) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return snap.State.Turns, nil
}

// ThreadInfo is a thread as its tenant sees it.
type ThreadInfo struct {
	ID    string    `json:"id"`
	Turns []Message `json:"turns"`
	// Clarify is the question the thread waits to have answered: the next
	// message on the thread is the reply.
	Clarify     *query.Clarify     `json:"clarify,omitempty"`
	Checkpoints []ThreadCheckpoint `json:"checkpoints"`
}

// ThreadCheckpoint is one saved step of a thread, newest first in
// ThreadInfo; Parent links them (a fork has a parent that is not the
// checkpoint after it).
type ThreadCheckpoint struct {
	ID      string       `json:"id"`
	Parent  string       `json:"parent,omitempty"`
	Step    int          `json:"step"`
	Status  graph.Status `json:"status"`
	Next    []string     `json:"next"`
	Created time.Time    `json:"created"`
}

// Thread returns the caller's thread id: its turns, the clarification it
// waits for and its checkpoints. scope is as Request.Scope. A thread of
// another tenant is ErrThreadNotFound, as one that never existed.
func (p *Pipeline) Thread(ctx context.Context, scope retrieval.Scope, id string) (*ThreadInfo, error) {
	if p.conv == nil {
		return nil, ErrNoThreads
	}
	c, err := callerFor(ctx, scope, "")
	if err != nil {
		return nil, err
	}
	key, err := threadKey(c, id)
	if err != nil {
		return nil, err
	}
	snap, err := p.conv.Snapshot(ctx, key, "")
	if errors.Is(err, graph.ErrNoCheckpoint) {
		return nil, fmt.Errorf("%w: %q", ErrThreadNotFound, id)
	}
	if err != nil {
		return nil, err
	}
	hist, err := p.conv.History(ctx, key)
	if err != nil {
		return nil, err
	}
	info := &ThreadInfo{ID: id, Turns: snap.State.Turns, Checkpoints: make([]ThreadCheckpoint, 0, len(hist))}
	if info.Turns == nil {
		info.Turns = []Message{}
	}
	if snap.Checkpoint.Status == graph.StatusInterrupted {
		info.Clarify = snap.State.Clarify
	}
	for _, h := range hist {
		info.Checkpoints = append(info.Checkpoints, ThreadCheckpoint{ID: h.ID, Parent: h.Parent, Step: h.Step, Status: h.Status, Next: h.Next, Created: h.Created})
	}
	return info, nil
}

// DeleteThread removes the caller's thread id and its checkpoints. Deleting
// a thread that does not exist is not an error.
func (p *Pipeline) DeleteThread(ctx context.Context, scope retrieval.Scope, id string) error {
	if p.conv == nil {
		return ErrNoThreads
	}
	c, err := callerFor(ctx, scope, "")
	if err != nil {
		return err
	}
	key, err := threadKey(c, id)
	if err != nil {
		return err
	}
	return p.opts.Threads.Delete(ctx, key)
}
