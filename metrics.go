package adaptrag

import (
	"context"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/adaptrag/adaptrag/internal/nodes"
	"github.com/adaptrag/adaptrag/state"
)

// meters are the pipeline's instruments, recorded through the OpenTelemetry
// metrics API (Options.MeterProvider; the global provider by default, which
// costs nothing until an SDK is installed).
type meters struct {
	runs     metric.Int64Counter     // adaptrag.runs{route, answered_by, outcome}
	duration metric.Float64Histogram // adaptrag.run.duration (s){route}
	nodes    metric.Float64Histogram // adaptrag.node.duration (s){node}
	tokens   metric.Int64Counter     // adaptrag.tokens{node, gen_ai.token.type}
	errors   metric.Int64Counter     // adaptrag.errors{node, kind, fatal}
}

func newMeters(mp metric.MeterProvider) (*meters, error) {
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	m := mp.Meter(ScopeName)
	var ms meters
	var err error
	if ms.runs, err = m.Int64Counter("adaptrag.runs", metric.WithDescription("Runs by route, what answered and outcome (ok or error).")); err != nil {
		return nil, err
	}
	if ms.duration, err = m.Float64Histogram("adaptrag.run.duration", metric.WithUnit("s"), metric.WithDescription("Run latency by route.")); err != nil {
		return nil, err
	}
	if ms.nodes, err = m.Float64Histogram("adaptrag.node.duration", metric.WithUnit("s"), metric.WithDescription("Node latency by node.")); err != nil {
		return nil, err
	}
	if ms.tokens, err = m.Int64Counter("adaptrag.tokens", metric.WithDescription("Model tokens by node and type (input or output).")); err != nil {
		return nil, err
	}
	if ms.errors, err = m.Int64Counter("adaptrag.errors", metric.WithDescription("Failures by node and kind; fatal=false for those the run absorbed.")); err != nil {
		return nil, err
	}
	return &ms, nil
}

// record adds one finished run.
func (m *meters) record(ctx context.Context, s *state.RAG, seconds float64, runErr error) {
	route := string(s.Route.QueryType)
	if route == "" {
		route = "none"
	}
	outcome := "ok"
	if runErr != nil {
		outcome = "error"
		m.errors.Add(ctx, 1, metric.WithAttributes(attribute.String("node", lastNode(s)), attribute.String("kind", string(nodes.KindOf(runErr))), attribute.Bool("fatal", true)))
	}
	m.runs.Add(ctx, 1, metric.WithAttributes(attribute.String("route", route), attribute.String("answered_by", string(s.AnsweredBy)), attribute.String("outcome", outcome)))
	m.duration.Record(ctx, seconds, metric.WithAttributes(attribute.String("route", route)))
	for _, u := range s.Usage {
		node := attribute.String("node", u.Node)
		m.nodes.Record(ctx, u.Duration.Seconds(), metric.WithAttributes(node))
		if u.InputTokens > 0 {
			m.tokens.Add(ctx, int64(u.InputTokens), metric.WithAttributes(node, attribute.String("gen_ai.token.type", "input")))
		}
		if u.OutputTokens > 0 {
			m.tokens.Add(ctx, int64(u.OutputTokens), metric.WithAttributes(node, attribute.String("gen_ai.token.type", "output")))
		}
	}
	for _, w := range s.Warnings {
		m.errors.Add(ctx, 1, metric.WithAttributes(attribute.String("node", w.Node), attribute.String("kind", string(w.Kind)), attribute.Bool("fatal", false)))
	}
}

func lastNode(s *state.RAG) string {
	if n := len(s.Usage); n > 0 {
		return s.Usage[n-1].Node
	}
	return ""
}
