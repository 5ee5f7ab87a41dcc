#!/usr/bin/env bash
# End-to-end tracing check: builds Jaeger v2 from the Go module proxy (in its
# own module, tools/jaeger, so it never touches the library's go.mod; cached
# under ~/.cache/adaptrag), starts it with in-memory storage, runs
# `adaptrag ask` exporting OTLP/HTTP to it, and asserts through Jaeger's
# query API that the run's trace arrived with a span per node.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
cache=${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/adaptrag
bin=$cache/jaeger-v1.76.0
if [ ! -x "$bin" ]; then
  echo "building Jaeger (about 5 minutes on 2 cores)..."
  mkdir -p "$cache"
  (cd tools/jaeger && go build -o "$bin" github.com/jaegertracing/jaeger/cmd/jaeger)
fi
work=$(mktemp -d)
"$bin" > "$work/jaeger.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 60); do
  curl -fsS http://127.0.0.1:16686/api/services >/dev/null 2>&1 && break
  sleep 1
done
curl -fsS http://127.0.0.1:16686/api/services >/dev/null || { cat "$work/jaeger.log"; echo "Jaeger did not start"; exit 1; }

export OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318
go run ./cmd/adaptrag ask --json "对比一下差旅报销和招待报销的流程差异" > "$work/ask.json"
trace=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["trace_id"])' "$work/ask.json")
echo "trace $trace"
for _ in $(seq 30); do
  if curl -fsS "http://127.0.0.1:16686/api/traces/$trace" > "$work/trace.json" 2>/dev/null; then break; fi
  sleep 1
done
python3 - "$work/trace.json" <<'PY'
import json, sys
data = json.load(open(sys.argv[1]))["data"]
spans = {s["operationName"]: s for t in data for s in t["spans"]}
need = ["adaptrag.ask", "graph.run", "decide", "classify", "plan", "faq", "hybrid", "rerank", "generate"]
missing = [n for n in need if n not in spans]
if missing:
    sys.exit(f"spans missing in Jaeger: {missing}; got {sorted(spans)}")
tags = {t["key"]: t["value"] for t in spans["classify"]["tags"]}
if tags.get("adaptrag.route") != "analytical" or "graph.step" not in tags:
    sys.exit(f"classify span tags: {tags}")
print(f"Jaeger has the trace: {len(spans)} spans, classify route={tags['adaptrag.route']}")
PY
