package mcpserver

import (
	"context"
	"reflect"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Attribute keys of the OpenTelemetry MCP and GenAI conventions, declared
// here as the semconv packages move them between releases.
const (
	keyMethod        = attribute.Key("mcp.method.name")
	keySessionID     = attribute.Key("mcp.session.id")
	keyResourceURI   = attribute.Key("mcp.resource.uri")
	keyToolName      = attribute.Key("gen_ai.tool.name")
	keyOperationName = attribute.Key("gen_ai.operation.name")
	keyErrorType     = attribute.Key("error.type")
)

// trace is a receiving middleware that wraps each request in a server span
// named "{method} {target}" ("tools/call ask"). The parent is the
// context's span (the HTTP request's), or else the W3C trace context a
// client put in the request's _meta (traceparent, tracestate), as MCP
// clients do over stdio.
func (s *Server) trace(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "initialize", "notifications/initialized", "ping":
			return next(ctx, method, req)
		}
		params := paramsOf(req)
		if !trace.SpanContextFromContext(ctx).IsValid() {
			if p := params; p != nil {
				carrier := propagation.MapCarrier{}
				for k, v := range p.GetMeta() {
					if str, ok := v.(string); ok {
						carrier[k] = str
					}
				}
				ctx = propagation.TraceContext{}.Extract(ctx, carrier)
			}
		}
		name := method
		attrs := []attribute.KeyValue{keyMethod.String(method)}
		switch p := params.(type) {
		case *mcp.CallToolParamsRaw:
			name += " " + p.Name
			attrs = append(attrs, keyToolName.String(p.Name), keyOperationName.String("execute_tool"))
		case *mcp.ReadResourceParams:
			attrs = append(attrs, keyResourceURI.String(p.URI))
		}
		if sess := sessionOf(req); sess != nil && sess.ID() != "" {
			attrs = append(attrs, keySessionID.String(sess.ID()))
		}
		ctx, span := s.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
		defer span.End()
		res, err := next(ctx, method, req)
		switch {
		case err != nil:
			span.SetAttributes(keyErrorType.String("protocol_error"))
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
		default:
			if r, ok := res.(*mcp.CallToolResult); ok && r.IsError {
				span.SetAttributes(keyErrorType.String("tool_error"))
				span.SetStatus(codes.Error, "tool error")
			}
		}
		return res, err
	}
}

// sessionOf returns the session of req, or nil.
func sessionOf(req mcp.Request) mcp.Session {
	if req == nil {
		return nil
	}
	sess := req.GetSession()
	if sess == nil {
		return nil
	}
	if v := reflect.ValueOf(sess); v.Kind() == reflect.Pointer && v.IsNil() {
		return nil
	}
	return sess
}
