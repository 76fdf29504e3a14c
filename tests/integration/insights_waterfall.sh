#!/usr/bin/env bash
# The step waterfall of dyno analyze insights on made traces whose answer is
# known exactly (tests/integration/lib/insight_made.py): every part of every
# step to the microsecond, the places and threads, the steps from
# ProfilerStep, the optimizer's ranges, the kernel period or the whole
# trace, two launching threads, two ranks, the findings ranked by cost.
set -uo pipefail
command -v python3 >/dev/null || { echo "no python3"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 "$(dirname "$0")/lib/insight_made.py" "$DYNO" "$tmp"
