#!/usr/bin/env bash
# Conformance run of the MCP server with real clients: builds adaptrag,
# installs the pinned npm packages of mcpserver/conformance (the official
# TypeScript SDK client, the MCP Inspector CLI, ajv) with npm ci, and drives
# "adaptrag mcp" (stdio) and "adaptrag serve"'s /mcp (streamable HTTP) with
# them. Prints a summary line (checks, calls, methods, seconds); exits
# non-zero when a check fails.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v node >/dev/null || { echo "mcp-conformance: node (20 or later) is required" >&2; exit 1; }
bin=$(mktemp -d)/adaptrag
go build -o "$bin" ./cmd/adaptrag
(cd mcpserver/conformance && npm ci --no-audit --no-fund --loglevel=error)
node mcpserver/conformance/conformance.mjs --bin "$bin"
