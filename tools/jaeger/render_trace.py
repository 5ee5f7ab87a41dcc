#!/usr/bin/env python3
"""Render one trace, as Jaeger's query API returns it, as an HTML timeline.

The Jaeger binary built from the Go module proxy (tools/jaeger) serves the
query API but not the web UI: the UI's assets are built from a separate
JavaScript project and are not part of the Go module. This script draws the
same data the UI would (span tree, timing, key attributes) so that a trace
can be looked at, and screenshotted, with no UI installed:

    curl -s localhost:16686/api/traces/TRACE_ID | python3 tools/jaeger/render_trace.py > trace.html
"""
import html
import json
import sys

# Attributes worth showing next to a span's bar, in this order.
SHOWN = [
    "adaptrag.route", "adaptrag.answered_by", "graph.step", "graph.route.label",
    "adaptrag.plan.mode", "adaptrag.retrieval.k", "adaptrag.retrieval.hits",
    "gen_ai.provider.name", "gen_ai.request.model", "gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens",
    "mcp.method.name", "gen_ai.tool.name", "error.type",
]


def main():
    data = json.load(sys.stdin)["data"][0]
    spans = data["spans"]
    procs = data["processes"]
    by_id = {s["spanID"]: s for s in spans}

    def parent(s):
        refs = [r for r in s.get("references", []) if r["refType"] == "CHILD_OF" and r["spanID"] in by_id]
        return refs[0]["spanID"] if refs else None

    kids = {}
    for s in spans:
        kids.setdefault(parent(s), []).append(s)
    for v in kids.values():
        v.sort(key=lambda s: s["startTime"])
    rows = []

    def walk(pid, depth):
        for s in kids.get(pid, []):
            rows.append((depth, s))
            walk(s["spanID"], depth + 1)

    walk(None, 0)
    t0 = min(s["startTime"] for s in spans)
    total = max(s["startTime"] + s["duration"] for s in spans) - t0 or 1
    root = rows[0][1]
    service = procs[root["processID"]]["serviceName"]
    colors = {"adaptrag.run": "#4e79a7", "graph.run": "#76b7b2"}
    out = [f"""<!doctype html><meta charset="utf-8"><title>Trace {data['traceID'][:7]}</title>
<style>
body{{font:13px/1.35 system-ui,sans-serif;margin:0;color:#222}}
header{{background:#1f2b37;color:#fff;padding:10px 16px}} header b{{font-size:16px}}
header span{{color:#b8c4cf;margin-left:14px}}
table{{border-collapse:collapse;width:100%}} td{{padding:3px 8px;border-bottom:1px solid #eee;vertical-align:middle}}
td.name{{width:30%;white-space:nowrap}} td.bar{{width:42%;position:relative}} td.tags{{color:#555;font-size:12px}}
.b{{position:absolute;top:6px;height:12px;border-radius:2px;min-width:2px}}
.d{{color:#666;font-size:11px;margin-left:4px}} .err{{color:#c00}}
th{{text-align:left;background:#f4f6f8;padding:4px 8px;font-weight:600}}
</style>
<header><b>{html.escape(service)}: {html.escape(root['operationName'])}</b>
<span>Trace {data['traceID']}</span><span>Duration {total/1000:.2f} ms</span>
<span>from Jaeger /api/traces</span><span>Depth {max(d for d, _ in rows)+1}</span><span>Total spans {len(spans)}</span></header>
<table><tr><th>Service &amp; operation</th><th>Timeline (0 – {total/1000:.2f} ms)</th><th>Attributes</th></tr>"""]
    for depth, s in rows:
        tags = {t["key"]: t["value"] for t in s["tags"]}
        name = s["operationName"]
        color = colors.get(name) or ("#e15759" if name.startswith("chat ") else "#f28e2b" if name.startswith("retrieve ")
                                     else "#59a14f" if name.startswith("tools/") else "#9c755f")
        left = (s["startTime"] - t0) / total * 100
        width = s["duration"] / total * 100
        err = " err" if tags.get("error") or tags.get("otel.status_code") == "ERROR" else ""
        shown = " · ".join(f"{k.split('.')[-1] if k.startswith('adaptrag.') or k.startswith('graph.') else k}={tags[k]}"
                           for k in SHOWN if k in tags)
        out.append(f"<tr><td class='name{err}' style='padding-left:{8 + depth * 16}px'>{html.escape(name)}"
                   f"<span class='d'>{s['duration']/1000:.2f} ms</span></td>"
                   f"<td class='bar'><div class='b' style='left:{left:.2f}%;width:{width:.2f}%;background:{color}'></div></td>"
                   f"<td class='tags'>{html.escape(shown)}</td></tr>")
    out.append("</table>")
    sys.stdout.write("\n".join(out))


if __name__ == "__main__":
    main()
