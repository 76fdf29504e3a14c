# The trace warehouse's assertions (docs/fleet.md), one suite for both
# databases: tests/integration/warehouse.sh runs it on SQLite,
# warehouse_pg.sh on a real PostgreSQL server it starts itself.
#
# The caller sets WH_DB (the --db value) and defines wh_sql SQL (print the
# rows, columns joined by '|'), wh_refuse_on / wh_refuse_off (a trigger
# that makes every insert into kernels fail with 'refused by test', and
# its removal) and WH_DOWN (a --db value whose database is unreachable),
# then calls wh_series DIR and wh_suite DIR.
#
# The series, under DIR/fleet/JOB/HOST: 20 traces of one real trace
# (tests/data trace_filter rank 0) an hour apart with every kernel's
# durations jittered by up to 10% per trace, a planted regression
# (ampere_sgemm_128x64_nn 10x slower in the last 4), 6 more of another real
# trace (rank 1) in a second job, and one damaged trace (cut short).

WH_SLOW=ampere_sgemm_128x64_nn
wh_fail=0
bad() { echo "FAIL: $*"; wh_fail=1; }

wh_series() {
	local dir=$1 i slow
	mkdir -p "$dir/fleet/jobS/h1" "$dir/fleet/jobT/h2"
	for i in $(seq 0 19); do
		slow=()
		[ "$i" -ge 16 ] && slow=(--slow "$WH_SLOW=10")
		"$BUILD/trace-gen" "$TESTDATA/traces/trace_filter/sampled_rank-0.json.gz" \
			"$dir/fleet/jobS/h1/t$(printf %02d "$i").json.gz" --seed "$i" --jitter 0.1 \
			--shift-ns $((i * 3600000000000)) "${slow[@]}" || bad "trace-gen $i"
	done
	for i in $(seq 0 5); do
		"$BUILD/trace-gen" "$TESTDATA/traces/trace_filter/sampled_rank-1.json.gz" \
			"$dir/fleet/jobT/h2/u$i.json" --seed $((100 + i)) --jitter 0.1 \
			--shift-ns $((i * 3600000000000)) || bad "trace-gen u$i"
	done
	head -c 30000 "$dir/fleet/jobT/h2/u0.json" >"$dir/fleet/jobT/h2/broken.json"
	"$BUILD/trace-gen" "$TESTDATA/traces/trace_filter/sampled_rank-1.json.gz" "$dir/extra.json" --seed 999 \
		--jitter 0.1 || bad "trace-gen extra"
}

# Every table, sorted: what "nothing changed" compares.
wh_dump() {
	wh_sql "SELECT hash, path, job, host, rank, start_ns, status, error, ingested_ns, events, iterations,
		iter_mean_us, kernel_us, idle_share, host_wait_share FROM traces ORDER BY hash"
	wh_sql "SELECT trace, kname, start_ns, calls, total_us, p50_us, p95_us FROM kernels ORDER BY trace, kname"
	wh_sql "SELECT id, name, type FROM kernel_names ORDER BY id"
	wh_sql "SELECT trace, type, total_us FROM kernel_types ORDER BY trace, type"
	wh_sql "SELECT trace, step, dur_us FROM iterations ORDER BY trace, step"
	wh_sql "SELECT version FROM wh_schema ORDER BY version"
	wh_sql "SELECT host, metric, key, t_ms, value FROM gpu_usage ORDER BY host, metric, key, t_ms"
}

# The HTML page (wh_html.c) of the series, checked by wh_html_check.py:
# well formed, every chart with data marks, the planted regression in the
# regressions section (its 4 slow traces in red, its bar in red) and the
# fleet's top kernel, unchanged, not; one job's page (--html - is stdout)
# without regressions; a job without traces gives a page that says so.
wh_html() {
	local dir=$1 rc unchanged check
	check=$(dirname "${BASH_SOURCE[0]}")/wh_html_check.py
	"$DYNO" warehouse report --html "$dir/w.html" --db "$WH_DB" >"$dir/out" 2>"$dir/err"; rc=$?
	[ $rc -eq 0 ] && grep -q "^dyno warehouse report: wrote $dir/w.html" "$dir/err" || bad "html: exit $rc: $(cat "$dir/err")"
	"$DYNO" warehouse report --db "$WH_DB" --format json --limit 3 >"$dir/top.json" || bad "html: top kernels: exit $?"
	unchanged=$(python3 -c 'import json,sys; print([r["kernel"] for r in json.load(open(sys.argv[1]))["rows"] if r["kernel"] != sys.argv[2]][0])' \
		"$dir/top.json" "$WH_SLOW") || bad "html: no unchanged top kernel: $(cat "$dir/top.json")"
	python3 "$check" "$dir/w.html" full "$WH_SLOW" 4 "$unchanged" >"$dir/out" || bad "html: $(cat "$dir/out")"
	"$DYNO" warehouse report --html - --job jobT --db "$WH_DB" >"$dir/jobT.html" 2>"$dir/err" || bad "html --job: $(cat "$dir/err")"
	python3 "$check" "$dir/jobT.html" job jobT >"$dir/out" || bad "html --job: $(cat "$dir/out")"
	"$DYNO" warehouse report --html - --job nosuch --db "$WH_DB" >"$dir/none.html" 2>"$dir/err" || bad "html no job: $(cat "$dir/err")"
	python3 "$check" "$dir/none.html" empty >"$dir/out" && grep -q 'holds no trace of job nosuch' "$dir/none.html" ||
		bad "html no job: $(cat "$dir/out")"
	"$DYNO" warehouse report --html "$dir/x.html" --by-type --db "$WH_DB" >"$dir/out" 2>"$dir/err"; rc=$?
	[ $rc -eq 2 ] && [ ! -e "$dir/x.html" ] || bad "html with --by-type: exit $rc"
}

wh_suite() {
	local dir=$1 rc n
	local out=$dir/out err=$dir/err
	"$DYNO" warehouse ingest "$dir/fleet" --db "$WH_DB" >"$out" 2>"$err"; rc=$?
	[ $rc -eq 0 ] || bad "ingest: exit $rc: $(cat "$err")"
	grep -q '^26 traces added .* 1 recorded as failed, 0 already' "$out" || bad "ingest: $(cat "$out")"
	grep -q "recorded as failed: $dir/fleet/jobT/h2/broken.json: byte " "$err" || bad "ingest stderr: $(cat "$err")"
	[ "$(wh_sql "SELECT status, COUNT(*) FROM traces GROUP BY status ORDER BY status")" = $'failed|1\nok|26' ] ||
		bad "statuses: $(wh_sql "SELECT status, COUNT(*) FROM traces GROUP BY status")"
	wh_sql "SELECT error FROM traces WHERE status = 'failed'" | grep -q 'broken.json: byte [0-9]*.*unexpected end' ||
		bad "failed row: $(wh_sql "SELECT error FROM traces WHERE status = 'failed'")"
	# job and host from the directories; rank from the trace
	[ "$(wh_sql "SELECT job, host, rank, COUNT(*) FROM traces WHERE status = 'ok' GROUP BY job, host, rank ORDER BY job")" = \
		$'jobS|h1|0|20\njobT|h2|1|6' ] || bad "jobs/hosts: $(wh_sql "SELECT job, host, rank, COUNT(*) FROM traces GROUP BY job, host, rank")"
	# the figures are the analyses': every ok trace has kernels, types, steps,
	# shares in [0, 1], p50 <= p95 <= max, calls * mean = total
	n=$(wh_sql "SELECT COUNT(*) FROM traces WHERE status = 'ok' AND (idle_share < 0 OR idle_share > 1 OR
		host_wait_share < 0 OR host_wait_share > 1 OR iterations < 1 OR kernel_us <= 0 OR start_ns IS NULL)")
	[ "$n" = 0 ] || bad "$n traces with impossible figures"
	n=$(wh_sql "SELECT COUNT(*) FROM kernels WHERE p50_us > p95_us + 1e-9 OR p95_us > max_us + 1e-9 OR
		min_us > p50_us + 1e-9 OR ABS(calls * mean_us - total_us) > 1e-6 * total_us + 1e-6")
	[ "$n" = 0 ] || bad "$n kernel rows inconsistent"
	[ "$(wh_sql "SELECT COUNT(DISTINCT trace) FROM kernels")" = 26 ] || bad "kernels of $(wh_sql "SELECT COUNT(DISTINCT trace) FROM kernels") traces"
	[ "$(wh_sql "SELECT COUNT(*) FROM kernels k JOIN traces t ON t.id = k.trace WHERE k.start_ns <> t.start_ns")" = 0 ] ||
		bad "kernel rows with another start than their trace's"

	# re-ingesting changes nothing (same content: skipped; not even ingested_ns)
	wh_dump >"$dir/before"
	"$DYNO" warehouse ingest "$dir/fleet" --db "$WH_DB" >"$out" 2>"$err"; rc=$?
	[ $rc -eq 0 ] || bad "re-ingest: exit $rc"
	grep -q '^0 traces added .* 27 already in the warehouse' "$out" || bad "re-ingest: $(cat "$out")"
	wh_dump >"$dir/after"
	cmp -s "$dir/before" "$dir/after" || bad "re-ingest changed the database: $(diff "$dir/before" "$dir/after" | head -5)"

	# the planted regression, and no other kernel
	"$DYNO" warehouse report --regressions --db "$WH_DB" --format csv >"$out" 2>"$err"; rc=$?
	[ $rc -eq 0 ] || bad "regressions: exit $rc: $(cat "$err")"
	[ "$(tail -n +2 "$out" | wc -l)" = 1 ] || bad "regressions: want 1 row: $(cat "$out")"
	tail -n +2 "$out" | grep -q "^$WH_SLOW,.*,4,[0-9]*,.*,jobS,\"*$dir/fleet/jobS/h1/t16.json.gz" || bad "regressions: $(cat "$out")"
	# with a lower bar, still nothing unchanged (the jitter is at most 10% each way)
	"$DYNO" warehouse report --regressions --threshold 1.3 --min-z 3 --db "$WH_DB" --format csv >"$out"
	[ "$(tail -n +2 "$out" | cut -d, -f1 | sort -u)" = "$WH_SLOW" ] || bad "regressions at 1.3: $(cat "$out")"
	# only the first 16 traces: nothing regressed
	"$DYNO" warehouse report --regressions --job jobS --since 1 --db "$WH_DB" --format csv >"$out" 2>"$err" || bad "regressions --since 1: exit $?: $(cat "$err")"
	[ "$(tail -n +2 "$out" | wc -l)" = 0 ] || bad "regressions with no history: $(cat "$out")"

	# top kernels: the fleet's sums
	"$DYNO" warehouse report --db "$WH_DB" --format json --limit 3 >"$out" || bad "top kernels: exit $?"
	local top want
	top=$(python3 -c 'import json,sys; t=json.load(open(sys.argv[1])); r=t["rows"]; assert len(r)==3; print(r[0]["kernel"], "%.6f" % r[0]["gpu_time_s"])' "$out") ||
		bad "top kernels json: $(cat "$out")"
	want=$(wh_sql "SELECT n.name, SUM(k.total_us) FROM kernels k JOIN kernel_names n ON n.id = k.kname
		GROUP BY n.name ORDER BY SUM(k.total_us) DESC LIMIT 1" | awk -F'|' '{printf "%s %.6f\n", $1, $2 / 1e6}')
	[ "$top" = "$want" ] || bad "top kernel: '$top' != '$want'"
	# by type over time: every trace's type time in some bucket
	"$DYNO" warehouse report --by-type --bucket-hours 1 --db "$WH_DB" --format csv >"$out" || bad "by-type: exit $?"
	top=$(tail -n +2 "$out" | awk -F, '{s += $3} END {printf "%.3f", s}')
	want=$(wh_sql "SELECT SUM(total_us) FROM kernel_types" | awk '{printf "%.3f", $1 / 1e6}')
	[ "$top" = "$want" ] || bad "by-type total $top != $want"
	[ "$(tail -n +2 "$out" | cut -d, -f1 | sort -u | wc -l)" = 20 ] || bad "by-type: not 20 hourly buckets"
	# per job
	"$DYNO" warehouse report --job jobT --db "$WH_DB" --format csv >"$out" || bad "job trend: exit $?"
	[ "$(tail -n +2 "$out" | wc -l)" = 7 ] || bad "job trend: $(cat "$out")"
	grep -q ',failed,' "$out" || bad "job trend: the failed trace is missing"
	"$DYNO" warehouse report --jobs --db "$WH_DB" --format csv >"$out" || bad "jobs: exit $?"
	grep -q '^jobS,20,1,' "$out" && grep -q '^jobT,7,1,.*,1$' "$out" || bad "jobs: $(cat "$out")"

	wh_html "$dir"

	# a database that refuses a write: a clear error, no half-written trace
	wh_refuse_on
	"$DYNO" warehouse ingest "$dir/extra.json" --db "$WH_DB" >"$out" 2>"$err"; rc=$?
	[ $rc -eq 1 ] || bad "refused write: exit $rc"
	grep -q 'refused by test' "$err" || bad "refused write: $(cat "$err")"
	[ "$(wh_sql "SELECT COUNT(*) FROM traces WHERE path LIKE '%extra.json'")" = 0 ] || bad "half-written trace left"
	wh_refuse_off
	"$DYNO" warehouse ingest "$dir/extra.json" --db "$WH_DB" >"$out" 2>"$err" || bad "ingest after refusal: $(cat "$err")"
	[ "$(wh_sql "SELECT COUNT(*) FROM traces WHERE path LIKE '%extra.json'")" = 1 ] || bad "extra trace not added"

	# GPU hours (the daemons' accounting as dyno metrics --json prints it;
	# gpu_jobs.sh scrapes a real daemon): stored once, per job and model
	printf '%s\n' 'n1 {"interval_s":1,"metrics":{"gpu_job_seconds.4242":[[1000,1800],[2000,1800]],"gpu_job_energy_mj.4242":[[1000,7200000]]}}' \
		'n2 {"interval_s":1,"metrics":{"gpu_job_seconds.pod-a":[[1000,900]],"gpu_user_seconds.1000":[[1000,4500]]}}' >"$dir/scrape.txt"
	"$DYNO" warehouse gpu-hours --ingest "$dir/scrape.txt" --db "$WH_DB" >"$out" 2>"$err" || bad "gpu-hours ingest: $(cat "$err")"
	"$DYNO" warehouse gpu-hours --ingest "$dir/scrape.txt" --db "$WH_DB" >"$out" 2>"$err" || bad "gpu-hours re-ingest: $(cat "$err")"
	"$DYNO" warehouse gpu-hours --label 4242=llama,pod-a=llama --db "$WH_DB" || bad "gpu-hours --label"
	"$DYNO" warehouse gpu-hours --by job --format csv --db "$WH_DB" >"$out" || bad "gpu-hours by job: exit $?"
	grep -q '^4242,1.0,0.002,1,1,' "$out" && grep -q '^pod-a,0.25,,1,1,' "$out" || bad "gpu-hours by job: $(cat "$out")"
	"$DYNO" warehouse gpu-hours --by model --format csv --db "$WH_DB" >"$out" || bad "gpu-hours by model: exit $?"
	grep -q '^llama,1.25,0.002,2,2,' "$out" || bad "gpu-hours by model: $(cat "$out")"
	"$DYNO" warehouse gpu-hours --by user --format csv --db "$WH_DB" >"$out" || bad "gpu-hours by user: exit $?"
	grep -q '^1000,1.25,,1,1,' "$out" || bad "gpu-hours by user: $(cat "$out")"

	# a database that is down
	"$DYNO" warehouse ingest "$dir/extra.json" --db "$WH_DOWN" >"$out" 2>"$err"; rc=$?
	[ $rc -eq 1 ] && grep -q '^dyno warehouse DB ' "$err" || bad "down: exit $rc: $(cat "$err")"

	# rows read back are checked
	local h
	h=$(wh_sql "SELECT id FROM kernel_names WHERE name = '$WH_SLOW'")
	h=$(wh_sql "SELECT trace FROM kernels WHERE kname = $h ORDER BY start_ns LIMIT 1")
	wh_sql "UPDATE kernels SET p50_us = 'Infinity' WHERE trace = $h AND kname = (SELECT id FROM kernel_names WHERE name = '$WH_SLOW')" >/dev/null
	"$DYNO" warehouse report --regressions --db "$WH_DB" >"$out" 2>"$err"; rc=$?
	[ $rc -eq 1 ] && grep -q 'regressions: row [0-9]*, column 3: not a finite number' "$err" || bad "bad row: exit $rc: $(cat "$err")"
	# and a schema newer than this dyno is refused
	wh_sql "INSERT INTO wh_schema (version) VALUES (99)" >/dev/null
	"$DYNO" warehouse report --db "$WH_DB" >"$out" 2>"$err"; rc=$?
	[ $rc -eq 1 ] && grep -q 'schema version 99 is newer than this dyno' "$err" || bad "newer schema: exit $rc: $(cat "$err")"
}
