#!/usr/bin/env bash
# dyno warehouse on SQLite (the default database): the suite of
# tests/integration/lib/warehouse.bash -- ingest of a generated series of
# real traces, a damaged one recorded as failed, re-ingest changes nothing,
# the planted regression found and no unchanged kernel flagged, the
# reports' sums, a refused write leaves no half trace, a missing database,
# a bad row read back, a newer schema, the HTML page.  warehouse_pg.sh runs
# the same on PostgreSQL.  Here also: the page of an empty warehouse, and
# the series' page in headless Chromium when it runs here.
set -uo pipefail
[ -r "$TESTDATA/traces/trace_filter/sampled_rank-0.json.gz" ] || { echo "no test traces"; exit 77; }
command -v sqlite3 >/dev/null || { echo "no sqlite3 (scripts/install-deps.sh installs it)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib/warehouse.bash"

WH_DB=$tmp/w.db
WH_DOWN=$tmp/no/such/dir/w.db
wh_sql() { sqlite3 -batch -noheader "$WH_DB" "$1"; }
wh_refuse_on() { wh_sql "CREATE TRIGGER refuse BEFORE INSERT ON kernels BEGIN SELECT RAISE(ABORT, 'refused by test'); END"; }
wh_refuse_off() { wh_sql "DROP TRIGGER refuse"; }

wh_series "$tmp/s"
wh_suite "$tmp/s"

# a read-only command on a warehouse that does not exist (a typo): "no
# such warehouse", exit 1, and no database made
for cmd in "report" "report --jobs" "report --html $tmp/typo.html" "gpu-hours"; do
	# shellcheck disable=SC2086
	"$DYNO" warehouse $cmd --db "$tmp/typo.db" >"$tmp/out" 2>"$tmp/err"; rc=$?
	[ $rc -eq 1 ] && grep -q "warehouse DB $tmp/typo.db: no such warehouse" "$tmp/err" ||
		bad "warehouse $cmd --db typo.db: exit $rc: $(cat "$tmp/err")"
	[ ! -e "$tmp/typo.db" ] || bad "warehouse $cmd --db typo.db made the database"
	[ ! -e "$tmp/typo.html" ] || bad "warehouse $cmd wrote a page"
done

# a job whose traces all share one start (the ranks of one gputrace): its
# trend charts show the points (dots in the middle), never an empty frame
"$DYNO" warehouse ingest "$TESTDATA/traces/trace_filter/"*.json.gz --job run7 --host n3 --db "$tmp/one.db" \
	>/dev/null 2>"$tmp/err" || bad "ingest run7: $(cat "$tmp/err")"
"$DYNO" warehouse report --html "$tmp/one.html" --job run7 --db "$tmp/one.db" 2>"$tmp/err" || bad "run7 html: $(cat "$tmp/err")"
python3 "$(dirname "$0")/lib/wh_html_check.py" "$tmp/one.html" job run7 >"$tmp/out" || bad "one start: $(cat "$tmp/out")"
"$DYNO" warehouse report --html "$tmp/one-all.html" --db "$tmp/one.db" 2>"$tmp/err" || bad "one-start html: $(cat "$tmp/err")"
python3 "$(dirname "$0")/lib/wh_html_check.py" "$tmp/one-all.html" job run7 >"$tmp/out" 2>&1
grep -q "do not show" "$tmp/out" && bad "one start, all jobs: $(cat "$tmp/out")"

# the HTML page of an empty warehouse (an empty file: the schema is made
# on open) says so (and draws nothing)
: >"$tmp/empty.db"
"$DYNO" warehouse report --html "$tmp/empty.html" --db "$tmp/empty.db" 2>"$tmp/err" || bad "empty html: $(cat "$tmp/err")"
python3 "$(dirname "$0")/lib/wh_html_check.py" "$tmp/empty.html" empty >"$tmp/out" &&
	grep -q 'holds no traces yet' "$tmp/empty.html" || bad "empty html: $(cat "$tmp/out")"

# the series' page in a real browser: no console message, every chart drawn
. "$(dirname "$0")/lib/chromium.bash"
if why=$(chrome_probe); then
	chrome wh --dump-dom "file://$tmp/s/w.html" >"$tmp/dom.html" || bad "chromium --dump-dom failed"
	chrome_console wh >"$tmp/console" && bad "console messages: $(head -n 5 "$tmp/console")"
	[ "$(grep -o '<svg class="chart"' "$tmp/dom.html" | wc -l)" = "$(grep -o '<svg class="chart"' "$tmp/s/w.html" | wc -l)" ] &&
		grep -q 'class="mark"' "$tmp/dom.html" || bad "chromium rendered other charts than the page's"
else
	echo "the page not loaded in a browser: $why"
fi
exit $wh_fail
