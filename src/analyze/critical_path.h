/*
 * critical_path.h - HTA's lightweight critical path analysis of one rank
 * (src/analyze/critical_path.c; semantics doc section 12) as a plain
 * function, for the analysis row, tests and benches.  Declarations only.
 */
#ifndef DYNO_ANALYZE_CRITICAL_PATH_H
#define DYNO_ANALYZE_CRITICAL_PATH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyze/table.h"
#include "trace/model.h"

/* The command-line options of `critical-path`. */
struct cp_options {
	int64_t rank;           /* --cp-rank: -1 = the first selected rank */
	const char *annotation; /* --annotation: NULL = "ProfilerStep", or the whole trace without one */
	int64_t instance;       /* --instance: -1 = 1 when the annotation occurs twice or more, else 0 */
	/* --hta-graph-launch: of the kernels of one cudaGraphLaunch keep only
	 * the one the launch's correlation points to, like HTA (issue 290) */
	bool hta_graph_launch;
	const char *write_trace; /* --write-trace OUT: the trace with the path marked */
};

/* Edge types, in HTA's names (critical_path_analysis.py CPEdgeType). */
enum cp_edge_type {
	CP_OPERATOR = 0,     /* critical_path_operator */
	CP_DEPENDENCY,       /* critical_path_dependency */
	CP_LAUNCH,           /* critical_path_kernel_launch_delay */
	CP_KERNEL_KERNEL,    /* critical_path_kernel_kernel_delay */
	CP_SYNC,             /* critical_path_sync_dependency */
	CP_NTYPES
};
const char *cp_edge_type_name(enum cp_edge_type t);

/* The graph's figures (results.json of the conformance oracle). */
struct cp_result {
	bool ok;             /* false: HTA fails here too; why says so */
	char why[256];
	int rank;
	size_t nodes, edges; /* nodes that have an edge, distinct edges */
	size_t type_count[CP_NTYPES];
	double type_weight[CP_NTYPES];
	double length;       /* sum of the path's weights */
	size_t path_edges;
	/* the path, one entry per edge in order */
	struct cp_path_edge {
		uint32_t src_row, dst_row; /* rows of the rank */
		bool src_start, dst_start;
		double src_ts, dst_ts, weight;
		uint8_t type;
		int32_t attr;     /* attributed row; -1 none; -2 the thread root (HTA event -1) */
	} *path;
	bool event_sync_ignored; /* Event Sync / Stream Wait Event rows were skipped: the
				  * rank was loaded without keep_event_waits */
	size_t event_waits;      /* Event Sync / Stream Wait Event rows matched to a kernel */
	size_t cuda_graph_kernels; /* kernels in the window sharing a launch with another kernel */
	bool hta_graph_launch;     /* the option was on (then cuda_graph_kernels is 0) */
};

/* The analysis of rank r with options o.  Never fails hard: out->ok false
 * and out->why when HTA's analysis fails on this rank. */
void critical_path_run(const struct trace_rank *r, const struct cp_options *o, struct cp_result *out);
void critical_path_free(struct cp_result *res);

/* HTA's tables from a result: critical_path_breakdown, critical_path_edges
 * and critical_path_summary (share of the path per bound_by). */
void critical_path_tables(const struct trace_rank *r, const struct cp_result *res, struct atable **breakdown,
			  struct atable **edges, struct atable **summary);

/* The rank's trace file with the path of res marked, as HTA's overlay
 * (src/analyze/critical_path_trace.c), to out (gzip when it ends in
 * ".gz").  0 (*marked events, *flows flow pairs), or -1 with a message. */
int critical_path_write_trace(const struct trace_rank *r, const struct cp_result *res, const char *out,
			      size_t *marked, size_t *flows, struct buf *err);

#endif
