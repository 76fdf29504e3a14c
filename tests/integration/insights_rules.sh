#!/usr/bin/env bash
# dyno analyze insights: each rule on a trace that shows its problem (a real
# trace from tests/data edited by tests/integration/lib/insight_cases.py:
# host-wait gaps, device syncs, a stretched iteration, shrunk kernels behind
# their launches, slowed copies, a late rank, an unbalanced rank, lengthened
# collectives, a hot kernel, a hot host's metrics) checked for the finding
# and its number, and on the unedited traces, where it must stay quiet.
set -uo pipefail
command -v python3 >/dev/null || { echo "no python3"; exit 77; }
[ -r "$TESTDATA/traces/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz" ] ||
	{ echo "no test traces in $TESTDATA"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 "$(dirname "$0")/lib/insight_cases.py" "$DYNO" "$TESTDATA" "$tmp"
