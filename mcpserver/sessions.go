package mcpserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/adaptrag/adaptrag/retrieval"
)

// SessionThreadPrefix begins the id of a session's default thread.
const SessionThreadPrefix = "mcp-session-"

// sessionThread is the default thread of a session, on a pipeline that
// keeps threads: for a session with an id (a stateful streamable-HTTP
// session) SessionThreadPrefix + its id; for a session Run serves (stdio,
// which has no id) SessionThreadPrefix + a random id drawn when it began.
// "" for any other session: a stateless HTTP request stands alone.
func (s *Server) sessionThread(ss *mcp.ServerSession) string {
	if ss == nil {
		return ""
	}
	if id := ss.ID(); id != "" {
		t := SessionThreadPrefix + id
		if len(t) > maxThreadRunes {
			t = t[:maxThreadRunes]
		}
		return t
	}
	if rs, ok := s.sessions.Load(ss); ok {
		return rs.(*runSession).thread
	}
	return ""
}

// runSession is a session Run serves: its default thread, and the scopes
// whose calls used it, so that the thread can be deleted when the session
// ends (no later session can name it: its id was drawn at random).
type runSession struct {
	thread string
	mu     sync.Mutex
	scopes map[retrieval.Scope]struct{}
}

// usedSessionThread records that a call of scope ran on its session's own
// thread.
func (s *Server) usedSessionThread(ss *mcp.ServerSession, scope retrieval.Scope) {
	v, ok := s.sessions.Load(ss)
	if !ok {
		return
	}
	rs := v.(*runSession)
	rs.mu.Lock()
	rs.scopes[scope] = struct{}{}
	rs.mu.Unlock()
}

// sessionCleanup bounds how long deleting an ended session's thread may
// take.
const sessionCleanup = 5 * time.Second

// dropSessionThread deletes the thread of an ended session in every scope
// that used it. It is best effort: a store that fails keeps the thread,
// as it would have before.
func (s *Server) dropSessionThread(rs *runSession) {
	rs.mu.Lock()
	scopes := make([]retrieval.Scope, 0, len(rs.scopes))
	for sc := range rs.scopes {
		scopes = append(scopes, sc)
	}
	rs.mu.Unlock()
	if len(scopes) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), sessionCleanup)
	defer cancel()
	for _, sc := range scopes {
		_ = s.pipe.DeleteThread(ctx, sc, rs.thread)
	}
}

// serve serves one session on t until the client disconnects or ctx is
// done, with a thread of its own (sessionThread).
func (s *Server) serve(ctx context.Context, t mcp.Transport) error {
	var id [12]byte
	if _, err := rand.Read(id[:]); err != nil {
		return fmt.Errorf("session id: %w", err)
	}
	ss, err := s.mcp.Connect(ctx, t, nil)
	if err != nil {
		return err
	}
	rs := &runSession{thread: SessionThreadPrefix + hex.EncodeToString(id[:]), scopes: map[retrieval.Scope]struct{}{}}
	s.sessions.Store(ss, rs)
	defer func() {
		s.sessions.Delete(ss)
		s.dropSessionThread(rs)
	}()
	done := make(chan error, 1)
	go func() { done <- ss.Wait() }()
	select {
	case <-ctx.Done():
		ss.Close()
		<-done
		return ctx.Err()
	case err := <-done:
		return err
	}
}
