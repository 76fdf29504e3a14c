#!/usr/bin/env bash
# What the daemon's triggers cost per telemetry tick (bench/trigger_tick.c):
# 0-128 metric triggers over a 400-key frame, against filling the frame.
set -euo pipefail
"${O:-build}/bench/trigger_tick" "${TICKS:-20000}"
