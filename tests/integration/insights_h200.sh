#!/usr/bin/env bash
# dyno analyze insights on twelve real H200 traces with one planted
# bottleneck each (tests/data/h200-insights/README.md): the planted cause is
# a finding with its measured cost, findings are ranked by cost and the first
# is the largest part of the step waterfall, the GPU-bound control has no
# host, sync or input finding, the traces without ProfilerStep (steps from
# the optimizer's ranges) give the causes and shares of the ones with it,
# and every step's waterfall adds up to its duration
# (tests/integration/lib/insight_h200.py says what each check means).
set -uo pipefail
command -v python3 >/dev/null || { echo "no python3"; exit 77; }
[ -r "$TESTDATA/h200-insights/gpu_bound.steps.pt.trace.json.gz" ] || { echo "no H200 traces in $TESTDATA"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 "$(dirname "$0")/lib/insight_h200.py" "$DYNO" "$TESTDATA/h200-insights" "$tmp"
