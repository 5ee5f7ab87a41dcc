#!/usr/bin/env bash
# Runs `adaptrag bench retrieval` at several sizes and workloads, one after
# the other, and prints the "Retrieval at scale" table of docs/benchmarks.md
# (markdown) on stdout; progress goes to stderr and the raw JSON reports,
# one a line, to $BENCH_JSON (default: a temporary file, removed).
#   scripts/bench-scale.sh [N...]            (default: 100000 300000)
# Environment:
#   BENCH_WORKLOADS  workloads to run at every N (default: clustered isotropic
#                    corpus:$RETRIEVAL_DATA/xquad_en)
#   BENCH_1M=1       also run 1000000 on clustered (about 10 GiB of RSS with
#                    the store of before issue 21)
#   RETRIEVAL_DATA   the public retrieval sets (default ../shared/data/retrieval)
#   BENCH_JSON       keep the JSON reports in this file (appended)
#   BENCH_ARGS       more flags for every run, e.g. "--queries 100 --warm=false"
#   BENCH_TABLE_ONLY=FILE  print the table of an earlier BENCH_JSON file, run nothing
# Needs jq. Each 100k run takes a few minutes on 2 cores, 300k about 10.
set -euo pipefail
cd "$(dirname "$0")/.."
table() {
  echo '| workload | chunks | ingest/s (CPU a chunk) | longest write (over 200 ms) | RSS (live heap) | reopen cold / warm (CPU) | dense p50 (CPU) | recall@50 | exact scan p50 (CPU) | 1% filter p50 (CPU) | recall | exact scan of the 1% | 1% tenant p50 | recall | BM25 p50 | hybrid p50 | disk a chunk | load |'
  echo '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|'
  jq -r '
    def f(x; d): (x * pow(10; d) | round) / pow(10; d) | tostring;
    def ms(x): if x >= 100 then f(x; 0) elif x >= 10 then f(x; 1) else f(x; 2) end;
    def k(x): if x >= 1000000 then f(x/1000000; 0) + "M" else f(x/1000; 0) + "k" end;
    def mib(x): if x >= 1024 then f(x/1024; 2) + " GiB" else f(x; 0) + " MiB" end;
    "| \(.workload) | \(k(.n)) | \(f(.ingest_per_s/1000; 1))k (\(f(.ingest_cpu_s / .n * 1e6; 0)) µs) | \(ms(.max_stall_ms)) ms (\(.stalls_over_200ms)) | \(mib(.rss_mib)) (\(mib(.heap_mib))) | \(f(.reopen_s; 1)) / \(if .reopen_warm_s > 0 then f(.reopen_warm_s; 1) else "-" end) s (\(f(.reopen_cpu_s; 1)) s) | \(ms(.dense_p50_ms)) ms (\(ms(.dense_cpu_ms))) | \(f(.recall_at_50; 3)) | \(ms(.exact_p50_ms)) ms (\(ms(.exact_cpu_ms))) | \(ms(.filtered_p50_ms)) ms (\(ms(.filtered_cpu_ms))) | \(f(.filtered_recall_at_50; 3)) | \(ms(.exact_filtered_p50_ms)) ms | \(ms(.tenant_p50_ms)) ms | \(f(.tenant_recall_at_50; 3)) | \(ms(.bm25_p50_ms)) ms | \(ms(.hybrid_p50_ms)) ms | \(f(.disk_bytes_per_chunk; 0)) B | \(if .load_avg then f(.load_avg; 0) else "-" end) |"
  ' "$1"
}
if [ -n "${BENCH_TABLE_ONLY:-}" ]; then table "$BENCH_TABLE_ONLY"; exit 0; fi
data=${RETRIEVAL_DATA:-../shared/data/retrieval}
read -r -a workloads <<< "${BENCH_WORKLOADS:-clustered isotropic corpus:$data/xquad_en}"
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(100000 300000)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/adaptrag" ./cmd/adaptrag
run() {
  echo "== bench retrieval --n $1 --workload $2" >&2
  # shellcheck disable=SC2086 # BENCH_ARGS is a list of flags
  "$tmp/adaptrag" bench retrieval --n "$1" --workload "$2" ${BENCH_ARGS:-} --json | jq -c . | tee -a "$tmp/these.jsonl" >> "${BENCH_JSON:-/dev/null}"
}
for n in "${sizes[@]}"; do
  for w in "${workloads[@]}"; do run "$n" "$w"; done
done
if [ "${BENCH_1M:-}" = 1 ]; then run 1000000 clustered; fi
table "$tmp/these.jsonl"
