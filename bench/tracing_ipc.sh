#!/usr/bin/env bash
# See bench/tracing_ipc.c for what this measures and its baseline.
set -euo pipefail
exec "$O/bench/tracing_ipc"
