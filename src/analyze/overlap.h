/*
 * overlap.h - communication/computation overlap per rank, HTA's
 * get_comm_comp_overlap() (analysis-semantics section 6): the share of
 * communication kernel time during which a computation kernel also runs.
 * Model in, result out: no I/O.
 */
#ifndef DYNO_ANALYZE_OVERLAP_H
#define DYNO_ANALYZE_OVERLAP_H

#include <stdbool.h>
#include <stddef.h>

#include "trace/model.h"

struct overlap_row {
	int rank;
	double comm_time;    /* µs, merged communication intervals */
	double overlap_time; /* µs of it with computation running too */
	/* round(100 * overlap_time / comm_time, 2), HTA's comp_comm_overlap_pctg;
	 * NaN when the rank has no communication kernel (HTA's empty value) */
	double pctg;
	size_t comm_kernels, comp_kernels;
};

struct overlap_result {
	struct overlap_row *rows; /* one per rank, ascending rank */
	size_t nrows;
};

/* Kernel types are the loader's (trace_ktype: HTA's rules, or the fixed
 * ones with trace_load_opts.fixed_classification). */
void overlap_run(const struct trace_set *set, struct overlap_result *out);
void overlap_free(struct overlap_result *o);

#endif
