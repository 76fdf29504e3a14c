/*
 * list.h - every analysis of `dyno analyze`, one row each, in the order
 * `summary` prints them.  ANALYSIS(x) names `const struct analysis
 * analysis_x`, defined in src/analyze/<file>.c; analysis.h and list.c
 * include this file to declare them and to build analysis_list[].  A new
 * analysis is its file plus one row here.  No include guard: it is
 * included once per use of ANALYSIS().
 */
ANALYSIS(temporal)
ANALYSIS(idle)
ANALYSIS(kernels)
ANALYSIS(kernel_distribution)
ANALYSIS(overlap)
ANALYSIS(launch)
ANALYSIS(counters)
ANALYSIS(annotations)
ANALYSIS(op_kernels)
ANALYSIS(critical_path)
ANALYSIS(cupti)
ANALYSIS(patterns)
ANALYSIS(diff)
ANALYSIS(insights)
