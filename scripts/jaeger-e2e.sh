#!/usr/bin/env bash
# End-to-end tracing check, run by CI (it needs no Docker and no network
# beyond the Go module proxy):
#
#  1. builds Jaeger v2 from the module proxy in its own module (tools/jaeger,
#     so it never touches the library's go.mod; cached under
#     ~/.cache/adaptrag) and starts it with in-memory storage;
#  2. starts a loopback OpenAI-wire model (a few lines of Python below) so
#     that model calls happen and are traced;
#  3. asks one question of each route (chitchat, factual, analytical)
#     through the CLI, exporting OTLP to Jaeger (http/protobuf for two of
#     them, grpc for the third), and one through the HTTP service
#     ("adaptrag serve") with a traceparent header;
#  4. asserts through Jaeger's query API that each trace holds one
#     adaptrag.run span with the route and token usage the CLI or the
#     service reported, and under graph.run exactly the node spans of the
#     path the JSON printed, in order, with their steps; that every model
#     call is a "chat <model>" client span with the GenAI attributes; that
#     searches have their "retrieve <store>" spans; that the service's
#     trace continues the caller's trace id, its run under the caller's
#     span; and that Jaeger lists exactly these traces.
#
# Environment: JAEGER_SCREENSHOT=FILE.png also saves a picture of the
# analytical trace, drawn from Jaeger's query API (headless Chromium).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
start=$(date +%s)
cache=${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/adaptrag
jaeger=$cache/jaeger-v1.76.0
if [ ! -x "$jaeger" ]; then
  echo "building Jaeger (about 5 minutes on 2 cores)..."
  mkdir -p "$cache"
  (cd tools/jaeger && go build -o "$jaeger.tmp" github.com/jaegertracing/jaeger/cmd/jaeger && mv "$jaeger.tmp" "$jaeger")
fi
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

if [ -n "${ADAPTRAG_BIN:-}" ]; then
  bin=$ADAPTRAG_BIN # a binary built elsewhere (another branch, a release)
else
  echo "building adaptrag..."
  go build -o "$work/adaptrag" ./cmd/adaptrag
  bin=$work/adaptrag
fi

for port in 4317 4318 16686; do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    echo "port $port is taken: stop the other Jaeger or collector first"; exit 1
  fi
done
"$jaeger" > "$work/jaeger.log" 2>&1 &
pids+=($!)
api=http://127.0.0.1:16686/api
for _ in $(seq 60); do
  curl -fsS "$api/services" >/dev/null 2>&1 && break
  sleep 1
done
curl -fsS "$api/services" >/dev/null || { cat "$work/jaeger.log"; echo "Jaeger did not start"; exit 1; }

# A loopback model speaking the OpenAI chat-completions wire format: it
# answers every call citing passage [1] and reports token usage.
cat > "$work/model.py" <<'PY'
import json, sys
from http.server import BaseHTTPRequestHandler, HTTPServer
class H(BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_POST(self):
        req = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        prompt = "".join(m["content"] if isinstance(m["content"], str) else "" for m in req["messages"])
        text = "根据知识库的规定作答 [1]。"
        usage = {"prompt_tokens": max(1, len(prompt) // 2), "completion_tokens": 12, "total_tokens": max(1, len(prompt) // 2) + 12}
        if req.get("stream"):
            self.send_response(200); self.send_header("Content-Type", "text/event-stream"); self.end_headers()
            for chunk in ({"delta": {"role": "assistant", "content": text}, "finish_reason": None}, {"delta": {}, "finish_reason": "stop"}):
                body = {"id": "x", "object": "chat.completion.chunk", "created": 0, "model": req["model"], "choices": [dict(index=0, **chunk)]}
                if chunk["finish_reason"]: body["usage"] = usage
                self.wfile.write(b"data: " + json.dumps(body).encode() + b"\n\n")
            self.wfile.write(b"data: [DONE]\n\n"); return
        body = json.dumps({"id": "x", "object": "chat.completion", "created": 0, "model": req["model"],
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}], "usage": usage}).encode()
        self.send_response(200); self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)
srv = HTTPServer(("127.0.0.1", 0), H)
open(sys.argv[1], "w").write(str(srv.server_port))
srv.serve_forever()
PY
python3 "$work/model.py" "$work/model.port" &
pids+=($!)
for _ in $(seq 50); do [ -s "$work/model.port" ] && break; sleep 0.1; done

export OPENAI_BASE_URL="http://127.0.0.1:$(cat "$work/model.port")/v1" OPENAI_API_KEY=e2e OPENAI_MODEL=e2e-model
unset OLLAMA_HOST OPENAI_EMBEDDING_MODEL OLLAMA_EMBEDDING_MODEL ADAPTRAG_STORE OTEL_EXPORTER_OTLP_TRACES_ENDPOINT OTEL_EXPORTER_OTLP_TRACES_PROTOCOL
service=adaptrag-e2e-$$
export OTEL_SERVICE_NAME=$service

ask() { # route protocol endpoint question
  OTEL_EXPORTER_OTLP_PROTOCOL=$2 OTEL_EXPORTER_OTLP_ENDPOINT=$3 \
    "$bin" ask --json --classifier offline "$4" > "$work/$1.json"
  echo "asked ($1, OTLP $2): $4"
}
ask chitchat http/protobuf http://127.0.0.1:4318 "tell me a joke"  # small talk the classifier routes (a greeting or "how is your day going" is answered by the decision, no model)
ask factual http/protobuf http://127.0.0.1:4318 "退货要在几天内发起？"
ask analytical grpc http://127.0.0.1:4317 "对比一下差旅报销和招待报销的流程差异"

# ---------------------------------------------------------------------------
# HTTP-service request: one ask through "adaptrag serve" carrying a W3C
# traceparent header; the checks below assert that its trace continues the
# caller's trace id and holds the same spans as a CLI run. SERVE_ARGS,
# ASK_PATH, ASK_BODY and AUTH_HEADER describe the service's API (defaults:
# "adaptrag serve" without --auth on loopback, POST /v1/ask).
# ---------------------------------------------------------------------------
commands=$("$bin" help 2>&1 || true) # captured first: grep -q closing the pipe early would fail it under pipefail
if grep -qE '^ +adaptrag serve ' <<<"$commands"; then
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  SERVE_ARGS=${SERVE_ARGS:---addr 127.0.0.1:$port --classifier offline}
  ASK_PATH=${ASK_PATH:-/v1/ask}
  ASK_BODY=${ASK_BODY:-'{"question": "退货要在几天内发起？"}'}
  auth=()
  [ -n "${AUTH_HEADER:-}" ] && auth=(-H "$AUTH_HEADER")
  OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 "$bin" serve $SERVE_ARGS > "$work/serve.log" 2>&1 &
  serve_pid=$!
  pids+=($serve_pid)
  for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.2; done
  tid=$(python3 -c 'import secrets; print(secrets.token_hex(16))')
  psid=$(python3 -c 'import secrets; print(secrets.token_hex(8))')
  code=$(curl -sS -o "$work/serve.json" -w '%{http_code}' -X POST "http://127.0.0.1:$port$ASK_PATH" \
    -H "Content-Type: application/json" "${auth[@]}" \
    -H "traceparent: 00-$tid-$psid-01" -d "$ASK_BODY")
  [ "$code" = 200 ] || { cat "$work/serve.log" "$work/serve.json"; echo "serve: $ASK_PATH answered $code"; exit 1; }
  kill -INT "$serve_pid"; wait "$serve_pid" 2>/dev/null || true # a clean stop flushes the exporter
  echo "$tid $psid" > "$work/serve.traceparent"
  echo "asked (service, OTLP http/protobuf, traceparent $tid): $ASK_BODY"
else
  echo "skip serve: this CLI has no 'adaptrag serve' command"
fi

python3 - "$work" "$api" "$service" <<'PY'
import json, sys, time, urllib.request
work, api, service = sys.argv[1:4]
routes = ["chitchat", "factual", "analytical"]
try:
    serve_tid, serve_parent = open(f"{work}/serve.traceparent").read().split()
except FileNotFoundError:
    serve_tid = serve_parent = None

def get(url):
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.load(r)

def tags(span):
    return {t["key"]: t["value"] for t in span["tags"]}

def fetch(trace_id):
    # The CLI flushes on exit, but Jaeger may index a moment later.
    for _ in range(30):
        try:
            data = get(f"{api}/traces/{trace_id}")["data"]
            if data and any(s["operationName"] == "adaptrag.run" for s in data[0]["spans"]):
                return data[0]
        except Exception:
            pass
        time.sleep(1)
    sys.exit(f"trace {trace_id} never reached Jaeger")

def check(route, name=None):
    name = name or route
    res = json.load(open(f"{work}/{name}.json"))
    if name == "serve" and res.get("trace_id") != serve_tid:
        sys.exit(f"serve: the response's trace {res.get('trace_id')} does not continue the caller's {serve_tid}")
    trace = fetch(res["trace_id"])
    spans = trace["spans"]
    by_id = {s["spanID"]: s for s in spans}
    def parent(s):
        refs = [r for r in s.get("references", []) if r["refType"] == "CHILD_OF"]
        return refs[0]["spanID"] if refs else None
    def children(sid):
        return sorted((s for s in spans if parent(s) == sid), key=lambda s: s["startTime"])
    errs = []
    procs = {p["serviceName"] for p in trace["processes"].values()}
    if procs != {service}:
        errs.append(f"service names {procs}, want {service}")
    runs = [s for s in spans if s["operationName"] == "adaptrag.run"]
    if len(runs) != 1:
        sys.exit(f"{route}: {len(runs)} adaptrag.run spans")
    run = runs[0]
    rt = tags(run)
    if name == "serve":
        # The run hangs under the caller's span, directly or through the
        # service's own request span.
        chain, sid = [], parent(run)
        while sid in by_id:
            chain.append(by_id[sid]["operationName"]); sid = parent(by_id[sid])
        if sid != serve_parent:
            errs.append(f"run span's root parent {sid}, want the caller's span {serve_parent} (through {chain})")
    if rt.get("adaptrag.route") != res["route"]["query_type"] or res["route"]["query_type"] != route:
        errs.append(f"run route {rt.get('adaptrag.route')!r}, ask --json {res['route']['query_type']!r}, want {route!r}")
    if rt.get("gen_ai.usage.input_tokens") != res["usage"]["tokens_in"] or rt.get("gen_ai.usage.output_tokens") != res["usage"]["tokens_out"]:
        errs.append(f"run usage {rt.get('gen_ai.usage.input_tokens')}/{rt.get('gen_ai.usage.output_tokens')}, "
                    f"ask --json {res['usage']['tokens_in']}/{res['usage']['tokens_out']}")
    if res["usage"]["tokens_in"] <= 0:
        errs.append("no tokens charged: the model was not called")
    if rt.get("adaptrag.answered_by") != res["answered_by"]:
        errs.append(f"answered_by {rt.get('adaptrag.answered_by')!r} vs {res['answered_by']!r}")
    graph = [s for s in children(run["spanID"]) if s["operationName"] == "graph.run"]
    if len(graph) != 1:
        sys.exit(f"{route}: {len(graph)} graph.run spans under adaptrag.run")
    nodes = children(graph[0]["spanID"])
    names = [s["operationName"] for s in nodes]
    if names != res["path"]:
        errs.append(f"node spans {names}, path {res['path']}")
    steps = [tags(s).get("graph.step") for s in nodes]
    if steps != list(range(1, len(nodes) + 1)):
        errs.append(f"node steps {steps}")
    by_name = {s["operationName"]: s for s in nodes}
    if "classify" in by_name and tags(by_name["classify"]).get("adaptrag.route") != route:
        errs.append(f"classify route {tags(by_name['classify']).get('adaptrag.route')!r}")
    chats = [s for s in spans if s["operationName"].startswith("chat ")]
    if not chats:
        errs.append("no chat span: the model calls were not traced")
    for c in chats:
        ct = tags(c)
        want = {"span.kind": "client", "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "e2e-model"}
        bad = {k: ct.get(k) for k, v in want.items() if ct.get(k) != v}
        if c["operationName"] != "chat e2e-model" or bad or not ct.get("gen_ai.usage.input_tokens") or not ct.get("gen_ai.usage.output_tokens"):
            errs.append(f"chat span {c['operationName']} {ct}")
        if by_id.get(parent(c), {}).get("operationName") not in res["path"]:
            errs.append(f"chat span not under a node: parent {by_id.get(parent(c), {}).get('operationName')}")
    answered = res["answered_by"]
    writer = {"generate": "generate", "chitchat": "chitchat"}.get(answered)
    if writer and not any(by_id.get(parent(c), {}).get("operationName") == writer for c in chats):
        errs.append(f"answered by {answered} but no chat span under the {writer} node")
    for node in ("dense", "hybrid"):
        if node in by_name:
            legs = [s["operationName"] for s in children(by_name[node]["spanID"])]
            if not legs or not all(l.startswith("retrieve ") for l in legs):
                errs.append(f"{node} node children {legs}, want retrieve spans")
    if errs:
        sys.exit(f"{name} ({res['trace_id']}):\n  " + "\n  ".join(errs))
    print(f"ok {name:10s} trace {res['trace_id']}: {len(spans)} spans, path {' > '.join(names)}, "
          f"{len(chats)} chat span(s), tokens {res['usage']['tokens_in']}/{res['usage']['tokens_out']}")
    return res["trace_id"]

ids = [check(r) for r in routes]
if serve_tid:
    ids.append(check("factual", "serve"))
listed = {t["traceID"] for t in get(f"{api}/traces?service={service}&limit=20")["data"]}
if listed != set(ids):
    sys.exit(f"service {service} lists traces {sorted(listed)}, want {sorted(ids)}")
print(f"ok Jaeger lists exactly the {len(ids)} traces of service {service}")
PY

if [ -n "${JAEGER_SCREENSHOT:-}" ]; then
  # The Jaeger binary built from the module proxy has no web UI assets, so
  # the trace is drawn from the query API's JSON (tools/jaeger/render_trace.py).
  tid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["trace_id"])' "$work/analytical.json")
  curl -fsS "$api/traces/$tid" | python3 tools/jaeger/render_trace.py > "$work/trace.html"
  out=$(realpath -m "$JAEGER_SCREENSHOT")
  chromium --headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update \
    --disable-sync --no-first-run --hide-scrollbars --window-size=1400,${JAEGER_SCREENSHOT_HEIGHT:-470} \
    --screenshot="$out" "file://$work/trace.html" 2>/dev/null
  echo "screenshot of trace $tid: $out"
fi
echo "Jaeger check passed in $(( $(date +%s) - start ))s"
