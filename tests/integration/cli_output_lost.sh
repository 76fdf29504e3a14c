#!/usr/bin/env bash
# cli_output_lost.sh - output that cannot be written is a failure: exit 1
# with a message, never 0 with the results gone.  stdout on a full device
# (/dev/full) for the analyses' tables (table, csv, json), warehouse report
# and stitch's table; files on a full disk (RLIMIT_FSIZE: every write past
# the limit fails with EFBIG, SIGXFSZ ignored) for --write-trace and
# --patterns-trace; and an OUT that is a device (through a symlink, so that
# a program replacing the path replaces the link, never /dev/full) for
# stitch -o and warehouse report --html, which must write into it, not
# rename a file onto it.
set -uo pipefail
[ -c /dev/full ] || { echo "no /dev/full character device"; exit 77; }
W=$(mktemp -d /tmp/dyno-lost-XXXXXX)
trap 'rm -rf "$W"' EXIT
TF=$TESTDATA/traces/trace_filter
AL=$TESTDATA/traces/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz
fail=0
bad() { echo "FAIL: $*"; fail=1; }
# expect_lost WHAT MESSAGE -- CMD...: exit 1 and MESSAGE on stderr
expect_lost() {
	local what=$1 msg=$2
	shift 3
	"$@" 2>"$W/err"
	local rc=$?
	[ $rc -eq 1 ] || bad "$what: exit $rc, not 1 ($(tail -n 2 "$W/err"))"
	grep -qF -- "$msg" "$W/err" || bad "$what: no '$msg' on stderr: $(tail -n 3 "$W/err")"
}
full() { "$@" >/dev/full; }
# a full disk for the files a command writes
small() { (trap '' XFSZ; ulimit -f 8; exec "$@"); }

for f in table csv json; do
	expect_lost "summary --format $f >/dev/full" "cannot write the output" -- full "$DYNO" analyze summary "$TF" --format "$f" -q
done
expect_lost "temporal >/dev/full" "cannot write the output" -- full "$DYNO" analyze temporal "$TF" -q

expect_lost "counters --write-trace, disk full" "--write-trace: $W/c.rank0.json: write failed" -- \
	small "$DYNO" analyze counters "$TF" --write-trace "$W/c.json" -q
[ ! -e "$W/c.rank0.json" ] || bad "a half-written --write-trace file was left"
expect_lost "critical-path --write-trace, disk full" "--write-trace: $W/cp.json: write failed" -- \
	small "$DYNO" analyze critical-path "$TF" --ranks 0 --write-trace "$W/cp.json" -q
expect_lost "patterns --patterns-trace, disk full" "--patterns-trace: $W/p.json: write failed" -- \
	small "$DYNO" analyze patterns "$AL" --operator aten::conv2d --patterns-trace "$W/p.json" -q
# the same commands with room to write: 0
"$DYNO" analyze counters "$TF" --write-trace "$W/ok.json" -q >/dev/null || bad "counters --write-trace with room"

# stitch: its table on a full stdout; OUT a device
ln -s /dev/full "$W/full"
expect_lost "stitch >/dev/full" "cannot write the output" -- full "$DYNO" stitch "$TF" -o "$W/s.json"
expect_lost "stitch -o DEVICE" "write failed: No space left on device" -- "$DYNO" stitch "$TF" -o "$W/full" -q
[ -L "$W/full" ] || bad "stitch -o replaced the symlink to /dev/full with a file"

# warehouse report
"$DYNO" warehouse ingest "$TF" --db "$W/w.db" >/dev/null 2>&1 || bad "warehouse ingest"
expect_lost "warehouse report >/dev/full" "cannot write the output" -- full "$DYNO" warehouse report --db "$W/w.db" --top-kernels
expect_lost "warehouse report --html DEVICE" "No space left on device" -- \
	"$DYNO" warehouse report --db "$W/w.db" --html "$W/full"
[ -L "$W/full" ] || bad "warehouse report --html replaced the symlink to /dev/full with a file"
[ -c /dev/full ] || bad "/dev/full is no longer a device"
exit $fail
