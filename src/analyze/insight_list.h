/*
 * insight_list.h - every rule of `dyno analyze insights`, one row each, in
 * the order the rules table lists them.  RULE(x) names `const struct
 * insight_rule insight_rule_x`, defined in insight_idle.c (the parts of the
 * step waterfall), insight_rules.c (other rules on the trace) or
 * insight_host.c (rules on --metrics).  A new rule is its definition plus
 * one row here.  No include guard: included once per use
 * of RULE().
 */
RULE(host_gap)
RULE(cpu_bound_launch)
RULE(sync_points)
RULE(pageable_copy)
RULE(gpu_bound)
RULE(exposed_comm)
RULE(load_imbalance)
RULE(straggler)
RULE(iteration_outliers)
RULE(top_kernels)
RULE(low_occupancy)
RULE(memcpy_bandwidth)
RULE(host_cpu)
RULE(host_memory)
RULE(host_network)
RULE(host_gpu)
