package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/adaptrag/adaptrag"
	"github.com/adaptrag/adaptrag/graph"
	"github.com/adaptrag/adaptrag/retrieval"
)

// Code is the machine-readable kind of an error response, the "code" of
// {"error": {"code", "message"}}. docs/service.md lists them.
type Code string

// Error codes and the HTTP status each is sent with.
const (
	CodeInvalidJSON      Code = "invalid_json"           // 400: malformed JSON, a wrong type, an unknown field
	CodeInvalidRequest   Code = "invalid_request"        // 400: a value out of range (k, mode, timeout_ms, format), two Authorization headers
	CodeTooManyParts     Code = "too_many_parts"         // 400: a compound question with more parts than the server takes
	CodeEmptyQuestion    Code = "empty_question"         // 400
	CodeQuestionTooLong  Code = "question_too_long"      // 400
	CodeInvalidUTF8      Code = "invalid_utf8"           // 400
	CodeInvalidHistory   Code = "invalid_history"        // 400
	CodeNoTenant         Code = "no_tenant"              // 400
	CodeUnauthorized     Code = "unauthorized"           // 401: no key or an unknown one
	CodeForbiddenTenant  Code = "forbidden_tenant"       // 403: the body names a tenant or actor other than the key's
	CodeForbiddenHost    Code = "forbidden_host"         // 403: without --auth, a Host that is not loopback
	CodeNotFound         Code = "not_found"              // 404: no such path, or a run that is unknown or expired
	CodeMethodNotAllowed Code = "method_not_allowed"     // 405
	CodeRequestTimeout   Code = "request_timeout"        // 408: the body did not arrive within the server's read timeout
	CodeBodyTooLarge     Code = "body_too_large"         // 413
	CodeUnsupportedMedia Code = "unsupported_media_type" // 415: a POST body that is not application/json
	CodeTooManyRuns      Code = "too_many_runs"          // 429: the concurrent-run limit is reached
	CodeInternal         Code = "internal"               // 500
	CodeUnavailable      Code = "unavailable"            // 503: the knowledge base store is down, or the server is shutting down
	CodeTimeout          Code = "timeout"                // 504: the run did not finish within its timeout
)

var codeStatus = map[Code]int{
	CodeInvalidJSON: 400, CodeInvalidRequest: 400, CodeEmptyQuestion: 400, CodeQuestionTooLong: 400,
	CodeInvalidUTF8: 400, CodeInvalidHistory: 400, CodeNoTenant: 400, CodeTooManyParts: 400, CodeRequestTimeout: 408,
	CodeUnauthorized: 401, CodeForbiddenTenant: 403, CodeForbiddenHost: 403, CodeNotFound: 404,
	CodeMethodNotAllowed: 405, CodeBodyTooLarge: 413, CodeUnsupportedMedia: 415, CodeTooManyRuns: 429,
	CodeInternal: 500, CodeUnavailable: 503, CodeTimeout: 504,
}

// Status returns the HTTP status a code is sent with.
func (c Code) Status() int {
	if s, ok := codeStatus[c]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// apiError is an error response (api.Error); it is also the payload of an
// SSE "error" event.
type apiError struct {
	Code    Code   `json:"code"`
	Message string `json:"message"`
	RunID   string `json:"run_id,omitempty"`
}

type errorBody struct {
	Error apiError `json:"error"`
}

func (e *apiError) Error() string { return fmt.Sprintf("%s: %s", e.Code, e.Message) }

func newError(c Code, format string, args ...any) *apiError {
	return &apiError{Code: c, Message: fmt.Sprintf(format, args...)}
}

// writeError sends e as JSON with its status.
func writeError(w http.ResponseWriter, e *apiError) {
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	if e.Code == CodeUnauthorized {
		h.Set("WWW-Authenticate", `Bearer realm="adaptrag"`)
	}
	w.WriteHeader(e.Code.Status())
	_ = json.NewEncoder(w).Encode(errorBody{Error: *e})
}

// inputErrors map the pipeline's refusals, returned before any work, to
// codes.
var inputErrors = []struct {
	err  error
	code Code
}{
	{adaptrag.ErrEmptyQuestion, CodeEmptyQuestion},
	{adaptrag.ErrQuestionTooLong, CodeQuestionTooLong},
	{adaptrag.ErrInvalidUTF8, CodeInvalidUTF8},
	{adaptrag.ErrInvalidHistory, CodeInvalidHistory},
	{adaptrag.ErrNoTenant, CodeNoTenant},
}

// errCanceled marks a run whose client went away: nothing is sent.
var errCanceled = errors.New("service: client went away")

// classify turns an error from Ask, Stream or Search into a response. A
// timeout is a 504 and a store that is down a 503, whatever node met them;
// a client that went away gives errCanceled. Details of other failures go
// to the log, not to the client.
func classify(err error, timeout string) (*apiError, error) {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return newError(CodeTimeout, "the run did not finish within %s", timeout), nil
	case errors.Is(err, retrieval.ErrUnavailable):
		return newError(CodeUnavailable, "the knowledge base store is unavailable; try again later"), nil
	case errors.Is(err, context.Canceled):
		return nil, errCanceled
	}
	for _, ie := range inputErrors {
		if errors.Is(err, ie.err) {
			return newError(ie.code, "%v", err), nil
		}
	}
	if _, ok := errors.AsType[*graph.NodeError](err); !ok && errors.Is(err, retrieval.ErrInvalid) {
		// Refused before the run (Search's k or mode).
		return newError(CodeInvalidRequest, "%v", err), nil
	}
	return newError(CodeInternal, "the run failed; the server log has the details"), nil
}
