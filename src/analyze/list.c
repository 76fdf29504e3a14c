/*
 * list.c - the table of analyses (analysis_list[], built from list.h), the
 * lookup by subcommand name and the loader options the chosen analyses
 * need.  A few pointer reads; no allocation.
 */
#include <string.h>

#include "analyze/analysis.h"

const struct analysis *const analysis_list[ANALYSIS_COUNT] = {
#define ANALYSIS(n) &analysis_##n,
#include "analyze/list.h"
#undef ANALYSIS
};

const struct analysis *analysis_find(const char *name)
{
	for (size_t i = 0; i < ANALYSIS_COUNT; i++)
		if (strcmp(analysis_list[i]->name, name) == 0)
			return analysis_list[i];
	return NULL;
}

void analysis_load_opts(const struct analysis *a, struct trace_load_opts *lo)
{
	unsigned need = 0;
	for (size_t i = 0; i < ANALYSIS_COUNT; i++)
		if ((!a && !analysis_list[i]->own_command) || analysis_list[i] == a)
			need |= analysis_list[i]->load;
	/* and what the analyses it reads the tables of need */
	for (const struct analysis *const *u = a ? a->uses : NULL; u && *u; u++)
		need |= (*u)->load;
	/* what no analysis reads is not stored: most of a load's time and
	 * memory goes to CPU operator rows */
	lo->skip_cpu_ops = !(need & ANALYSIS_LOAD_CPU_OPS);
	lo->no_flows = !(need & ANALYSIS_LOAD_FLOWS);
	lo->no_counters = !(need & ANALYSIS_LOAD_COUNTERS);
	/* only ever turned on: --keep-last-step and the like stay the user's */
	lo->keep_last_step |= !!(need & ANALYSIS_LOAD_ALL_STEPS);
	lo->keep_python |= !!(need & ANALYSIS_LOAD_PYTHON);
	lo->keep_user_annotations |= !!(need & ANALYSIS_LOAD_ANNOTATIONS);
	lo->keep_event_waits |= !!(need & ANALYSIS_LOAD_EVENT_WAITS);
	lo->keep_profiler_args |= !!(need & ANALYSIS_LOAD_PROFILER_ARGS);
	lo->keep_kernel_occupancy |= !!(need & ANALYSIS_LOAD_OCCUPANCY);
}
