#!/usr/bin/env bash
# Scores every retrieval mode on every BEIR set under DATA (default
# ../shared/data/retrieval) and prints a Markdown table.
#   scripts/eval-retrieval.sh [DATA]
set -euo pipefail
cd "$(dirname "$0")/.."
data=${1:-../shared/data/retrieval}
bin=$(mktemp -d)/adaptrag
trap 'rm -rf "$(dirname "$bin")"' EXIT
go build -o "$bin" ./cmd/adaptrag
echo "| set | mode | nDCG@10 | R@1 | R@3 | R@8 | R@50 | MRR@10 | p50 ms |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---:|"
for set in "$data"/*/; do
  name=$(basename "$set")
  for mode in bm25 dense hybrid rerank; do
    "$bin" eval retrieval --data "$set" --mode "$mode" --json | python3 -c '
import json, sys
r = json.load(sys.stdin)
print("| %s | %s | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.2f |" % (sys.argv[1], r["mode"], r["ndcg@10"], r["recall@1"], r["recall@3"], r["recall@8"], r["recall@50"], r["mrr@10"], r["p50_ms"]))' "$name"
  done
done
