package service

import (
	"errors"
	"net/http"
	"time"

	"github.com/adaptrag/adaptrag"
	"github.com/adaptrag/adaptrag/retrieval"
)

// CodeThreadBusy is the code of a 409: other requests on the same thread
// kept it busy for the whole run timeout.
const CodeThreadBusy Code = "thread_busy"

// threadErrors map the pipeline's thread refusals to codes (see classify).
var threadErrors = []struct {
	err  error
	code Code
}{
	{adaptrag.ErrThreadHistory, CodeInvalidRequest},
	{adaptrag.ErrInvalidThread, CodeInvalidRequest},
	{adaptrag.ErrNoThreads, CodeInvalidRequest},
	{adaptrag.ErrThreadNotFound, CodeNotFound},
	{adaptrag.ErrThreadBusy, CodeThreadBusy},
}

// threadError returns the response for a thread error, or nil.
func threadError(err error) *apiError {
	for _, te := range threadErrors {
		if errors.Is(err, te.err) {
			return newError(te.code, "%v", err)
		}
	}
	return nil
}

// threadBody is GET /v1/threads/ID: the thread's turns, the clarification
// it waits for, and its checkpoints, newest first.
type threadBody struct {
	*adaptrag.ThreadInfo
}

// handleThread serves GET (the thread) and DELETE (remove it) of
// /v1/threads/{id}, for the caller's tenant only: another tenant's thread
// is a 404, as one that never existed.
func (s *Server) handleThread(w http.ResponseWriter, r *http.Request, c caller) {
	id := r.PathValue("id")
	scope := retrieval.Scope{Tenant: c.Tenant}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		info, err := s.cfg.Pipeline.Thread(r.Context(), scope, id)
		if err != nil {
			s.threadFail(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, threadBody{info})
	case http.MethodDelete:
		if err := s.cfg.Pipeline.DeleteThread(r.Context(), scope, id); err != nil {
			s.threadFail(w, r, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	default:
		w.Header().Set("Allow", "GET, HEAD, DELETE")
		writeError(w, newError(CodeMethodNotAllowed, "%s %s is not served; use GET or DELETE", r.Method, r.URL.Path))
	}
}

func (s *Server) threadFail(w http.ResponseWriter, r *http.Request, err error) {
	if e := threadError(err); e != nil {
		writeError(w, e)
		return
	}
	s.fail(w, r, "", time.Duration(0), err)
}
