#!/usr/bin/env bash
# Runs the retrieval benchmarks of this project and of the Go peers in
# ../shared/bench/retrieval (exact scan, chromem-go, bleve) on the same
# synthetic workload, in one go, and prints the comparison tables used in
# docs/benchmarks.md. About 6 minutes on 2 cores. coder/hnsw runs only with
# PEER_HNSW=1: its results are wrong (recall@50 0.004) and its 100k build
# takes 20 s a run (4 more minutes). Then, unless BENCH_STORE=0,
# `adaptrag bench retrieval --n 100000 --workload isotropic` runs beside them
# on the same vectors (the store with a directory, an exact scan, filters;
# about 3 minutes) and its report is printed as JSON.
#   scripts/bench-retrieval.sh [count]   (default 3)
# The peers' folder is $RETRIEVAL_BENCH_DIR, else ../shared/bench/retrieval
# beside the main checkout (also from a git worktree).
set -euo pipefail
cd "$(dirname "$0")/.."
count=${1:-3}
peer=${RETRIEVAL_BENCH_DIR:-../shared/bench/retrieval}
if [ -z "${RETRIEVAL_BENCH_DIR:-}" ] && [ ! -d "$peer" ]; then
  peer="$(git rev-parse --path-format=absolute --git-common-dir)/../../shared/bench/retrieval"
fi
peers='DenseExact|Chromem|BleveBM25'
pairs=Dense:Chromem,Dense:DenseExact,BM25:BleveBM25,Hybrid:Chromem,DenseIngest:ChromemIngest,DenseIngest:DenseExactIngest,BM25Ingest:BleveBM25Ingest,Ingest:ChromemIngest
if [ "${PEER_HNSW:-}" = 1 ]; then
  peers="$peers|HNSW"
  pairs="$pairs,Dense:HNSW,DenseIngest:HNSWIngest"
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for p in vector bm25 memstore; do go test -c -o "$tmp/$p.test" "./retrieval/$p"; done
(cd "$peer" && go test -c -o "$tmp/peer.test" .)
q=(-test.run '^$' -test.benchtime 200x -test.count "$count" -test.timeout 30m)
i=(-test.run '^$' -test.benchtime 1x -test.count "$count" -test.timeout 30m)
(cd "$peer" && "$tmp/peer.test" "${q[@]}" -test.bench "^Benchmark($peers)\$" && "$tmp/peer.test" "${i[@]}" -test.bench "^Benchmark($peers)Ingest\$") | grep '^Benchmark' > "$tmp/peer.txt"
{
  (cd retrieval/vector && "$tmp/vector.test" "${q[@]}" -test.bench '^BenchmarkDense$' && "$tmp/vector.test" "${i[@]}" -test.bench '^BenchmarkDenseIngest$')
  (cd retrieval/bm25 && "$tmp/bm25.test" "${q[@]}" -test.bench '^BenchmarkBM25$' && "$tmp/bm25.test" "${i[@]}" -test.bench '^BenchmarkBM25Ingest$')
  (cd retrieval/memstore && "$tmp/memstore.test" "${q[@]}" -test.bench '^BenchmarkHybrid$' && "$tmp/memstore.test" "${i[@]}" -test.bench '^BenchmarkIngest$')
} | grep '^Benchmark' > "$tmp/ours.txt"
cat "$tmp/ours.txt" "$tmp/peer.txt" > "${BENCH_RAW:-/dev/null}"
go run ./internal/benchtable -ours "$tmp/ours.txt" -peer "$tmp/peer.txt" -pairs "$pairs"
if [ "${BENCH_STORE:-1}" != 0 ]; then
  go build -o "$tmp/adaptrag" ./cmd/adaptrag
  echo
  "$tmp/adaptrag" bench retrieval --n 100000 --workload isotropic --json
fi
