# cases.sh - the `dyno analyze` invocations whose outputs are checked in
# under tests/data/analyze-golden/ (sourced by make.sh, which writes them,
# and by tests/integration/analyze_golden.sh, which compares).
#
# golden_cases prints one line per output file: NAME<TAB>INPUT<TAB>ARGS...
# NAME is the file under analyze-golden/<case>/, INPUT is relative to
# tests/data/traces (two paths, a space between them, for diff).  Every analysis in every format on every trace of the
# conformance manifest, plus the options that change the tables, on the
# two-rank directory and one ns-resolution trace.
golden_cases() {
	local manifest=$1 name kind input a f
	while IFS=$'\t' read -r name kind input; do
		if [ "$kind" = diff ]; then
			# INPUT holds CONTROL and TEST, a space between them
			for f in csv json; do
				printf '%s/diff.%s\t%s\tdiff --format %s\n' "$name" "$f" "$input" "$f"
			done
			printf '%s/diff.txt\t%s\tdiff\n' "$name" "$input"
			printf '%s/diff-gpu-short.csv\t%s\tdiff --device gpu --short-names --format csv\n' "$name" "$input"
			printf '%s/diff-iteration.json\t%s\tdiff --iteration 1010 --format json\n' "$name" "$input"
			printf '%s/diff-csvdir\t%s\tdiff\n' "$name" "$input"
			continue
		fi
		[ "$kind" = file ] || [ "$kind" = dir ] || continue
		for a in summary temporal idle kernels kernel-distribution overlap launch counters annotations op-kernels cupti; do
			for f in csv json; do
				printf '%s/%s.%s\t%s\t%s --format %s\n' "$name" "$a" "$f" "$input" "$a" "$f"
			done
		done
		printf '%s/summary.txt\t%s\tsummary\n' "$name" "$input"
		printf '%s/cupti.txt\t%s\tcupti\n' "$name" "$input"
		printf '%s/kernels-top.csv\t%s\tkernels --top --format csv\n' "$name" "$input"
		printf '%s/idle-stats.csv\t%s\tidle --interval-stats --format csv\n' "$name" "$input"
		printf '%s/annotations-cpu.csv\t%s\tannotations --cpu --format csv\n' "$name" "$input"
		printf '%s/csvdir\t%s\tsummary --format json\n' "$name" "$input"
		printf '%s/critical-path.txt\t%s\tcritical-path --hta-graph-launch\n' "$name" "$input"
		for f in csv json; do
			printf '%s/patterns-linear.%s\t%s\tpatterns --operator aten::linear --format %s\n' "$name" "$f" "$input" "$f"
		done
		printf '%s/patterns-mm.txt\t%s\tpatterns --operator aten::mm\n' "$name" "$input"
		# every path edge: only the small traces (the unit test checks the rest)
		case $name in critical_path__* | amd_trace | triton_example | call_stack__* | trace_compare__* | cpu_only)
			printf '%s/critical-path.csv\t%s\tcritical-path --hta-graph-launch --format csv\n' "$name" "$input" ;;
		esac
	done < <(tail -n +2 "$manifest")
	local d=trace_filter n=ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz
	printf 'options/all-kernels.json\t%s\tsummary --all-kernels --format json\n' "$d"
	printf 'options/no-memory-kernels.json\t%s\tsummary --no-memory-kernels --format json\n' "$d"
	printf 'options/fixed-classification.json\t%s\tsummary --fixed-classification --format json\n' "$d"
	printf 'options/keep-last-step.json\t%s\tsummary --keep-last-step --format json\n' "$d"
	printf 'options/ranks-1.json\t%s\tsummary --ranks 1 --format json\n' "$d"
	printf 'options/num-kernels.csv\t%s\tkernels --top --num-kernels 3 --duration-ratio 0.5 --format csv\n' "$d"
	printf 'options/launch-cutoffs.json\t%s\tlaunch --runtime-cutoff 5 --launch-delay-cutoff 7 --no-memory-events --format json\n' "$d"
	printf 'options/delay.json\t%s\tidle --consecutive-kernel-delay 3 --interval-stats --format json\n' "$d"
	printf 'options/no-ns-rounding.json\t%s\tsummary --no-ns-rounding --format json\n' "$n"
	printf 'options/critical-path-graph-kernels.txt\t%s\tcritical-path\n' trace_diff/test/test.json.gz
	printf 'options/critical-path-window.json\t%s\tcritical-path --annotation aten::conv2d --instance 1 --format json\n' \
		critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz
	printf 'options/critical-path-rank.txt\t%s\tcritical-path --cp-rank 1\n' "$d"
	printf 'options/critical-path-whole-trace.txt\t%s\tcritical-path --annotation= --ranks 1\n' "$d"
	printf 'options/threads-1.json\t%s\tsummary --threads 1 --format json\n' "$d"
	printf 'options/counters-series.csv\t%s\tcounters --time-series --format csv\n' "$d"
	printf 'options/counters-max-queue.json\t%s\tcounters --max-queue-length 20 --format json\n' "$d"
	printf 'options/counters.txt\t%s\tcounters\n' "$d"
	printf 'options/patterns-min-len.csv\t%s\tpatterns --operator aten::addmm --min-len 2 --top-k 1 --format csv\n' \
		trace_diff/test/test.json.gz
	printf 'options/patterns-rank.json\t%s\tpatterns --operator linear --patterns-rank 1 --format json\n' "$d"
	printf 'options/patterns-no-operator.txt\t%s\tpatterns\n' "$d"
	printf 'options/patterns-ns.csv\t%s\tpatterns --operator aten::mm --min-len 1 --format csv\n' "$n"
}
