/*
 * list.h - the table of dyno subcommands, one row each, in `dyno --help`
 * order.  Each row is COMMAND(fn, name, summary): the command lives in
 * src/cli/<file>.c as int cmd_<fn>(int argc, char **argv) (argv[0] is the
 * command name), is typed as "name" (which may contain a dash, which a C
 * identifier cannot: dcgm_pause is "dcgm-pause"), and "summary" is its
 * line in `dyno --help`.
 *
 * No include guard: the includer defines COMMAND first.  commands.h turns
 * the rows into declarations, dyno.c into its dispatch table, so a new
 * subcommand is its own file plus one row here.
 */
COMMAND(analyze, "analyze", "analyze Kineto traces like HTA: temporal, idle, kernels, overlap, launch, summary")
COMMAND(report, "report", "one self-contained HTML report of traces: insights, tables and charts")
COMMAND(json, "json", "check JSON files (e.g. a trace) and report the first error's position")
COMMAND(status, "status", "daemon status and the PyTorch processes registered with it")
COMMAND(version, "version", "daemon version")
COMMAND(gputrace, "gputrace", "trace PyTorch processes through their daemons (one host or many)")
COMMAND(dcgm_pause, "dcgm-pause", "pause the daemons' DCGM profiling metrics for a while")
COMMAND(dcgm_resume, "dcgm-resume", "resume the daemons' DCGM profiling metrics")
COMMAND(metrics, "metrics", "recent metrics kept by the daemons (dynolite daemons)")
COMMAND(gpusnoop, "gpusnoop", "watch a process's CUDA calls with eBPF uprobes (here, or through daemons): leaks, launches, syncs")
COMMAND(stitch, "stitch", "merge the per-rank traces (and gpusnoop timelines) of one collection into one Perfetto trace")
COMMAND(warehouse, "warehouse", "a database of many traces' figures (SQLite or PostgreSQL): ingest, fleet reports, kernel regressions, GPU hours")
COMMAND(trigger, "trigger", "the daemons' triggers: trace on a metric condition, a cadence or on request (add, list, rm, fire)")
