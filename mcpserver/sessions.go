package mcpserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
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
	if t, ok := s.sessions.Load(ss); ok {
		return t.(string)
	}
	return ""
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
	s.sessions.Store(ss, SessionThreadPrefix+hex.EncodeToString(id[:]))
	defer s.sessions.Delete(ss)
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
