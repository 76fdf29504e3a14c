#!/usr/bin/env bash
# See bench/tracing_rpc.c for what this measures and its baseline.
set -euo pipefail
exec "$O/bench/tracing_rpc"
