#!/usr/bin/env bash
# layout_identical.sh OLD_DYNO [NEW_DYNO] - a change meant to move code
# without changing behaviour (issue #34's layout: files moved into folders,
# large files split) leaves dyno's outputs byte for byte as they were.  Two
# dyno binaries run the same commands on every trace of tests/data/traces
# and each pair of outputs (stdout, stderr, exit status, written files) is
# compared:
#   dyno --help and each command's --help
#   dyno analyze summary, critical-path and insights, per trace directory
#   dyno analyze critical-path on each of its test traces (tables, JSON,
#     --write-trace)
#   dyno report, per trace directory (the HTML file)
#   dyno stitch, per trace directory (the merged trace)
#   dyno warehouse ingest of all of them into one SQLite file, then every
#     report (top kernels, by type, jobs, one job, regressions) as table,
#     CSV and JSON, and the HTML page
# The measured durations are the one part masked: the ingest's seconds,
# traces/s and events/s, and "N.NNN s" on stderr.
# OLD_DYNO: a dyno built before the change (e.g. `git archive main | tar -x
# -C /tmp/old && make -C /tmp/old build/dyno`); NEW_DYNO defaults to
# build/dyno.  Exit 0 when everything matches, 1 (naming each difference)
# when not.  Not run by bench/run.sh (it needs two builds).
set -uo pipefail
cd "$(dirname "$0")/.."
OLD=${1:?usage: layout_identical.sh OLD_DYNO [NEW_DYNO]}
NEW=${2:-build/dyno}
for b in "$OLD" "$NEW"; do
	[ -x "$b" ] || { echo "$b: not an executable dyno" >&2; exit 1; }
done
OLD=$(realpath "$OLD") NEW=$(realpath "$NEW")
TMP=$(mktemp -d /tmp/dyno-layout.XXXXXX)
[ -n "${KEEP:-}" ] && echo "outputs kept in $TMP" >&2 || trap 'rm -rf "$TMP"' EXIT
DATA=tests/data/traces
compared=0 differ=0

# run NAME CMD...: CMD with dyno as the first word, once per build, into
# $TMP/{old,new}/NAME.{out,err,rc}; the working directory is the side's
# own folder, so files a command writes by a relative name land apart
run() {
	local name=$1
	shift
	for side in old new; do
		local bin=$OLD
		[ $side = new ] && bin=$NEW
		mkdir -p "$TMP/$side"
		(cd "$TMP/$side" && "$bin" "$@" >"$name.out" 2>"$name.err"; echo $? >"$name.rc")
	done
}

same() { # same FILE...: each file relative to the side folders
	for f in "$@"; do
		compared=$((compared + 1))
		# measured durations on stderr ("loaded 1 rank(s) in 0.011 s")
		if [[ $f == *.err ]]; then
			for side in old new; do
				sed -i -E 's/[0-9]+\.[0-9]+ (s|ms)\b/(time) \1/g' "$TMP/$side/$f"
			done
		fi
		if ! cmp -s "$TMP/old/$f" "$TMP/new/$f"; then
			differ=$((differ + 1))
			echo "DIFFERS: $f"
			diff <(head -c 200000 "$TMP/old/$f") <(head -c 200000 "$TMP/new/$f") | head -n 10
		fi
	done
}

runsame() { # runsame NAME CMD...: run, then compare its stdout, stderr, status
	run "$@"
	same "$1.out" "$1.err" "$1.rc"
}

# every command's --help (usage, options, description) and dyno's own
runsame help --help  # (gpusnoop --help is the gpusnoop program beside dyno)
for c in analyze report stitch warehouse trigger gputrace status metrics json; do
	runsame "help-$c" "$c" --help
done

ROOT=$(realpath "$DATA")
for d in "$ROOT"/*/; do
	t=$(basename "$d")
	runsame "summary-$t" analyze summary "$d"
	runsame "cp-$t" analyze critical-path "$d"
	runsame "insights-$t" analyze insights "$d"
	runsame "report-$t" report "$d" -o "report-$t.html"
	[ -f "$TMP/old/report-$t.html" ] && same "report-$t.html"
	runsame "stitch-$t" stitch "$d" -o "stitch-$t.json"
	[ -f "$TMP/old/stitch-$t.json" ] && same "stitch-$t.json"
done

# the critical path on each of its test traces, as tables, JSON and the
# trace with the path marked
for d in "$ROOT"/critical_path/*/; do
	t=$(basename "$d")
	runsame "cpx-$t" analyze critical-path "$d" --write-trace "cpx-$t.json"
	[ -f "$TMP/old/cpx-$t.json" ] && same "cpx-$t.json"
	runsame "cpj-$t" analyze critical-path "$d" --format json
done

# the usage errors the commands' engines report, and two inputs at once
runsame report-no-o report "$ROOT/critical_path"
runsame report-bad-ranks report "$ROOT/critical_path" --ranks x -o bad.html
runsame report-two report "$ROOT/trace_diff" "$ROOT/call_stack" -o two.html
[ -f "$TMP/old/two.html" ] && same two.html
runsame stitch-no-o stitch "$ROOT/critical_path"
runsame stitch-stdin stitch - -o x.json
runsame stitch-bad-offset stitch "$ROOT/critical_path" -o y.json --offset nosuch=5

# the warehouse: ROOT/JOB/... makes each trace directory a job
run ingest warehouse ingest "$ROOT" --db wh.db
for side in old new; do
	sed -E 's/; [0-9.]+ s, [0-9.]+ traces\/s, [0-9.]+ events\/s/; (timing)/' "$TMP/$side/ingest.out" \
		>"$TMP/$side/ingest.masked"
done
same ingest.masked ingest.err ingest.rc
runsame ingest-missing warehouse ingest "$ROOT/no-such-dir" --db wh2.db
runsame ingest-empty warehouse ingest "$ROOT/trace_file_list/no-such.json" --db wh2.db
f=$(ls "$ROOT"/call_stack/*.json* | head -n 1)
runsame ingest-file warehouse ingest "$f" --db wh3.db --job j --host h -q
runsame wh3-jobs warehouse report --db wh3.db --jobs --format csv
for r in top-kernels by-type jobs regressions; do
	for f in table csv json; do
		extra=()
		[ $r = regressions ] && extra=(--min-history 1)
		runsame "wh-$r-$f" warehouse report --db wh.db --"$r" --format "$f" "${extra[@]}"
	done
done
runsame wh-job warehouse report --db wh.db --job critical_path
runsame wh-html warehouse report --db wh.db --html wh.html
same wh.html

echo "layout_identical: $compared outputs compared, $differ differ (OLD=$OLD NEW=$NEW)"
[ "$differ" -eq 0 ]
