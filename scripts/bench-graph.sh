#!/usr/bin/env bash
# Runs the graph engine's benchmarks and CloudWeGo Eino's (../shared/bench/eino)
# in one go, interleaved per round so both see the same machine load, and
# prints the comparison table used in docs/benchmarks.md.
#   scripts/bench-graph.sh [rounds]        (default 5)
# Set OTEL=1 to run ours with a recording OpenTelemetry SDK installed.
# Each process runs every benchmark twice and only the second run counts:
# the first benchmark of a fresh process otherwise pays for the warm-up
# (page faults, first allocations), on both sides alike.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
eino=${EINO_DIR:-../shared/bench/eino}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go test -c -o "$tmp/ours.test" ./graph
(cd "$eino" && go test -c -o "$tmp/eino.test" .)
warm() { grep '^Benchmark' | awk '++seen[$1] == 2'; }
otel=()
[ "${OTEL:-}" = 1 ] && otel=(-otel)
for _ in $(seq "$rounds"); do
  "$tmp/ours.test" -test.run '^$' -test.bench . -test.benchtime 20000x -test.count 2 "${otel[@]}" | warm >> "$tmp/ours.txt"
  "$tmp/eino.test" -test.run '^$' -test.bench . -test.benchtime 20000x -test.count 2 | warm >> "$tmp/eino.txt"
done
go run ./internal/benchtable -ours "$tmp/ours.txt" -peer "$tmp/eino.txt" -peer-name Eino
