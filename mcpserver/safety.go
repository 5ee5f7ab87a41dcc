package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"runtime/debug"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Error codes of the JSON-RPC errors the server answers with, beyond the
// standard ones of package jsonrpc.
const (
	// CodeBusy: every run slot of the host is taken (Limits.Acquire
	// refused); retry later.
	CodeBusy = -32000
	// CodeTimeout: the request ran longer than the server's limit.
	CodeTimeout = -32001
	// CodeCancelled: the client cancelled the request or went away.
	CodeCancelled = -32800
)

// paramsOf returns the params of req, or nil when there are none. The SDK
// hands a request without params (or with "params": null) to middleware as
// a typed nil pointer inside a non-nil Params interface; calling a method
// on it dereferences nil, so every look at params goes through here.
func paramsOf(req mcp.Request) mcp.Params {
	if req == nil {
		return nil
	}
	p := req.GetParams()
	if p == nil {
		return nil
	}
	if v := reflect.ValueOf(p); v.Kind() == reflect.Pointer && v.IsNil() {
		return nil
	}
	return p
}

// guard is the outermost receiving middleware: a panic anywhere below it
// (middleware, the SDK's method handlers, a tool) becomes a JSON-RPC
// internal error for that request alone, and an error that carries no
// JSON-RPC code gets one (-32602 for a refused argument, -32603
// otherwise), so that no request, whatever its shape, can end the process
// or answer with code 0.
func (s *Server) guard(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
		defer func() {
			if p := recover(); p != nil {
				s.log().Error("mcp: panic handling a request", slog.String("method", method), slog.Any("panic", p),
					slog.String("stack", string(debug.Stack())))
				res, err = nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("internal error handling %q", method)}
			}
		}()
		res, err = next(ctx, method, req)
		if err != nil {
			res, err = nil, protocolError(err)
		}
		return res, err
	}
}

// protocolError gives err a JSON-RPC code when it has none.
func protocolError(err error) error {
	var we *jsonrpc.Error
	if errors.As(err, &we) && we.Code != 0 {
		return err
	}
	code := int64(jsonrpc.CodeInternalError)
	switch {
	case errors.Is(err, ErrInvalidArgument):
		code = jsonrpc.CodeInvalidParams
	case errors.Is(err, context.DeadlineExceeded):
		code = CodeTimeout
	case errors.Is(err, context.Canceled):
		code = CodeCancelled
	}
	return &jsonrpc.Error{Code: code, Message: err.Error()}
}

// log is the server's logger, never nil.
func (s *Server) log() *slog.Logger {
	if s.cfg.Logger != nil {
		return s.cfg.Logger
	}
	return slog.New(slog.DiscardHandler)
}
