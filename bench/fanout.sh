#!/usr/bin/env bash
# See bench/fanout.c: one dyno gputrace call to N daemons vs N sequential calls.
set -euo pipefail
exec "$O/bench/fanout"
